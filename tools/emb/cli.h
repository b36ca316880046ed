/* What every `emb` subcommand shares: the command table entry, exit statuses, error
 * messages that name the file and byte offset, colour on a terminal, a progress bar on
 * stderr, and a small JSON writer. */
#ifndef EMB_CLI_H
#define EMB_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>

#include "json.h"
#include "problem.h"
#include "text.h"

/* Exit statuses, mapped once: main() returns what the subcommand returns. */
enum {
    EMB_EXIT_OK = 0,       /* done, nothing to report */
    EMB_EXIT_FINDINGS = 1, /* done, and found something (diff found a difference) */
    EMB_EXIT_BAD = 2,      /* bad input or usage */
};

/* One subcommand. run() gets argv with argv[0] = the subcommand name, parses its own
 * options (getopt_long), prints its own --help, and returns an EMB_EXIT_* status. */
struct emb_cmd {
    const char *name;
    const char *summary; /* one line for `emb --help` */
    int (*run)(int argc, char **argv);
};

/* "emb trace: FILE: byte OFFSET: message" on stderr. offset < 0 omits the offset. */
void emb_cli_error_at(const char *cmd, const char *file, long long offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Flushes and closes an output (stdout is only flushed), and reports a failed write or
 * close: "emb CMD: NAME: cannot write: ..." (NAME NULL: "standard output"). Returns 0, or
 * EMB_EXIT_BAD. f NULL is a no-op. */
int emb_cli_close_output(const char *cmd, FILE *f, const char *name);
/* An output written the one way: write(arg, f) fills PATH (NULL or "-": standard output)
 * through a temporary beside it that is renamed into place only when write() returned 0
 * and every byte reached the file (base/output_file.h), so a failed run leaves an earlier
 * output untouched. Says what failed ("emb CMD: PATH: cannot create: ...", "...: write
 * error: ..."). Returns 0, or EMB_EXIT_BAD. emb_cli_write_bytes() writes len bytes. */
int emb_cli_write_output(const char *cmd, const char *path, int (*write)(void *arg, FILE *f),
                         void *arg);
int emb_cli_write_bytes(const char *cmd, const char *path, const void *data, size_t len);

/* A record server's secret from a --token-file: its first line, at most cap - 2 bytes.
 * False after saying why (the file named). */
bool emb_cli_read_token(const char *cmd, const char *path, char *token, size_t cap);
/* A directory output (a CTF trace) the same way: write(arg, dir, err, errlen) fills a
 * temporary directory beside DIR, renamed over it when write() returned 0. A DIR that
 * holds a file `owns` does not name is refused before any work. The message write()
 * leaves in err is shown when it fails. Returns 0, or EMB_EXIT_BAD. */
int emb_cli_write_dir(const char *cmd, const char *dir, bool (*owns)(const char *name),
                      int (*write)(void *arg, const char *dir, char *err, size_t errlen),
                      void *arg);
/* main()'s last word: flushes and closes stdout, reporting a failure unless quiet (the
 * command already failed and said why). Returns 0, or EMB_EXIT_BAD. */
int emb_cli_close_stdout(const char *cmd, bool quiet);

/* A decoder's problems (base/problem.h), shown alike by every command: "emb CMD: FILE:
 * byte OFFSET: message" (a note's message after "note: "). emb_cli_problem() shows one and
 * fits a callback sink (arg: the command's name, "emb trace"); emb_cli_problems() shows a
 * kept list, then "N more problems not shown" when the sink kept fewer than it was told. */
void emb_cli_problem(void *cmd, const struct emb_problem *p);
void emb_cli_problems(const char *cmd, const struct emb_problems *ps);

/* "emb trace: message" on stderr. */
void emb_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Option handling every subcommand shares. emb_cli_color_option() applies --color[=WHEN]:
 * 0, or EMB_EXIT_BAD after saying what it takes. emb_cli_bad_option() reports what
 * getopt_long() refused (opt ':' an option without its value, else an unknown option),
 * points at `CMD --help`, and returns EMB_EXIT_BAD. */
int emb_cli_color_option(const char *cmd, const char *arg);
int emb_cli_bad_option(const char *cmd, int opt, char *const argv[]);

/* One option of a command, described once: getopt_long()'s long-option table is built
 * from these, and an option that only stores what it says is stored by the parser into
 * the command's argument struct (`arg` of emb_cli_parse_options): EMB_CLI_STRING its
 * value at `offset` (a const char *), EMB_CLI_FLAG true at `offset` (a bool),
 * EMB_CLI_U64 and EMB_CLI_DOUBLE its number at `offset` (a uint64_t, a double), checked
 * against [lo, hi] as emb_cli_option_u64() and emb_cli_option_double() do ("--NAME takes
 * WHAT, not 'ARG'"). Every other option (EMB_CLI_CALL) goes to the command's on_option()
 * (NULL: there is none). */
enum emb_cli_store { EMB_CLI_CALL, EMB_CLI_STRING, EMB_CLI_FLAG, EMB_CLI_U64, EMB_CLI_DOUBLE };
struct emb_cli_option {
    const char *name; /* the long name, NULL ending the table */
    int has_arg;      /* no_argument, required_argument, optional_argument */
    int val;          /* what getopt_long() returns: the short option, or a value of 256 up */
    enum emb_cli_store store;
    size_t offset;
    uint64_t lo, hi;          /* EMB_CLI_U64's range */
    double lo_real, hi_real;  /* EMB_CLI_DOUBLE's range */
    const char *what;         /* what a number option takes, for its complaint */
};
#define EMB_CLI_CALL(long_name, arg_kind, value)                                             \
    {.name = (long_name), .has_arg = (arg_kind), .val = (value), .store = EMB_CLI_CALL}
#define EMB_CLI_STRING(long_name, value, type, member)                                       \
    {.name = (long_name), .has_arg = required_argument, .val = (value), .store = EMB_CLI_STRING, \
     .offset = EMB_CLI_OFFSET(type, member, const char *)}
#define EMB_CLI_FLAG(long_name, value, type, member)                                         \
    {.name = (long_name), .has_arg = no_argument, .val = (value), .store = EMB_CLI_FLAG,      \
     .offset = EMB_CLI_OFFSET(type, member, bool)}
#define EMB_CLI_U64(long_name, value, type, member, low, high, takes)                        \
    {.name = (long_name), .has_arg = required_argument, .val = (value), .store = EMB_CLI_U64, \
     .offset = EMB_CLI_OFFSET(type, member, uint64_t), .lo = (low), .hi = (high), .what = (takes)}
#define EMB_CLI_DOUBLE(long_name, value, type, member, low, high, takes)                     \
    {.name = (long_name), .has_arg = required_argument, .val = (value), .store = EMB_CLI_DOUBLE, \
     .offset = EMB_CLI_OFFSET(type, member, double), .lo_real = (low), .hi_real = (high),   \
     .what = (takes)}
/* offsetof(type, member), refused by the compiler unless the member is a `what` (the
 * unevaluated compound literal converts its address to a `what *`). */
#define EMB_CLI_OFFSET(type, member, what)                                                   \
    (offsetof(type, member) + 0 * sizeof((what *){&((type *)0)->member}))

/* The options every subcommand spells alike, for the end of its table: --color[=WHEN]
 * (and --colour) as EMB_OPT_COLOR, and --help as 'h'. */
#define EMB_OPT_COLOR 0x7000
#define EMB_CLI_OPTIONS_COMMON                                                              \
    EMB_CLI_CALL("color", optional_argument, EMB_OPT_COLOR),                                \
        EMB_CLI_CALL("colour", optional_argument, EMB_OPT_COLOR), EMB_CLI_CALL("help", no_argument, 'h')
/* The end of every command's option table: the shared options, then the {NULL} entry. */
#define EMB_CLI_OPTIONS_NULL {.name = NULL}
#define EMB_CLI_OPTIONS_END EMB_CLI_OPTIONS_COMMON, EMB_CLI_OPTIONS_NULL

/* The options the decoding commands spell alike: --json, --catalog FILE, --elf FILE (long
 * only), and -o/--output FILE, stored into the members of the command's `type` that bear
 * their names (the _CALL forms for a command that stores them itself). */
enum { EMB_OPT_JSON = EMB_OPT_COLOR + 1, EMB_OPT_CATALOG, EMB_OPT_ELF };
#define EMB_CLI_OPTION_JSON(type) EMB_CLI_FLAG("json", EMB_OPT_JSON, type, json)
#define EMB_CLI_OPTION_CATALOG(type) EMB_CLI_STRING("catalog", EMB_OPT_CATALOG, type, catalog)
#define EMB_CLI_OPTION_ELF(type) EMB_CLI_STRING("elf", EMB_OPT_ELF, type, elf)
#define EMB_CLI_OPTION_OUTPUT(type) EMB_CLI_STRING("output", 'o', type, output)
#define EMB_CLI_OPTION_JSON_CALL EMB_CLI_CALL("json", no_argument, EMB_OPT_JSON)
/* An option that names a capture source (capture_source.h): its value is EMB_OPT_SOURCE
 * plus the source's enum emb_source_kind, so the option says the kind. */
#define EMB_OPT_SOURCE 0x7100
#define EMB_CLI_SOURCE(name, kind) EMB_CLI_CALL(name, required_argument, EMB_OPT_SOURCE + (kind))
/* The live sources every reading command (emb capture, emb top) takes alike, and how it
 * reads one, stored into the members of `type` that bear their names: --token-file FILE
 * (the TCP record server's secret), --baud (serial), --poll-ms, --duration SECONDS,
 * --until-closed, --qtest SOCKET and --resume; for a table that includes capture_source.h
 * and <float.h>. */
enum { EMB_OPT_TOKEN_FILE = EMB_OPT_ELF + 1, EMB_OPT_BAUD, EMB_OPT_POLL, EMB_OPT_DURATION,
       EMB_OPT_UNTIL_CLOSED, EMB_OPT_QTEST, EMB_OPT_RESUME };
#define EMB_CLI_SOURCE_OPTIONS(type)                                                         \
    EMB_CLI_SOURCE("pid", EMB_SOURCE_PID), EMB_CLI_SOURCE("file", EMB_SOURCE_FILE),          \
        EMB_CLI_SOURCE("tcp", EMB_SOURCE_TCP), EMB_CLI_SOURCE("unix", EMB_SOURCE_UNIX),      \
        EMB_CLI_SOURCE("serial", EMB_SOURCE_SERIAL), EMB_CLI_SOURCE("gdb", EMB_SOURCE_GDB),  \
        EMB_CLI_SOURCE("qemu-qmp", EMB_SOURCE_QMP),                                          \
        EMB_CLI_STRING("token-file", EMB_OPT_TOKEN_FILE, type, token_file),                  \
        EMB_CLI_U64("baud", EMB_OPT_BAUD, type, baud, 1, 4000000, "a rate such as 115200"),  \
        EMB_CLI_U64("poll-ms", EMB_OPT_POLL, type, poll_ms, 1, 60000,                        \
                    "milliseconds, 1 to 60000"),                                             \
        EMB_CLI_DOUBLE("duration", EMB_OPT_DURATION, type, duration, DBL_MIN, DBL_MAX,       \
                       "seconds"),                                                           \
        EMB_CLI_FLAG("until-closed", EMB_OPT_UNTIL_CLOSED, type, until_closed),              \
        EMB_CLI_STRING("qtest", EMB_OPT_QTEST, type, qtest),                                 \
        EMB_CLI_FLAG("resume", EMB_OPT_RESUME, type, resume)
/* A source option (EMB_CLI_SOURCE) seen by on_option(): stores its kind and value into
 * *kind and *target, or says "emb CMD: one source, please" when *kind already names one
 * (>= 0) and returns EMB_EXIT_BAD. 0 otherwise. */
#define EMB_CLI_IS_SOURCE(opt) ((opt) >= EMB_OPT_SOURCE && (opt) < EMB_OPT_SOURCE + 0x100)
int emb_cli_source_option(const char *cmd, int opt, const char *value, int *kind,
                          const char **target);
#define EMB_CLI_OPTION_CATALOG_CALL EMB_CLI_CALL("catalog", required_argument, EMB_OPT_CATALOG)

/* A command's options, parsed the one way. `options` ends with EMB_CLI_OPTIONS_END;
 * `shortopts` lists the short options after ':' (NULL: ":h"). --color and --help
 * are handled here (the help text printed to stdout); every other option goes to
 * on_option(arg, opt, optarg), which returns 0, or EMB_EXIT_BAD after saying why; an
 * unknown option or a missing value is reported here. Returns 0 with optind at the first
 * operand, -1 after --help (the command exits 0), or EMB_EXIT_BAD. */
struct emb_cli_command {
    const char *name; /* "emb crash" */
    const char *help; /* the --help text */
    const char *shortopts;
    const struct emb_cli_option *options;
    const char *usage; /* the synopsis an operand error shows: "emb crash --elf FW [options] RECORD" */
    bool help_on_bad_option; /* a bad option is followed by the whole help on stderr, not a
                              * pointer to --help (emb events serve, whose COMMAND follows) */
    int operands;            /* > 0: exactly this many operands, checked after the options
                              * as emb_cli_operands() does, with these two messages */
    const char *no_operands, *too_many;
};
int emb_cli_parse_options(const struct emb_cli_command *c, int argc, char **argv,
                          int (*on_option)(void *arg, int opt, char *optarg), void *arg);

/* Exactly `count` operands after the options (optind at the first), or "emb CMD: NONE"
 * when there are none and "emb CMD: MANY" otherwise, then "Usage: USAGE (CMD --help)",
 * and EMB_EXIT_BAD. 0 when the count is right. */
int emb_cli_operands(const struct emb_cli_command *c, int argc, int count, const char *none,
                     const char *many);

/* A bad option value: "emb CMD: --NAME takes WHAT, not 'ARG'". Returns EMB_EXIT_BAD. */
int emb_cli_bad_value(const char *cmd, const char *name, const char *what, const char *arg);

/* An option's number, parsed with emb_parse_u64/emb_parse_double (base/parse_number.h):
 * on a bad one, "emb CMD: --NAME takes WHAT, not 'ARG'" and EMB_EXIT_BAD; else 0. */
int emb_cli_option_u64(const char *cmd, const char *name, const char *arg, uint64_t min,
                       uint64_t max, const char *what, uint64_t *out);
int emb_cli_option_double(const char *cmd, const char *name, const char *arg, double min,
                          double max, const char *what, double *out);

/* Progress bar on stderr for long work; silent when stderr is not a terminal.
 * total = 0 means unknown (a spinner with a count). */
struct emb_progress;
struct emb_progress *emb_progress_start(const char *label, uint64_t total);
void emb_progress_update(struct emb_progress *p, uint64_t done);
void emb_progress_finish(struct emb_progress *p);
/* A decoder's progress callback: arg points at a struct emb_progress * that is NULL
 * until the bar starts, labelled "decoding", for an input of 8 MiB or more (a smaller one
 * decodes before a bar could be seen). The caller finishes it. */
void emb_progress_decoding(void *arg, uint64_t done, uint64_t total);

#endif /* EMB_CLI_H */
