/* Text for a terminal: target- or file-derived bytes escaped so they cannot drive the
 * terminal, and colour when the stream is one. */
#ifndef EMB_BASE_TEXT_H
#define EMB_BASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The length of the printable UTF-8 sequence at s (at most n bytes): 2 to 4, or 0 for a
 * byte that starts none (invalid, overlong, a surrogate, a C1 control such as CSI). */
size_t emb_text_utf8_printable(const unsigned char *s, size_t n);

/* Escapes len bytes of target- or file-derived text for a terminal into out (cap bytes,
 * NUL-terminated, cut short rather than overflow): control bytes (C0, DEL), C1 controls
 * and bytes of invalid UTF-8 become \xNN; printable ASCII and valid UTF-8 pass through.
 * Returns the length written. emb_text_escape_str() does a NUL-terminated string (NULL as
 * "") and returns out. Worst case: 4 bytes of output per byte of input. */
size_t emb_text_escape(char *out, size_t cap, const char *text, size_t len);
const char *emb_text_escape_str(char *out, size_t cap, const char *text);

/* Colour: enabled when the stream is a terminal and NO_COLOR is unset, or forced by
 * --color=always|never (emb_color_set_mode). Each returns "" when colour is off. */
enum emb_color { EMB_C_RESET, EMB_C_BOLD, EMB_C_DIM, EMB_C_RED, EMB_C_GREEN, EMB_C_YELLOW,
                 EMB_C_BLUE, EMB_C_MAGENTA, EMB_C_CYAN };
void emb_color_set_mode(int mode); /* -1 auto, 0 never, 1 always */
const char *emb_color_code(FILE *stream, enum emb_color c);
/* Whether emb_color_code() returns escapes for this stream. */
bool emb_color_enabled(FILE *stream);
/* Parses the argument of --color[=WHEN]: NULL or "always" 1, "never" 0, "auto" -1;
 * anything else -2. */
int emb_color_parse(const char *arg);

#endif /* EMB_BASE_TEXT_H */
