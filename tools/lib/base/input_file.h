/* Whole-file reads of the host tool, bounded: a decoder that needs a whole file in memory
 * takes at most the input limit, so /dev/zero, a FIFO that never ends or a huge sparse
 * file is refused with a message instead of growing to the allocation limit. */
#ifndef EMB_HOST_INPUT_FILE_H
#define EMB_HOST_INPUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The environment variable that sets the limit: bytes, or a number with a K, M or G
 * suffix (powers of 1024). */
#define EMB_INPUT_LIMIT_ENV "EMB_INPUT_LIMIT"
/* The limit when the variable is unset (1 GiB). */
#define EMB_INPUT_LIMIT_DEFAULT (UINT64_C(1) << 30)

/* The input limit in bytes: EMB_INPUT_LIMIT when it is set and parses (and is not 0),
 * else EMB_INPUT_LIMIT_DEFAULT. */
uint64_t emb_input_limit(void);

/* Reads the whole of `path` (a regular file, a device, a FIFO; "-" is stdin) into a
 * malloc'd buffer with one spare byte set to NUL after the data. A regular file larger
 * than the limit is refused before anything is read; anything else is refused once it
 * has yielded more than the limit. Returns the buffer and its length, or NULL with a
 * message in err: "cannot open: ...", "is a directory", "read error: ...", "out of
 * memory", or "more than the input limit of N bytes ...". */
uint8_t *emb_input_read(const char *path, size_t *len, char *err, size_t errlen);

/* The same with a limit of the caller's (a small text file: a rules file). */
uint8_t *emb_input_read_max(const char *path, uint64_t limit, size_t *len, char *err,
                            size_t errlen);

/* An input opened once, the one way every command opens what it reads: a path, "-" for
 * standard input, or tcp:HOST:PORT (a stream a server sends). A FIFO or a socket cannot
 * be opened twice without losing what the first opening read, so whatever looks at the
 * first bytes (emb_input_peek) keeps them, and the reads after it return them first. */
#define EMB_INPUT_HEAD 256u
struct emb_input {
    int fd;
    bool close_fd;              /* the descriptor is ours (not standard input) */
    const char *name;           /* the path or spec, for messages */
    uint8_t head[EMB_INPUT_HEAD]; /* bytes read ahead by emb_input_peek */
    size_t head_len, head_pos;
};

/* Opens `spec`. 0, or -1 with a message in err ("cannot open: ...", "cannot connect: ...",
 * "give tcp:HOST:PORT"). */
int emb_input_open(struct emb_input *in, const char *spec, char *err, size_t errlen);
/* Reads ahead until at least `want` bytes (at most EMB_INPUT_HEAD) are held or the input
 * ends, taking what each read brings and waiting for no more. Returns the bytes held at
 * in->head (fewer than want only at the end), or -1 with "read error: ..." in err. */
long emb_input_peek(struct emb_input *in, size_t want, char *err, size_t errlen);
/* The next bytes: what peek held first, then the descriptor. Returns the count, 0 at the
 * end, -1 with errno set on a read error. */
long emb_input_next(struct emb_input *in, uint8_t *buf, size_t cap);
/* The rest of the input into a malloc'd buffer (one spare NUL byte after it), bounded as
 * emb_input_read() is; limit 0 means emb_input_limit(). NULL with a message in err. */
uint8_t *emb_input_read_rest(struct emb_input *in, uint64_t limit, size_t *len, char *err,
                             size_t errlen);
/* A regular file not yet read from, of one byte or more and within `limit` (0: the input
 * limit), mapped read only: pages the system may take back and read again, so a decoder
 * that walks it once keeps memory flat (emb_trace_options.mapped). NULL for anything
 * else, which is then read with emb_input_read_rest (and refused there if too large).
 * The bytes are not NUL-terminated; emb_input_unmap releases them. */
const uint8_t *emb_input_map_rest(struct emb_input *in, uint64_t limit, size_t *len);
void emb_input_unmap(const uint8_t *bytes, size_t len);
/* Lets the system take back the whole pages of the first `done` bytes of a mapping from
 * emb_input_map_rest (read again from the file if touched again): a walk that has
 * passed them keeps its resident memory flat. */
void emb_input_map_release(const uint8_t *bytes, size_t done);
void emb_input_close(struct emb_input *in);

#endif /* EMB_HOST_INPUT_FILE_H */
