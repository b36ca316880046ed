/* A firmware run whose names are hostile: an object, a thread and a logged string that
 * each hold an OSC title sequence (ESC ] 0;...BEL, which an xterm obeys), recorded with
 * the real library on the native port, for test_emb_chain.sh to pass through every command
 * that prints a name.
 *
 *   main: its context named CTX (a C1 control, CSI as UTF-8, then an OSC sequence),
 *         obj_init(queue, 0x51, NAME), obj_init(thread, 7, NAME), then 4 frames of
 *         msgq_send(0x51, 32, 1) and ready(7, wake); and one log record "name NAME"
 *
 * usage: hostile_names TRACE_OUT LOG_OUT */
#define _GNU_SOURCE
#include <emb/hooks.h>
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>
#include <emb/trace_events.h>

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

EMB_LOG_MODULE_DEFINE(hostile, EMB_LOG_LEVEL_INF);

static const char NAME[] = "\x1b]0;PW\x07q";
static const char CTX[] = "m\xc2\x9b" "2J\x1b]0;X\x07";

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: hostile_names TRACE_OUT LOG_OUT\n");
        return 2;
    }
    int log_fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    struct emb_native_config nc = {.mode = EMB_TRACE_MODE_SNAPSHOT, .stream_fd = -1};
    if (log_fd < 0 || emb_native_init(&nc) != EMB_OK)
        return 1;
    struct emb_native_log_config lc = {.fd = log_fd};
    if (emb_native_log_start(&lc) != EMB_OK)
        return 1;
    emb_native_context_name(CTX);
    EMB_TRACE_obj_init(3u, 0x51u, NAME);
    EMB_TRACE_obj_init(0u, 7u, NAME);
    for (unsigned i = 0; i < 4u; i++) { /* frames, so that emb diff has epochs to align */
        emb_frame_start(i);
        EMB_TRACE_msgq_send(0x51u, 32u, 1u);
        EMB_TRACE_ready(7u, 0u);
        emb_frame_end(i);
    }
    EMB_LOG_INF(hostile, "name %s", NAME);
    emb_native_log_stop();
    emb_status st = emb_native_trace_dump(argv[1]);
    emb_native_shutdown();
    close(log_fd);
    return st == EMB_OK ? 0 : 1;
}
