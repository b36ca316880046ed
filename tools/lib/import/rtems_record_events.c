/* Event names of the RTEMS record versions this tool knows, and the roles the reader
 * gives some of them. The names are the system's (RTEMS_RECORD_<name> in recorddata.h),
 * in event-number order; docs/formats/rtems-record.md says where each list comes from. */
#define _POSIX_C_SOURCE 200809L
#include "rtems_record.h"

#include "problem.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

/* The system event names of every record version this tool knows, each once, marked with
 * the versions whose list has it (a first byte of version bits, then the name), a line
 * for each run of names in the same versions. Each
 * version's list is the names marked with it, in this order; version 10 first has its
 * events without a time stamp (untimed_v10).
 *
 * Version 1: the first published list (118 system events; USER is 512).
 * Version 4: 238 system events, then SYSTEM_238..511 and USER_0..511. RTEMS
 * cpukit/include/rtems/recorddata.h at commit c9bd696eb4 (2019-04-03), the last with
 * RTEMS_RECORD_THE_VERSION 4.
 * Version 9 (RTEMS 5.1 to 5.3): 341 system events, then SYSTEM_341..511 and USER_0..511.
 * RTEMS cpukit/include/rtems/recorddata.h of the 5.3 tag (commit e41e9961df, 2019-09-02,
 * the last change to the list before version 10).
 * Version 10 (RTEMS 6.1, 6.2 and main): RTEMS commit 4655a7df00 "record: Reorganize system
 * event numbers" (2024-10-11) moved the events that may have no time stamp to the front,
 * 0 to 16 (RTEMS_RECORD_NO_TIME_LAST is VERSION_CONTROL_KEY), dropped PER_CPU_HEAD and
 * PER_CPU_TAIL and added PER_CPU_DISCARD, TIME_ADJUSTMENT and UNRELIABLE_TIME: 342 system
 * events, then SYSTEM_342..511 and USER_0..511. RTEMS cpukit/include/rtems/recorddata.h at
 * 4655a7df00, the same list in the 6.1 and 6.2 tags and on main (181e86a199, 2026-07).
 *
 * (A version byte is its own string literal: "\x07" "EMPTY" is not "\x07E" "MPTY".) */
#define IN_V1 0x01u
#define IN_V4 0x02u
#define IN_V9 0x04u
#define IN_V10 0x08u
#define V1_4_9_10 "\x0f"
#define V1_4_9 "\x07"
#define V1_4 "\x03"
#define V1 "\x01"
#define V4_9_10 "\x0e"
#define V4_9 "\x06"
#define V4 "\x02"
#define V9_10 "\x0c"
#define V9 "\x04"

static const char *const system_names[] = {
    V1_4_9 "EMPTY", V1_4_9 "VERSION",
    V4_9_10 "ACCEPT_ENTRY", V4_9_10 "ACCEPT_EXIT",
    V9_10 "ADDRESS", V9_10 "ALIGNED_ALLOC_ENTRY", V9_10 "ALIGNED_ALLOC_EXIT",
    V9 "ARCH",
    V9_10 "ARG_0", V9_10 "ARG_1", V9_10 "ARG_2", V9_10 "ARG_3", V9_10 "ARG_4", V9_10 "ARG_5",
    V9_10 "ARG_6", V9_10 "ARG_7", V9_10 "ARG_8", V9_10 "ARG_9",
    V4_9_10 "BIND_ENTRY", V4_9_10 "BIND_EXIT",
    V9 "BSP",
    V4_9_10 "BUFFER",
    V9_10 "CALLER", V9_10 "CALLOC_ENTRY", V9_10 "CALLOC_EXIT",
    V4_9_10 "CHOWN_ENTRY", V4_9_10 "CHOWN_EXIT", V4_9_10 "CLOSE_ENTRY", V4_9_10 "CLOSE_EXIT",
    V4_9_10 "CONNECT_ENTRY", V4_9_10 "CONNECT_EXIT", V4_9_10 "ETHER_INPUT",
    V4_9_10 "ETHER_OUTPUT",
    V9_10 "ERRNO", V9_10 "FATAL_CODE", V9_10 "FATAL_SOURCE",
    V4_9_10 "FCHMOD_ENTRY", V4_9_10 "FCHMOD_EXIT", V4_9_10 "FCNTL_ENTRY", V4_9_10 "FCNTL_EXIT",
    V4_9_10 "FDATASYNC_ENTRY", V4_9_10 "FDATASYNC_EXIT",
    V9_10 "FREE_ENTRY", V9_10 "FREE_EXIT",
    V1 "ACCEPT", V1 "BIND", V1 "CHOWN", V1 "CLOSE", V1 "CONNECT", V1 "COUNT", V1 "FCHMOD",
    V1 "FCNTL", V1 "FDATASYNC",
    V1_4_9 "FREQUENCY",
    V4_9_10 "FSTAT_ENTRY", V4_9_10 "FSTAT_EXIT", V4_9_10 "FSYNC_ENTRY", V4_9_10 "FSYNC_EXIT",
    V4_9_10 "FTRUNCATE_ENTRY", V4_9_10 "FTRUNCATE_EXIT",
    V9_10 "FUNCTION_ENTRY", V9_10 "FUNCTION_EXIT",
    V4_9_10 "GETSOCKOPT_ENTRY", V4_9_10 "GETSOCKOPT_EXIT",
    V4 "GIT_HASH",
    V1 "FSTAT", V1 "FSYNC", V1 "FTRUNCATE", V1 "HEAD",
    V1_4_9_10 "HEAP_ALLOC", V1_4_9_10 "HEAP_FREE", V1_4_9_10 "HEAP_SIZE",
    V1_4_9_10 "HEAP_USAGE",
    V4_9_10 "INTERRUPT_ENTRY", V4_9_10 "INTERRUPT_EXIT", V4_9_10 "INTERRUPT_INSTALL",
    V4_9_10 "INTERRUPT_REMOVE", V4_9_10 "INTERRUPT_SERVER_ENTRY",
    V4_9_10 "INTERRUPT_SERVER_EXIT", V4_9_10 "INTERRUPT_SERVER_INSTALL",
    V4_9_10 "INTERRUPT_SERVER_MOVE", V4_9_10 "INTERRUPT_SERVER_REMOVE",
    V4_9_10 "INTERRUPT_SERVER_TRIGGER", V4_9_10 "IOCTL_ENTRY", V4_9_10 "IOCTL_EXIT",
    V4_9_10 "IP6_INPUT", V4_9_10 "IP6_OUTPUT", V4_9_10 "IP_INPUT", V4_9_10 "IP_OUTPUT",
    V9_10 "ISR_DISABLE", V9_10 "ISR_ENABLE", V9_10 "ISR_LOCK_ACQUIRE_ENTRY",
    V9_10 "ISR_LOCK_ACQUIRE_EXIT", V9_10 "ISR_LOCK_ADDRESS", V9_10 "ISR_LOCK_DESTROY",
    V9_10 "ISR_LOCK_INITIALIZE", V9_10 "ISR_LOCK_NAME", V9_10 "ISR_LOCK_RELEASE",
    V4_9_10 "KEVENT_ENTRY", V4_9_10 "KEVENT_EXIT", V4_9_10 "KQUEUE_ENTRY",
    V4_9_10 "KQUEUE_EXIT", V4_9_10 "LENGTH",
    V9_10 "LINE",
    V4_9_10 "LINK_ENTRY", V4_9_10 "LINK_EXIT", V4_9_10 "LISTEN_ENTRY", V4_9_10 "LISTEN_EXIT",
    V4_9_10 "LSEEK_ENTRY", V4_9_10 "LSEEK_EXIT",
    V9_10 "MALLOC_ENTRY", V9_10 "MALLOC_EXIT", V9_10 "MEMORY",
    V4_9_10 "MKNOD_ENTRY", V4_9_10 "MKNOD_EXIT", V4_9_10 "MMAP_ENTRY", V4_9_10 "MMAP_EXIT",
    V4_9_10 "MOUNT_ENTRY", V4_9_10 "MOUNT_EXIT",
    V9 "MULTILIB",
    V4_9_10 "OPEN_ENTRY", V4_9_10 "OPEN_EXIT", V4_9_10 "PAGE_ALLOC", V4_9_10 "PAGE_FREE",
    V4_9 "PER_CPU_COUNT", V4_9 "PER_CPU_HEAD", V4_9 "PER_CPU_OVERFLOW", V4_9 "PER_CPU_TAIL",
    V4_9_10 "POLL_ENTRY", V4_9_10 "POLL_EXIT",
    V9_10 "POSIX_MEMALIGN_ENTRY", V9_10 "POSIX_MEMALIGN_EXIT",
    V1 "INTERUPT_BEGIN", V1 "INTERUPT_END", V1 "INTERUPT_INSTALL", V1 "INTERUPT_REMOVE",
    V1 "IOCTL", V1 "KEVENT", V1 "KQUEUE", V1 "LINK", V1 "LSEEK", V1 "MKNOD", V1 "MMAP",
    V1 "MOUNT", V1 "OPEN", V1 "OVERFLOW", V1 "POLL",
    V1_4_9 "PROCESSOR",
    V4_9 "PROCESSOR_MAXIMUM",
    V4_9_10 "READ_ENTRY", V4_9_10 "READ_EXIT", V4_9_10 "READLINK_ENTRY",
    V4_9_10 "READLINK_EXIT", V4_9_10 "READV_ENTRY", V4_9_10 "READV_EXIT",
    V9_10 "REALLOC_ENTRY", V9_10 "REALLOC_EXIT",
    V4_9_10 "RECV_ENTRY", V4_9_10 "RECV_EXIT", V4_9_10 "RECVFROM_ENTRY",
    V4_9_10 "RECVFROM_EXIT", V4_9_10 "RECVMSG_ENTRY", V4_9_10 "RECVMSG_EXIT",
    V9_10 "REGISTERS",
    V4_9_10 "RENAME_ENTRY", V4_9_10 "RENAME_EXIT",
    V9_10 "RETURN_0", V9_10 "RETURN_1", V9_10 "RETURN_2", V9_10 "RETURN_3", V9_10 "RETURN_4",
    V9_10 "RETURN_5", V9_10 "RETURN_6", V9_10 "RETURN_7", V9_10 "RETURN_8", V9_10 "RETURN_9",
    V1 "READ", V1 "READLINK", V1 "READV", V1 "RECV", V1 "RECVFROM", V1 "RECVMSG", V1 "RENAME",
    V1_4_9_10 "RTEMS_BARRIER_CREATE", V1_4_9_10 "RTEMS_BARRIER_DELETE",
    V1_4_9_10 "RTEMS_BARRIER_RELEASE", V1_4_9_10 "RTEMS_BARRIER_WAIT",
    V9_10 "RTEMS_CALLOC_ENTRY", V9_10 "RTEMS_CALLOC_EXIT",
    V1_4_9_10 "RTEMS_EVENT_RECEIVE", V1_4_9_10 "RTEMS_EVENT_SEND",
    V1_4_9_10 "RTEMS_EVENT_SYSTEM_RECEIVE", V1_4_9_10 "RTEMS_EVENT_SYSTEM_SEND",
    V9_10 "RTEMS_MALLOC_ENTRY", V9_10 "RTEMS_MALLOC_EXIT",
    V1_4_9_10 "RTEMS_MESSAGE_QUEUE_BROADCAST", V1_4_9_10 "RTEMS_MESSAGE_QUEUE_CREATE",
    V1_4_9_10 "RTEMS_MESSAGE_QUEUE_DELETE", V1_4_9_10 "RTEMS_MESSAGE_QUEUE_FLUSH",
    V1_4_9_10 "RTEMS_MESSAGE_QUEUE_RECEIVE", V1_4_9_10 "RTEMS_MESSAGE_QUEUE_SEND",
    V1_4_9_10 "RTEMS_MESSAGE_QUEUE_URGENT", V1_4_9_10 "RTEMS_PARTITION_CREATE",
    V1_4_9_10 "RTEMS_PARTITION_DELETE", V1_4_9_10 "RTEMS_PARTITION_GET_BUFFER",
    V1_4_9_10 "RTEMS_PARTITION_RETURN_BUFFER", V1_4_9_10 "RTEMS_RATE_MONOTONIC_CANCEL",
    V1_4_9_10 "RTEMS_RATE_MONOTONIC_CREATE", V1_4_9_10 "RTEMS_RATE_MONOTONIC_DELETE",
    V1_4_9_10 "RTEMS_RATE_MONOTONIC_PERIOD", V1_4_9_10 "RTEMS_SEMAPHORE_CREATE",
    V1_4_9_10 "RTEMS_SEMAPHORE_DELETE", V1_4_9_10 "RTEMS_SEMAPHORE_FLUSH",
    V1_4_9_10 "RTEMS_SEMAPHORE_OBTAIN", V1_4_9_10 "RTEMS_SEMAPHORE_RELEASE",
    V1_4_9_10 "RTEMS_TIMER_CANCEL", V1_4_9_10 "RTEMS_TIMER_CREATE",
    V1_4_9_10 "RTEMS_TIMER_DELETE", V1_4_9_10 "RTEMS_TIMER_FIRE_AFTER",
    V1_4_9_10 "RTEMS_TIMER_FIRE_WHEN", V1_4_9_10 "RTEMS_TIMER_RESET",
    V1_4_9_10 "RTEMS_TIMER_SERVER_FIRE_AFTER", V1_4_9_10 "RTEMS_TIMER_SERVER_FIRE_WHEN",
    V4_9_10 "SBWAIT_ENTRY", V4_9_10 "SBWAIT_EXIT", V4_9_10 "SBWAKEUP_ENTRY",
    V4_9_10 "SBWAKEUP_EXIT",
    V9_10 "SCHEDULER_ADD_PROCESSOR", V9_10 "SCHEDULER_ASK_FOR_HELP", V9_10 "SCHEDULER_BLOCK",
    V9_10 "SCHEDULER_CANCEL_JOB", V9_10 "SCHEDULER_ID", V9_10 "SCHEDULER_MAP_PRIORITY",
    V9_10 "SCHEDULER_NAME", V9_10 "SCHEDULER_PIN", V9_10 "SCHEDULER_RECONSIDER_HELP_REQUEST",
    V9_10 "SCHEDULER_RELEASE_JOB", V9_10 "SCHEDULER_REMOVE_PROCESSOR",
    V9_10 "SCHEDULER_SCHEDULE", V9_10 "SCHEDULER_SET_AFFINITY", V9_10 "SCHEDULER_TICK",
    V9_10 "SCHEDULER_UNBLOCK", V9_10 "SCHEDULER_UNMAP_PRIORITY", V9_10 "SCHEDULER_UNPIN",
    V9_10 "SCHEDULER_UPDATE_PRIORITY", V9_10 "SCHEDULER_WITHDRAW_NODE", V9_10 "SCHEDULER_YIELD",
    V4_9_10 "SELECT_ENTRY", V4_9_10 "SELECT_EXIT", V4_9_10 "SEND_ENTRY", V4_9_10 "SEND_EXIT",
    V4_9_10 "SENDMSG_ENTRY", V4_9_10 "SENDMSG_EXIT", V4_9_10 "SENDTO_ENTRY",
    V4_9_10 "SENDTO_EXIT", V4_9_10 "SETSOCKOPT_ENTRY", V4_9_10 "SETSOCKOPT_EXIT",
    V4_9_10 "SHUTDOWN_ENTRY", V4_9_10 "SHUTDOWN_EXIT", V4_9_10 "SOABORT_ENTRY",
    V4_9_10 "SOABORT_EXIT", V4_9_10 "SOACCEPT_ENTRY", V4_9_10 "SOACCEPT_EXIT",
    V4_9_10 "SOALLOC_ENTRY", V4_9_10 "SOALLOC_EXIT", V4_9_10 "SOBINDAT_ENTRY",
    V4_9_10 "SOBINDAT_EXIT", V4_9_10 "SOBIND_ENTRY", V4_9_10 "SOBIND_EXIT",
    V4_9_10 "SOCKET_ENTRY", V4_9_10 "SOCKET_EXIT", V4_9_10 "SOCLOSE_ENTRY",
    V4_9_10 "SOCLOSE_EXIT", V4_9_10 "SOCONNECT2_ENTRY", V4_9_10 "SOCONNECT2_EXIT",
    V4_9_10 "SOCONNECTAT_ENTRY", V4_9_10 "SOCONNECTAT_EXIT", V4_9_10 "SOCREATE_ENTRY",
    V4_9_10 "SOCREATE_EXIT", V4_9_10 "SODEALLOC_ENTRY", V4_9_10 "SODEALLOC_EXIT",
    V4_9_10 "SODISCONNECT_ENTRY", V4_9_10 "SODISCONNECT_EXIT", V4_9_10 "SOFREE_ENTRY",
    V4_9_10 "SOFREE_EXIT", V4_9_10 "SOLISTEN_ENTRY", V4_9_10 "SOLISTEN_EXIT",
    V4_9_10 "SONEWCONN_ENTRY", V4_9_10 "SONEWCONN_EXIT", V4_9_10 "SORECEIVE_ENTRY",
    V4_9_10 "SORECEIVE_EXIT", V4_9_10 "SORFLUSH_ENTRY", V4_9_10 "SORFLUSH_EXIT",
    V4_9_10 "SOSEND_ENTRY", V4_9_10 "SOSEND_EXIT", V4_9_10 "SOSHUTDOWN_ENTRY",
    V4_9_10 "SOSHUTDOWN_EXIT", V4_9_10 "STATVFS_ENTRY", V4_9_10 "STATVFS_EXIT",
    V4_9_10 "SYMLINK_ENTRY", V4_9_10 "SYMLINK_EXIT", V4_9_10 "TCP_CLOSE", V4_9_10 "TCP_INPUT",
    V4_9_10 "TCP_OUTPUT",
    V1 "SELECT", V1 "SEND", V1 "SENDMSG", V1 "SENDTO", V1 "SOCKET", V1 "STATVFS", V1 "SYMLINK",
    V1 "TAIL",
    V1_4_9_10 "THREAD_BEGIN",
    V9_10 "THREAD_CONTINUE_ENTRY", V9_10 "THREAD_CONTINUE_EXIT",
    V1_4_9_10 "THREAD_CREATE", V1_4_9_10 "THREAD_DELETE",
    V9_10 "THREAD_DISPATCH_DISABLE", V9_10 "THREAD_DISPATCH_ENABLE",
    V1_4_9_10 "THREAD_EXIT", V1_4_9_10 "THREAD_EXITTED",
    V4_9 "THREAD_ID",
    V9 "THREAD_NAME",
    V1_4_9_10 "THREAD_PRIO_CURRENT_HIGH", V1_4_9_10 "THREAD_PRIO_CURRENT_LOW",
    V1_4_9_10 "THREAD_PRIO_REAL_HIGH", V1_4_9_10 "THREAD_PRIO_REAL_LOW",
    V9_10 "THREAD_QUEUE_ADDRESS", V9_10 "THREAD_QUEUE_DESTROY",
    V4_9_10 "THREAD_QUEUE_ENQUEUE", V4_9_10 "THREAD_QUEUE_ENQUEUE_STICKY",
    V4_9_10 "THREAD_QUEUE_EXTRACT",
    V9_10 "THREAD_QUEUE_ID", V9_10 "THREAD_QUEUE_INITIALIZE", V9_10 "THREAD_QUEUE_NAME",
    V4_9_10 "THREAD_QUEUE_SURRENDER", V4_9_10 "THREAD_QUEUE_SURRENDER_STICKY",
    V4_9_10 "THREAD_RESOURCE_OBTAIN", V4_9_10 "THREAD_RESOURCE_RELEASE",
    V1_4_9_10 "THREAD_RESTART", V1_4_9_10 "THREAD_STACK_CURRENT", V1_4_9_10 "THREAD_STACK_SIZE",
    V1_4_9_10 "THREAD_STACK_USAGE", V1_4_9_10 "THREAD_START",
    V4_9_10 "THREAD_STATE_CLEAR", V4_9_10 "THREAD_STATE_SET",
    V1_4_9_10 "THREAD_SWITCH_IN", V1_4_9_10 "THREAD_SWITCH_OUT", V1_4_9_10 "THREAD_TERMINATE",
    V9_10 "THREAD_TIMER_INSERT_MONOTONIC", V9_10 "THREAD_TIMER_INSERT_REALTIME",
    V9_10 "THREAD_TIMER_INSERT_TICKS", V9_10 "THREAD_TIMER_REMOVE",
    V9 "TOOLS",
    V4_9_10 "UDP_INPUT", V4_9_10 "UDP_OUTPUT",
    V1_4_9_10 "UMA_ALLOC_PTR", V1_4_9_10 "UMA_ALLOC_ZONE", V1_4_9_10 "UMA_FREE_PTR",
    V1_4_9_10 "UMA_FREE_ZONE",
    V4_9_10 "UNLINK_ENTRY", V4_9_10 "UNLINK_EXIT", V4_9_10 "UNMOUNT_ENTRY",
    V4_9_10 "UNMOUNT_EXIT",
    V1 "UNLINK", V1 "UNMOUNT",
    V1_4_9_10 "UPTIME_HIGH", V1_4_9_10 "UPTIME_LOW",
    V9 "VERSION_CONTROL_KEY",
    V9_10 "WATCHDOG_ADDRESS", V9_10 "WATCHDOG_CPU", V9_10 "WATCHDOG_INITIALIZE",
    V9_10 "WATCHDOG_INSERT", V9_10 "WATCHDOG_PREINITIALIZE", V9_10 "WATCHDOG_REMOVE",
    V9_10 "WATCHDOG_ROUTINE", V9_10 "WATCHDOG_STATE", V9_10 "WORKSPACE_ALLOC_ENTRY",
    V9_10 "WORKSPACE_ALLOC_EXIT", V9_10 "WORKSPACE_FREE_ENTY", V9_10 "WORKSPACE_FREE_EXIT",
    V1_4 "WORKSPACE_ALLOC", V1_4 "WORKSPACE_FREE",
    V1_4_9_10 "WORKSPACE_SIZE", V1_4_9_10 "WORKSPACE_USAGE",
    V4_9_10 "WRITE_ENTRY", V4_9_10 "WRITE_EXIT", V4_9_10 "WRITEV_ENTRY", V4_9_10 "WRITEV_EXIT",
    V1 "WRITE", V1 "WRITEV",
};

static const char *const untimed_v10[] = {
    "EMPTY", "VERSION", "ARCH", "BSP", "FREQUENCY", "MULTILIB", "PER_CPU_COUNT",
    "PER_CPU_DISCARD", "PER_CPU_OVERFLOW", "PROCESSOR", "PROCESSOR_MAXIMUM", "THREAD_ID",
    "THREAD_NAME", "TIME_ADJUSTMENT", "TOOLS", "UNRELIABLE_TIME", "VERSION_CONTROL_KEY",
};

enum { NAMED_V1 = 118, NAMED_V4 = 238, NAMED_V9 = 341, NAMED_V10 = 342 };
static const char *names_v1[NAMED_V1], *names_v4[NAMED_V4], *names_v9[NAMED_V9],
    *names_v10[NAMED_V10];

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

struct role_name {
    enum emb_rtems_record_role role;
    const char *name;
};

/* Roles by name: the reader keys its behaviour on names, so a table read from a target's
 * header works as long as it spells them the system's way. Old and new spellings both. */
static const struct role_name role_names[] = {
    {EMB_RTEMS_RECORD_ROLE_EMPTY, "EMPTY"},
    {EMB_RTEMS_RECORD_ROLE_VERSION, "VERSION"},
    {EMB_RTEMS_RECORD_ROLE_PROCESSOR, "PROCESSOR"},
    {EMB_RTEMS_RECORD_ROLE_PROCESSOR_MAX, "PROCESSOR_MAXIMUM"},
    {EMB_RTEMS_RECORD_ROLE_COUNT, "COUNT"},
    {EMB_RTEMS_RECORD_ROLE_COUNT, "PER_CPU_COUNT"},
    {EMB_RTEMS_RECORD_ROLE_FREQUENCY, "FREQUENCY"},
    {EMB_RTEMS_RECORD_ROLE_TAIL, "TAIL"},
    {EMB_RTEMS_RECORD_ROLE_TAIL, "PER_CPU_TAIL"},
    {EMB_RTEMS_RECORD_ROLE_HEAD, "HEAD"},
    {EMB_RTEMS_RECORD_ROLE_HEAD, "PER_CPU_HEAD"},
    {EMB_RTEMS_RECORD_ROLE_OVERFLOW, "OVERFLOW"},
    {EMB_RTEMS_RECORD_ROLE_OVERFLOW, "PER_CPU_OVERFLOW"},
    {EMB_RTEMS_RECORD_ROLE_UPTIME_LOW, "UPTIME_LOW"},
    {EMB_RTEMS_RECORD_ROLE_UPTIME_HIGH, "UPTIME_HIGH"},
    {EMB_RTEMS_RECORD_ROLE_THREAD_INFO, "THREAD_ID"},
    {EMB_RTEMS_RECORD_ROLE_THREAD_INFO, "THREAD_NAME"},
    {EMB_RTEMS_RECORD_ROLE_TIME_ADJUSTMENT, "TIME_ADJUSTMENT"},
    {EMB_RTEMS_RECORD_ROLE_UNRELIABLE_TIME, "UNRELIABLE_TIME"},
};

static void assign_roles(struct emb_rtems_record_table *t)
{
    for (size_t r = 0; r < COUNT_OF(t->role_event); r++)
        t->role_event[r] = 0xFFFFu;
    memset(t->roles, EMB_RTEMS_RECORD_ROLE_OTHER, sizeof t->roles);
    t->no_time_last = 0xFFFFu;
    /* Only system events (below 512) have roles: user events are the application's. */
    for (unsigned ev = 0; ev < t->named && ev < EMB_RTEMS_RECORD_EVENTS / 2u; ev++) {
        const char *name = t->names[ev];
        if (name == NULL)
            continue;
        for (size_t i = 0; i < COUNT_OF(role_names); i++) {
            if (strcmp(name, role_names[i].name) != 0)
                continue;
            t->roles[ev] = (uint8_t)role_names[i].role;
            if (t->role_event[role_names[i].role] == 0xFFFFu)
                t->role_event[role_names[i].role] = (uint16_t)ev;
        }
        if (!strcmp(name, "ARCH") || !strcmp(name, "MULTILIB") || !strcmp(name, "BSP") ||
            !strcmp(name, "VERSION_CONTROL_KEY") || !strcmp(name, "TOOLS"))
            t->roles[ev] = EMB_RTEMS_RECORD_ROLE_INFO;
        if (!strcmp(name, "VERSION_CONTROL_KEY") && t->no_time_last == 0xFFFFu)
            t->no_time_last = (uint16_t)ev;
    }
}

static struct emb_rtems_record_table tables[4] = {
    {.version = 1, .named = NAMED_V1, .names = names_v1},
    {.version = 4, .named = NAMED_V4, .names = names_v4},
    {.version = 9, .named = NAMED_V9, .names = names_v9},
    {.version = 10, .named = NAMED_V10, .names = names_v10},
};

/* Each version's list from the names marked with it. */
static void fill_names(void)
{
    static const unsigned bits[4] = {IN_V1, IN_V4, IN_V9, IN_V10};
    const char **lists[4] = {names_v1, names_v4, names_v9, names_v10};
    size_t n[4] = {0, 0, 0, COUNT_OF(untimed_v10)};
    memcpy(names_v10, untimed_v10, sizeof untimed_v10);
    for (size_t i = 0; i < COUNT_OF(system_names); i++) {
        unsigned in = (unsigned char)system_names[i][0];
        for (size_t v = 0; v < 4; v++)
            if ((in & bits[v]) != 0u && n[v] < tables[v].named)
                lists[v][n[v]++] = system_names[i] + 1;
    }
}

static void fill_tables(void)
{
    fill_names();
    for (size_t i = 0; i < COUNT_OF(tables); i++)
        assign_roles(&tables[i]);
}

static void tables_init(void)
{
    static once_flag once = ONCE_FLAG_INIT;
    call_once(&once, fill_tables);
}

const struct emb_rtems_record_table *emb_rtems_record_table_builtin(unsigned version)
{
    tables_init();
    for (size_t i = 0; i < COUNT_OF(tables); i++)
        if (tables[i].version == version)
            return &tables[i];
    return NULL;
}

const struct emb_rtems_record_table *emb_rtems_record_table_for_version(unsigned version, bool *exact)
{
    tables_init();
    if (version < EMB_RTEMS_RECORD_VERSION_MIN || version > EMB_RTEMS_RECORD_VERSION_MAX)
        return NULL;
    for (size_t i = 0; i < COUNT_OF(tables); i++) {
        if (tables[i].version >= version) {
            if (exact != NULL)
                *exact = tables[i].version == version;
            return &tables[i];
        }
    }
    return NULL;
}

const char *emb_rtems_record_event_name(const struct emb_rtems_record_table *table, unsigned event, char *buf,
                              size_t len)
{
    switch (event) {
    case EMB_RTEMS_RECORD_EV_OVERFLOW: return "OVERFLOW";
    case EMB_RTEMS_RECORD_EV_TIME_ADJUSTMENT: return "TIME_ADJUSTMENT";
    case EMB_RTEMS_RECORD_EV_UNRELIABLE_TIME: return "UNRELIABLE_TIME";
    default: break;
    }
    if (table != NULL && event < table->named && table->names[event] != NULL)
        return table->names[event];
    if (event >= EMB_RTEMS_RECORD_EVENTS)
        snprintf(buf, len, "EVENT_%u", event);
    else if (event >= EMB_RTEMS_RECORD_EVENTS / 2u)
        snprintf(buf, len, "USER_%u", event - EMB_RTEMS_RECORD_EVENTS / 2u);
    else
        snprintf(buf, len, "SYSTEM_%u", event);
    return buf;
}

enum emb_rtems_record_role emb_rtems_record_event_role(const struct emb_rtems_record_table *table, unsigned event)
{
    if (table == NULL || event >= EMB_RTEMS_RECORD_EVENTS)
        return EMB_RTEMS_RECORD_ROLE_OTHER;
    return (enum emb_rtems_record_role)table->roles[event];
}

/* ---- Tables read from text ---- */

struct parsed_table {
    struct emb_rtems_record_table table;
    char *names[EMB_RTEMS_RECORD_EVENTS];
};

void emb_rtems_record_table_free(struct emb_rtems_record_table *table)
{
    if (table == NULL)
        return;
    struct parsed_table *p = (struct parsed_table *)table;
    for (size_t i = 0; i < COUNT_OF(p->names); i++)
        free(p->names[i]);
    free(p);
}

static int is_valid_name(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !(isupper((unsigned char)s[0])))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isupper((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_')
            return 0;
    return 1;
}

/* One line of a table, into p->names: a `NUMBER NAME` pair, or nothing but a comment or
 * space. Returns the event number, -1 for a line without one, -2 after a problem. */
static long parse_line(struct parsed_table *p, char *line, unsigned number,
                       struct emb_problems *problems)
{
    char *hash = strchr(line, '#');
    if (hash != NULL)
        *hash = '\0';
    char *s = line;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return -1;
    char *numend;
    unsigned long ev = strtoul(s, &numend, 0);
    char *name = numend;
    while (isspace((unsigned char)*name))
        name++;
    size_t nl = 0;
    while (name[nl] != '\0' && !isspace((unsigned char)name[nl]))
        nl++;
    if (numend == s || ev >= EMB_RTEMS_RECORD_EVENTS || !is_valid_name(name, nl)) {
        emb_report(problems, EMB_ERROR, -1, "line %u: expected `NUMBER NAME` with NUMBER "
                   "below 1024 and NAME an upper-case identifier", number);
        return -2;
    }
    if (p->names[ev] != NULL) {
        emb_report(problems, EMB_ERROR, -1, "line %u: event %lu named twice", number, ev);
        return -2;
    }
    p->names[ev] = strndup(name, nl);
    if (p->names[ev] == NULL) {
        emb_report(problems, EMB_ERROR, -1, "out of memory");
        return -2;
    }
    return (long)ev;
}

struct emb_rtems_record_table *emb_rtems_record_table_parse(const char *text, size_t len,
                                                            unsigned version,
                                                            struct emb_problems *problems)
{
    struct parsed_table *p = calloc(1, sizeof *p);
    if (p == NULL) {
        emb_report(problems, EMB_ERROR, -1, "out of memory");
        return NULL;
    }
    unsigned line = 0, highest = 0;
    for (size_t i = 0; i < len;) {
        size_t end = i;
        while (end < len && text[end] != '\n')
            end++;
        char buf[160];
        size_t n = end - i < sizeof buf - 1 ? end - i : sizeof buf - 1;
        memcpy(buf, text + i, n);
        buf[n] = '\0';
        i = end + 1;
        long ev = parse_line(p, buf, ++line, problems);
        if (ev == -2) {
            emb_rtems_record_table_free(&p->table);
            return NULL;
        }
        if (ev >= 0 && (unsigned)ev + 1u > highest)
            highest = (unsigned)ev + 1u;
    }
    if (highest == 0) {
        emb_report(problems, EMB_ERROR, -1, "no event names");
        emb_rtems_record_table_free(&p->table);
        return NULL;
    }
    p->table.version = version;
    p->table.named = highest;
    p->table.names = (const char *const *)p->names;
    assign_roles(&p->table);
    return &p->table;
}
