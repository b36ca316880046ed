/* What every `emb` subcommand shares: the command table entry, exit statuses, error
 * messages that name the file and byte offset, colour on a terminal, a progress bar on
 * stderr, and a small JSON writer. */
#ifndef EMB_CLI_H
#define EMB_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
/* Escapes len bytes of target- or file-derived text for a terminal into out (cap bytes,
 * NUL-terminated, cut short rather than overflow): control bytes (C0, DEL), C1 controls
 * and bytes of invalid UTF-8 become \xNN; printable ASCII and valid UTF-8 pass through.
 * Returns the length written. emb_cli_escape_str() does a NUL-terminated string (NULL as
 * "") and returns out. Worst case: 4 bytes of output per byte of input. */
size_t emb_cli_escape(char *out, size_t cap, const char *text, size_t len);
const char *emb_cli_escape_str(char *out, size_t cap, const char *text);

/* Flushes and closes an output (stdout is only flushed), and reports a failed write or
 * close: "emb CMD: NAME: cannot write: ..." (NAME NULL: "standard output"). Returns 0, or
 * EMB_EXIT_BAD. f NULL is a no-op. */
int emb_cli_close_output(const char *cmd, FILE *f, const char *name);
/* main()'s last word: flushes and closes stdout, reporting a failure unless quiet (the
 * command already failed and said why). Returns 0, or EMB_EXIT_BAD. */
int emb_cli_close_stdout(const char *cmd, bool quiet);

/* "emb trace: message" on stderr. */
void emb_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Colour: enabled when the stream is a terminal and NO_COLOR is unset, or forced by
 * --color=always|never (emb_cli_set_color). Each returns "" when colour is off. */
enum emb_color { EMB_C_RESET, EMB_C_BOLD, EMB_C_DIM, EMB_C_RED, EMB_C_GREEN, EMB_C_YELLOW,
                 EMB_C_BLUE, EMB_C_MAGENTA, EMB_C_CYAN };
void emb_cli_set_color(int mode); /* -1 auto, 0 never, 1 always */
const char *emb_cli_color(FILE *stream, enum emb_color c);
/* Whether emb_cli_color() returns escapes for this stream. */
bool emb_cli_color_enabled(FILE *stream);
/* Parses the argument of --color[=WHEN]: NULL or "always" 1, "never" 0, "auto" -1;
 * anything else -2. */
int emb_cli_parse_color(const char *arg);

/* Option handling every subcommand shares. emb_cli_color_option() applies --color[=WHEN]:
 * 0, or EMB_EXIT_BAD after saying what it takes. emb_cli_bad_option() reports what
 * getopt_long() refused (opt ':' an option without its value, else an unknown option),
 * points at `CMD --help`, and returns EMB_EXIT_BAD. */
int emb_cli_color_option(const char *cmd, const char *arg);
int emb_cli_bad_option(const char *cmd, int opt, char *const argv[]);

/* Progress bar on stderr for long work; silent when stderr is not a terminal.
 * total = 0 means unknown (a spinner with a count). */
struct emb_progress;
struct emb_progress *emb_progress_start(const char *label, uint64_t total);
void emb_progress_update(struct emb_progress *p, uint64_t done);
void emb_progress_finish(struct emb_progress *p);

/* Minimal streaming JSON writer: handles commas, nesting and string escaping. */
struct emb_json {
    FILE *out;
    int depth;
    bool need_comma[64];
    bool pretty;
    int flat_depth; /* when pretty: values nested deeper than this stay on one line (0: none) */
};
void emb_json_init(struct emb_json *j, FILE *out, bool pretty);
void emb_json_begin_object(struct emb_json *j, const char *key); /* key NULL inside arrays */
void emb_json_end_object(struct emb_json *j);
void emb_json_begin_array(struct emb_json *j, const char *key);
void emb_json_end_array(struct emb_json *j);
void emb_json_string(struct emb_json *j, const char *key, const char *value);
void emb_json_string_n(struct emb_json *j, const char *key, const char *value, size_t len);
void emb_json_int(struct emb_json *j, const char *key, long long value);
void emb_json_uint(struct emb_json *j, const char *key, unsigned long long value);
void emb_json_double(struct emb_json *j, const char *key, double value);
void emb_json_bool(struct emb_json *j, const char *key, bool value);
void emb_json_null(struct emb_json *j, const char *key);
/* A value the caller has already formatted as JSON (a number with a fixed precision). */
void emb_json_raw(struct emb_json *j, const char *key, const char *text);
/* Writes `len` bytes as a JSON string: control characters escaped, valid UTF-8 passed
 * through, every byte of invalid UTF-8 replaced by U+FFFD. */
void emb_json_write_string(FILE *out, const char *s, size_t len);
void emb_json_end(struct emb_json *j); /* final newline */

#endif /* EMB_CLI_H */
