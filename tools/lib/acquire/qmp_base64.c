/* Base64 for qtest (qmp_base64.h). */
#include "qmp_base64.h"

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t emb_base64_size(size_t len)
{
    return (len + 2u) / 3u * 4u;
}

size_t emb_base64_encode(const void *data, size_t len, char *out)
{
    const uint8_t *p = data;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        out[o++] = ALPHABET[v >> 18 & 63u];
        out[o++] = ALPHABET[v >> 12 & 63u];
        out[o++] = i + 1 < len ? ALPHABET[v >> 6 & 63u] : '=';
        out[o++] = i + 2 < len ? ALPHABET[v & 63u] : '=';
    }
    return o;
}

static int sextet(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int emb_base64_decode(const char *text, size_t n, uint8_t *out, size_t cap, size_t *got)
{
    size_t o = 0;
    *got = 0;
    if (n % 4u != 0)
        return -1;
    for (size_t i = 0; i < n; i += 4) {
        int pad = (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=');
        if (pad > 0 && i + 4 != n)
            return -1;
        uint32_t v = 0;
        for (int k = 0; k < 4; k++) {
            int s = k >= 4 - pad ? 0 : sextet(text[i + (size_t)k]);
            if (s < 0)
                return -1;
            v = v << 6 | (uint32_t)s;
        }
        size_t bytes = 3u - (size_t)pad;
        if (o + bytes > cap)
            return -1;
        for (size_t k = 0; k < bytes; k++)
            out[o++] = (uint8_t)(v >> (16u - 8u * k));
    }
    *got = o;
    return 0;
}
