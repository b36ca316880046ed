/* The base layer: the problem sink, growing buffers and arrays, numbers from text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "harness.h"
#include "parse_number.h"
#include "problem.h"

struct seen {
    int calls;
    long long offset;
    enum emb_severity severity;
    char file[32], message[64];
};

static void remember(void *arg, const struct emb_problem *p)
{
    struct seen *s = arg;
    s->calls++;
    s->offset = p->offset;
    s->severity = p->severity;
    snprintf(s->file, sizeof s->file, "%s", p->file ? p->file : "");
    snprintf(s->message, sizeof s->message, "%s", p->message);
}

static void test_problems(void)
{
    struct emb_problems ps;
    emb_problems_init(&ps, "run.emb");
    ps.max_kept = 2;
    emb_report(&ps, EMB_WARNING, 40, "torn packet %d", 3);
    emb_report(&ps, EMB_NOTE, -7, "clock adjusted");
    emb_report(&ps, EMB_ERROR, 0, "bad magic");
    ok_eq(ps.n, 2, "the list keeps max_kept problems");
    ok(!strcmp(ps.items[0].message, "torn packet 3") && ps.items[0].offset == 40 &&
           !strcmp(ps.items[0].file, "run.emb") && ps.items[0].severity == EMB_WARNING,
       "a kept problem has its file, offset, severity and message");
    ok_eq(ps.items[1].offset, -1, "a negative offset is none");
    ok_eq(emb_problems_at_least(&ps, EMB_WARNING), 2, "counts past the list's end");
    ok_eq(emb_problems_at_least(&ps, EMB_ERROR), 1, "one error");
    ok_eq(emb_problems_dropped(&ps), 1, "one not kept");
    emb_problems_free(&ps);

    struct seen s = {0};
    emb_problems_init_callback(&ps, "live", remember, &s);
    emb_report(&ps, EMB_ERROR, 12, "frame CRC");
    ok(s.calls == 1 && s.offset == 12 && s.severity == EMB_ERROR && !strcmp(s.file, "live") &&
           !strcmp(s.message, "frame CRC"),
       "a callback sink gets each problem at once");
    ok_eq(ps.n, 0, "and keeps none");
    ok_eq(emb_problems_dropped(&ps), 0, "a callback drops nothing");
    emb_report_in(&ps, "other.yaml", EMB_WARNING, 3, "about %s", "another file");
    ok(s.calls == 2 && !strcmp(s.file, "other.yaml") && !strcmp(s.message, "about another file"),
       "a problem about another input names that input");
    emb_report(&ps, EMB_NOTE, -1, "then the sink's own");
    ok(!strcmp(s.file, "live"), "and the sink's own file stays");
    emb_report(NULL, EMB_ERROR, 0, "nobody listens");
    ok(1, "a NULL sink takes a problem and nothing happens");
    ok(!strcmp(emb_severity_name(EMB_WARNING), "warning"), "severity names");
}

static void test_buffers(void)
{
    struct emb_buf b = {0};
    for (int i = 0; i < 1000; i++)
        emb_buf_append_byte(&b, (uint8_t)i);
    emb_buf_printf(&b, "<%s:%d>", "end", 7);
    ok(b.len == 1007 && b.data[999] == (uint8_t)999 && !memcmp(b.data + 1000, "<end:7>", 7),
       "appends and printf land in order");
    size_t len;
    uint8_t *p = emb_buf_take(&b, &len);
    ok(p != NULL && len == 1007 && b.data == NULL && b.len == 0, "take hands the bytes over");
    free(p);

    struct emb_buf huge = {0};
    emb_buf_append_byte(&huge, 1);
    ok(!emb_buf_reserve(&huge, SIZE_MAX) && huge.failed, "an impossible size fails");
    ok(!emb_buf_append_byte(&huge, 2), "and every later append fails too");
    ok(emb_buf_take(&huge, &len) == NULL && len == 0, "a failed buffer hands over nothing");

    size_t cap = 0;
    uint32_t *a = emb_array_grow(NULL, &cap, 1, sizeof *a);
    ok(a != NULL && cap == 16, "an array starts at 16");
    uint32_t *a2 = emb_array_grow(a, &cap, 17, sizeof *a);
    ok(a2 != NULL && cap == 32, "and doubles");
    size_t keep = cap;
    ok(emb_array_grow(a2, &cap, SIZE_MAX / 2, sizeof *a2) == NULL && cap == keep,
       "an overflowing size fails and leaves the array alone");
    free(a2);
}

static void test_numbers(void)
{
    uint64_t u = 99;
    ok(emb_parse_u64("42", 0, 100, &u) == 0 && u == 42, "decimal");
    ok(emb_parse_u64("0x2A", 0, 100, &u) == 0 && u == 42, "hexadecimal");
    ok(emb_parse_u64("010", 0, 100, &u) == 0 && u == 10, "a leading zero is not octal");
    u = 7;
    ok(emb_parse_u64("101", 0, 100, &u) == -1 && u == 7, "out of range leaves *out");
    ok(emb_parse_u64("-1", 0, UINT64_MAX, &u) == -1, "no sign on an unsigned number");
    ok(emb_parse_u64(" 1", 0, 9, &u) == -1 && emb_parse_u64("1 ", 0, 9, &u) == -1 &&
           emb_parse_u64("", 0, 9, &u) == -1 && emb_parse_u64("0x", 0, 9, &u) == -1,
       "junk around the digits is refused");
    ok(emb_parse_u64("18446744073709551616", 0, UINT64_MAX, &u) == -1, "past 64 bits");
    int64_t i;
    ok(emb_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &i) == 0 && i == INT64_MIN,
       "the most negative number");
    ok(emb_parse_i64("-5", -4, 4, &i) == -1, "a signed range");
    double d;
    ok(emb_parse_double("2.5", 0, 10, &d) == 0 && d == 2.5, "a decimal fraction");
    ok(emb_parse_double("nan", -1e9, 1e9, &d) == -1 && emb_parse_double("1e999", 0, 1e300, &d) == -1,
       "not a number, or infinite, refused");
    ok(emb_parse_size("64K", 0, UINT64_MAX, &u) == 0 && u == 65536, "K");
    ok(emb_parse_size("3G", 0, UINT64_MAX, &u) == 0 && u == (UINT64_C(3) << 30), "G");
    ok(emb_parse_size("17179869184G", 0, UINT64_MAX, &u) == -1, "a suffix that overflows");
    ok(emb_parse_size("4KB", 0, UINT64_MAX, &u) == -1, "a suffix with junk");
}

int main(void)
{
    test_problems();
    test_buffers();
    test_numbers();
    return emb_test_done();
}
