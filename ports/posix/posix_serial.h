/* A serial line opened raw, shared by the native port's serial transport and the host
 * tool's serial capture source: the one place that knows the termios settings frames need. */
#ifndef EMB_POSIX_SERIAL_H
#define EMB_POSIX_SERIAL_H

#include <stdint.h>

/* Opens the serial device at `path` raw at `baud` (9600 to 4000000, the rates termios
 * names): 8 data bits, no parity, one stop bit, no flow control, reads that wait for one
 * byte. Returns the descriptor, or -1 with errno set (EINVAL for a rate termios lacks). */
int emb_posix_serial_open(const char *path, uint32_t baud);

#endif /* EMB_POSIX_SERIAL_H */
