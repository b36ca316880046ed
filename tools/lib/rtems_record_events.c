/* Event names of the RTEMS record versions this tool knows, and the roles the reader
 * gives some of them. The names are the system's (RTEMS_RECORD_<name> in recorddata.h),
 * in event-number order; docs/formats/rtems-record.md says where each list comes from. */
#define _POSIX_C_SOURCE 200809L
#include "rtems_record.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Version 1: the first published list (118 system events; USER is 512). */
static const char *const emb__rr_v1[] = {
    "EMPTY", "VERSION", "ACCEPT", "BIND", "CHOWN", "CLOSE", "CONNECT", "COUNT", "FCHMOD", "FCNTL",
    "FDATASYNC", "FREQUENCY", "FSTAT", "FSYNC", "FTRUNCATE", "HEAD", "HEAP_ALLOC", "HEAP_FREE",
    "HEAP_SIZE", "HEAP_USAGE", "INTERUPT_BEGIN", "INTERUPT_END", "INTERUPT_INSTALL",
    "INTERUPT_REMOVE", "IOCTL", "KEVENT", "KQUEUE", "LINK", "LSEEK", "MKNOD", "MMAP", "MOUNT",
    "OPEN", "OVERFLOW", "POLL", "PROCESSOR", "READ", "READLINK", "READV", "RECV", "RECVFROM",
    "RECVMSG", "RENAME", "RTEMS_BARRIER_CREATE", "RTEMS_BARRIER_DELETE", "RTEMS_BARRIER_RELEASE",
    "RTEMS_BARRIER_WAIT", "RTEMS_EVENT_RECEIVE", "RTEMS_EVENT_SEND", "RTEMS_EVENT_SYSTEM_RECEIVE",
    "RTEMS_EVENT_SYSTEM_SEND", "RTEMS_MESSAGE_QUEUE_BROADCAST", "RTEMS_MESSAGE_QUEUE_CREATE",
    "RTEMS_MESSAGE_QUEUE_DELETE", "RTEMS_MESSAGE_QUEUE_FLUSH", "RTEMS_MESSAGE_QUEUE_RECEIVE",
    "RTEMS_MESSAGE_QUEUE_SEND", "RTEMS_MESSAGE_QUEUE_URGENT", "RTEMS_PARTITION_CREATE",
    "RTEMS_PARTITION_DELETE", "RTEMS_PARTITION_GET_BUFFER", "RTEMS_PARTITION_RETURN_BUFFER",
    "RTEMS_RATE_MONOTONIC_CANCEL", "RTEMS_RATE_MONOTONIC_CREATE", "RTEMS_RATE_MONOTONIC_DELETE",
    "RTEMS_RATE_MONOTONIC_PERIOD", "RTEMS_SEMAPHORE_CREATE", "RTEMS_SEMAPHORE_DELETE",
    "RTEMS_SEMAPHORE_FLUSH", "RTEMS_SEMAPHORE_OBTAIN", "RTEMS_SEMAPHORE_RELEASE",
    "RTEMS_TIMER_CANCEL", "RTEMS_TIMER_CREATE", "RTEMS_TIMER_DELETE", "RTEMS_TIMER_FIRE_AFTER",
    "RTEMS_TIMER_FIRE_WHEN", "RTEMS_TIMER_RESET", "RTEMS_TIMER_SERVER_FIRE_AFTER",
    "RTEMS_TIMER_SERVER_FIRE_WHEN", "SELECT", "SEND", "SENDMSG", "SENDTO", "SOCKET", "STATVFS",
    "SYMLINK", "TAIL", "THREAD_BEGIN", "THREAD_CREATE", "THREAD_DELETE", "THREAD_EXIT",
    "THREAD_EXITTED", "THREAD_PRIO_CURRENT_HIGH", "THREAD_PRIO_CURRENT_LOW",
    "THREAD_PRIO_REAL_HIGH", "THREAD_PRIO_REAL_LOW", "THREAD_RESTART", "THREAD_STACK_CURRENT",
    "THREAD_STACK_SIZE", "THREAD_STACK_USAGE", "THREAD_START", "THREAD_SWITCH_IN",
    "THREAD_SWITCH_OUT", "THREAD_TERMINATE", "UMA_ALLOC_PTR", "UMA_ALLOC_ZONE", "UMA_FREE_PTR",
    "UMA_FREE_ZONE", "UNLINK", "UNMOUNT", "UPTIME_HIGH", "UPTIME_LOW", "WORKSPACE_ALLOC",
    "WORKSPACE_FREE", "WORKSPACE_SIZE", "WORKSPACE_USAGE", "WRITE", "WRITEV",
};

/* Version 4 (RTEMS 5): 238 system events, then SYSTEM_238..511 and USER_0..511. */
static const char *const emb__rr_v4[] = {
    "EMPTY", "VERSION", "ACCEPT_ENTRY", "ACCEPT_EXIT", "BIND_ENTRY", "BIND_EXIT", "BUFFER",
    "CHOWN_ENTRY", "CHOWN_EXIT", "CLOSE_ENTRY", "CLOSE_EXIT", "CONNECT_ENTRY", "CONNECT_EXIT",
    "ETHER_INPUT", "ETHER_OUTPUT", "FCHMOD_ENTRY", "FCHMOD_EXIT", "FCNTL_ENTRY", "FCNTL_EXIT",
    "FDATASYNC_ENTRY", "FDATASYNC_EXIT", "FREQUENCY", "FSTAT_ENTRY", "FSTAT_EXIT", "FSYNC_ENTRY",
    "FSYNC_EXIT", "FTRUNCATE_ENTRY", "FTRUNCATE_EXIT", "GETSOCKOPT_ENTRY", "GETSOCKOPT_EXIT",
    "GIT_HASH", "HEAP_ALLOC", "HEAP_FREE", "HEAP_SIZE", "HEAP_USAGE", "INTERRUPT_ENTRY",
    "INTERRUPT_EXIT", "INTERRUPT_INSTALL", "INTERRUPT_REMOVE", "INTERRUPT_SERVER_ENTRY",
    "INTERRUPT_SERVER_EXIT", "INTERRUPT_SERVER_INSTALL", "INTERRUPT_SERVER_MOVE",
    "INTERRUPT_SERVER_REMOVE", "INTERRUPT_SERVER_TRIGGER", "IOCTL_ENTRY", "IOCTL_EXIT",
    "IP6_INPUT", "IP6_OUTPUT", "IP_INPUT", "IP_OUTPUT", "KEVENT_ENTRY", "KEVENT_EXIT",
    "KQUEUE_ENTRY", "KQUEUE_EXIT", "LENGTH", "LINK_ENTRY", "LINK_EXIT", "LISTEN_ENTRY",
    "LISTEN_EXIT", "LSEEK_ENTRY", "LSEEK_EXIT", "MKNOD_ENTRY", "MKNOD_EXIT", "MMAP_ENTRY",
    "MMAP_EXIT", "MOUNT_ENTRY", "MOUNT_EXIT", "OPEN_ENTRY", "OPEN_EXIT", "PAGE_ALLOC",
    "PAGE_FREE", "PER_CPU_COUNT", "PER_CPU_HEAD", "PER_CPU_OVERFLOW", "PER_CPU_TAIL",
    "POLL_ENTRY", "POLL_EXIT", "PROCESSOR", "PROCESSOR_MAXIMUM", "READ_ENTRY", "READ_EXIT",
    "READLINK_ENTRY", "READLINK_EXIT", "READV_ENTRY", "READV_EXIT", "RECV_ENTRY", "RECV_EXIT",
    "RECVFROM_ENTRY", "RECVFROM_EXIT", "RECVMSG_ENTRY", "RECVMSG_EXIT", "RENAME_ENTRY",
    "RENAME_EXIT", "RTEMS_BARRIER_CREATE", "RTEMS_BARRIER_DELETE", "RTEMS_BARRIER_RELEASE",
    "RTEMS_BARRIER_WAIT", "RTEMS_EVENT_RECEIVE", "RTEMS_EVENT_SEND", "RTEMS_EVENT_SYSTEM_RECEIVE",
    "RTEMS_EVENT_SYSTEM_SEND", "RTEMS_MESSAGE_QUEUE_BROADCAST", "RTEMS_MESSAGE_QUEUE_CREATE",
    "RTEMS_MESSAGE_QUEUE_DELETE", "RTEMS_MESSAGE_QUEUE_FLUSH", "RTEMS_MESSAGE_QUEUE_RECEIVE",
    "RTEMS_MESSAGE_QUEUE_SEND", "RTEMS_MESSAGE_QUEUE_URGENT", "RTEMS_PARTITION_CREATE",
    "RTEMS_PARTITION_DELETE", "RTEMS_PARTITION_GET_BUFFER", "RTEMS_PARTITION_RETURN_BUFFER",
    "RTEMS_RATE_MONOTONIC_CANCEL", "RTEMS_RATE_MONOTONIC_CREATE", "RTEMS_RATE_MONOTONIC_DELETE",
    "RTEMS_RATE_MONOTONIC_PERIOD", "RTEMS_SEMAPHORE_CREATE", "RTEMS_SEMAPHORE_DELETE",
    "RTEMS_SEMAPHORE_FLUSH", "RTEMS_SEMAPHORE_OBTAIN", "RTEMS_SEMAPHORE_RELEASE",
    "RTEMS_TIMER_CANCEL", "RTEMS_TIMER_CREATE", "RTEMS_TIMER_DELETE", "RTEMS_TIMER_FIRE_AFTER",
    "RTEMS_TIMER_FIRE_WHEN", "RTEMS_TIMER_RESET", "RTEMS_TIMER_SERVER_FIRE_AFTER",
    "RTEMS_TIMER_SERVER_FIRE_WHEN", "SBWAIT_ENTRY", "SBWAIT_EXIT", "SBWAKEUP_ENTRY",
    "SBWAKEUP_EXIT", "SELECT_ENTRY", "SELECT_EXIT", "SEND_ENTRY", "SEND_EXIT", "SENDMSG_ENTRY",
    "SENDMSG_EXIT", "SENDTO_ENTRY", "SENDTO_EXIT", "SETSOCKOPT_ENTRY", "SETSOCKOPT_EXIT",
    "SHUTDOWN_ENTRY", "SHUTDOWN_EXIT", "SOABORT_ENTRY", "SOABORT_EXIT", "SOACCEPT_ENTRY",
    "SOACCEPT_EXIT", "SOALLOC_ENTRY", "SOALLOC_EXIT", "SOBINDAT_ENTRY", "SOBINDAT_EXIT",
    "SOBIND_ENTRY", "SOBIND_EXIT", "SOCKET_ENTRY", "SOCKET_EXIT", "SOCLOSE_ENTRY", "SOCLOSE_EXIT",
    "SOCONNECT2_ENTRY", "SOCONNECT2_EXIT", "SOCONNECTAT_ENTRY", "SOCONNECTAT_EXIT",
    "SOCREATE_ENTRY", "SOCREATE_EXIT", "SODEALLOC_ENTRY", "SODEALLOC_EXIT", "SODISCONNECT_ENTRY",
    "SODISCONNECT_EXIT", "SOFREE_ENTRY", "SOFREE_EXIT", "SOLISTEN_ENTRY", "SOLISTEN_EXIT",
    "SONEWCONN_ENTRY", "SONEWCONN_EXIT", "SORECEIVE_ENTRY", "SORECEIVE_EXIT", "SORFLUSH_ENTRY",
    "SORFLUSH_EXIT", "SOSEND_ENTRY", "SOSEND_EXIT", "SOSHUTDOWN_ENTRY", "SOSHUTDOWN_EXIT",
    "STATVFS_ENTRY", "STATVFS_EXIT", "SYMLINK_ENTRY", "SYMLINK_EXIT", "TCP_CLOSE", "TCP_INPUT",
    "TCP_OUTPUT", "THREAD_BEGIN", "THREAD_CREATE", "THREAD_DELETE", "THREAD_EXIT",
    "THREAD_EXITTED", "THREAD_ID", "THREAD_PRIO_CURRENT_HIGH", "THREAD_PRIO_CURRENT_LOW",
    "THREAD_PRIO_REAL_HIGH", "THREAD_PRIO_REAL_LOW", "THREAD_QUEUE_ENQUEUE",
    "THREAD_QUEUE_ENQUEUE_STICKY", "THREAD_QUEUE_EXTRACT", "THREAD_QUEUE_SURRENDER",
    "THREAD_QUEUE_SURRENDER_STICKY", "THREAD_RESOURCE_OBTAIN", "THREAD_RESOURCE_RELEASE",
    "THREAD_RESTART", "THREAD_STACK_CURRENT", "THREAD_STACK_SIZE", "THREAD_STACK_USAGE",
    "THREAD_START", "THREAD_STATE_CLEAR", "THREAD_STATE_SET", "THREAD_SWITCH_IN",
    "THREAD_SWITCH_OUT", "THREAD_TERMINATE", "UDP_INPUT", "UDP_OUTPUT", "UMA_ALLOC_PTR",
    "UMA_ALLOC_ZONE", "UMA_FREE_PTR", "UMA_FREE_ZONE", "UNLINK_ENTRY", "UNLINK_EXIT",
    "UNMOUNT_ENTRY", "UNMOUNT_EXIT", "UPTIME_HIGH", "UPTIME_LOW", "WORKSPACE_ALLOC",
    "WORKSPACE_FREE", "WORKSPACE_SIZE", "WORKSPACE_USAGE", "WRITE_ENTRY", "WRITE_EXIT",
    "WRITEV_ENTRY", "WRITEV_EXIT",
};

/* Version 10 (RTEMS 6): 341 system events, then SYSTEM_341..511 and USER_0..511. */
static const char *const emb__rr_v10[] = {
    "EMPTY", "VERSION", "ACCEPT_ENTRY", "ACCEPT_EXIT", "ADDRESS", "ALIGNED_ALLOC_ENTRY",
    "ALIGNED_ALLOC_EXIT", "ARCH", "ARG_0", "ARG_1", "ARG_2", "ARG_3", "ARG_4", "ARG_5", "ARG_6",
    "ARG_7", "ARG_8", "ARG_9", "BIND_ENTRY", "BIND_EXIT", "BSP", "BUFFER", "CALLER",
    "CALLOC_ENTRY", "CALLOC_EXIT", "CHOWN_ENTRY", "CHOWN_EXIT", "CLOSE_ENTRY", "CLOSE_EXIT",
    "CONNECT_ENTRY", "CONNECT_EXIT", "ETHER_INPUT", "ETHER_OUTPUT", "ERRNO", "FATAL_CODE",
    "FATAL_SOURCE", "FCHMOD_ENTRY", "FCHMOD_EXIT", "FCNTL_ENTRY", "FCNTL_EXIT", "FDATASYNC_ENTRY",
    "FDATASYNC_EXIT", "FREE_ENTRY", "FREE_EXIT", "FREQUENCY", "FSTAT_ENTRY", "FSTAT_EXIT",
    "FSYNC_ENTRY", "FSYNC_EXIT", "FTRUNCATE_ENTRY", "FTRUNCATE_EXIT", "FUNCTION_ENTRY",
    "FUNCTION_EXIT", "GETSOCKOPT_ENTRY", "GETSOCKOPT_EXIT", "HEAP_ALLOC", "HEAP_FREE",
    "HEAP_SIZE", "HEAP_USAGE", "INTERRUPT_ENTRY", "INTERRUPT_EXIT", "INTERRUPT_INSTALL",
    "INTERRUPT_REMOVE", "INTERRUPT_SERVER_ENTRY", "INTERRUPT_SERVER_EXIT",
    "INTERRUPT_SERVER_INSTALL", "INTERRUPT_SERVER_MOVE", "INTERRUPT_SERVER_REMOVE",
    "INTERRUPT_SERVER_TRIGGER", "IOCTL_ENTRY", "IOCTL_EXIT", "IP6_INPUT", "IP6_OUTPUT",
    "IP_INPUT", "IP_OUTPUT", "ISR_DISABLE", "ISR_ENABLE", "ISR_LOCK_ACQUIRE_ENTRY",
    "ISR_LOCK_ACQUIRE_EXIT", "ISR_LOCK_ADDRESS", "ISR_LOCK_DESTROY", "ISR_LOCK_INITIALIZE",
    "ISR_LOCK_NAME", "ISR_LOCK_RELEASE", "KEVENT_ENTRY", "KEVENT_EXIT", "KQUEUE_ENTRY",
    "KQUEUE_EXIT", "LENGTH", "LINE", "LINK_ENTRY", "LINK_EXIT", "LISTEN_ENTRY", "LISTEN_EXIT",
    "LSEEK_ENTRY", "LSEEK_EXIT", "MALLOC_ENTRY", "MALLOC_EXIT", "MEMORY", "MKNOD_ENTRY",
    "MKNOD_EXIT", "MMAP_ENTRY", "MMAP_EXIT", "MOUNT_ENTRY", "MOUNT_EXIT", "MULTILIB",
    "OPEN_ENTRY", "OPEN_EXIT", "PAGE_ALLOC", "PAGE_FREE", "PER_CPU_COUNT", "PER_CPU_HEAD",
    "PER_CPU_OVERFLOW", "PER_CPU_TAIL", "POLL_ENTRY", "POLL_EXIT", "POSIX_MEMALIGN_ENTRY",
    "POSIX_MEMALIGN_EXIT", "PROCESSOR", "PROCESSOR_MAXIMUM", "READ_ENTRY", "READ_EXIT",
    "READLINK_ENTRY", "READLINK_EXIT", "READV_ENTRY", "READV_EXIT", "REALLOC_ENTRY",
    "REALLOC_EXIT", "RECV_ENTRY", "RECV_EXIT", "RECVFROM_ENTRY", "RECVFROM_EXIT", "RECVMSG_ENTRY",
    "RECVMSG_EXIT", "REGISTERS", "RENAME_ENTRY", "RENAME_EXIT", "RETURN_0", "RETURN_1",
    "RETURN_2", "RETURN_3", "RETURN_4", "RETURN_5", "RETURN_6", "RETURN_7", "RETURN_8",
    "RETURN_9", "RTEMS_BARRIER_CREATE", "RTEMS_BARRIER_DELETE", "RTEMS_BARRIER_RELEASE",
    "RTEMS_BARRIER_WAIT", "RTEMS_CALLOC_ENTRY", "RTEMS_CALLOC_EXIT", "RTEMS_EVENT_RECEIVE",
    "RTEMS_EVENT_SEND", "RTEMS_EVENT_SYSTEM_RECEIVE", "RTEMS_EVENT_SYSTEM_SEND",
    "RTEMS_MALLOC_ENTRY", "RTEMS_MALLOC_EXIT", "RTEMS_MESSAGE_QUEUE_BROADCAST",
    "RTEMS_MESSAGE_QUEUE_CREATE", "RTEMS_MESSAGE_QUEUE_DELETE", "RTEMS_MESSAGE_QUEUE_FLUSH",
    "RTEMS_MESSAGE_QUEUE_RECEIVE", "RTEMS_MESSAGE_QUEUE_SEND", "RTEMS_MESSAGE_QUEUE_URGENT",
    "RTEMS_PARTITION_CREATE", "RTEMS_PARTITION_DELETE", "RTEMS_PARTITION_GET_BUFFER",
    "RTEMS_PARTITION_RETURN_BUFFER", "RTEMS_RATE_MONOTONIC_CANCEL", "RTEMS_RATE_MONOTONIC_CREATE",
    "RTEMS_RATE_MONOTONIC_DELETE", "RTEMS_RATE_MONOTONIC_PERIOD", "RTEMS_SEMAPHORE_CREATE",
    "RTEMS_SEMAPHORE_DELETE", "RTEMS_SEMAPHORE_FLUSH", "RTEMS_SEMAPHORE_OBTAIN",
    "RTEMS_SEMAPHORE_RELEASE", "RTEMS_TIMER_CANCEL", "RTEMS_TIMER_CREATE", "RTEMS_TIMER_DELETE",
    "RTEMS_TIMER_FIRE_AFTER", "RTEMS_TIMER_FIRE_WHEN", "RTEMS_TIMER_RESET",
    "RTEMS_TIMER_SERVER_FIRE_AFTER", "RTEMS_TIMER_SERVER_FIRE_WHEN", "SBWAIT_ENTRY",
    "SBWAIT_EXIT", "SBWAKEUP_ENTRY", "SBWAKEUP_EXIT", "SCHEDULER_ADD_PROCESSOR",
    "SCHEDULER_ASK_FOR_HELP", "SCHEDULER_BLOCK", "SCHEDULER_CANCEL_JOB", "SCHEDULER_ID",
    "SCHEDULER_MAP_PRIORITY", "SCHEDULER_NAME", "SCHEDULER_PIN",
    "SCHEDULER_RECONSIDER_HELP_REQUEST", "SCHEDULER_RELEASE_JOB", "SCHEDULER_REMOVE_PROCESSOR",
    "SCHEDULER_SCHEDULE", "SCHEDULER_SET_AFFINITY", "SCHEDULER_TICK", "SCHEDULER_UNBLOCK",
    "SCHEDULER_UNMAP_PRIORITY", "SCHEDULER_UNPIN", "SCHEDULER_UPDATE_PRIORITY",
    "SCHEDULER_WITHDRAW_NODE", "SCHEDULER_YIELD", "SELECT_ENTRY", "SELECT_EXIT", "SEND_ENTRY",
    "SEND_EXIT", "SENDMSG_ENTRY", "SENDMSG_EXIT", "SENDTO_ENTRY", "SENDTO_EXIT",
    "SETSOCKOPT_ENTRY", "SETSOCKOPT_EXIT", "SHUTDOWN_ENTRY", "SHUTDOWN_EXIT", "SOABORT_ENTRY",
    "SOABORT_EXIT", "SOACCEPT_ENTRY", "SOACCEPT_EXIT", "SOALLOC_ENTRY", "SOALLOC_EXIT",
    "SOBINDAT_ENTRY", "SOBINDAT_EXIT", "SOBIND_ENTRY", "SOBIND_EXIT", "SOCKET_ENTRY",
    "SOCKET_EXIT", "SOCLOSE_ENTRY", "SOCLOSE_EXIT", "SOCONNECT2_ENTRY", "SOCONNECT2_EXIT",
    "SOCONNECTAT_ENTRY", "SOCONNECTAT_EXIT", "SOCREATE_ENTRY", "SOCREATE_EXIT", "SODEALLOC_ENTRY",
    "SODEALLOC_EXIT", "SODISCONNECT_ENTRY", "SODISCONNECT_EXIT", "SOFREE_ENTRY", "SOFREE_EXIT",
    "SOLISTEN_ENTRY", "SOLISTEN_EXIT", "SONEWCONN_ENTRY", "SONEWCONN_EXIT", "SORECEIVE_ENTRY",
    "SORECEIVE_EXIT", "SORFLUSH_ENTRY", "SORFLUSH_EXIT", "SOSEND_ENTRY", "SOSEND_EXIT",
    "SOSHUTDOWN_ENTRY", "SOSHUTDOWN_EXIT", "STATVFS_ENTRY", "STATVFS_EXIT", "SYMLINK_ENTRY",
    "SYMLINK_EXIT", "TCP_CLOSE", "TCP_INPUT", "TCP_OUTPUT", "THREAD_BEGIN",
    "THREAD_CONTINUE_ENTRY", "THREAD_CONTINUE_EXIT", "THREAD_CREATE", "THREAD_DELETE",
    "THREAD_DISPATCH_DISABLE", "THREAD_DISPATCH_ENABLE", "THREAD_EXIT", "THREAD_EXITTED",
    "THREAD_ID", "THREAD_NAME", "THREAD_PRIO_CURRENT_HIGH", "THREAD_PRIO_CURRENT_LOW",
    "THREAD_PRIO_REAL_HIGH", "THREAD_PRIO_REAL_LOW", "THREAD_QUEUE_ADDRESS",
    "THREAD_QUEUE_DESTROY", "THREAD_QUEUE_ENQUEUE", "THREAD_QUEUE_ENQUEUE_STICKY",
    "THREAD_QUEUE_EXTRACT", "THREAD_QUEUE_ID", "THREAD_QUEUE_INITIALIZE", "THREAD_QUEUE_NAME",
    "THREAD_QUEUE_SURRENDER", "THREAD_QUEUE_SURRENDER_STICKY", "THREAD_RESOURCE_OBTAIN",
    "THREAD_RESOURCE_RELEASE", "THREAD_RESTART", "THREAD_STACK_CURRENT", "THREAD_STACK_SIZE",
    "THREAD_STACK_USAGE", "THREAD_START", "THREAD_STATE_CLEAR", "THREAD_STATE_SET",
    "THREAD_SWITCH_IN", "THREAD_SWITCH_OUT", "THREAD_TERMINATE", "THREAD_TIMER_INSERT_MONOTONIC",
    "THREAD_TIMER_INSERT_REALTIME", "THREAD_TIMER_INSERT_TICKS", "THREAD_TIMER_REMOVE", "TOOLS",
    "UDP_INPUT", "UDP_OUTPUT", "UMA_ALLOC_PTR", "UMA_ALLOC_ZONE", "UMA_FREE_PTR", "UMA_FREE_ZONE",
    "UNLINK_ENTRY", "UNLINK_EXIT", "UNMOUNT_ENTRY", "UNMOUNT_EXIT", "UPTIME_HIGH", "UPTIME_LOW",
    "VERSION_CONTROL_KEY", "WATCHDOG_ADDRESS", "WATCHDOG_CPU", "WATCHDOG_INITIALIZE",
    "WATCHDOG_INSERT", "WATCHDOG_PREINITIALIZE", "WATCHDOG_REMOVE", "WATCHDOG_ROUTINE",
    "WATCHDOG_STATE", "WORKSPACE_ALLOC_ENTRY", "WORKSPACE_ALLOC_EXIT", "WORKSPACE_FREE_ENTY",
    "WORKSPACE_FREE_EXIT", "WORKSPACE_SIZE", "WORKSPACE_USAGE", "WRITE_ENTRY", "WRITE_EXIT",
    "WRITEV_ENTRY", "WRITEV_EXIT",
};

#define EMB__COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct emb__role_name {
    enum emb_rr_role role;
    const char *name;
};

/* Roles by name: the reader keys its behaviour on names, so a table read from a target's
 * header works as long as it spells them the system's way. Old and new spellings both. */
static const struct emb__role_name emb__roles[] = {
    {EMB_RR_ROLE_EMPTY, "EMPTY"},
    {EMB_RR_ROLE_VERSION, "VERSION"},
    {EMB_RR_ROLE_PROCESSOR, "PROCESSOR"},
    {EMB_RR_ROLE_PROCESSOR_MAX, "PROCESSOR_MAXIMUM"},
    {EMB_RR_ROLE_COUNT, "COUNT"},
    {EMB_RR_ROLE_COUNT, "PER_CPU_COUNT"},
    {EMB_RR_ROLE_FREQUENCY, "FREQUENCY"},
    {EMB_RR_ROLE_TAIL, "TAIL"},
    {EMB_RR_ROLE_TAIL, "PER_CPU_TAIL"},
    {EMB_RR_ROLE_HEAD, "HEAD"},
    {EMB_RR_ROLE_HEAD, "PER_CPU_HEAD"},
    {EMB_RR_ROLE_OVERFLOW, "OVERFLOW"},
    {EMB_RR_ROLE_OVERFLOW, "PER_CPU_OVERFLOW"},
    {EMB_RR_ROLE_UPTIME_LOW, "UPTIME_LOW"},
    {EMB_RR_ROLE_UPTIME_HIGH, "UPTIME_HIGH"},
    {EMB_RR_ROLE_THREAD_INFO, "THREAD_ID"},
    {EMB_RR_ROLE_THREAD_INFO, "THREAD_NAME"},
};

static void emb__assign_roles(struct emb_rr_table *t)
{
    for (size_t r = 0; r < EMB__COUNT(t->role_event); r++)
        t->role_event[r] = 0xFFFFu;
    memset(t->roles, EMB_RR_ROLE_OTHER, sizeof t->roles);
    /* Only system events (below 512) have roles: user events are the application's. */
    for (unsigned ev = 0; ev < t->named && ev < EMB_RR_EVENTS / 2u; ev++) {
        const char *name = t->names[ev];
        if (name == NULL)
            continue;
        for (size_t i = 0; i < EMB__COUNT(emb__roles); i++) {
            if (strcmp(name, emb__roles[i].name) != 0)
                continue;
            t->roles[ev] = (uint8_t)emb__roles[i].role;
            if (t->role_event[emb__roles[i].role] == 0xFFFFu)
                t->role_event[emb__roles[i].role] = (uint16_t)ev;
        }
        if (!strcmp(name, "ARCH") || !strcmp(name, "MULTILIB") || !strcmp(name, "BSP") ||
            !strcmp(name, "VERSION_CONTROL_KEY") || !strcmp(name, "TOOLS"))
            t->roles[ev] = EMB_RR_ROLE_INFO;
    }
}

static struct emb_rr_table emb__tables[3] = {
    {.version = 1, .named = EMB__COUNT(emb__rr_v1), .names = emb__rr_v1},
    {.version = 4, .named = EMB__COUNT(emb__rr_v4), .names = emb__rr_v4},
    {.version = 10, .named = EMB__COUNT(emb__rr_v10), .names = emb__rr_v10},
};

_Static_assert(EMB__COUNT(emb__rr_v1) == 118, "version 1 names 118 events");
_Static_assert(EMB__COUNT(emb__rr_v4) == 238, "version 4 names 238 events");
_Static_assert(EMB__COUNT(emb__rr_v10) == 341, "version 10 names 341 events");

static void emb__tables_init(void)
{
    static int done;
    if (done)
        return;
    for (size_t i = 0; i < EMB__COUNT(emb__tables); i++)
        emb__assign_roles(&emb__tables[i]);
    done = 1;
}

const struct emb_rr_table *emb_rr_table_builtin(unsigned version)
{
    emb__tables_init();
    for (size_t i = 0; i < EMB__COUNT(emb__tables); i++)
        if (emb__tables[i].version == version)
            return &emb__tables[i];
    return NULL;
}

const struct emb_rr_table *emb_rr_table_for_version(unsigned version, bool *exact)
{
    emb__tables_init();
    if (version < EMB_RR_VERSION_MIN || version > EMB_RR_VERSION_MAX)
        return NULL;
    for (size_t i = 0; i < EMB__COUNT(emb__tables); i++) {
        if (emb__tables[i].version >= version) {
            if (exact != NULL)
                *exact = emb__tables[i].version == version;
            return &emb__tables[i];
        }
    }
    return NULL;
}

const char *emb_rr_event_name(const struct emb_rr_table *table, unsigned event, char *buf,
                              size_t len)
{
    switch (event) {
    case EMB_RR_EV_OVERFLOW: return "OVERFLOW";
    case EMB_RR_EV_TIME_ADJUSTMENT: return "TIME_ADJUSTMENT";
    case EMB_RR_EV_UNRELIABLE_TIME: return "UNRELIABLE_TIME";
    default: break;
    }
    if (table != NULL && event < table->named && table->names[event] != NULL)
        return table->names[event];
    if (event >= EMB_RR_EVENTS)
        snprintf(buf, len, "EVENT_%u", event);
    else if (event >= EMB_RR_EVENTS / 2u)
        snprintf(buf, len, "USER_%u", event - EMB_RR_EVENTS / 2u);
    else
        snprintf(buf, len, "SYSTEM_%u", event);
    return buf;
}

enum emb_rr_role emb_rr_event_role(const struct emb_rr_table *table, unsigned event)
{
    if (table == NULL || event >= EMB_RR_EVENTS)
        return EMB_RR_ROLE_OTHER;
    return (enum emb_rr_role)table->roles[event];
}

/* ---- Tables read from text ---- */

struct emb__parsed_table {
    struct emb_rr_table table;
    char *names[EMB_RR_EVENTS];
};

void emb_rr_table_free(struct emb_rr_table *table)
{
    if (table == NULL)
        return;
    struct emb__parsed_table *p = (struct emb__parsed_table *)table;
    for (size_t i = 0; i < EMB__COUNT(p->names); i++)
        free(p->names[i]);
    free(p);
}

static int emb__valid_name(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !(isupper((unsigned char)s[0])))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isupper((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_')
            return 0;
    return 1;
}

struct emb_rr_table *emb_rr_table_parse(const char *text, size_t len, unsigned version,
                                        char *err, size_t errlen)
{
    struct emb__parsed_table *p = calloc(1, sizeof *p);
    if (p == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    unsigned line = 0, highest = 0;
    bool any = false;
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && text[end] != '\n')
            end++;
        line++;
        char buf[160];
        size_t n = end - i < sizeof buf - 1 ? end - i : sizeof buf - 1;
        memcpy(buf, text + i, n);
        buf[n] = '\0';
        i = end + 1;
        char *hash = strchr(buf, '#');
        if (hash != NULL)
            *hash = '\0';
        char *s = buf;
        while (isspace((unsigned char)*s))
            s++;
        if (*s == '\0')
            continue;
        char *numend;
        unsigned long ev = strtoul(s, &numend, 0);
        char *name = numend;
        while (isspace((unsigned char)*name))
            name++;
        size_t nl = 0;
        while (name[nl] != '\0' && !isspace((unsigned char)name[nl]))
            nl++;
        if (numend == s || ev >= EMB_RR_EVENTS || !emb__valid_name(name, nl)) {
            snprintf(err, errlen, "line %u: expected `NUMBER NAME` with NUMBER below 1024 and "
                     "NAME an upper-case identifier", line);
            emb_rr_table_free(&p->table);
            return NULL;
        }
        if (p->names[ev] != NULL) {
            snprintf(err, errlen, "line %u: event %lu named twice", line, ev);
            emb_rr_table_free(&p->table);
            return NULL;
        }
        p->names[ev] = strndup(name, nl);
        if (p->names[ev] == NULL) {
            snprintf(err, errlen, "out of memory");
            emb_rr_table_free(&p->table);
            return NULL;
        }
        any = true;
        if (ev + 1u > highest)
            highest = (unsigned)ev + 1u;
    }
    if (!any) {
        snprintf(err, errlen, "no event names");
        emb_rr_table_free(&p->table);
        return NULL;
    }
    p->table.version = version;
    p->table.named = highest;
    p->table.names = (const char *const *)p->names;
    emb__assign_roles(&p->table);
    return &p->table;
}
