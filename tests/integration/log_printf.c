/* Every conversion of the log's printf subset, logged through the real call sites on the
 * native port, and the same call printed by the C library's printf into an expectations
 * file: `emb log` must print exactly the latter (log_printf.sh compares them; a clipped
 * %s differs only by its clip mark). Built twice: deferred, and with CONFIG_EMB_LOG_TEXT
 * (the target's own formatter writes the text).
 *
 * usage: log_printf STREAM EXPECTED */
#define _GNU_SOURCE
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

EMB_LOG_MODULE_DEFINE(conv, EMB_LOG_LEVEL_DBG);

static FILE *expected;

static void expect(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void expect(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(expected, fmt, ap);
    va_end(ap);
    fputc('\n', expected);
}

/* The same call, twice: into the log and through printf. */
#define BOTH(...)                                                                             \
    do {                                                                                      \
        EMB_LOG_INF(conv, __VA_ARGS__);                                                       \
        expect(__VA_ARGS__);                                                                  \
    } while (0)

/* "#hexdump TITLE-IN-HEX LENGTH BYTES-IN-HEX": the checker needs no quoting. */
static void hexdump(const void *buf, size_t len, const char *title)
{
    const uint8_t *p = buf;
    fputs("#hexdump ", expected);
    for (const char *t = title; *t != '\0'; t++)
        fprintf(expected, "%02x", (unsigned char)*t);
    fprintf(expected, " %zu ", len);
    for (size_t i = 0; i < len; i++)
        fprintf(expected, "%02x", p[i]);
    fputc('\n', expected);
}

enum color { RED, GREEN = 7 };

static void conversions(void)
{
    int zero = 0, neg = -12345;
    unsigned big = 4000000000u;
    /* Integers: every conversion, flag, width and precision. */
    BOTH("d %d i %i u %u x %x X %X", neg, 77, big, 0xBEEFu, 0xBEEFu);
    BOTH("zero %d %i %u %x %X", zero, zero, 0u, 0u, 0u);
    BOTH("limits %d %d %u %x", INT_MIN, INT_MAX, UINT_MAX, UINT_MAX);
    BOTH("widths [%8d] [%-8d] [%08d] [%+d] [% d] [%+8d]", neg, neg, neg, 5, 5, -5);
    BOTH("precision [%.5d] [%8.3d] [%-8.3d] [%.0d] [%.0u]", 42, -42, 42, 0, 0u);
    BOTH("hex [%#x] [%#X] [%#010x] [%08X] [%-#8x] [%.4x]", 255u, 255u, 255u, 0xABCu, 0x1Fu, 0x7u);
    BOTH("octal %o %#o", 8u, 8u);
    BOTH("star [%*d] [%-*d] [%.*d] [%*.*d]", 7, 42, 7, 42, 4, 42, 9, 5, -42);
    /* 64-bit. */
    long long ll = -9223372036854775807LL - 1;
    unsigned long long ull = 18446744073709551615ULL;
    BOTH("lld %lld %lld llu %llu %llx %llX", ll, 1234567890123456789LL, ull, ull, 0x0123456789ABCDEFULL);
    BOTH("64 widths [%25lld] [%-25llu] [%+lld] [%.20llu]", ll, 42ULL, 7LL, 5ULL);
    BOTH("int64_t %" PRId64 " uint64_t %" PRIu64 " %" PRIx64, (int64_t)-5, (uint64_t)1 << 63, (uint64_t)0xFFFF);
    BOTH("long %ld %lu size_t %zu ptrdiff_t %td", -7L, 7UL, (size_t)123456789, (ptrdiff_t)-99);
    /* Narrow types (promoted like printf's arguments) and their length modifiers. */
    signed char sc = -100;
    unsigned char uc = 200;
    short sh = -30000;
    unsigned short ush = 60000;
    bool flag = true;
    BOTH("narrow %d %u %d %u %d %hhd %hhu %hd %hu", sc, uc, sh, ush, flag, sc, uc, sh, ush);
    BOTH("fixed %" PRId8 " %" PRIu8 " %" PRId16 " %" PRIu16 " %" PRId32 " %" PRIu32, (int8_t)-8,
         (uint8_t)250, (int16_t)-16, (uint16_t)65000, (int32_t)-32, (uint32_t)32);
    BOTH("enum %d %d", RED, GREEN);
    /* Characters. */
    char c = 'Q';
    BOTH("char [%c] [%3c] [%-3c] [%c]", c, 'x', 'y', 65);
    /* Strings: empty, short, exactly the limit, over it, NULL, with widths and precision. */
    const char *volatile null = NULL; /* volatile: printf of a visible NULL is warned about */
    char exact[CONFIG_EMB_LOG_STR_MAX + 1];
    memset(exact, 'e', CONFIG_EMB_LOG_STR_MAX);
    exact[CONFIG_EMB_LOG_STR_MAX] = '\0';
    char buffer[16] = "in a buffer";
    BOTH("s [%s] [%s] [%s]", "", "short", buffer);
    BOTH("limit [%s]", exact);
    BOTH("long [%s] and after", "a string well over the thirty-two bytes a log record keeps");
    BOTH("null [%s]", null);
    BOTH("widths [%10s] [%-10s] [%.3s] [%10.2s] [%-*s]", "abc", "abc", "abcdef", "abcdef", 6, "ab");
    BOTH("bytes [%s]", "tab\there, utf-8 \xc3\xa9t\xc3\xa9, quote \" backslash \\");
    /* Byte buffers: uint8_t, unsigned char and signed char strings, const or not, are the
     * strings they hold, as printf prints them. */
    uint8_t rx[12] = "uart rx";
    const uint8_t *rx_const = rx;
    unsigned char uname[8] = "uchar";
    signed char sname[8] = "schar";
    const signed char *sname_const = sname;
    BOTH("uint8_t [%s] [%s] [%.4s] [%-9s]", rx, rx_const, (const unsigned char *)"unsigned", uname);
    BOTH("signed char [%s] [%8s]", sname, sname_const);
    /* Pointers. */
    int x;
    BOTH("p %p %p", (void *)&x, (void *)NULL);
    BOTH("p widths [%20p] [%-20p]", (void *)&x, (void *)0x1000);
    const int *cp = &x;
    BOTH("typed pointer %p", (const void *)cp);
    /* Floating point. */
    double third = 1.0 / 3.0;
    float f = 2.5f;
    BOTH("f %f %f %f %f", 0.0, -0.0, 1.5, -273.15);
    BOTH("f precision %.0f %.1f %.2f %.10f %.17f", third, third, 2.675, third, 0.1);
    BOTH("f widths [%12.4f] [%-12.4f] [%012.4f] [%+.3f] [% .3f] [%#.0f]", M_PI, M_PI, -M_PI, 1.0, 1.0, 3.0);
    BOTH("f ties %.0f %.0f %.0f %.1f %.2f", 0.5, 1.5, 2.5, 0.25, 1.005);
    BOTH("f big %f %.1f", 1e15, 1e22);
    if (!CONFIG_EMB_LOG_TEXT) /* longer than the text backend's line (the library's setting) */
        BOTH("f huge %f %.3f", 1e300, DBL_MAX);
    BOTH("f small %f %.20f %.3f", 1e-7, DBL_MIN, 4.9e-324);
    BOTH("f special %f %f %F %f", INFINITY, -INFINITY, INFINITY, NAN);
    BOTH("float arg %f %.1f", f, f * 3);
    BOTH("F %F", 1e10);
    BOTH("star %.*f [%*.*f]", 3, M_E, 10, 2, M_E);
    /* Percent, no arguments, many arguments. */
    BOTH("100%% sure, %d%%", 99);
    BOTH("no arguments at all");
    BOTH("many %d %u %x %s %lld %c %f %p %d %u %x %s %d %d %d", 1, 2u, 3u, "four", 5LL, '6', 7.0,
         (void *)8, 9, 10u, 11u, "twelve", 13, 14, 15);
    /* Hexdumps: short, empty, clipped. */
    uint8_t data[200];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7u + 1u);
    EMB_LOG_HEXDUMP_DBG(conv, data, 20, "rx frame");
    hexdump(data, 20, "rx frame");
    EMB_LOG_HEXDUMP_DBG(conv, data, 0, "empty");
    hexdump(data, 0, "empty");
    EMB_LOG_HEXDUMP_DBG(conv, data, sizeof data, "big");
    hexdump(data, sizeof data, "big");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: log_printf STREAM EXPECTED\n");
        return 2;
    }
    expected = fopen(argv[2], "w");
    struct emb_native_config nc = {.stream_fd = -1};
    if (expected == NULL || emb_native_init(&nc) != EMB_OK)
        return 1;
    struct emb_native_log_config lc = {.path = argv[1], .fd = -1, .text = CONFIG_EMB_LOG_TEXT != 0};
    emb_status s = emb_native_log_start(&lc);
    if (s != EMB_OK) {
        fprintf(stderr, "log_printf: cannot start the log: %s\n", emb_strerror(s));
        return 1;
    }
    conversions();
    emb_native_log_stop();
    emb_native_shutdown();
    fclose(expected);
    return 0;
}
