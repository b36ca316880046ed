/* Host I/O shared by the capture sources and importers: TCP clients with Nagle off,
 * reads with a deadline, whole writes, and HOST:PORT parsing. Errors are returned as
 * text for the caller's message; nothing here prints or exits. */
#ifndef EMB_HOST_HOSTIO_H
#define EMB_HOST_HOSTIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Splits "HOST:PORT" (or "[v6]:PORT", or ":PORT" for localhost) into host and port.
 * Returns 0, or -1 with a message. */
int emb_hostio_split(const char *spec, char *host, size_t hostlen, uint16_t *port, char *err,
                     size_t errlen);

/* Connects to HOST:PORT within timeout_ms; TCP_NODELAY set. Returns the socket, or -1
 * with a message that names HOST:PORT ("cannot connect to HOST:PORT: ..."). */
int emb_hostio_connect(const char *spec, int timeout_ms, char *err, size_t errlen);

/* Reads at most n bytes, waiting at most timeout_ms (negative: forever). Returns bytes
 * read, 0 at end of file, -1 on error (errno), -2 on timeout. EINTR returns -1 with
 * errno EINTR so a caller can check its stop flag. */
ssize_t emb_hostio_read(int fd, void *buf, size_t n, int timeout_ms);

/* Writes all n bytes (retrying short writes and EINTR). 0, or -1 with errno. */
int emb_hostio_write_all(int fd, const void *buf, size_t n);

/* Monotonic milliseconds. */
uint64_t emb_hostio_now_ms(void);

#endif /* EMB_HOST_HOSTIO_H */
