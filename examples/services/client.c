/* client: calls fs as told on stdin, one command a line, and answers each with a line on
 * stdout counting how its calls ended (as the client saw them, independently of tracing):
 *
 *   read N DEADLINE_MS [notify]   N reads of fs, each with its own deadline; with notify,
 *   stat N DEADLINE_MS            "calling" is printed before each call
 *   quit
 *
 * SIGUSR1 is the user giving up: the wait in progress is abandoned (ABORTED). */
#define _POSIX_C_SOURCE 200809L
#include <emb/wire.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "svc_ipc.h"
#include "svc_proto.h"

static volatile sig_atomic_t give_up;

static void on_give_up(int sig)
{
    (void)sig;
    give_up = 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s RUN_DIR NAME\n", argv[0]);
        return 2;
    }
    svc_init(argv[2]);
    struct sigaction sa = {.sa_handler = on_give_up}; /* no SA_RESTART: the wait is cut short */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    struct svc_peer fs;
    svc_peer_init(&fs, argv[1], "fs");
    setvbuf(stdout, NULL, _IOLBF, 0);
    uint64_t calls = 0;
    char line[128];
    while (fgets(line, sizeof line, stdin)) {
        char cmd[16] = "", flag[16] = "";
        unsigned n = 0, deadline = 0;
        if (sscanf(line, "%15s %u %u %15s", cmd, &n, &deadline, flag) < 1 || !strcmp(cmd, "quit"))
            break;
        uint8_t op = !strcmp(cmd, "stat") ? FS_OP_STAT : FS_OP_READ;
        unsigned by_kind[EMB_SVC_KIND_MAX + 1] = {0}, failed = 0;
        for (unsigned i = 0; i < n; i++) {
            uint8_t req[FS_REQ_LEN] = {op}, rep[SVC_MSG_MAX];
            emb_put_le64(req + FS_OFF_DEADLINE, svc_now_ms() + deadline);
            emb_put_le32(req + FS_OFF_BLOCK, (uint32_t)(calls % 64));
            if (!strcmp(flag, "notify"))
                printf("calling\n");
            give_up = 0;
            size_t rep_len = 0;
            enum emb_svc_kind k = svc_call(&fs, req, sizeof req, FS_OFF_ID, rep, sizeof rep,
                                           &rep_len, svc_now_ms() + deadline, &give_up);
            by_kind[k]++;
            calls++;
            if (k == EMB_SVC_KIND_REPLY && rep[4] != SVC_OK) {
                failed++;
                svc_log("%s %u: fs answered with error %u", cmd, i, rep[4]);
            } else if (k != EMB_SVC_KIND_REPLY) {
                svc_log("%s %u: %s", cmd, i, emb_svc_kind_name(k));
            }
            emb_svc_trace_metric(&emb_svc_self, "calls", calls);
        }
        printf("done reply=%u errors=%u timeout=%u peer_lost=%u queue_full=%u aborted=%u\n",
               by_kind[EMB_SVC_KIND_REPLY], failed, by_kind[EMB_SVC_KIND_TIMEOUT],
               by_kind[EMB_SVC_KIND_PEER_LOST], by_kind[EMB_SVC_KIND_QUEUE_FULL],
               by_kind[EMB_SVC_KIND_ABORTED]);
    }
    svc_report_counters();
    return 0;
}
