/* Text for an HTML page. */
#include "html.h"

void emb_html_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F ||
            (c == 0xC2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] < 0xA0)) {
            fprintf(out, "\\x%02X", c == 0xC2 ? (unsigned char)*++s : c);
            continue;
        }
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}
