/* Numbers from text (parse_number.h). */
#include "parse_number.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

/* strtoull() takes a sign and leading space; an option's value may have neither. */
static int digits(const char *s, unsigned long long *v, const char **end)
{
    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
    if (base == 16 && !isxdigit((unsigned char)s[2]))
        return -1;
    char *e;
    errno = 0;
    *v = strtoull(s, &e, base);
    if (errno == ERANGE)
        return -1;
    *end = e;
    return 0;
}

int emb_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    unsigned long long v;
    const char *end;
    if (digits(s, &v, &end) != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int emb_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
    if (s == NULL)
        return -1;
    bool negative = s[0] == '-';
    uint64_t magnitude;
    if (emb_parse_u64(s + negative, 0, negative ? (uint64_t)INT64_MAX + 1 : INT64_MAX,
                      &magnitude) != 0)
        return -1;
    int64_t v = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    if (v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int emb_parse_double(const char *s, double min, double max, double *out)
{
    if (s == NULL || s[0] == '\0' || isspace((unsigned char)s[0]))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE || *end != '\0' || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int emb_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    unsigned long long v;
    const char *end;
    if (digits(s, &v, &end) != 0)
        return -1;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift != 0)
        end++;
    if (*end != '\0' || v > (UINT64_MAX >> shift))
        return -1;
    v <<= shift;
    if (v < min || v > max)
        return -1;
    *out = v;
    return 0;
}
