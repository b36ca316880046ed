/* Formats outside what the deferred log reproduces. Built two ways by
 * log_unsupported.sh:
 *
 *   -DCASE=N with -Wall -Werror: cases 4 and 5 alone must fail to compile (the call
 *   site's -Wformat check refuses them), and CASE=0, the supported forms, must compile;
 *   the whole program with -Wformat off (as a user who silenced it): `emb log` must mark
 *   each conversion it cannot reproduce in the text and exit 1, and print what the C
 *   library prints for the forms printf takes (repeated flags).
 *
 * usage: log_unsupported STREAM EXPECTED */
#define _GNU_SOURCE
#include <emb/log.h>
#include <emb/native.h>
#include <emb/native_log.h>

#include <stdio.h>
#include <wchar.h>

EMB_LOG_MODULE_DEFINE(fmt, EMB_LOG_LEVEL_DBG);

#ifndef CASE
#define CASE -1 /* every case, in one program */
#endif
#define ON(n) (CASE == (n) || CASE == -1)

static void calls(FILE *expected)
{
#if ON(0)
    EMB_LOG_INF(fmt, "supported: %d %s %5.2f %% %-8x|", 1, "two", 3.0, 4u);
    fprintf(expected, "supported: %d %s %5.2f %% %-8x|\n", 1, "two", 3.0, 4u);
#endif
#if ON(1)
    EMB_LOG_INF(fmt, "positional %2$d %1$d", 1, 2);
#endif
#if ON(2)
    EMB_LOG_INF(fmt, "errno text %m");
#endif
#if ON(3)
    EMB_LOG_INF(fmt, "wide %C", (wint_t)65);
#endif
#if ON(4)
    EMB_LOG_INF(fmt, "flagged percent [%5%]");
#endif
#if ON(5)
    /* 19 flag characters: printf takes each flag once, however often it is written. */
    EMB_LOG_INF(fmt, "flags [%-------------------5d] [%+++++++++++++++++ d]", 3, 4);
    fprintf(expected, "flags [%-------------------5d] [%+++++++++++++++++ d]\n", 3, 4);
#endif
    (void)expected;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: log_unsupported STREAM EXPECTED\n");
        return 2;
    }
    FILE *expected = fopen(argv[2], "w");
    struct emb_native_config nc = {.stream_fd = -1};
    if (expected == NULL || emb_native_init(&nc) != EMB_OK)
        return 1;
    struct emb_native_log_config lc = {.path = argv[1], .fd = -1};
    if (emb_native_log_start(&lc) != EMB_OK)
        return 1;
    calls(expected);
    emb_native_log_stop();
    emb_native_shutdown();
    fclose(expected);
    return 0;
}
