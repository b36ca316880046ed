/* A small test harness: ok(), diag(), and a closing "N passed, N failed" line.
 * No fork, no malloc, no stdio beyond printf, so the same tests run on the host and
 * under QEMU over semihosting. Each test program includes this once and ends main() with
 * `return emb_test_done();`. */
#ifndef EMB_TEST_HARNESS_H
#define EMB_TEST_HARNESS_H

#include <stdarg.h>
#include <stdio.h>

static int emb_test_passed;
static int emb_test_failed;

#define ok(cond, ...) emb_test_ok((cond) ? 1 : 0, __FILE__, __LINE__, #cond, __VA_ARGS__)

/* Checks two integers for equality and prints both on failure. */
#define ok_eq(actual, expected, ...)                                                        \
    do {                                                                                    \
        long long emb__a = (long long)(actual), emb__e = (long long)(expected);            \
        if (!emb_test_ok(emb__a == emb__e, __FILE__, __LINE__, #actual " == " #expected,    \
                         __VA_ARGS__))                                                      \
            diag("    got %lld (0x%llx), expected %lld (0x%llx)", emb__a,                  \
                 (unsigned long long)emb__a, emb__e, (unsigned long long)emb__e);          \
    } while (0)

static inline void diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static inline int emb_test_ok(int pass, const char *file, int line, const char *expr,
                              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s %d - ", pass ? "ok" : "not ok", emb_test_passed + emb_test_failed + 1);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (pass) {
        emb_test_passed++;
    } else {
        emb_test_failed++;
        printf("#   failed at %s:%d: %s\n", file, line, expr);
    }
    return pass;
}

static inline int emb_test_done(void)
{
    printf("%d passed, %d failed\n", emb_test_passed, emb_test_failed);
    return emb_test_failed == 0 && emb_test_passed > 0 ? 0 : 1;
}

#endif /* EMB_TEST_HARNESS_H */
