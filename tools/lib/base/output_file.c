/* Outputs that replace their target only on success (output_file.h). */
#define _XOPEN_SOURCE 700
#include "output_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "DIR/.NAME.XXXXXX" beside path: the same file system, so rename() is atomic. */
static char *temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    size_t len = strlen(path) + 16;
    char *t = malloc(len);
    if (t)
        snprintf(t, len, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
    return t;
}

/* A target that is not a regular file (a device such as /dev/null, a FIFO, a terminal)
 * holds no earlier output to keep, and renaming over it would replace the device: it is
 * written in place; and so is a link that leads to no file yet. */
static bool write_in_place(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) != 0)
        return true; /* a link to a file yet to be made: fopen() makes it, the link stays */
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

FILE *emb_output_open(struct emb_output *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (path == NULL || strcmp(path, "-") == 0)
        return o->f = stdout;
    o->path = path;
    if (write_in_place(path)) {
        if ((o->f = fopen(path, "wb")) == NULL)
            snprintf(err, errlen, "cannot create: %s", strerror(errno));
        return o->f;
    }
    char *real = realpath(path, NULL); /* a link to a file: the file is replaced, not the link */
    if (real != NULL)
        o->path = o->real = real;
    int fd = -1;
    if ((o->tmp = temp_name(o->path)) == NULL || (fd = mkstemp(o->tmp)) < 0) {
        snprintf(err, errlen, "cannot create: %s", o->tmp ? strerror(errno) : "out of memory");
        free(o->tmp);
        o->tmp = NULL;
        emb_output_end(o, false, NULL, 0);
        return NULL;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); /* mkstemp makes 0600; a plain new file is 0666 & ~umask */
    if ((o->f = fdopen(fd, "wb")) == NULL) {
        snprintf(err, errlen, "cannot create: %s", strerror(errno));
        close(fd);
        emb_output_end(o, false, NULL, 0);
    }
    return o->f;
}

/* Whether what stands at path may be replaced: nothing, or a directory that holds only
 * what `owns` names (another file there would be lost, or read with the output). */
static int check_replaceable(const char *path, bool (*owns)(const char *name), char *err,
                             size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0;
    DIR *d = opendir(path);
    if (d == NULL) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && !owns(e->d_name)) {
            snprintf(err, errlen, "%s holds '%s', which is not part of this output: give an "
                     "empty or new directory", path, e->d_name);
            rc = -1;
        }
    closedir(d);
    return rc;
}

int emb_output_open_dir(struct emb_output *o, const char *path, bool (*owns)(const char *name),
                        char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (check_replaceable(path, owns, err, errlen) != 0)
        return -1;
    o->path = path;
    o->dir = true;
    if ((o->tmp = temp_name(path)) == NULL || mkdtemp(o->tmp) == NULL) {
        snprintf(err, errlen, "%s: cannot create directory: %s", path,
                 o->tmp ? strerror(errno) : "out of memory");
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    chmod(o->tmp, 0777 & ~mask);
    return 0;
}

/* Removes a directory the writer filled (files only, as a CTF trace is). */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(len);
        if (p) {
            snprintf(p, len, "%s/%s", dir, e->d_name);
            if (unlink(p) != 0 && errno == EISDIR)
                remove_tree(p);
            free(p);
        }
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Renames the directory over the target: a directory there is moved aside first (rename
 * cannot replace a non-empty one), then removed. */
static int replace_dir(struct emb_output *o)
{
    struct stat st;
    char *old = NULL;
    if (stat(o->path, &st) == 0 && S_ISDIR(st.st_mode)) {
        if ((old = temp_name(o->path)) == NULL || mkdtemp(old) == NULL || rmdir(old) != 0 ||
            rename(o->path, old) != 0) {
            free(old);
            return -1;
        }
    }
    int rc = rename(o->tmp, o->path);
    if (rc != 0 && old != NULL)
        rename(old, o->path); /* put the earlier output back */
    else if (old != NULL)
        remove_tree(old);
    free(old);
    return rc;
}

int emb_output_end(struct emb_output *o, bool ok, char *err, size_t errlen)
{
    int rc = 0;
    if (o->f != NULL) {
        bool bad = fflush(o->f) != 0 || ferror(o->f);
        if (o->f != stdout && fclose(o->f) != 0)
            bad = true;
        o->f = NULL;
        if (bad && ok) {
            snprintf(err, errlen, "cannot write: %s", strerror(errno ? errno : EIO));
            rc = -1;
            ok = false;
        }
    }
    if (o->tmp != NULL) {
        if (ok && (o->dir ? replace_dir(o) : rename(o->tmp, o->path)) != 0) {
            snprintf(err, errlen, "cannot rename into place: %s", strerror(errno));
            rc = -1;
            ok = false;
        }
        if (!ok)
            o->dir ? remove_tree(o->tmp) : (void)unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
    }
    free(o->real);
    o->real = NULL;
    return rc;
}
