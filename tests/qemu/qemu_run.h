/* Starting and stopping QEMU for tests: an MPS2 board with a firmware image, its UART on a
 * log file, its GDB stub on a free TCP port of the loopback interface, killed at the end
 * whatever happened. */
#ifndef EMB_TEST_QEMU_RUN_H
#define EMB_TEST_QEMU_RUN_H

#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct qemu_run {
    pid_t pid;
    int port;
    char gdb[32]; /* "127.0.0.1:PORT" */
};

/* A port nobody listens on now (QEMU binds it a moment later; a clash fails the start). */
static inline int qemu_free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    int port = -1;
    if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(s, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    if (s >= 0)
        close(s);
    return port;
}

/* Starts `qemu` (qemu-system-arm) on `machine` with `elf`, its own output (and the UARTs
 * not redirected) to `log`. `serials`, when not NULL, is a NULL-terminated list of -serial
 * values, UART0 first ("file:PATH", "pty", ...). */
static inline int qemu_start_serials(struct qemu_run *q, const char *qemu, const char *machine,
                                     const char *elf, const char *log, const char *const *serials)
{
    memset(q, 0, sizeof *q);
    q->port = qemu_free_port();
    if (q->port < 0)
        return -1;
    snprintf(q->gdb, sizeof q->gdb, "127.0.0.1:%d", q->port);
    char gdbarg[64];
    snprintf(gdbarg, sizeof gdbarg, "tcp:127.0.0.1:%d", q->port);
    const char *argv[32] = {qemu, "-M", machine, "-nographic", "-monitor", "none", "-semihosting-config",
                            "enable=on,target=native", "-gdb", gdbarg, "-kernel", elf};
    size_t n = 12;
    for (size_t i = 0; serials != NULL && serials[i] != NULL && n + 3 < 32; i++) {
        argv[n++] = "-serial";
        argv[n++] = serials[i];
    }
    argv[n] = NULL;
    q->pid = fork();
    if (q->pid < 0)
        return -1;
    if (q->pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp(qemu, (char *const *)argv);
        _exit(127);
    }
    return 0;
}

/* QEMU with UART0 on `log` too. */
static inline int qemu_start(struct qemu_run *q, const char *qemu, const char *machine,
                             const char *elf, const char *log)
{
    return qemu_start_serials(q, qemu, machine, elf, log, NULL);
}

/* Runs a shell command; its output (stdout and stderr) in out. Returns the exit status. */
static inline int qemu_run_cmd(const char *cmd, char *out, size_t cap)
{
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    size_t n = 0;
    out[0] = '\0';
    if (p == NULL)
        return -1;
    char line[1024];
    while (fgets(line, sizeof line, p) != NULL) {
        size_t l = strlen(line);
        if (n + l + 1 < cap) {
            memcpy(out + n, line, l + 1);
            n += l;
        }
    }
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline void qemu_stop(struct qemu_run *q)
{
    if (q->pid > 0) {
        kill(q->pid, SIGKILL);
        waitpid(q->pid, NULL, 0);
        q->pid = 0;
    }
}

static inline void qemu_sleep_ms(unsigned ms)
{
    struct timespec t = {ms / 1000u, (long)(ms % 1000u) * 1000000L};
    nanosleep(&t, NULL);
}

#endif /* EMB_TEST_QEMU_RUN_H */
