/* A serial line opened raw (posix_serial.h). */
#define _DEFAULT_SOURCE
#include "posix_serial.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <termios.h>
#include <unistd.h>

static speed_t speed_code(uint32_t baud)
{
    static const struct {
        uint32_t rate;
        speed_t code;
    } rates[] = {{9600, B9600}, {19200, B19200}, {38400, B38400}, {57600, B57600},
                 {115200, B115200}, {230400, B230400}, {460800, B460800}, {921600, B921600},
                 {1000000, B1000000}, {2000000, B2000000}, {3000000, B3000000}, {4000000, B4000000}};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        if (rates[i].rate == baud)
            return rates[i].code;
    return 0;
}

int emb_posix_serial_open(const char *path, uint32_t baud)
{
    speed_t code = speed_code(baud);
    if (code == 0) {
        errno = EINVAL;
        return -1;
    }
    int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct termios t;
    if (tcgetattr(fd, &t) == 0) {
        cfmakeraw(&t);
        t.c_cflag |= CLOCAL | CREAD;
        t.c_cflag &= ~(tcflag_t)(CSTOPB | PARENB | CRTSCTS);
        t.c_cc[VMIN] = 1;
        t.c_cc[VTIME] = 0;
        cfsetispeed(&t, code);
        cfsetospeed(&t, code);
        if (tcsetattr(fd, TCSANOW, &t) == 0)
            return fd;
    }
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}
