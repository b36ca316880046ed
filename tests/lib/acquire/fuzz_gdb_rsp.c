/* libFuzzer: the GDB remote protocol client facing a server whose every byte is the
 * input: start-up, a memory read, a write, a halt and a detach. Whatever the server says
 * (broken packets, lies about sizes, run-length bombs, a close anywhere), the client
 * returns an error and frees what it holds. */
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gdb_rsp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 100000)
        return 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    /* The server's whole side is written up front, then its end is closed for writing:
     * the client reads the input, then end of file, never waits long. */
    int big = 1 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(sv[1], data + off, size - off);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    shutdown(sv[1], SHUT_WR);
    char err[256];
    struct emb_gdb *g = emb_gdb_open_fd(sv[0], 50, err, sizeof err);
    if (g != NULL) {
        uint8_t buf[600];
        emb_gdb_read(g, 0x20000000u, buf, sizeof buf);
        emb_gdb_write(g, 0x20000000u, "$#}*", 4);
        emb_gdb_resume(g);
        emb_gdb_halt(g);
        emb_gdb_detach(g);
        emb_gdb_close(g);
    }
    close(sv[1]);
    return 0;
}
