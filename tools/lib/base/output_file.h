/* Outputs that replace their target only when the run succeeds: a file (or a CTF
 * directory) is written under a temporary name beside its target, in the same directory
 * so the final rename is atomic, and renamed over the target on success. A run that
 * fails removes the temporary and leaves whatever the target held before untouched. */
#ifndef EMB_BASE_OUTPUT_FILE_H
#define EMB_BASE_OUTPUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct emb_output {
    FILE *f;          /* where to write: the temporary, or stdout */
    const char *path; /* the target; NULL for standard output */
    char *tmp;        /* the temporary file or directory (malloc'd), NULL for stdout */
    char *real;       /* the target a symbolic link leads to (malloc'd), or NULL */
    bool dir;
};

/* Opens an output file: `path` NULL or "-" is standard output; a path that names no
 * regular file but a device or a FIFO is written in place. NULL with a message in err
 * ("cannot create: ..."). The file gets the mode a new file would (0666 less the umask). */
FILE *emb_output_open(struct emb_output *o, const char *path, char *err, size_t errlen);
/* Creates a temporary directory beside `path` for a writer to fill; its name is o->tmp.
 * A directory at `path` is replaced on success only when every file in it is one the
 * writer makes (`owns`, hidden files aside): anything else is refused here, before any
 * work. 0, or -1 with a message in err. */
int emb_output_open_dir(struct emb_output *o, const char *path, bool (*owns)(const char *name),
                        char *err, size_t errlen);
/* Ends an output. ok: flushes and closes it (stdout is only flushed) and renames the
 * temporary over the target (a directory that was there is removed); !ok, or a failed
 * write: removes the temporary. Returns 0, or -1 with a message in err ("cannot write:
 * ...", "cannot rename: ...") when ok was asked and the output could not be completed.
 * Safe on a zeroed or already-ended output. */
int emb_output_end(struct emb_output *o, bool ok, char *err, size_t errlen);

#endif /* EMB_BASE_OUTPUT_FILE_H */
