/* Memory accessors for the memory channel's host side (memchan_host.h): a target halted
 * through a GDB server, or a live process read and written with process_vm_readv and
 * process_vm_writev (the native port; no stop needed, the rings are lock-free). */
#ifndef EMB_HOST_MEMACCESS_H
#define EMB_HOST_MEMACCESS_H

#include <stddef.h>
#include <sys/types.h>

#include "gdb_rsp.h"
#include "memchan_host.h"

/* Reads and writes through a GDB connection (the target must be halted while used). */
struct emb_memchan_host_ops emb_memaccess_gdb(struct emb_gdb *g);

/* Reads and writes the memory of process `pid` (same user, or CAP_SYS_PTRACE). */
struct emb_memchan_host_ops emb_memaccess_pid(pid_t *pid);

/* The writable private mappings of `pid` (its data, bss and heap), at most `max`, where a
 * control block can live. Returns how many, or -1 with a message. */
/* Of those, the ranges worth scanning for a control block: mappings up to 1 GiB (a
 * sanitizer's shadow memory is terabytes of mostly untouched reservations). Returns the
 * count copied to `out`. */
size_t emb_memaccess_scan_ranges(const struct emb_memchan_host_range *ranges, size_t n,
                                 struct emb_memchan_host_range *out);
int emb_memaccess_pid_ranges(pid_t pid, struct emb_memchan_host_range *ranges, size_t max, char *err,
                             size_t errlen);

#endif /* EMB_HOST_MEMACCESS_H */
