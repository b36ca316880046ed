/* The catalogue library: the real catalogue against SPEC-015 §3.1, layouts worked out by
 * hand, the checksum's canonical text and what it does and does not depend on, every
 * validation error with its line, and the TSDL read back by babeltrace2 over a packet
 * holding one event of each kind. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <emb/crc.h>
#include <emb/trace_format.h>
#include <emb/wire.h>

#include "callsite_values.h"
#include "catalog.h"
#include "harness.h"

#ifndef EMB_SOURCE_DIR
#error "EMB_SOURCE_DIR must name the source tree"
#endif
#ifndef EMB_BABELTRACE2
#define EMB_BABELTRACE2 ""
#endif

static struct emb_catalog *parse(const char *text, char *err, size_t errlen)
{
    return emb_catalog_parse(text, strlen(text), "t.yaml", err, errlen);
}

/* ---- SPEC-015 §3.1: every class and its events ---- */

static const struct {
    const char *cls;
    const char *events;
} spec_classes[] = {
    {"sched", "switch ready yield sched_lock sched_unlock idle_enter idle_exit"},
    {"thread", "thread_init thread_start thread_exit thread_join thread_suspend thread_resume "
               "thread_cancel thread_priority thread_destroy"},
    {"wait", "wait_begin wait_end wake requeue"},
    {"sync", "mutex_lock mutex_unlock prio_inherit pi_depth_exceeded deadlock_detected sem_give "
             "event_set cond_signal"},
    {"ipc", "msgq_send msgq_receive msgq_full_block pipe_write pipe_read pipe_close pool_alloc "
            "pool_free pool_transfer"},
    {"notify", "notify_set notify_wait bind_signal"},
    {"work", "work_submit work_start work_end work_cancel dwork_schedule"},
    {"time", "tick timeout_arm timeout_fire timer_expire timer_overrun tickless_sleep "
             "tickless_wake"},
    {"irq", "irq_enter irq_exit irq_lock_max"},
    {"tp", "budget_consumed budget_overrun replenish share_filter deadline_miss"},
    {"obj", "obj_init obj_destroy cap_grant cap_derive cap_delete cap_revoke system_freeze"},
    {"part", "partition_fault partition_restart partition_suspend partition_resume cap_denied "
             "irq_delivered syscall"},
    {"power", "state_enter state_exit device_suspend device_resume"},
    {"user", "user_event"},
};

static void test_spec_classes(const struct emb_catalog *cat)
{
    for (size_t i = 0; i < sizeof spec_classes / sizeof spec_classes[0]; i++) {
        const struct emb_catalog_class *cls = emb_catalog_class(cat, spec_classes[i].cls);
        if (!ok(cls != NULL, "class %s present", spec_classes[i].cls))
            continue;
        char list[512];
        snprintf(list, sizeof list, "%s", spec_classes[i].events);
        size_t found = 0, wanted = 0;
        for (char *name = strtok(list, " "); name != NULL; name = strtok(NULL, " ")) {
            const struct emb_catalog_event *ev = emb_catalog_find(cat, name);
            wanted++;
            if (ev != NULL && ev->cls == cls)
                found++;
            else
                diag("missing %s in %s", name, cls->name);
        }
        ok_eq(found, wanted, "class %s has its %zu events", cls->name, wanted);
    }
}

/* ---- Layouts by hand ---- */

static const struct emb_catalog_field *field(const struct emb_catalog_event *ev, const char *name)
{
    for (size_t i = 0; ev != NULL && i < ev->nfields; i++)
        if (strcmp(ev->fields[i].name, name) == 0)
            return &ev->fields[i];
    return NULL;
}

static uint32_t offset_of(const struct emb_catalog *cat, const char *ev, const char *f)
{
    const struct emb_catalog_field *fl = field(emb_catalog_find(cat, ev), f);
    return fl != NULL ? fl->offset : 0xFFFFFFFFu;
}

static void test_layout(const struct emb_catalog *cat)
{
    const struct emb_catalog_event *sw = emb_catalog_find(cat, "switch");
    ok(sw != NULL && sw->id == 1 && sw->size == 16 && sw->payload_size == 8,
       "switch: id 1, 16 bytes");
    ok_eq(offset_of(cat, "switch", "from"), 0, "switch.from @0");
    ok_eq(offset_of(cat, "switch", "to"), 2, "switch.to @2");
    ok_eq(offset_of(cat, "switch", "reason"), 4, "switch.reason @4");
    ok(emb_catalog_event(cat, 1) == sw, "lookup by id");

    const struct emb_catalog_event *oi = emb_catalog_find(cat, "obj_init");
    const struct emb_catalog_field *name = field(oi, "name");
    ok(name != NULL && name->type == EMB_CAT_CHARS && name->size == 16 && name->align == 4,
       "obj_init.name is char[16], aligned 4");
    ok_eq(offset_of(cat, "obj_init", "type"), 0, "obj_init.type @0");
    ok_eq(offset_of(cat, "obj_init", "handle"), 4, "obj_init.handle @4");
    ok_eq(offset_of(cat, "obj_init", "name"), 8, "obj_init.name @8 (4-aligned)");
    ok_eq(oi->size, 32, "obj_init is 32 bytes");

    const struct emb_catalog_event *lm = emb_catalog_find(cat, "irq_lock_max");
    ok_eq(offset_of(cat, "irq_lock_max", "pc"), 4, "irq_lock_max.pc (u64) @4: 4-byte aligned");
    ok(lm->size == 20 && field(lm, "pc")->align == 4 && field(lm, "pc")->size == 8,
       "irq_lock_max is 20 bytes");
    ok_eq(offset_of(cat, "partition_fault", "code"), 4, "partition_fault.code @4");
    ok_eq(offset_of(cat, "partition_fault", "pc"), 8, "partition_fault.pc @8");
    ok_eq(emb_catalog_find(cat, "partition_fault")->size, 24, "partition_fault is 24 bytes");
    ok_eq(offset_of(cat, "wake", "waker"), 2, "wake.waker @2 after a u8");
    ok_eq(offset_of(cat, "wake", "result"), 6, "wake.result @6");
    ok_eq(emb_catalog_find(cat, "wake")->size, 16, "wake is 16 bytes");
    ok_eq(emb_catalog_find(cat, "yield")->size, 8, "yield: header only");
    ok_eq(offset_of(cat, "syscall", "status"), 4, "syscall.status (i16) @4");

    /* Default and explicit comparison policies. */
    ok(field(emb_catalog_find(cat, "sched_unlock"), "duration")->compare ==
           EMB_CAT_COMPARE_IGNORE,
       "cycles field defaults to compare: ignore");
    ok(field(emb_catalog_find(cat, "switch"), "from")->compare == EMB_CAT_COMPARE_EXACT,
       "other fields default to exact");
    ok(field(emb_catalog_find(cat, "pool_alloc"), "block")->compare == EMB_CAT_COMPARE_IGNORE,
       "explicit compare: ignore");
    const struct emb_catalog_field *reason = field(sw, "reason");
    ok(reason->nvalues == 6 && strcmp(emb_catalog_value_label(reason, 1), "block") == 0 &&
           emb_catalog_value_label(reason, 99) == NULL,
       "switch.reason labels");
    ok(field(oi, "handle")->hex && field(oi, "handle")->meaning == EMB_CAT_MEANING_HANDLE,
       "display: hex and meaning: handle");

    /* Every event fits CONFIG_EMB_TRACE_MAX_PAYLOAD and every offset is aligned. */
    size_t bad = 0, n = 0;
    for (uint32_t id = 1; id <= 65535u; id++) {
        const struct emb_catalog_event *ev = emb_catalog_event(cat, (uint16_t)id);
        if (ev == NULL)
            continue;
        n++;
        bad += ev->payload_size > 64 || ev->payload_size % 4 != 0 || ev->size != 8 + ev->payload_size;
        for (size_t i = 0; i < ev->nfields; i++)
            bad += ev->fields[i].offset % ev->fields[i].align != 0;
    }
    ok(n >= 80 && bad == 0, "%zu events, all aligned and within 64 bytes", n);
}

/* The layouts written in the comments of tests/target/data/all_types.yaml. */
static void test_all_types_layout(const struct emb_catalog *cat)
{
    static const struct {
        const char *event;
        uint32_t offsets[5];
        uint32_t payload;
    } want[] = {
        {"i64_odd", {0, 4, 12}, 16},        {"i64_even", {0, 8}, 12},
        {"u64_tail", {0, 4}, 12},           {"three_u64", {0, 8, 16}, 24},
        {"signed_mix", {0, 2, 4, 8}, 12},   {"bools", {0, 1, 2, 4}, 8},
        {"odd_u16", {0, 2, 4, 6, 8}, 12},   {"signed_enum", {0}, 4},
        {"text_misaligned", {0, 4, 12}, 16}, {"text_two", {0, 4, 36}, 40},
        {"text_full", {0, 32}, 64},         {"keywords", {0, 2, 4, 8}, 12},
        {"empty", {0}, 0},
    };
    size_t good = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct emb_catalog_event *ev = emb_catalog_find(cat, want[i].event);
        bool same = ev != NULL && ev->payload_size == want[i].payload &&
                    ev->size == 8 + want[i].payload;
        for (size_t f = 0; same && f < ev->nfields; f++)
            same = ev->fields[f].offset == want[i].offsets[f];
        if (!same)
            diag("layout of %s differs", want[i].event);
        good += same;
    }
    ok_eq(good, sizeof want / sizeof want[0], "every-type catalogue: all layouts as by hand");
    ok(cat->version == 3 && cat->nclasses == 3 && cat->classes[2].id == 31 &&
           emb_catalog_event(cat, 0xFFFF) == emb_catalog_find(cat, "text_misaligned"),
       "class 31 and event id 0xFFFF");
    const struct emb_catalog_field *v = field(emb_catalog_find(cat, "signed_enum"), "v");
    ok(v != NULL && strcmp(emb_catalog_value_label(v, -5), "neg") == 0, "negative label");
}

/* ---- Reading fields back ---- */

static void test_field_get(void)
{
    char err[256];
    struct emb_catalog *cat = parse("version: 1\n"
                                    "classes:\n"
                                    "  - name: c\n"
                                    "    id: 3\n"
                                    "    events:\n"
                                    "      - name: e\n"
                                    "        id: 0x10\n"
                                    "        fields:\n"
                                    "          - {name: a, type: i8}\n"
                                    "          - {name: b, type: i16}\n"
                                    "          - {name: c, type: i64}\n"
                                    "          - {name: d, type: u64}\n"
                                    "          - {name: f, type: bool}\n",
                                    err, sizeof err);
    if (!ok(cat != NULL, "signed fields parse")) {
        diag("%s", err);
        return;
    }
    const struct emb_catalog_event *ev = emb_catalog_event(cat, 0x10);
    uint8_t p[24] = {0};
    p[0] = 0xFE;
    emb_put_le16(p + 2, 0x8000);
    emb_put_le64(p + 4, (uint64_t)-5);
    emb_put_le64(p + 12, 0xFEDCBA9876543210u);
    p[20] = 1;
    ok_eq(ev->payload_size, 24, "i8 i16 i64 u64 bool: 24 bytes");
    ok_eq(emb_catalog_field_get_int(&ev->fields[0], p), -2, "i8 sign-extended");
    ok_eq(emb_catalog_field_get_int(&ev->fields[1], p), -32768, "i16 sign-extended");
    ok_eq(emb_catalog_field_get_int(&ev->fields[2], p), -5, "i64 @4");
    ok(emb_catalog_field_get_uint(&ev->fields[3], p) == 0xFEDCBA9876543210u, "u64 @12");
    ok_eq(emb_catalog_field_get_uint(&ev->fields[4], p), 1, "bool @20");
    ok_eq(emb_catalog_field_get_uint(&ev->fields[1], p), 0x8000, "i16 read unsigned");
    emb_catalog_free(cat);
}

/* ---- Checksum ---- */

static const char base_yaml[] = "version: 1\n"
                                "classes:\n"
                                "  - name: a\n"
                                "    id: 0\n"
                                "    doc: First.\n"
                                "    events:\n"
                                "      - name: e\n"
                                "        id: 1\n"
                                "        doc: An event.\n"
                                "        fields:\n"
                                "          - {name: x, type: u8}\n"
                                "          - {name: y, type: u32, meaning: cycles}\n"
                                "          - {name: s, type: \"char[8]\"}\n"
                                "      - {name: z, id: 0x20}\n"
                                "  - name: b\n"
                                "    id: 5\n"
                                "    events:\n"
                                "      - name: g\n"
                                "        id: 2\n"
                                "        fields:\n"
                                "          - {name: v, type: i16, values: {lo: -1, hi: 1}}\n";

static uint32_t checksum_of(const char *yaml)
{
    char err[256];
    struct emb_catalog *cat = parse(yaml, err, sizeof err);
    if (cat == NULL) {
        diag("%s", err);
        return 0;
    }
    uint32_t c = cat->checksum;
    emb_catalog_free(cat);
    return c;
}

/* Replaces the first `from` in base_yaml by `to`. */
static uint32_t checksum_with(const char *from, const char *to)
{
    char buf[2048];
    const char *at = strstr(base_yaml, from);
    if (at == NULL) {
        diag("test bug: `%s` not in the base catalogue", from);
        return 0;
    }
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - base_yaml), base_yaml, to,
             at + strlen(from));
    return checksum_of(buf);
}

static void test_checksum(void)
{
    const char canon[] = "class 0 a\n"
                         "class 5 b\n"
                         "event 1 e 0\n"
                         "field x u8 0\n"
                         "field y u32 4\n"
                         "field s char[8] 8\n"
                         "event 2 g 5\n"
                         "field v i16 0\n"
                         "event 32 z 0\n";
    uint32_t base = checksum_of(base_yaml);
    ok_eq(base, emb_crc32(0, canon, strlen(canon)),
          "checksum is the CRC-32 of the canonical text of docs/formats/trace.md");

    ok_eq(checksum_with("version: 1\n", "# a comment\nversion:    1   # trailing\n\n"), base,
          "comments and white space do not change it");
    ok_eq(checksum_with("doc: An event.", "doc: Something else entirely."), base,
          "docs do not change it");
    ok_eq(checksum_with("    doc: First.\n", ""), base, "removing a doc does not change it");
    ok_eq(checksum_with("meaning: cycles}", "meaning: cycles, compare: {tolerance_pct: 5}}"),
          base, "compare policies do not change it");
    ok_eq(checksum_with("{name: x, type: u8}", "{name: x, type: u8, compare: ignore}"), base,
          "compare: ignore does not change it");
    ok_eq(checksum_with("{name: x, type: u8}", "{name: x, type: u8, display: hex}"), base,
          "display does not change it");
    ok_eq(checksum_with("{name: x, type: u8}", "{type: u8, name: x}"), base,
          "key order does not change it");
    ok_eq(checksum_with("id: 1\n", "id: 0x0001\n"), base, "hex or decimal ids are the same");

    ok(checksum_with("{name: x, type: u8}", "{name: x, type: i8}") != base,
       "a field type changes it");
    ok(checksum_with("{name: x, type: u8}", "{name: x, type: u16}") != base,
       "a field size (and the offsets after it) changes it");
    ok(checksum_with("id: 1\n", "id: 3\n") != base, "an event id changes it");
    ok(checksum_with("    id: 5\n", "    id: 6\n") != base, "a class id changes it");
    ok(checksum_with("name: x,", "name: w,") != base, "a field name changes it");
    ok(checksum_with("name: g\n", "name: h\n") != base, "an event name changes it");
    ok(checksum_with("\"char[8]\"", "\"char[12]\"") != base, "a char[N] length changes it");
}

/* ---- Validation errors ---- */

struct bad_case {
    const char *what;
    const char *yaml;
    const char *where;   /* "t.yaml:LINE:" */
    const char *message; /* a part of the message */
};

#define HEAD "version: 1\nclasses:\n  - name: a\n    id: 0\n    events:\n" /* 5 lines */

static const struct bad_case bad_cases[] = {
    {"duplicate event id",
     HEAD "      - {name: e1, id: 1}\n"
          "      - {name: e2, id: 0x0001}\n",
     "t.yaml:7:", "event id 0x0001 is already `e1` (line 6)"},
    {"duplicate event name across classes",
     HEAD "      - {name: e1, id: 1}\n"
          "  - name: b\n"
          "    id: 1\n"
          "    events:\n"
          "      - {name: e1, id: 2}\n",
     "t.yaml:10:", "event name `e1` is already used (line 6)"},
    {"duplicate class name",
     HEAD "      - {name: e1, id: 1}\n"
          "  - name: a\n"
          "    id: 1\n"
          "    events: []\n",
     "t.yaml:7:", "class name `a` is already used"},
    {"duplicate class id",
     HEAD "      - {name: e1, id: 1}\n"
          "  - name: b\n"
          "    id: 0\n"
          "    events: []\n",
     "t.yaml:8:", "class id 0 is already `a`"},
    {"bad type",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: f, type: u24}\n",
     "t.yaml:9:", "unknown type `u24`"},
    {"char[5]",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: f, type: u8}\n"
          "          - {name: g, type: \"char[5]\"}\n",
     "t.yaml:10:", "multiple of 4"},
    {"char[36]",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: g, type: \"char[36]\"}\n",
     "t.yaml:9:", "at most 32"},
    {"payload too big",
     HEAD "      - {name: small, id: 2}\n"
          "      - name: big\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: a, type: \"char[32]\"}\n"
          "          - {name: b, type: \"char[32]\"}\n"
          "          - {name: c, type: u8}\n",
     "t.yaml:7:", "payload of `big` is 68 bytes, more than 64"},
    {"class id 32",
     "version: 1\nclasses:\n  - name: a\n    id: 32\n    events: []\n", "t.yaml:4:",
     "class id 32 is out of range 0..31"},
    {"event id 0",
     HEAD "      - {name: e1, id: 0}\n", "t.yaml:6:", "event id 0 is out of range 1..65535"},
    {"event id 65536",
     HEAD "      - {name: e1, id: 0x10000}\n", "t.yaml:6:", "out of range 1..65535"},
    {"missing field name",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: f, type: u8}\n"
          "          - {type: u16}\n",
     "t.yaml:10:", "a field has no `name`"},
    {"missing event id",
     HEAD "      - name: e1\n"
          "        doc: no id\n",
     "t.yaml:6:", "an event has no `id`"},
    {"YAML syntax error",
     HEAD "      - name: e1\n"
          "        id: [1\n"
          "      - name: e2\n",
     "t.yaml:8:", "YAML syntax error"},
    {"bad indentation",
     HEAD "      - name: e1\n"
          "       id: 1\n",
     "t.yaml:7:", "YAML syntax error"},
    {"duplicate key",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        id: 2\n",
     "t.yaml:8:", "duplicate key `id`"},
    {"unknown key",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        feilds: []\n",
     "t.yaml:8:", "unknown key `feilds`"},
    {"name not an identifier",
     HEAD "      - {name: 2fast, id: 1}\n", "t.yaml:6:", "not a lower-case C identifier"},
    {"field name a keyword",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: int, type: u8}\n",
     "t.yaml:9:", "C keyword"},
    {"duplicate field",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: f, type: u8}\n"
          "          - {name: f, type: u16}\n",
     "t.yaml:10:", "field `f` appears twice"},
    {"value out of the type's range",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - name: f\n"
          "            type: u8\n"
          "            values: {a: 0, b: 256}\n",
     "t.yaml:11:", "out of range 0..255"},
    {"duplicate enumeration value",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: f, type: i8, values: {a: -1, b: -1}}\n",
     "t.yaml:9:", "value -1 is already `a`"},
    {"unknown compare policy",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: f, type: u32, compare: fuzzy}\n",
     "t.yaml:9:", "unknown compare policy `fuzzy`"},
    {"negative tolerance",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: f, type: u32, compare: {tolerance: -3}}\n",
     "t.yaml:9:", "not a number >= 0"},
    {"values on a text field",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields:\n"
          "          - {name: f, type: \"char[4]\", values: {a: 1}}\n",
     "t.yaml:9:", "`values` needs an integer field"},
    {"fields not a list",
     HEAD "      - name: e1\n"
          "        id: 1\n"
          "        fields: {name: f, type: u8}\n",
     "t.yaml:8:", "`fields` must be a list, not a mapping"},
    {"no classes", "version: 1\nclasses: []\n", "t.yaml:2:", "1 to 32 classes"},
    {"invalid UTF-8", HEAD "      - {name: e1, id: 1, doc: \"caf\xC3\x28\"}\n", "t.yaml:6:37:",
     "invalid"},
    {"empty", "# nothing\n", "t.yaml:1:", "empty"},
    {"two documents", HEAD "      - {name: e1, id: 1}\n---\nversion: 2\n", "t.yaml:8:",
     "second YAML document"},
};

static void test_errors(void)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *b = &bad_cases[i];
        char err[512] = "";
        struct emb_catalog *cat = parse(b->yaml, err, sizeof err);
        bool right = cat == NULL && strncmp(err, b->where, strlen(b->where)) == 0 &&
                     strstr(err, b->message) != NULL;
        if (!ok(right, "%s: refused at %s", b->what, b->where))
            diag("    got: %s", cat != NULL ? "(accepted)" : err);
        emb_catalog_free(cat);
    }
    char err[256];
    ok(emb_catalog_load("/nonexistent/trace_events.yaml", err, sizeof err) == NULL &&
           strstr(err, "/nonexistent/trace_events.yaml: ") == err,
       "a missing file is named in the error");
    /* An alias cycle must not send the walker round in circles. */
    struct emb_catalog *cat = parse("&a {version: 1, classes: [*a]}\n", err, sizeof err);
    ok(cat == NULL && strstr(err, "t.yaml:1:") == err, "a recursive alias is refused");
    emb_catalog_free(cat);
}

/* ---- TSDL read back by babeltrace2 ---- */

static bool write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return false;
    bool good = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && good;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    size_t n;
    while (s != NULL && (n = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            char *t = realloc(s, cap * 2);
            if (t == NULL) {
                free(s);
                s = NULL;
                break;
            }
            s = t;
            cap *= 2;
        }
    }
    fclose(f);
    if (s != NULL)
        s[len] = '\0';
    return s;
}

/* A packet header and context as docs/formats/trace.md lays them out. */
static void packet_header(uint8_t *pkt, const uint8_t uuid[16], uint32_t packet_size,
                          uint32_t content, uint64_t ts_begin, uint64_t ts_end)
{
    emb_put_le32(pkt + EMB_PKT_OFF_MAGIC, EMB_PKT_MAGIC);
    memcpy(pkt + EMB_PKT_OFF_UUID, uuid, 16);
    emb_put_le32(pkt + EMB_PKT_OFF_STREAM_ID, 0);
    emb_put_le32(pkt + EMB_PKT_OFF_INSTANCE, 2);
    emb_put_le32(pkt + EMB_PKT_OFF_SEQ, 0);
    emb_put_le64(pkt + EMB_PKT_OFF_TS_BEGIN, ts_begin);
    emb_put_le64(pkt + EMB_PKT_OFF_TS_END, ts_end);
    emb_put_le32(pkt + EMB_PKT_OFF_CONTENT_SIZE, content * 8u);
    emb_put_le32(pkt + EMB_PKT_OFF_PACKET_SIZE, packet_size * 8u);
    emb_put_le32(pkt + EMB_PKT_OFF_DISCARDED, 0);
    emb_put_le16(pkt + EMB_PKT_OFF_CONTEXT_ID, 2);
    emb_put_le16(pkt + EMB_PKT_OFF_CONTEXT_KIND, EMB_CONTEXT_THREAD);
}

/* Runs babeltrace2 on dir/trace with its output in dir/out.txt; returns its exit status. */
static int run_babeltrace(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' '%s/trace' > '%s/out.txt' 2> '%s/err.txt'", EMB_BABELTRACE2,
             dir, dir, dir);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool write_trace(const char *dir, const struct emb_catalog *cat,
                        const struct emb_tsdl_params *params, const uint8_t *pkt, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/trace", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/trace/metadata", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    bool good = emb_catalog_write_tsdl(cat, params, f) == 0;
    good = fclose(f) == 0 && good;
    snprintf(path, sizeof path, "%s/trace/stream_2", dir);
    return good && write_file(path, pkt, len);
}

static void remove_trace(const char *dir)
{
    static const char *const files[] = {"trace/metadata", "trace/stream_2", "out.txt",
                                        "err.txt", "trace"};
    char path[512];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        remove(path);
    }
}

/* What babeltrace2's text output shows for field i of an event recorded with the
 * callsite values. */
static void expected_text(const struct emb_catalog_event *ev, size_t i, unsigned pass, char *out,
                          size_t len)
{
    const struct emb_catalog_field *f = &ev->fields[i];
    int64_t v = emb_test_field_value(ev, i, pass);
    if (f->type == EMB_CAT_CHARS) {
        char s[64];
        emb_test_field_string(ev, i, pass, s, sizeof s);
        snprintf(out, len, "%s = \"%.*s\"", f->name, (int)f->size, s);
    } else if (f->nvalues > 0) {
        snprintf(out, len, "%s = ( \"%s\" : container = %lld )", f->name,
                 emb_catalog_value_label(f, v), (long long)v);
    } else if (f->hex) {
        snprintf(out, len, "%s = 0x%llX", f->name, (unsigned long long)v &
                 (f->size == 8 ? ~0ull : (1ull << (8 * f->size)) - 1u));
    } else if (f->type == EMB_CAT_U64) {
        snprintf(out, len, "%s = %llu", f->name, (unsigned long long)v);
    } else {
        snprintf(out, len, "%s = %lld", f->name, (long long)v);
    }
}

/* Writes one event of each kind of `cat` plus `last` again at the end into a packet,
 * has babeltrace2 read it with the catalogue's metadata, and compares every value. */
static void test_babeltrace(const struct emb_catalog *cat, const char *last)
{
    if (!ok(EMB_BABELTRACE2[0] != '\0', "babeltrace2 found at configure time"))
        return;
    char dir[] = "/tmp/emb-test-catalog-XXXXXX";
    if (!ok(mkdtemp(dir) != NULL, "temporary directory"))
        return;
    const uint8_t uuid[16] = {0x5e, 0x1f, 0x0c, 0x2a, 0x11, 0x22, 0x43, 0x44,
                              0x95, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc};

    /* An empty packet: header and context only. */
    static uint8_t pkt[32768];
    memset(pkt, 0, sizeof pkt);
    packet_header(pkt, uuid, 256, EMB_PKT_HEADER_SIZE, 1000, 2000);
    struct emb_tsdl_params params = {.clock_hz = 1000000000u};
    memcpy(params.uuid, uuid, 16);
    ok(write_trace(dir, cat, &params, pkt, 256), "wrote metadata and an empty packet");
    int rc = run_babeltrace(dir);
    if (!ok(rc == 0, "babeltrace2 accepts the metadata and an empty packet (exit %d)", rc)) {
        char path[512];
        snprintf(path, sizeof path, "%s/err.txt", dir);
        char *e = read_text(path);
        diag("%s", e != NULL ? e : "");
        free(e);
    }
    remove_trace(dir);

    /* One event of every kind, fields laid out by the catalogue, with a 1 MHz clock, an
     * offset, a port and a build id in the metadata. */
    /* Every event by id, then `last` again: a last event with tail padding is the case
     * where babeltrace2 would read past the content if the padding were not declared. */
    static const struct emb_catalog_event *order[2 * 65536];
    static unsigned passes[2 * 65536];
    uint32_t count = 0;
    for (unsigned pass = 0; pass < EMB_TEST_PASSES; pass++) {
        for (uint32_t id = 1; id <= 65535u; id++) {
            if (emb_catalog_event(cat, (uint16_t)id) == NULL)
                continue;
            passes[count] = pass;
            order[count++] = emb_catalog_event(cat, (uint16_t)id);
        }
    }
    passes[count] = 0;
    order[count++] = emb_catalog_find(cat, last);
    uint32_t pos = EMB_PKT_HEADER_SIZE, nev = 0;
    for (uint32_t k = 0; k < count; k++) {
        const struct emb_catalog_event *ev = order[k];
        unsigned pass = passes[k];
        if (pos + ev->size > sizeof pkt) {
            ok(false, "the events fit a %zu-byte packet", sizeof pkt);
            count = k;
            break;
        }
        uint8_t *e = pkt + pos;
        emb_put_le32(e, 5000u + 10u * nev);
        emb_put_le16(e + 4, ev->id);
        emb_put_le16(e + 6, (uint16_t)(nev % 3u));
        for (size_t i = 0; i < ev->nfields; i++) {
            const struct emb_catalog_field *f = &ev->fields[i];
            uint64_t v = (uint64_t)emb_test_field_value(ev, i, pass);
            uint8_t *q = e + 8 + f->offset;
            if (f->type == EMB_CAT_CHARS) {
                char s[64];
                emb_test_field_string(ev, i, pass, s, sizeof s);
                memcpy(q, s, strlen(s) < f->size ? strlen(s) : f->size);
            } else if (f->size == 1) {
                q[0] = (uint8_t)v;
            } else if (f->size == 2) {
                emb_put_le16(q, (uint16_t)v);
            } else if (f->size == 4) {
                emb_put_le32(q, (uint32_t)v);
            } else {
                emb_put_le64(q, v);
            }
        }
        pos += ev->size;
        nev++;
    }
    packet_header(pkt, uuid, sizeof pkt, pos, 4000, 9000 + 10u * nev);
    params.clock_hz = 1000000u;
    params.clock_offset_ns = 1700000000123456789;
    params.port = "native-x86_64";
    params.build_id_hex = "0123456789abcdef";
    ok(write_trace(dir, cat, &params, pkt, sizeof pkt), "wrote a packet of %u events", nev);
    rc = run_babeltrace(dir);
    ok_eq(rc, 0, "babeltrace2 reads every event of the catalogue");
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char *text = read_text(path);
    snprintf(path, sizeof path, "%s/err.txt", dir);
    char *errs = read_text(path);
    ok(errs != NULL && errs[0] == '\0', "babeltrace2 has no warning about the metadata");
    if (errs != NULL && errs[0] != '\0')
        diag("%s", errs);
    free(errs);

    /* Each output line holds its event's name, flags and every field value in order. */
    uint32_t lines_ok = 0, n = 0;
    char *line = text;
    for (uint32_t k = 0; k < count && line != NULL; k++) {
        const struct emb_catalog_event *ev = order[k];
        unsigned pass = passes[k];
        char *end = strchr(line, '\n');
        if (end == NULL)
            break;
        *end = '\0';
        char want[256];
        snprintf(want, sizeof want, ") %s: { context_id = 2, context_kind = 1 }, { flags = %u }",
                 ev->name, (unsigned)(n % 3u));
        const char *at = strstr(line, want);
        bool same = at != NULL;
        for (size_t i = 0; same && i < ev->nfields; i++) {
            expected_text(ev, i, pass, want, sizeof want);
            const char *next = strstr(at, want);
            if (next == NULL)
                diag("%s: `%s` not in: %s", ev->name, want, line);
            same = next != NULL;
            at = next;
        }
        lines_ok += same;
        n++;
        line = end + 1;
    }
    ok_eq(lines_ok, nev, "babeltrace2 shows every field of all %u events as recorded", nev);
    ok(line != NULL && line[0] == '\0', "and nothing more");
    free(text);
    remove_trace(dir);
    rmdir(dir);
}

static void test_tsdl_text(const struct emb_catalog *cat)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct emb_tsdl_params p = {.clock_hz = 32768, .clock_offset_ns = -1500000000};
    ok(f != NULL && emb_catalog_write_tsdl(cat, &p, f) == 0, "TSDL written");
    fclose(f);
    ok(strncmp(buf, "/* CTF 1.8 */", 13) == 0, "begins with /* CTF 1.8 */");
    ok(strstr(buf, "offset_s = -2;") != NULL && strstr(buf, "offset = 16384;") != NULL,
       "negative clock offset: -2 s + 16384 ticks of 32768 Hz");
    ok(strstr(buf, "freq = 32768;") != NULL, "clock frequency");
    ok(strstr(buf, "integer { size = 64; align = 32; signed = false; base = 16; } pc;") != NULL,
       "u64 declared 4-byte aligned");
    ok(strstr(buf, "name = \"obj_init\";\n\tid = 321;") != NULL, "event block by name and id");
    ok(strstr(buf, "port =") == NULL && strstr(buf, "build_id =") == NULL,
       "no port or build id when not given");
    char word[64];
    snprintf(word, sizeof word, "catalog_checksum = %u;", (unsigned)cat->checksum);
    ok(strstr(buf, word) != NULL, "env.catalog_checksum");
    free(buf);
}

int main(void)
{
    char err[512];
    struct emb_catalog *cat =
        emb_catalog_load(EMB_SOURCE_DIR "/catalog/trace_events.yaml", err, sizeof err);
    if (!ok(cat != NULL, "the real catalogue parses")) {
        diag("%s", err);
        return emb_test_done();
    }
    ok_eq(cat->version, 1, "catalogue version 1");
    ok(cat->nclasses == 15 && cat->classes[0].id == 0 && cat->classes[14].id == 14,
       "15 classes, sorted by id");
    ok(emb_catalog_builtin() != NULL && emb_catalog_builtin()->checksum == cat->checksum &&
           emb_catalog_builtin() == emb_catalog_builtin(),
       "built-in catalogue: same checksum, parsed once");
    test_spec_classes(cat);
    test_layout(cat);
    test_field_get();
    test_checksum();
    test_errors();
    test_tsdl_text(cat);
    test_babeltrace(cat, "switch");
    emb_catalog_free(cat);

    cat = emb_catalog_load(EMB_SOURCE_DIR "/tests/target/data/all_types.yaml", err, sizeof err);
    if (!ok(cat != NULL, "the every-type test catalogue parses")) {
        diag("%s", err);
        return emb_test_done();
    }
    test_all_types_layout(cat);
    test_babeltrace(cat, "signed_mix");
    emb_catalog_free(cat);
    return emb_test_done();
}
