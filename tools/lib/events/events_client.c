#define _GNU_SOURCE
#include "events_client.h"

#include "events_sink.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

const char *emb_events_default_socket(char *buf, size_t cap)
{
    const char *env = getenv("EMB_EVENTS_SOCKET");
    const char *run = getenv("XDG_RUNTIME_DIR");
    if (env && *env)
        snprintf(buf, cap, "%s", env);
    else if (run && *run)
        snprintf(buf, cap, "%s/emb-events.sock", run);
    else
        snprintf(buf, cap, "/tmp/emb-%u/events.sock", (unsigned)getuid());
    return buf;
}

const char *emb_events_uid_name(unsigned uid, char *buf, size_t cap)
{
    struct passwd pw, *found = NULL;
    char tmp[1024];
    if (getpwuid_r((uid_t)uid, &pw, tmp, sizeof tmp, &found) == 0 && found)
        snprintf(buf, cap, "uid %u (%s)", uid, found->pw_name);
    else
        snprintf(buf, cap, "uid %u", uid);
    return buf;
}

/* The directory part of `path` ("." when it has none). */
static void socket_dir(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, cap, ".");
    else if (slash == path)
        snprintf(dir, cap, "/");
    else
        snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

int emb_events_check_socket_dir(const char *path, bool create, char *err, size_t errlen)
{
    char dir[4096], who[128], me[128];
    socket_dir(path, dir, sizeof dir);
    uid_t uid = getuid();
    char def[256];
    bool private_default = strcmp(path, emb_events_default_socket(def, sizeof def)) == 0 &&
                           getenv("EMB_EVENTS_SOCKET") == NULL;
    if (create && private_default && mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create the socket's directory: %s", dir,
                 strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: the socket's directory is not a directory (a link?)", dir);
        return -1;
    }
    /* Whoever can write the directory can put their own socket at the path. The private
     * default must be the user's alone; a directory given by path may also be root's. */
    bool owner_ok = st.st_uid == uid || (!private_default && st.st_uid == 0);
    if (!owner_ok) {
        snprintf(err, errlen, "%s: the socket's directory belongs to %s, not to you (%s): "
                 "refusing to use it", dir, emb_events_uid_name(st.st_uid, who, sizeof who),
                 emb_events_uid_name(uid, me, sizeof me));
        return -1;
    }
    mode_t open_to_others = private_default ? 077 : 022;
    if (st.st_mode & open_to_others) {
        snprintf(err, errlen, "%s: the socket's directory has mode %04o: others could "
                 "replace the socket (it must be %s)", dir, (unsigned)(st.st_mode & 07777),
                 private_default ? "0700" : "writable by its owner alone");
        return -1;
    }
    return 0;
}

int emb_events_check_peer(int fd, const char *path, const char *role, char *err, size_t errlen)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    char who[128], me[128];
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        snprintf(err, errlen, "%s: cannot tell who the %s is: %s", path, role, strerror(errno));
        return -1;
    }
    if (cred.uid != getuid()) {
        snprintf(err, errlen, "%s: the %s runs as %s (pid %ld), not as you (%s): refused", path,
                 role, emb_events_uid_name(cred.uid, who, sizeof who), (long)cred.pid,
                 emb_events_uid_name(getuid(), me, sizeof me));
        return -1;
    }
    return 0;
}

int emb_events_connect(const char *path, char *err, size_t errlen)
{
    if (emb_events_check_socket_dir(path, false, err, errlen) != 0)
        return -1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "%s: socket path longer than %zu bytes", path,
                 sizeof sa.sun_path - 1);
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, errlen, "%s: no sink answers there (%s)", path, strerror(errno));
        close(fd);
        return -1;
    }
    /* Whatever listens there answers status and log lines we print as the sink's. */
    if (emb_events_check_peer(fd, path, "sink", err, errlen) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

long emb_events_query(int fd, const uint8_t *q, size_t qlen, uint8_t *reply, int timeout_ms,
                      char *err, size_t errlen)
{
    if (send(fd, q, qlen, MSG_NOSIGNAL) != (ssize_t)qlen) {
        snprintf(err, errlen, "sending the query: %s", strerror(errno));
        return -1;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;
    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    if (r == 0) {
        snprintf(err, errlen, "no reply within %d ms", timeout_ms);
        return -1;
    }
    struct iovec iov = {.iov_base = reply, .iov_len = EMB_EVENTS_REPLY_MAX};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    ssize_t n;
    do
        n = recvmsg(fd, &mh, MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        snprintf(err, errlen, "receiving the reply: %s", strerror(errno));
        return -1;
    }
    if (n == 0 && (p.revents & (POLLHUP | POLLERR))) {
        snprintf(err, errlen, "the sink closed the connection");
        return -1;
    }
    if (mh.msg_flags & MSG_TRUNC) {
        snprintf(err, errlen, "reply longer than %u bytes", EMB_EVENTS_REPLY_MAX);
        return -1;
    }
    return (long)n;
}
