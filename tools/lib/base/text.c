/* Text for a terminal: escaping what the target or a file wrote, and colour. */
#define _POSIX_C_SOURCE 200809L

#include "text.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes) that encodes a printable
 * character, or 0: an invalid sequence, an overlong or surrogate form, or a C1 control
 * (U+0080..U+009F, which some terminals obey like ESC). */
size_t emb_text_utf8_printable(const unsigned char *s, size_t n)
{
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || s[0] > 0xF4 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if (len == 2 && s[0] == 0xC2 && s[1] < 0xA0)
        return 0; /* C1 control */
    if (len == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0)))
        return 0; /* overlong, surrogate */
    if (len == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90)))
        return 0; /* overlong, past U+10FFFF */
    return len;
}

size_t emb_text_escape(char *out, size_t cap, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t o = 0;
    for (size_t i = 0; i < len && cap > 0;) {
        if (s[i] >= 0x20 && s[i] < 0x7F) { /* printable ASCII, most of any text: itself */
            if (o + 1u >= cap)
                break;
            out[o++] = (char)s[i++];
            continue;
        }
        size_t u = s[i] >= 0x80 ? emb_text_utf8_printable(s + i, len - i) : (s[i] >= 0x20 && s[i] != 0x7F);
        char piece[5];
        size_t plen;
        if (u > 0) {
            memcpy(piece, s + i, u);
            plen = u;
        } else {
            snprintf(piece, sizeof piece, "\\x%02X", s[i]);
            plen = 4;
            u = 1;
        }
        if (o + plen >= cap)
            break;
        memcpy(out + o, piece, plen);
        o += plen;
        i += u;
    }
    if (cap > 0)
        out[o] = '\0';
    return o;
}

const char *emb_text_escape_str(char *out, size_t cap, const char *text)
{
    emb_text_escape(out, cap, text ? text : "", text ? strlen(text) : 0);
    return out;
}

/* ---- messages ---- */

/* ---- colour ---- */

static int color_mode = -1;

void emb_color_set_mode(int mode)
{
    color_mode = mode < 0 ? -1 : mode > 0;
}

int emb_color_parse(const char *arg)
{
    if (!arg || !strcmp(arg, "always") || !strcmp(arg, "yes"))
        return 1;
    if (!strcmp(arg, "never") || !strcmp(arg, "no"))
        return 0;
    if (!strcmp(arg, "auto"))
        return -1;
    return -2;
}

bool emb_color_enabled(FILE *stream)
{
    if (color_mode >= 0)
        return color_mode == 1;
    const char *no = getenv("NO_COLOR");
    if (no && *no) /* no-color.org: present and not empty */
        return false;
    const char *term = getenv("TERM");
    if (term && !strcmp(term, "dumb"))
        return false;
    return stream && isatty(fileno(stream));
}

const char *emb_color_code(FILE *stream, enum emb_color c)
{
    static const char *const codes[] = {
        [EMB_C_RESET] = "\033[0m",   [EMB_C_BOLD] = "\033[1m",    [EMB_C_DIM] = "\033[2m",
        [EMB_C_RED] = "\033[31m",    [EMB_C_GREEN] = "\033[32m",  [EMB_C_YELLOW] = "\033[33m",
        [EMB_C_BLUE] = "\033[34m",   [EMB_C_MAGENTA] = "\033[35m", [EMB_C_CYAN] = "\033[36m",
    };
    if ((unsigned)c >= sizeof codes / sizeof codes[0] || !emb_color_enabled(stream))
        return "";
    return codes[c];
}
