/* Base64 (RFC 4648, section 4, with padding), as qtest's b64read and b64write carry guest
 * memory. */
#ifndef EMB_HOST_QMP_BASE64_H
#define EMB_HOST_QMP_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Characters emb_base64_encode() writes for `len` bytes (no NUL). */
size_t emb_base64_size(size_t len);
/* Encodes `len` bytes into `out` (emb_base64_size(len) characters); returns that count. */
size_t emb_base64_encode(const void *data, size_t len, char *out);
/* Decodes `n` characters into at most `cap` bytes; *got the count. 0, or -1 for a
 * character outside the alphabet, a length not a multiple of four, misplaced padding, or
 * more bytes than `cap`. */
int emb_base64_decode(const char *text, size_t n, uint8_t *out, size_t cap, size_t *got);

#endif /* EMB_HOST_QMP_BASE64_H */
