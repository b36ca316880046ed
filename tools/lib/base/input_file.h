/* Whole-file reads of the host tool, bounded: a decoder that needs a whole file in memory
 * takes at most the input limit, so /dev/zero, a FIFO that never ends or a huge sparse
 * file is refused with a message instead of growing to the allocation limit. */
#ifndef EMB_HOST_INPUT_FILE_H
#define EMB_HOST_INPUT_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The environment variable that sets the limit: bytes, or a number with a K, M or G
 * suffix (powers of 1024). */
#define EMB_INPUT_LIMIT_ENV "EMB_INPUT_LIMIT"
/* The limit when the variable is unset (1 GiB). */
#define EMB_INPUT_LIMIT_DEFAULT (UINT64_C(1) << 30)

/* The input limit in bytes: EMB_INPUT_LIMIT when it is set and parses (and is not 0),
 * else EMB_INPUT_LIMIT_DEFAULT. */
uint64_t emb_input_limit(void);

/* Reads the whole of `path` (a regular file, a device, a FIFO; "-" is stdin) into a
 * malloc'd buffer with one spare byte set to NUL after the data. A regular file larger
 * than the limit is refused before anything is read; anything else is refused once it
 * has yielded more than the limit. Returns the buffer and its length, or NULL with a
 * message in err: "cannot open: ...", "is a directory", "read error: ...", "out of
 * memory", or "more than the input limit of N bytes ...". */
uint8_t *emb_input_read(const char *path, size_t *len, char *err, size_t errlen);

/* The same with a limit of the caller's (a small text file: a rules file). */
uint8_t *emb_input_read_max(const char *path, uint64_t limit, size_t *len, char *err,
                            size_t errlen);

#endif /* EMB_HOST_INPUT_FILE_H */
