/* fs: the middle of the example's chain. READ asks block-driver for the block (so a client's
 * read is the chain client -> fs.read -> block-driver.read_block); STAT answers at once.
 * Requests whose deadline passed while fs was not reading are dropped unanswered. */
#define _POSIX_C_SOURCE 200809L
#include <emb/wire.h>

#include <stdio.h>
#include <string.h>

#include "svc_ipc.h"
#include "svc_proto.h"

/* How long fs waits for block-driver at most, whatever its caller allows. */
#define FS_DOWNSTREAM_MS 2000

static struct svc_peer block_driver;
static uint64_t reads, errors, expired;

static uint8_t status_of(enum emb_svc_kind k)
{
    switch (k) {
    case EMB_SVC_KIND_REPLY:
        return SVC_OK;
    case EMB_SVC_KIND_TIMEOUT:
        return SVC_ERR_TIMEOUT;
    case EMB_SVC_KIND_QUEUE_FULL:
        return SVC_ERR_QUEUE_FULL;
    case EMB_SVC_KIND_ABORTED:
        return SVC_ERR_ABORTED;
    default:
        return SVC_ERR_PEER_LOST;
    }
}

static void do_read(int conn, uint32_t id, uint32_t block, uint64_t deadline)
{
    uint8_t req[BD_REQ_LEN] = {0}, rep[SVC_MSG_MAX];
    uint64_t now = svc_now_ms(), until = deadline > 20 ? deadline - 20 : deadline;
    if (until > now + FS_DOWNSTREAM_MS)
        until = now + FS_DOWNSTREAM_MS;
    req[BD_OFF_OP] = BD_OP_READ_BLOCK;
    emb_put_le64(req + BD_OFF_DEADLINE, until);
    emb_put_le32(req + BD_OFF_LBA, block);
    size_t rep_len = 0;
    enum emb_svc_kind k = svc_call(&block_driver, req, sizeof req, BD_OFF_ID, rep, sizeof rep,
                                   &rep_len, until, NULL);
    uint8_t status = status_of(k);
    if (k == EMB_SVC_KIND_REPLY && rep[4] != SVC_OK)
        status = rep[4];
    if (status == SVC_OK) {
        svc_reply(conn, id, SVC_OK, rep + 5, rep_len - 5);
        emb_svc_trace_metric(&emb_svc_self, "reads", ++reads);
    } else {
        svc_log("read of block %u failed: block-driver %s", (unsigned)block,
                emb_svc_kind_name(k));
        svc_reply(conn, id, status, NULL, 0);
        emb_svc_trace_metric(&emb_svc_self, "errors", ++errors);
    }
}

static void handle(int conn, const uint8_t *req, size_t len)
{
    if (len != FS_REQ_LEN) {
        svc_reply(conn, len >= 5 ? emb_get_le32(req + FS_OFF_ID) : 0, SVC_ERR_BAD_REQUEST, NULL, 0);
        return;
    }
    uint32_t id = emb_get_le32(req + FS_OFF_ID);
    uint64_t deadline = emb_get_le64(req + FS_OFF_DEADLINE);
    if (svc_now_ms() >= deadline) {
        emb_svc_trace_metric(&emb_svc_self, "expired", ++expired);
        return; /* its caller gave up already (it was queued while fs was stalled) */
    }
    switch (req[FS_OFF_OP]) {
    case FS_OP_READ:
        do_read(conn, id, emb_get_le32(req + FS_OFF_BLOCK), deadline);
        break;
    case FS_OP_STAT: {
        uint8_t size[8];
        emb_put_le64(size, 1u << 20);
        svc_reply(conn, id, SVC_OK, size, sizeof size);
        break;
    }
    default:
        svc_reply(conn, id, SVC_ERR_BAD_REQUEST, NULL, 0);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s RUN_DIR\n", argv[0]);
        return 2;
    }
    svc_init("fs");
    emb_svc_trace_set_op_offset(&emb_svc_self, "block-driver", BD_OFF_OP);
    svc_peer_init(&block_driver, argv[1], "block-driver");
    int listener = svc_listen(argv[1], "fs");
    svc_log("ready");
    svc_serve(listener, handle);
    svc_report_counters();
    return 0;
}
