/* block-driver: the bottom of the example's chain. Answers READ_BLOCK with the block's bytes.
 * Its protocol keeps the opcode at byte 4, after the request id, which is why fs declares
 * emb_svc_trace_set_op_offset("block-driver", 4). */
#define _POSIX_C_SOURCE 200809L
#include <emb/wire.h>

#include <stdio.h>
#include <string.h>

#include "svc_ipc.h"
#include "svc_proto.h"

static uint64_t blocks_read;

static void handle(int conn, const uint8_t *req, size_t len)
{
    if (len != BD_REQ_LEN || req[BD_OFF_OP] != BD_OP_READ_BLOCK) {
        svc_reply(conn, len >= 4 ? emb_get_le32(req) : 0, SVC_ERR_BAD_REQUEST, NULL, 0);
        return;
    }
    uint32_t id = emb_get_le32(req + BD_OFF_ID);
    if (svc_now_ms() >= emb_get_le64(req + BD_OFF_DEADLINE))
        return; /* nobody waits for this answer any more */
    char block[BLOCK_BYTES];
    memset(block, 0, sizeof block);
    snprintf(block, sizeof block, "block %u", (unsigned)emb_get_le32(req + BD_OFF_LBA));
    svc_reply(conn, id, SVC_OK, block, sizeof block);
    emb_svc_trace_metric(&emb_svc_self, "blocks_read", ++blocks_read);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s RUN_DIR\n", argv[0]);
        return 2;
    }
    svc_init("block-driver");
    int listener = svc_listen(argv[1], "block-driver");
    svc_log("ready, serving blocks");
    svc_serve(listener, handle);
    svc_report_counters();
    return 0;
}
