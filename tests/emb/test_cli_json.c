/* The JSON writer of tools/emb/cli.c: separators, nesting, escaping, UTF-8, numbers. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "harness.h"

static char *out_buf;
static size_t out_len;

static struct emb_json *start(bool pretty)
{
    static struct emb_json j;
    free(out_buf);
    out_buf = NULL;
    FILE *f = open_memstream(&out_buf, &out_len);
    emb_json_init(&j, f, pretty);
    return &j;
}

static const char *finish(struct emb_json *j)
{
    fclose(j->out);
    return out_buf;
}

static void check(struct emb_json *j, const char *expected, const char *what)
{
    const char *got = finish(j);
    ok(!strcmp(got, expected), "%s", what);
    if (strcmp(got, expected)) {
        diag("got      %s", got);
        diag("expected %s", expected);
    }
}

static void test_structure(void)
{
    struct emb_json *j = start(false);
    emb_json_begin_object(j, NULL);
    emb_json_int(j, "a", -5);
    emb_json_uint(j, "b", 18446744073709551615ull);
    emb_json_begin_array(j, "c");
    emb_json_bool(j, NULL, true);
    emb_json_null(j, NULL);
    emb_json_begin_object(j, NULL);
    emb_json_end_object(j);
    emb_json_begin_array(j, NULL);
    emb_json_end_array(j);
    emb_json_end_array(j);
    emb_json_string(j, "d", NULL);
    emb_json_raw(j, "e", "1.500");
    emb_json_end_object(j);
    emb_json_end(j);
    check(j, "{\"a\":-5,\"b\":18446744073709551615,\"c\":[true,null,{},[]],\"d\":null,\"e\":1.500}\n",
          "commas and nesting, compact");

    j = start(false);
    emb_json_begin_object(j, NULL);
    emb_json_int(j, "x", 1);
    emb_json_end_object(j);
    emb_json_end(j);
    emb_json_begin_object(j, NULL);
    emb_json_int(j, "x", 2);
    emb_json_end_object(j);
    emb_json_end(j);
    check(j, "{\"x\":1}\n{\"x\":2}\n", "one document per line after emb_json_end (NDJSON)");

    j = start(true);
    emb_json_begin_object(j, NULL);
    emb_json_int(j, "a", 1);
    emb_json_begin_array(j, "b");
    emb_json_int(j, NULL, 2);
    emb_json_end_array(j);
    emb_json_begin_array(j, "empty");
    emb_json_end_array(j);
    emb_json_end_object(j);
    emb_json_end(j);
    check(j, "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ],\n  \"empty\": []\n}\n", "pretty");

    j = start(true);
    j->flat_depth = 2;
    emb_json_begin_object(j, NULL);
    emb_json_begin_array(j, "ev");
    emb_json_begin_object(j, NULL);
    emb_json_int(j, "a", 1);
    emb_json_begin_object(j, "f");
    emb_json_int(j, "b", 2);
    emb_json_end_object(j);
    emb_json_end_object(j);
    emb_json_begin_object(j, NULL);
    emb_json_end_object(j);
    emb_json_end_array(j);
    emb_json_end_object(j);
    emb_json_end(j);
    check(j, "{\n  \"ev\": [\n    {\"a\": 1,\"f\": {\"b\": 2}},\n    {}\n  ]\n}\n",
          "flat_depth keeps deeper values on one line");
}

static void test_strings(void)
{
    struct emb_json *j = start(false);
    emb_json_begin_array(j, NULL);
    emb_json_string(j, NULL, "quote \" backslash \\ slash /");
    emb_json_string(j, NULL, "\n\r\t\b\f\x01\x1f\x7f");
    emb_json_string_n(j, NULL, "a\0b", 3);
    emb_json_string(j, NULL, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    emb_json_string(j, NULL, "bad \xff \xc3 \xe0\x80\x80 \xed\xa0\x80 \xf4\x90\x80\x80");
    emb_json_string_n(j, NULL, "\xe2\x82", 2);
    emb_json_end_array(j);
    emb_json_end(j);
    check(j,
          "[\"quote \\\" backslash \\\\ slash /\","
          "\"\\n\\r\\t\\b\\f\\u0001\\u001f\\u007f\","
          "\"a\\u0000b\","
          "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\","
          "\"bad \\ufffd \\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd\\ufffd\\ufffd\","
          "\"\\ufffd\\ufffd\"]\n",
          "control characters escaped, UTF-8 passed through, invalid bytes replaced");

    j = start(false);
    emb_json_begin_object(j, NULL);
    emb_json_int(j, "k\"\n", 1);
    emb_json_end_object(j);
    emb_json_end(j);
    check(j, "{\"k\\\"\\n\":1}\n", "keys are escaped too");
}

static void test_numbers(void)
{
    struct emb_json *j = start(false);
    emb_json_begin_array(j, NULL);
    emb_json_double(j, NULL, 0.1);
    emb_json_double(j, NULL, 1e300);
    emb_json_double(j, NULL, -2.5);
    emb_json_double(j, NULL, NAN);
    emb_json_double(j, NULL, INFINITY);
    emb_json_double(j, NULL, 1.0 / 3.0);
    emb_json_int(j, NULL, -9223372036854775807LL - 1);
    emb_json_end_array(j);
    emb_json_end(j);
    check(j, "[0.1,1e+300,-2.5,null,null,0.3333333333333333,-9223372036854775808]\n",
          "doubles round-trip in the shortest form; NaN and infinity are null");
}

/* Field tables: each kind at each width, signed ones sign-extended, a full char array
 * without its NUL cut at its size, a NULL string null; arrays of table-described objects. */
struct fields_sample {
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    uint32_t hex[2];
    bool flag;
    double ratio;
    const char *none, *some;
    char full[3], part[8];
};

#define SAMPLE(member, kind) EMB_JSON_FIELD(struct fields_sample, member, #member, kind)
static const struct emb_json_field SAMPLE_FIELDS[] = {
    SAMPLE(i8, INT),      SAMPLE(i16, INT),        SAMPLE(i32, INT),      SAMPLE(i64, INT),
    SAMPLE(u8, UINT),     SAMPLE(u16, UINT),       SAMPLE(u32, UINT),     SAMPLE(u64, UINT),
    SAMPLE(hex[1], HEX),  SAMPLE(flag, BOOL),      SAMPLE(ratio, DOUBLE), SAMPLE(none, STRING),
    SAMPLE(some, STRING), SAMPLE(full, TEXT),      SAMPLE(part, TEXT),
};
#undef SAMPLE

static void test_fields(void)
{
    struct fields_sample v[2] = {
        {-1, -300, -70000, INT64_MIN, 255, 65535, 4294967295u, UINT64_MAX, {0, 0xbeef}, true, 0.5,
         NULL, "s", {'a', 'b', 'c'}, "de"},
        {.some = "t", .part = "f"},
    };
    struct emb_json *j = start(false);
    emb_json_begin_object(j, NULL);
    EMB_JSON_FIELDS(j, &v[0], SAMPLE_FIELDS);
    emb_json_end_object(j);
    emb_json_end(j);
    check(j, "{\"i8\":-1,\"i16\":-300,\"i32\":-70000,\"i64\":-9223372036854775808,\"u8\":255,"
             "\"u16\":65535,\"u32\":4294967295,\"u64\":18446744073709551615,\"hex[1]\":\"0xbeef\","
             "\"flag\":true,\"ratio\":0.5,\"none\":null,\"some\":\"s\",\"full\":\"abc\",\"part\":\"de\"}\n",
          "a field table writes every kind at every width as the single calls would");
    static const struct emb_json_field TWO[] = {
        EMB_JSON_FIELD(struct fields_sample, u8, "n", UINT),
        EMB_JSON_FIELD(struct fields_sample, part, "s", TEXT),
    };
    j = start(false);
    emb_json_begin_object(j, NULL);
    EMB_JSON_FIELD_ARRAY(j, "rows", v, 2, TWO);
    EMB_JSON_FIELD_ARRAY(j, "none", v, 0, TWO);
    emb_json_end_object(j);
    emb_json_end(j);
    check(j, "{\"rows\":[{\"n\":255,\"s\":\"de\"},{\"n\":0,\"s\":\"f\"}],\"none\":[]}\n",
          "an array of table-described objects, and an empty one");
}

static void test_color(void)
{
    FILE *f = tmpfile();
    emb_color_set_mode(0);
    ok(!strcmp(emb_color_code(stdout, EMB_C_RED), ""), "--color=never: no escapes");
    emb_color_set_mode(1);
    ok(!strcmp(emb_color_code(f, EMB_C_RED), "\033[31m"), "--color=always: escapes on a file");
    emb_color_set_mode(-1);
    ok(!strcmp(emb_color_code(f, EMB_C_RED), ""), "auto: no escapes on a file");
    ok_eq(emb_color_parse(NULL), 1, "--color alone is always");
    ok_eq(emb_color_parse("never"), 0, "never");
    ok_eq(emb_color_parse("auto"), -1, "auto");
    ok_eq(emb_color_parse("blue"), -2, "anything else is an error");
    fclose(f);
    struct emb_progress *p = emb_progress_start("x", 10);
    ok(p == NULL || isatty(STDERR_FILENO), "no progress bar unless stderr is a terminal");
    emb_progress_update(p, 5);
    emb_progress_finish(p);
}

/* Terminal escapes: what xterm's ctlseqs document as controls (C0, DEL, and C1 in both
 * its 8-bit and UTF-8 forms) never pass; printable UTF-8 does. */
static void test_escape(void)
{
    char out[128];
    emb_text_escape_str(out, sizeof out, "\x1b]0;title\x07");
    ok(!strcmp(out, "\\x1B]0;title\\x07"), "OSC title sequence escaped: %s", out);
    emb_text_escape_str(out, sizeof out, "a\nb\tc\x7f");
    ok(!strcmp(out, "a\\x0Ab\\x09c\\x7F"), "newline, tab, DEL escaped: %s", out);
    emb_text_escape_str(out, sizeof out, "\xc2\x9b" "2J \x9b" "2J");
    ok(!strcmp(out, "\\xC2\\x9B2J \\x9B2J"), "CSI as UTF-8 C1 and as a raw byte escaped: %s", out);
    emb_text_escape_str(out, sizeof out, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82");
    ok(!strcmp(out, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82"), "printable UTF-8 kept: %s", out);
    emb_text_escape_str(out, sizeof out, "\xc0\xaf\xed\xa0\x80\xff");
    ok(!strcmp(out, "\\xC0\\xAF\\xED\\xA0\\x80\\xFF"), "overlong, surrogate, 0xFF escaped: %s", out);
    char small[6];
    emb_text_escape_str(small, sizeof small, "ab\x1b" "cd");
    ok(!strcmp(small, "ab"), "cut short before an escape that does not fit: %s", small);
    ok(emb_text_escape(out, sizeof out, "a\0b", 3) == 6 && !strcmp(out, "a\\x00b"),
       "a NUL inside the length is escaped: %s", out);
}

int main(void)
{
    test_escape();
    test_structure();
    test_strings();
    test_numbers();
    test_fields();
    test_color();
    free(out_buf);
    return emb_test_done();
}
