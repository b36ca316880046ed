/* `emb capture`: seal one run into a capture file, from a trace stream file or live from
 * any capture source (tools/lib/acquire/capture_source.h). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <emb/trace_format.h>
#include <emb/wire.h>

#include "capture.h"
#include "capture_source.h"
#include "catalog_known.h"
#include "catalog.h"
#include "cli.h"
#include "input_file.h"
#include "emb_cmds.h"
#include "trace_decode.h"

static const char *const CMD = "emb capture";

static void help(FILE *out)
{
    fprintf(out,
            "Usage: emb capture [options] -o OUT.emb SOURCE\n"
            "       emb capture [options] -o OUT.emb --unix PATH | --tcp HOST:PORT --token-file FILE |\n"
            "                   --serial DEV | --swo FILE |\n"
            "                   --gdb HOST:PORT | --pid PID | --file FILE | --retained IMAGE\n"
            "\n"
            "Seals one run into a capture file (docs/formats/capture.md): the identity the\n"
            "firmware stamped, its window, the CTF metadata, the trace stream, and optional\n"
            "log, crash-record and descriptor sections, under a CRC-32 over every byte.\n"
            "SOURCE is a trace stream file (\"EMBT\") the native port dumped or streamed; it\n"
            "must decode cleanly with the catalogue it names. Or the run is captured live:\n"
            "\n"
            "Sources (docs/capture-sources.md):\n"
            "      --file FILE       the framed bytes a transport recorded (or a trace stream)\n"
            "      --unix PATH       the native port's record server on its owner-only socket\n"
            "                        (a server of another uid is refused)\n"
            "      --tcp HOST:PORT   the record server over TCP; --token-file FILE holds the\n"
            "                        secret it was given (EMB_SERVER_TOKEN), sent first\n"
            "      --serial DEV      a serial line carrying frames (--baud N, default 115200)\n"
            "      --swo FILE        a raw SWO capture: ITM stimulus port 1 trace, port 0 log\n"
            "      --gdb HOST:PORT   a GDB server (--elf FW): the trace rings, log rings and crash\n"
            "                        record, found through the debug descriptor and read while\n"
            "                        the target is halted for a moment at each poll; without\n"
            "                        a duration, count or --until-closed, one snapshot. Or the\n"
            "                        memory channel, polled (when the ELF has one, with --arm,\n"
            "                        or --via memchan; RAM is searched without --elf: --ram S:E)\n"
            "      --pid PID         a live process of the native port: its memory channel\n"
            "      --retained IMAGE  a retained ring's memory: the native port's region file,\n"
            "                        or a dump of the target's .noinit region after a reset\n"
            "  A live capture stops at the end of its source, after --count N packets, after\n"
            "  --duration SEC, once the target has stopped recording (--until-closed: its\n"
            "  window closed, or its class mask dropped to zero), or at Ctrl-C, and seals\n"
            "  what arrived, saying what was lost. --arm sends ARM_WINDOW first;\n"
            "  --save-trace OUT.embt keeps the assembled trace stream too, --save-log OUT.log\n"
            "  the log frames (for emb log), even when there is no trace to seal, and\n"
            "  --save-crash OUT.bin the crash record read through the descriptor or sent on\n"
            "  channel 2 (emb crash). A crash record the target sends (channel 2 frames, the\n"
            "  newest) becomes the capture's crash section, which emb crash CAPTURE reads.\n"
            "  --via descriptor|memchan chooses how --gdb reads; --poll-ms N sets its period.\n"
            "\n"
            "Options:\n"
            "  -o, --output OUT      the capture file to write (required)\n"
            "  -l, --label TEXT      what this run is: good, bad, ... (at most 32 characters)\n"
            "      --revision REV    source revision of the firmware (a git commit, a tag)\n"
            "      --log FILE        the log stream, kept as its own section\n"
            "      --crash FILE      a crash record, kept as its own section\n"
            "      --descriptor FILE a debug descriptor snapshot, kept as its own section\n"
            "      --catalog FILE    check with this catalogue (YAML) instead of the one the\n"
            "                        trace names (the built-in one, or an imported format's)\n"
            "      --color[=WHEN]    colour: auto (default), always, never\n"
            "  -h, --help            show this help\n"
            "\n"
            "Exit status: 0 sealed, 2 bad input or usage.\n");
}

struct args {
    const char *output, *label, *revision, *catalog, *source;
    const char *log, *crash, *descriptor;
    /* a live source */
    int kind; /* enum emb_source_kind, -1: none */
    const char *target, *elf, *save_trace, *save_log, *save_crash, *token_file;
    int via; /* enum emb_gdb_via */
    int poll_ms;
    uint32_t baud;
    uint64_t count, ram_start, ram_end;
    double duration;
    bool arm, until_closed;
};

static int set_source(struct args *a, int kind, const char *target)
{
    if (a->kind >= 0) {
        emb_cli_error(CMD, "one source, please");
        return EMB_EXIT_BAD;
    }
    a->kind = kind;
    a->target = target;
    return EMB_EXIT_OK;
}

static int parse_args(int argc, char **argv, struct args *a)
{
    enum { OPT_REV = 256, OPT_LOG, OPT_CRASH, OPT_DESC, OPT_PID, OPT_CATALOG, OPT_COLOR,
           OPT_FILE, OPT_TCP, OPT_SERIAL, OPT_BAUD, OPT_SWO, OPT_GDB, OPT_ELF, OPT_RAM, OPT_COUNT,
           OPT_DURATION, OPT_ARM, OPT_UNTIL, OPT_SAVE, OPT_RETAINED, OPT_SAVE_LOG, OPT_SAVE_CRASH,
           OPT_VIA, OPT_POLL, OPT_UNIX, OPT_TOKEN_FILE };
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},   {"label", required_argument, NULL, 'l'},
        {"revision", required_argument, NULL, OPT_REV}, {"log", required_argument, NULL, OPT_LOG},
        {"crash", required_argument, NULL, OPT_CRASH},
        {"descriptor", required_argument, NULL, OPT_DESC},
        {"pid", required_argument, NULL, OPT_PID}, {"catalog", required_argument, NULL, OPT_CATALOG},
        {"color", optional_argument, NULL, OPT_COLOR}, {"colour", optional_argument, NULL, OPT_COLOR},
        {"file", required_argument, NULL, OPT_FILE}, {"tcp", required_argument, NULL, OPT_TCP},
        {"unix", required_argument, NULL, OPT_UNIX},
        {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
        {"serial", required_argument, NULL, OPT_SERIAL}, {"baud", required_argument, NULL, OPT_BAUD},
        {"swo", required_argument, NULL, OPT_SWO}, {"gdb", required_argument, NULL, OPT_GDB},
        {"elf", required_argument, NULL, OPT_ELF}, {"ram", required_argument, NULL, OPT_RAM},
        {"count", required_argument, NULL, OPT_COUNT},
        {"duration", required_argument, NULL, OPT_DURATION}, {"arm", no_argument, NULL, OPT_ARM},
        {"until-closed", no_argument, NULL, OPT_UNTIL},
        {"save-trace", required_argument, NULL, OPT_SAVE},
        {"save-log", required_argument, NULL, OPT_SAVE_LOG},
        {"retained", required_argument, NULL, OPT_RETAINED},
        {"save-crash", required_argument, NULL, OPT_SAVE_CRASH},
        {"via", required_argument, NULL, OPT_VIA}, {"poll-ms", required_argument, NULL, OPT_POLL},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int c;
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:l:h", options, NULL)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case 'l': a->label = optarg; break;
        case OPT_REV: a->revision = optarg; break;
        case OPT_LOG: a->log = optarg; break;
        case OPT_CRASH: a->crash = optarg; break;
        case OPT_DESC: a->descriptor = optarg; break;
        case OPT_PID: if (set_source(a, EMB_SOURCE_PID, optarg)) return EMB_EXIT_BAD; break;
        case OPT_FILE: if (set_source(a, EMB_SOURCE_FILE, optarg)) return EMB_EXIT_BAD; break;
        case OPT_TCP: if (set_source(a, EMB_SOURCE_TCP, optarg)) return EMB_EXIT_BAD; break;
        case OPT_UNIX: if (set_source(a, EMB_SOURCE_UNIX, optarg)) return EMB_EXIT_BAD; break;
        case OPT_TOKEN_FILE: a->token_file = optarg; break;
        case OPT_SERIAL: if (set_source(a, EMB_SOURCE_SERIAL, optarg)) return EMB_EXIT_BAD; break;
        case OPT_SWO: if (set_source(a, EMB_SOURCE_SWO, optarg)) return EMB_EXIT_BAD; break;
        case OPT_GDB: if (set_source(a, EMB_SOURCE_GDB, optarg)) return EMB_EXIT_BAD; break;
        case OPT_ELF: a->elf = optarg; break;
        case OPT_SAVE: a->save_trace = optarg; break;
        case OPT_SAVE_LOG: a->save_log = optarg; break;
        case OPT_SAVE_CRASH: a->save_crash = optarg; break;
        case OPT_VIA:
            if (!strcmp(optarg, "descriptor"))
                a->via = EMB_GDB_VIA_DESCRIPTOR;
            else if (!strcmp(optarg, "memchan"))
                a->via = EMB_GDB_VIA_MEMCHAN;
            else {
                emb_cli_error(CMD, "--via takes descriptor or memchan, not '%s'", optarg);
                return EMB_EXIT_BAD;
            }
            break;
        case OPT_POLL: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v < 1 || v > 60000) {
                emb_cli_error(CMD, "--poll-ms takes milliseconds, 1 to 60000, not '%s'", optarg);
                return EMB_EXIT_BAD;
            }
            a->poll_ms = (int)v;
            break;
        }
        case OPT_RETAINED: if (set_source(a, EMB_SOURCE_RETAINED, optarg)) return EMB_EXIT_BAD; break;
        case OPT_ARM: a->arm = true; break;
        case OPT_UNTIL: a->until_closed = true; break;
        case OPT_BAUD: {
            char *end;
            unsigned long v = strtoul(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v == 0 || v > 4000000) {
                emb_cli_error(CMD, "--baud takes a rate such as 115200, not '%s'", optarg);
                return EMB_EXIT_BAD;
            }
            a->baud = (uint32_t)v;
            break;
        }
        case OPT_RAM: {
            char *end;
            a->ram_start = strtoull(optarg, &end, 0);
            if (*end != ':' || (a->ram_end = strtoull(end + 1, &end, 0)) <= a->ram_start || *end) {
                emb_cli_error(CMD, "--ram takes START:END addresses, not '%s'", optarg);
                return EMB_EXIT_BAD;
            }
            break;
        }
        case OPT_COUNT: {
            char *end;
            a->count = strtoull(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || a->count == 0) {
                emb_cli_error(CMD, "--count takes a number of packets, not '%s'", optarg);
                return EMB_EXIT_BAD;
            }
            break;
        }
        case OPT_DURATION: {
            char *end;
            a->duration = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !(a->duration > 0)) {
                emb_cli_error(CMD, "--duration takes seconds, not '%s'", optarg);
                return EMB_EXIT_BAD;
            }
            break;
        }
        case OPT_CATALOG: a->catalog = optarg; break;
        case OPT_COLOR:
            if (emb_cli_color_option(CMD, optarg) != 0)
                return EMB_EXIT_BAD;
            break;
        case 'h': help(stdout); return -1;
        default:
            return emb_cli_bad_option(CMD, c, argv);
        }
    }
    if (a->kind >= 0) {
        if (optind != argc) {
            emb_cli_error(CMD, "a source option and a source file: one source, please");
            return EMB_EXIT_BAD;
        }
    } else if (optind + 1 != argc) {
        emb_cli_error(CMD, optind == argc ? "no source file given" : "one source file, please");
        fprintf(stderr, "Usage: emb capture [options] -o OUT.emb SOURCE (emb capture --help)\n");
        return EMB_EXIT_BAD;
    }
    a->source = a->kind >= 0 ? a->target : argv[optind];
    if ((a->kind == EMB_SOURCE_TCP) != (a->token_file != NULL)) {
        emb_cli_error(CMD, a->token_file ? "--token-file is for --tcp"
                                         : "--tcp needs the record server's secret: --token-file FILE");
        return EMB_EXIT_BAD;
    }
    if (!a->output) {
        emb_cli_error(CMD, "give the capture file to write with -o OUT.emb");
        return EMB_EXIT_BAD;
    }
    if (a->label && strlen(a->label) > EMB_CAP_LABEL_MAX) {
        emb_cli_error(CMD, "--label: at most %u characters", EMB_CAP_LABEL_MAX);
        return EMB_EXIT_BAD;
    }
    if (a->revision && strlen(a->revision) > EMB_CAP_REVISION_MAX) {
        emb_cli_error(CMD, "--revision: at most %u characters", EMB_CAP_REVISION_MAX);
        return EMB_EXIT_BAD;
    }
    return EMB_EXIT_OK;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    char why[256];
    uint8_t *buf = emb_input_read(path, len, why, sizeof why);
    if (!buf)
        emb_cli_error_at(CMD, path, -1, "%s", why);
    return buf;
}

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
    struct emb_progress **p = arg;
    if (!*p && total >= (8u << 20))
        *p = emb_progress_start("decoding", total);
    emb_progress_update(*p, done);
}

static volatile int interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The live progress line on stderr: bytes, frames, packets, losses, rate. */
static void on_source_progress(void *arg, const struct emb_source_stats *st)
{
    (void)arg;
    if (!isatty(STDERR_FILENO))
        return;
    double s = st->elapsed_ms > 0 ? (double)st->elapsed_ms / 1000.0 : 1.0;
    fprintf(stderr, "\r%s: %.1f s  %" PRIu64 " bytes  %" PRIu64 " frames  %" PRIu64
            " packets  %" PRIu64 " bad  %.1f KB/s   ", CMD, (double)st->elapsed_ms / 1000.0,
            st->bytes, st->frames, st->packets, st->bad_frames, (double)st->bytes / 1024.0 / s);
    fflush(stderr);
}

/* A --save-* file that could not be written: the capture goes on, the exit status is 2. */
static bool save_failed;

static void save(const char *path, const uint8_t *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    bool bad = !f || (len > 0 && fwrite(bytes, 1, len, f) != len);
    if ((f && fclose(f) != 0) || bad) {
        emb_cli_error_at(CMD, path, -1, "cannot write: %s", strerror(errno));
        save_failed = true;
    }
}

/* The record server's secret from --token-file: its first line, at most 256 bytes. */
static bool read_token(const char *path, char *token, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        emb_cli_error_at(CMD, path, -1, "cannot open the token file: %s", strerror(errno));
        return false;
    }
    bool ok = fgets(token, (int)cap, f) != NULL;
    fclose(f);
    token[strcspn(token, "\r\n")] = '\0';
    if (!ok || token[0] == '\0') {
        emb_cli_error_at(CMD, path, 0, "the token file holds no token");
        return false;
    }
    return true;
}

/* Captures from a live source; returns the trace stream (malloc'd) or NULL. */
static uint8_t *capture_live(const struct args *a, size_t *len, uint8_t **log, size_t *log_len,
                             uint8_t **crash, size_t *crash_len)
{
    static char token[258];
    if (a->token_file != NULL && !read_token(a->token_file, token, sizeof token))
        return NULL;
    struct emb_source_options o = {
        .kind = (enum emb_source_kind)a->kind,
        .target = a->target,
        .token = a->token_file != NULL ? token : NULL,
        .baud = a->baud,
        .elf = a->elf,
        .via = (enum emb_gdb_via)a->via,
        .poll_ms = a->poll_ms,
        .ram_start = a->ram_start,
        .ram_end = a->ram_end,
        .duration_s = a->duration,
        .max_packets = a->count,
        .arm = a->arm,
        .until_window_closed = a->until_closed,
        .stop = &interrupted,
        .progress = on_source_progress,
    };
    struct sigaction sa = {.sa_handler = on_interrupt}, old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    struct emb_source_result r;
    char err[256];
    int rc = emb_source_capture(&o, &r, err, sizeof err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\n");
    for (const char *n = r.notes; n && *n;) {
        const char *nl = strchr(n, '\n');
        int l = nl ? (int)(nl - n) : (int)strlen(n);
        if (!(rc != 0 && !strncmp(n, err, (size_t)l) && err[l] == '\0'))
            emb_cli_error(CMD, "%s: %.*s", a->target, l, n);
        n += l + (nl != NULL);
    }
    if (rc != 0) {
        emb_cli_error(CMD, "%s: %s", a->target, err);
        emb_source_result_free(&r);
        return NULL;
    }
    const struct emb_source_stats *st = &r.stats;
    fprintf(stderr, "%s: %s: stopped (%s) after %.1f s: %" PRIu64 " bytes, %" PRIu64 " frames, %"
            PRIu64 " trace packets, %" PRIu64 " log bytes\n", CMD, a->target, st->stop_reason,
            (double)st->elapsed_ms / 1000.0, st->bytes, st->frames, st->packets, st->log_bytes);
    if (st->bad_frames || st->foreign || st->resyncs || st->overflows)
        fprintf(stderr, "%s: %s: lost on the way: %" PRIu64 " damaged frames, %" PRIu64
                " packets of another run, %" PRIu64 " bytes skipped to resynchronise, %" PRIu64
                " SWO overflows\n", CMD, a->target, st->bad_frames, st->foreign, st->resyncs,
                st->overflows);
    if (a->kind == EMB_SOURCE_RETAINED)
        fprintf(stderr, "%s: %s: the ring survived %" PRIu32 " starts; %" PRIu32 " frames dropped "
                "for room, %" PRIu32 " cut by a reset, %" PRIu32 " longer than the ring\n", CMD,
                a->target, st->retained_starts, st->retained_dropped, st->retained_cut,
                st->retained_lost);
    if (a->save_log)
        save(a->save_log, r.log, r.log_len);
    if (st->via_descriptor) {
        fprintf(stderr, "%s: %s: through the descriptor: %" PRIu64 " packets taken, %" PRIu64
                " overwritten before they were; %" PRIu64 " log bytes taken, %" PRIu64
                " overwritten; %s\n", CMD, a->target, st->packets, st->packets_lost, st->log_bytes,
                st->log_lost, st->released ? "the host freed what it took (it is the rings' consumer)"
                                           : "read only");
        fprintf(stderr, "%s: %s: held the target %" PRIu64 " times, %.3f ms on average, %.3f ms at "
                "most (%" PRIu64 " memory packets, %" PRIu64 " bytes)\n", CMD, a->target, st->halts,
                st->halt_ms_avg, st->halt_ms_max, st->round_trips, st->bytes_read);
        if (r.crash)
            fprintf(stderr, "%s: %s: the target holds a crash record of %zu bytes\n", CMD, a->target,
                    r.crash_len);
    } else if (st->halts) {
        fprintf(stderr, "%s: %s: %" PRIu64 " polls, the target halted %.3f ms on average, %.3f ms "
                "at most\n", CMD, a->target, st->polls, st->halt_ms_avg, st->halt_ms_max);
    }
    if (st->crash_records || st->bad_crash_records)
        fprintf(stderr, "%s: %s: the target sent %" PRIu64 " crash record%s (channel 2)%s; %s\n",
                CMD, a->target, st->crash_records + st->bad_crash_records,
                st->crash_records + st->bad_crash_records == 1 ? "" : "s",
                st->bad_crash_records ? ", some not whole records, dropped" : "",
                r.crash ? "the newest is the capture's crash section (emb crash CAPTURE)" : "none kept");
    if (a->save_crash) {
        if (r.crash)
            save(a->save_crash, r.crash, r.crash_len);
        else
            fprintf(stderr, "%s: %s: no crash record: %s not written\n", CMD, a->target, a->save_crash);
    }
    if (r.trace == NULL) {
        emb_cli_error(CMD, "%s: no trace stream header arrived: nothing to seal", a->target);
        emb_source_result_free(&r);
        return NULL;
    }
    if (a->save_trace)
        save(a->save_trace, r.trace, r.trace_len);
    *len = r.trace_len;
    *log = r.log;
    *log_len = r.log_len;
    *crash = r.crash;
    *crash_len = r.crash_len;
    free(r.notes);
    return r.trace;
}

static int seal(const struct args *a, const struct emb_catalog *cat)
{
    size_t trace_len = 0, live_log_len = 0, live_crash_len = 0;
    uint8_t *live_log = NULL, *live_crash = NULL;
    uint8_t *trace_bytes = a->kind >= 0 ? capture_live(a, &trace_len, &live_log, &live_log_len, &live_crash,
                                                       &live_crash_len)
                                        : slurp(a->source, &trace_len);
    if (!trace_bytes)
        return EMB_EXIT_BAD;
    /* The catalogue the stream names, unless one was given. */
    if (cat == NULL && trace_len >= EMB_TSF_OFF_CATALOG + 4u)
        cat = emb_catalog_known(emb_get_le32(trace_bytes + EMB_TSF_OFF_CATALOG));
    if (cat == NULL)
        cat = emb_catalog_builtin();
    struct emb_progress *progress = NULL;
    struct emb_trace_options to = {.catalog = cat, .name = a->source, .progress = on_progress,
                                   .progress_arg = &progress};
    struct emb_trace *t = emb_trace_decode(trace_bytes, trace_len, &to);
    emb_progress_finish(progress);
    int rc = EMB_EXIT_BAD;
    struct emb_capture_parts parts;
    memset(&parts, 0, sizeof parts);
    uint8_t *opaque[3] = {NULL, NULL, NULL};
    char *metadata = NULL;
    uint8_t *file = NULL;
    if (!t) {
        emb_cli_error_at(CMD, a->source, -1, "out of memory");
        goto out;
    }
    size_t n;
    const struct emb_trace_issue *is = emb_trace_issues(t, &n);
    if (emb_trace_summary(t)->fatal || emb_trace_summary(t)->errors) {
        for (size_t i = 0; i < n; i++)
            emb_cli_error_at(CMD, a->source, is[i].offset, "%s", is[i].message);
        emb_cli_error(CMD, "%s does not decode cleanly: not sealed", a->source);
        goto out;
    }
    if (emb_capture_describe(t, a->label, a->revision, &parts.identity, &parts.window) != 0 ||
        !(metadata = emb_capture_metadata(t, &parts.metadata_len))) {
        emb_cli_error(CMD, "out of memory");
        goto out;
    }
    parts.metadata = metadata;
    parts.trace = trace_bytes;
    parts.trace_len = trace_len;
    const char *paths[3] = {a->log, a->crash, a->descriptor};
    const uint16_t types[3] = {EMB_CAP_SEC_LOG, EMB_CAP_SEC_CRASH, EMB_CAP_SEC_DESCRIPTOR};
    if (!a->log && live_log_len > 0)
        parts.opaque[parts.nopaque++] = (struct emb_capture_section){
            .type = EMB_CAP_SEC_LOG, .version = 1, .data = live_log, .length = live_log_len};
    if (!a->crash && live_crash_len > 0)
        parts.opaque[parts.nopaque++] = (struct emb_capture_section){
            .type = EMB_CAP_SEC_CRASH, .version = 1, .data = live_crash, .length = live_crash_len};
    for (int i = 0; i < 3; i++) {
        if (!paths[i])
            continue;
        size_t len = 0;
        if (!(opaque[i] = slurp(paths[i], &len)))
            goto out;
        parts.opaque[parts.nopaque++] = (struct emb_capture_section){
            .type = types[i], .version = 1, .data = opaque[i], .length = len};
    }
    char err[256];
    size_t len = 0;
    if (!(file = emb_capture_encode(&parts, &len, err, sizeof err))) {
        emb_cli_error(CMD, "%s", err);
        goto out;
    }
    FILE *f = fopen(a->output, "wb");
    if (!f) {
        emb_cli_error_at(CMD, a->output, -1, "cannot create: %s", strerror(errno));
        goto out;
    }
    bool bad = fwrite(file, 1, len, f) != len;
    if (fclose(f) != 0 || bad) {
        emb_cli_error_at(CMD, a->output, -1, "write error: %s", strerror(errno));
        goto out;
    }
    const struct emb_capture_window *w = &parts.window;
    printf("%s: sealed %s: label %s, %" PRIu64 " events in %zu contexts, ", CMD, a->output,
           parts.identity.label[0] ? parts.identity.label : "(none)", w->stored, w->nrows);
    if (w->armed_frame != EMB_CAP_NO_FRAME)
        printf("window armed at frame %" PRIu32 ", ", w->armed_frame);
    printf("%" PRIu64 " dropped, %zu bytes\n", w->drops, len);
    rc = EMB_EXIT_OK;
out:
    free(file);
    for (int i = 0; i < 3; i++)
        free(opaque[i]);
    free(metadata);
    free(parts.window.rows);
    emb_trace_free(t);
    free(trace_bytes);
    free(live_log);
    free(live_crash);
    return rc;
}

int emb_cmd_capture(int argc, char **argv)
{
    struct args a = {.kind = -1};
    int rc = parse_args(argc, argv, &a);
    if (rc != EMB_EXIT_OK)
        return rc < 0 ? EMB_EXIT_OK : rc;
    struct emb_catalog *own = NULL;
    const struct emb_catalog *cat;
    if (a.catalog) {
        char err[512];
        if (!(own = emb_catalog_load(a.catalog, err, sizeof err))) {
            emb_cli_error(CMD, "%s", err);
            return EMB_EXIT_BAD;
        }
        cat = own;
    } else {
        cat = NULL; /* the one the trace names */
    }
    rc = seal(&a, cat);
    if (own)
        emb_catalog_free(own);
    return save_failed ? EMB_EXIT_BAD : rc;
}
