/* emb_vsnprintf (src/printf.c), the text backend's formatter, against the C library's
 * snprintf: every conversion of the subset with flags, widths and precisions, and %f over
 * values chosen to hit rounding ties, carries, huge and tiny magnitudes, plus random ones.
 * Every case must print the same bytes and return the same length. */
#include <emb/printf.h>

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static unsigned cases, same;

#define CHECK(fmt, ...)                                                                       \
    do {                                                                                      \
        char a[512], b[512];                                                                  \
        int na = emb_snprintf(a, sizeof a, fmt, __VA_ARGS__);                                 \
        int nb = snprintf(b, sizeof b, fmt, __VA_ARGS__);                                     \
        cases++;                                                                              \
        if (na == nb && strcmp(a, b) == 0)                                                    \
            same++;                                                                           \
        else                                                                                  \
            diag("%s: emb '%s' (%d), libc '%s' (%d)", fmt, a, na, b, nb);                    \
    } while (0)

static void test_integers(void)
{
    static const char *const int_fmts[] = {"%d", "%i", "%5d", "%-5d|", "%05d", "%+d", "% d", "%.3d",
                                           "%8.3d", "%-8.3d|", "%+05d", "%.0d", "%x", "%X", "%#x",
                                           "%#X", "%08x", "%#08x", "%o", "%#o", "%#.0o", "%u", "%10u",
                                           "%hhd", "%hd", "%hhu", "%hx"};
    static const int values[] = {0, 1, -1, 7, -42, 255, 256, 65535, -65536, INT_MAX, INT_MIN};
    for (size_t f = 0; f < sizeof int_fmts / sizeof int_fmts[0]; f++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++)
            CHECK(int_fmts[f], values[v]);
    static const long long wide[] = {0, -1, LLONG_MAX, LLONG_MIN, 1234567890123LL};
    for (size_t v = 0; v < sizeof wide / sizeof wide[0]; v++) {
        CHECK("%lld", wide[v]);
        CHECK("%llu", (unsigned long long)wide[v]);
        CHECK("%20lld|", wide[v]);
        CHECK("%-+22lld|", wide[v]);
        CHECK("%llx", (unsigned long long)wide[v]);
        CHECK("%ld", (long)wide[v]);
        CHECK("%jd", (intmax_t)wide[v]);
        CHECK("%zu", (size_t)wide[v]);
        CHECK("%td", (ptrdiff_t)wide[v]);
    }
    CHECK("%*d|%-*d|%.*d", 6, 42, 6, 42, 4, 42);
    CHECK("%*d|", -6, 42);
    CHECK("%.*d|", -3, 42);
}

static void test_chars_strings_pointers(void)
{
    CHECK("%c%c%c", 'a', ' ', '~');
    CHECK("[%5c][%-5c]", 'x', 'y');
    const char *null = NULL;
    static const char *const strs[] = {"", "a", "hello", "a longer string of text"};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        CHECK("[%s]", strs[i]);
        CHECK("[%10s]", strs[i]);
        CHECK("[%-10s]", strs[i]);
        CHECK("[%.3s]", strs[i]);
        CHECK("[%8.2s]", strs[i]);
    }
    CHECK("[%s]", null);
    CHECK("[%10s]", null);
    CHECK("[%.3s]", null);
    CHECK("[%.6s]", null);
    int x;
    CHECK("%p", (void *)&x);
    CHECK("%p", (void *)NULL);
    CHECK("[%20p]", (void *)&x);
    CHECK("[%-20p]", (void *)0x1234);
    CHECK("%+p", (void *)1);
    CHECK("% p", (void *)1);
    CHECK("[%+12p][%-+12p][% 12p]", (void *)0xbeef, (void *)0xbeef, (void *)0xbeef);
    CHECK("[%+p][% 8p]", (void *)NULL, (void *)NULL);
    CHECK("%%|%5%|%d%%", 3);
}

static void test_floats(void)
{
    static const char *const fmts[] = {"%f", "%.0f", "%.1f", "%.2f", "%.3f", "%.10f", "%.17f",
                                       "%.30f", "%12.4f", "%-12.4f|", "%012.4f", "%+f", "% f",
                                       "%#.0f", "%F"};
    static const double values[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 0.125, 0.375,
                                    0.05, 0.15, 0.25, 0.35, 9.5, 99.5, 0.9999999, 9.9999996,
                                    123.456, 1e-5, 1e-7, 5e-7, 1.0 / 3.0, 2.0 / 3.0, 1e15,
                                    1e16 + 1.0, 9007199254740993.0, 1e21, 1e22, 1.7976931348623157e308,
                                    DBL_MIN, 4.9406564584124654e-324, 3.14159265358979,
                                    -273.15, 1234567.890625};
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++)
            CHECK(fmts[f], values[v]);
    CHECK("%f %F %f %F", INFINITY, -INFINITY, NAN, NAN);
    CHECK("[%8f] [%-8f] [%08f]", INFINITY, -INFINITY, INFINITY);
    CHECK("%.*f", 3, 2.0005);
    /* Random doubles of every magnitude, at a few precisions. */
    srand(7);
    for (int i = 0; i < 3000; i++) {
        uint64_t bits = ((uint64_t)rand() << 42) ^ ((uint64_t)rand() << 21) ^ (uint64_t)rand();
        bits &= 0x7FEFFFFFFFFFFFFFull;  /* finite */
        bits = (bits & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(0x3C0 + rand() % 0x90) << 52); /* 2^-63 .. 2^80 */
        double v;
        memcpy(&v, &bits, sizeof v);
        if (rand() & 1)
            v = -v;
        CHECK("%f", v);
        CHECK("%.12f", v);
        CHECK("%.0f", v);
    }
}

static void test_bounds(void)
{
    char buf[8];
    memset(buf, 'x', sizeof buf);
    int n = emb_snprintf(buf, 5, "%d-%s", 1234, "abcdef");
    ok_eq(n, 11, "returns the full length");
    ok(!strcmp(buf, "1234") && buf[5] == 'x', "writes at most size bytes, NUL included");
    ok_eq(emb_snprintf(NULL, 0, "%s", "abc"), 3, "size 0 writes nothing");
    char u[32];
    emb_snprintf(u, sizeof u, "%q %e %d", 5);
    ok(!strcmp(u, "%q %e 5"), "unknown conversions are copied as written: '%s'", u);
}

int main(void)
{
    test_integers();
    test_chars_strings_pointers();
    test_floats();
    ok_eq(same, cases, "emb_snprintf prints what snprintf prints (%u cases)", cases);
    test_bounds();
    return emb_test_done();
}
