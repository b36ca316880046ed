/* Symbol addresses from an ELF file (elfutils' libelf): where a target keeps its control
 * blocks (`emb_memchan`, the debug descriptor) and, for a running process, where the
 * kernel loaded its executable. */
#ifndef EMB_HOST_ELF_SYM_H
#define EMB_HOST_ELF_SYM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The value and size of symbol `name` in the ELF file at `path` (elf_image.h underneath).
 * 0, or -1 with a message. */
int emb_elf_file_symbol(const char *path, const char *name, uint64_t *value, uint64_t *size,
                        char *err, size_t errlen);

/* The address of symbol `name` in the running process `pid`: its value in
 * /proc/PID/exe plus the load bias of a position-independent executable. */
int emb_elf_process_symbol(pid_t pid, const char *name, uint64_t *addr, char *err, size_t errlen);

#endif /* EMB_HOST_ELF_SYM_H */
