/* Memory accessors: GDB remote protocol, and a live process. */
#define _GNU_SOURCE
#include "memaccess.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

static int gdb_read(void *arg, uint64_t addr, void *buf, size_t n, char *err, size_t errlen)
{
    struct emb_gdb *g = arg;
    if (emb_gdb_read(g, addr, buf, n) != 0) {
        snprintf(err, errlen, "%s", emb_gdb_error(g));
        return -1;
    }
    return 0;
}

static int gdb_write(void *arg, uint64_t addr, const void *buf, size_t n, char *err,
                          size_t errlen)
{
    struct emb_gdb *g = arg;
    if (emb_gdb_write(g, addr, buf, n) != 0) {
        snprintf(err, errlen, "%s", emb_gdb_error(g));
        return -1;
    }
    return 0;
}

struct emb_memchan_host_ops emb_memaccess_gdb(struct emb_gdb *g)
{
    return (struct emb_memchan_host_ops){gdb_read, gdb_write, g};
}

static int pid_io(pid_t pid, uint64_t addr, void *buf, size_t n, int write, char *err,
                       size_t errlen)
{
    struct iovec local = {buf, n};
    struct iovec remote = {(void *)(uintptr_t)addr, n};
    ssize_t done = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                         : process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (done != (ssize_t)n) {
        snprintf(err, errlen, "process %d: %s %zu bytes at 0x%llx: %s", (int)pid,
                 write ? "writing" : "reading", n, (unsigned long long)addr,
                 done < 0 ? strerror(errno) : "short transfer");
        return -1;
    }
    return 0;
}

static int pid_read(void *arg, uint64_t addr, void *buf, size_t n, char *err, size_t errlen)
{
    return pid_io(*(pid_t *)arg, addr, buf, n, 0, err, errlen);
}

static int pid_write(void *arg, uint64_t addr, const void *buf, size_t n, char *err,
                          size_t errlen)
{
    return pid_io(*(pid_t *)arg, addr, (void *)buf, n, 1, err, errlen);
}

struct emb_memchan_host_ops emb_memaccess_pid(pid_t *pid)
{
    return (struct emb_memchan_host_ops){pid_read, pid_write, pid};
}

int emb_memaccess_pid_ranges(pid_t pid, struct emb_memchan_host_range *ranges, size_t max, char *err,
                             size_t errlen)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "process %d: %s", (int)pid, strerror(errno));
        return -1;
    }
    size_t n = 0;
    while (n < max && fgets(line, sizeof line, f) != NULL) {
        unsigned long long start, end;
        char perms[8];
        if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3 || perms[0] != 'r' ||
            perms[1] != 'w' || perms[3] != 'p')
            continue;
        /* Adjacent mappings (a .data then a .bss, split by the kernel) are one range: a
         * buffer may straddle them. */
        if (n > 0 && ranges[n - 1].end == start)
            ranges[n - 1].end = end;
        else
            ranges[n++] = (struct emb_memchan_host_range){start, end};
    }
    fclose(f);
    return (int)n;
}

size_t emb_memaccess_scan_ranges(const struct emb_memchan_host_range *ranges, size_t n,
                                 struct emb_memchan_host_range *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ranges[i].end - ranges[i].start <= (UINT64_C(1) << 30))
            out[k++] = ranges[i];
    return k;
}
