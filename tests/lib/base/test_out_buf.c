/* The hand-written formatting of out_buf.h against the C library's printf, the reference
 * each helper promises to match byte for byte: integers, hex, seconds, "%.9Lf" over a
 * sweep of clock rates and tick counts (the time column of `emb log`), aligned columns,
 * JSON strings against emb_json_write_string, and output longer than one block. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json.h"
#include "out_buf.h"

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A value of a random magnitude: every digit count is met. */
static uint64_t random_magnitude(void) { return next_random() >> (next_random() % 64u); }

static void test_integers(void)
{
    char got[64], want[64];
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t v = i < 64 ? (UINT64_C(1) << i) - 1u : random_magnitude();
        got[emb_fmt_u64(got, v)] = 0;
        snprintf(want, sizeof want, "%" PRIu64, v);
        bad += strcmp(got, want) != 0;
        got[emb_fmt_i64(got, (int64_t)v)] = 0;
        snprintf(want, sizeof want, "%" PRId64, (int64_t)v);
        bad += strcmp(got, want) != 0;
        unsigned digits = (unsigned)(next_random() % 20u);
        got[emb_fmt_hex(got, v, digits)] = 0;
        snprintf(want, sizeof want, "%0*" PRIx64, (int)digits, v);
        bad += strcmp(got, want) != 0;
        got[emb_fmt_seconds_ns(got, v)] = 0;
        snprintf(want, sizeof want, "%" PRIu64 ".%09" PRIu64, v / 1000000000u, v % 1000000000u);
        bad += strcmp(got, want) != 0;
    }
    for (uint64_t p = 1;; p *= 10u) {
        for (uint64_t v = p - 1u; v <= p + 1u; v++) { /* where the digit count changes */
            got[emb_fmt_u64(got, v)] = 0;
            snprintf(want, sizeof want, "%" PRIu64, v);
            bad += strcmp(got, want) != 0;
        }
        if (p == UINT64_C(10000000000000000000))
            break;
    }
    got[emb_fmt_u64(got, UINT64_MAX)] = 0;
    bad += strcmp(got, "18446744073709551615") != 0;
    got[emb_fmt_i64(got, INT64_MIN)] = 0;
    ok(bad == 0 && strcmp(got, "-9223372036854775808") == 0,
       "decimal, hex and seconds as printf writes them (%d differ)", bad);
}

/* The time column of `emb log`: (ts - origin) / hz in long double, as "%.9Lf". */
static void test_seconds_ldouble(void)
{
    static const uint64_t rates[] = {1u, 3u, 1000u, 32768u, 1000000u, 16000000u, 48000000u,
                                     64000000u, 168000000u, 1000000000u, 2000000000u,
                                     3000000000u, UINT64_C(18446744073709551557)};
    char got[64], want[64];
    int bad = 0, ties = 0;
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        for (int i = 0; i < 40000; i++) {
            uint64_t ts = random_magnitude(), origin = i % 3 == 0 ? random_magnitude() : 0u;
            if (i % 7 == 1) /* exact halves of a nanosecond: ties round to even */
                ts = (next_random() % 1000000u) * 2u + 1u, origin = 0;
            long double v = ((long double)ts - (long double)origin) / (long double)rates[r];
            got[emb_fmt_ldouble9(got, v)] = 0;
            snprintf(want, sizeof want, "%.9Lf", v);
            bad += strcmp(got, want) != 0;
            ties += rates[r] == 2000000000u && i % 7 == 1;
        }
    }
    long double edges[] = {0.0L, -0.0L, 1e-10L, -1e-10L, 0.0000000005L, 0.0000000015L,
                           0.9999999995L, 18446744073709551615.0L, -18446744073709551615.0L};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        got[emb_fmt_ldouble9(got, edges[i])] = 0;
        snprintf(want, sizeof want, "%.9Lf", edges[i]);
        bad += strcmp(got, want) != 0;
    }
    ok(bad == 0 && ties > 0, "%%.9Lf over 13 clock rates, 520,000 tick counts (%d exact ties): "
                             "%d differ", ties, bad);
}

/* The bytes a function wrote to a FILE. */
static char *written(void (*fn)(FILE *, const void *), const void *arg, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    fn(f, arg);
    fclose(f);
    return text;
}

struct bytes {
    const char *s;
    size_t n;
};

static void json_reference(FILE *f, const void *arg)
{
    const struct bytes *b = arg;
    emb_json_write_string(f, b->s, b->n);
}

static void json_ours(FILE *f, const void *arg)
{
    const struct bytes *b = arg;
    struct emb_out o;
    emb_out_init(&o, f);
    emb_out_json_string(&o, b->s, b->n);
    emb_out_finish(&o);
}

static void test_json_strings(void)
{
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        char s[40];
        size_t n = next_random() % sizeof s;
        for (size_t k = 0; k < n; k++) /* ASCII mostly, with controls and high bytes */
            s[k] = (char)(i % 3 ? 0x20 + next_random() % 0x60 : next_random() % 256u);
        struct bytes b = {s, n};
        size_t la, lb;
        char *a = written(json_reference, &b, &la), *c = written(json_ours, &b, &lb);
        bad += la != lb || memcmp(a, c, la) != 0;
        free(a);
        free(c);
    }
    ok(bad == 0, "JSON strings as emb_json_write_string writes them (%d differ)", bad);
}

static void long_output(FILE *f, const void *arg)
{
    (void)arg;
    struct emb_out o;
    emb_out_init(&o, f);
    for (uint64_t i = 0; i < 300000; i++) {
        emb_out_align_right(&o, "ab", 2, 5);
        emb_out_align_left(&o, "c", 1, 3);
        emb_out_u64(&o, i);
        emb_out_char(&o, '\n');
    }
    emb_out_finish(&o);
}

static void long_reference(FILE *f, const void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < 300000; i++)
        fprintf(f, "%*s%-*s%" PRIu64 "\n", 5, "ab", 3, "c", i);
}

static void test_blocks(void)
{
    size_t la, lb;
    char *a = written(long_reference, NULL, &la), *b = written(long_output, NULL, &lb);
    ok(la > 2u * EMB_OUT_BLOCK && la == lb && memcmp(a, b, la) == 0,
       "aligned columns over %zu bytes, several blocks, as printf writes them", la);
    free(a);
    free(b);
}

int main(void)
{
    test_integers();
    test_seconds_ldouble();
    test_json_strings();
    test_blocks();
    return emb_test_done();
}
