/* For fuzz targets whose code under test opens a file by name (an ELF, a core, a rules or
 * events file): the input becomes a memory file (memfd), reached as /proc/self/fd/N, so the
 * reader runs exactly as `emb` runs it (open, libelf's mmap, libdwfl opening it again) with
 * no file system in the loop. Also a private scratch directory for writers of directories. */
#ifndef EMB_FUZZ_FILE_H
#define EMB_FUZZ_FILE_H

#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Replaces the contents of the target's one memory file with `data`; returns its path. */
static inline const char *emb_fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("emb-fuzz-input", MFD_CLOEXEC);
        if (fd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    return path;
}

static char emb_fuzz_scratch[256];

/* Removes the scratch directory and the files the writers left in it (they write no
 * subdirectories). */
static inline void emb_fuzz_scratch_remove(void)
{
    DIR *d = opendir(emb_fuzz_scratch);
    if (d == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", emb_fuzz_scratch, de->d_name);
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            unlink(path);
    }
    closedir(d);
    rmdir(emb_fuzz_scratch);
}

/* A scratch directory of this process under $TMPDIR, made once, removed at exit (libFuzzer
 * exits normally at the end of its time); it holds one output at a time. */
static inline const char *emb_fuzz_scratch_dir(void)
{
    if (!emb_fuzz_scratch[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(emb_fuzz_scratch, sizeof emb_fuzz_scratch, "%s/emb-fuzz-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(emb_fuzz_scratch))
            abort();
        atexit(emb_fuzz_scratch_remove);
    }
    return emb_fuzz_scratch;
}

#endif /* EMB_FUZZ_FILE_H */
