/* Reading event dumps as calls and chains, and the ops file that names opcodes. */
#define _POSIX_C_SOURCE 200809L
#include "events_chain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static struct emb_svc_event evs[64];
static size_t nev;

static void add(const char *caller, const char *peer, uint8_t op, uint8_t kind)
{
    struct emb_svc_event *e = &evs[nev++];
    memset(e, 0, sizeof *e);
    e->seq = (uint32_t)nev;
    snprintf(e->caller, sizeof e->caller, "%s", caller);
    snprintf(e->peer, sizeof e->peer, "%s", peer);
    e->op = op;
    e->kind = kind;
}

static char *write_file(const char *text)
{
    static char path[] = "/tmp/emb-ops-XXXXXX";
    strcpy(path, "/tmp/emb-ops-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        diag("cannot write %s", path);
    close(fd);
    return path;
}

/* Loads an ops file, its problem's text ("FILE: message") in err. */
static struct emb_events_ops *load_ops(const char *path, char *err, size_t errlen)
{
    struct emb_problems ps;
    emb_problems_init(&ps, path);
    struct emb_events_ops *ops = emb_events_ops_load(path, &ps);
    err[0] = '\0';
    if (ps.n > 0)
        snprintf(err, errlen, "%s: %s", ps.items[0].file, ps.items[0].message);
    emb_problems_free(&ps);
    return ops;
}

static void test_ops_file(void)
{
    char err[256];
    char *p = write_file("# opcode names\nfs 1 read   # the common one\nfs 0x2 stat\n\n"
                         "block-driver 1 read_block\n");
    struct emb_events_ops *ops = load_ops(p, err, sizeof err);
    ok(ops != NULL, "ops file loads");
    ok(ops && strcmp(emb_events_op_name(ops, "fs", 1), "read") == 0, "fs 1 = read");
    ok(ops && strcmp(emb_events_op_name(ops, "fs", 2), "stat") == 0, "hex opcode");
    ok(ops && emb_events_op_name(ops, "fs", 3) == NULL, "unknown opcode: NULL");
    char buf[64];
    ok(strcmp(emb_events_target(ops, "fs", 9, buf, sizeof buf), "fs.9") == 0,
       "an unnamed opcode prints as its number");
    emb_events_ops_free(ops);
    unlink(p);

    p = write_file("fs 1 read\nfs 300 big\n");
    ops = load_ops(p, err, sizeof err);
    ok(ops == NULL && strstr(err, "line 2 (byte 13)") != NULL && strstr(err, "0 to 255"),
       "bad opcode named by line and byte: %s", err);
    unlink(p);
    p = write_file("fs 1\n");
    ops = load_ops(p, err, sizeof err);
    ok(ops == NULL && strstr(err, "line 1 (byte 0)") && strstr(err, "PEER OPCODE NAME"),
       "missing name: %s", err);
    unlink(p);
    p = write_file("a-name-longer-than-12 1 x\n");
    ok(load_ops(p, err, sizeof err) == NULL && strstr(err, "12 bytes"),
       "long peer refused: %s", err);
    unlink(p);
    ok(load_ops("/nonexistent/ops", err, sizeof err) == NULL &&
           strstr(err, "/nonexistent/ops"), "missing file named: %s", err);
}

static void test_chain(void)
{
    char err[256];
    char *p = write_file("fs 1 read\nblock-driver 7 read_block\n");
    struct emb_events_ops *ops = load_ops(p, err, sizeof err);
    unlink(p);

    nev = 0;
    add("fs", "block-driver", 7, EMB_SVC_KIND_REPLY);          /* 0: its request left the ring */
    add("client", "fs", 1, EMB_SVC_KIND_REQUEST);              /* 1 */
    add("fs", "block-driver", 7, EMB_SVC_KIND_REQUEST);        /* 2 */
    add("fs", "block-driver", 7, EMB_SVC_KIND_REPLY);          /* 3 */
    add("client", "fs", 1, EMB_SVC_KIND_REPLY);                /* 4 */
    add("client", "fs", 1, EMB_SVC_KIND_REQUEST);              /* 5 */
    add("client", "fs", 1, EMB_SVC_KIND_TIMEOUT);              /* 6 */
    add("client", "fs", 1, EMB_SVC_KIND_REQUEST);              /* 7 */
    add("client", "fs", 1, EMB_SVC_KIND_QUEUE_FULL);           /* 8 */
    add("client", "fs", 1, EMB_SVC_KIND_REQUEST);              /* 9 */
    add("fs", "block-driver", 7, EMB_SVC_KIND_REQUEST);        /* 10 */
    add("client", "fs", 1, EMB_SVC_KIND_ABORTED);              /* 11: the user gave up */
    add("fs", "block-driver", 7, EMB_SVC_KIND_PEER_LOST);      /* 12 */
    add("backup", "fs", 1, EMB_SVC_KIND_REQUEST);              /* 13: still outstanding */

    struct emb_events_calls c;
    ok_eq(emb_events_calls_build(evs, nev, &c), 0, "calls built");
    ok_eq(c.count, 8, "14 events are 8 calls");
    ok(c.call[0].request == EMB_EVENTS_NONE && c.call[0].outcome == 0 &&
           c.call[0].kind == EMB_SVC_KIND_REPLY, "an outcome without its request is a call");
    size_t read = c.of_event[1], block = c.of_event[2];
    ok(c.of_event[4] == read && c.call[read].outcome == 4 && c.call[read].kind == EMB_SVC_KIND_REPLY,
       "client's request and reply pair");
    ok(c.call[block].parent == read && c.call[block].depth == 1 && c.of_event[3] == block,
       "fs's call to block-driver serves client's call to fs");
    char buf[160];
    ok(strcmp(emb_events_chain(&c, evs, ops, block, buf, sizeof buf),
              "client -> fs.read -> block-driver.read_block") == 0, "chain: %s", buf);
    ok(strcmp(emb_events_chain(&c, evs, ops, read, buf, sizeof buf), "client -> fs.read") == 0,
       "root chain: %s", buf);
    ok(c.call[c.of_event[6]].kind == EMB_SVC_KIND_TIMEOUT && c.of_event[5] == c.of_event[6],
       "timeout closes its request");
    ok(c.call[c.of_event[8]].kind == EMB_SVC_KIND_QUEUE_FULL && c.of_event[7] == c.of_event[8],
       "queue full closes its request");
    size_t lost = c.of_event[12];
    ok(c.call[c.of_event[11]].kind == EMB_SVC_KIND_ABORTED && c.call[lost].kind ==
           EMB_SVC_KIND_PEER_LOST && c.call[lost].parent == c.of_event[9],
       "a call that outlives its aborted parent is still linked to it");
    size_t open = c.of_event[13];
    ok(c.call[open].outcome == EMB_EVENTS_NONE && c.call[open].kind == EMB_SVC_KIND_REQUEST,
       "an outstanding call has no outcome");
    ok(strcmp(emb_events_chain(&c, evs, ops, c.of_event[0], buf, sizeof buf),
              "fs -> block-driver.read_block") == 0, "orphan chain starts at its caller: %s", buf);
    emb_events_calls_free(&c);
    ok_eq(emb_events_calls_build(evs, 0, &c), 0, "an empty dump builds");
    ok_eq(c.count, 0, "no calls");
    emb_events_calls_free(&c);
    emb_events_ops_free(ops);
}

int main(void)
{
    test_ops_file();
    test_chain();
    return emb_test_done();
}
