/* libFuzzer target: the native port's TCP record server (ports/native/transport.c) taking
 * bytes from its client: shell command frames on channel 3 gathered up to each delimiter,
 * checked, answered in the stream; anything else counted as garbage. A real server is
 * started once, with a real client connected that reads whatever the server sends, so
 * replies go through the queue and out of the socket as they would to `emb capture`.
 *
 * Input, by its first byte's bit 0:
 *   0  the bytes of one client read, as they came (seeds: frames of every shell command
 *      of docs/formats/shell.md, encoded by the target's own frame encoder, and junk);
 *   1  shell command payloads [len:u8][bytes], each framed with a good CRC by the frame
 *      encoder and sent cut at a point the input chooses, so mutations of the commands
 *      get past the frame check.
 * Each input ends with a delimiter, as a client's next frame would start. */
#define _GNU_SOURCE
#include <emb/frame.h>
#include <emb/native_link.h>
#include <emb/shell.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "native_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct emb_native_server *server;
static int client = -1;

static void connect_client(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(emb_native_server_port(server))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (client < 0 || connect(client, (struct sockaddr *)&a, sizeof a) != 0)
        abort();
}

/* Takes what the server sent; reconnects when it dropped the client. */
static void drain(void)
{
    uint8_t buf[65536];
    for (;;) {
        ssize_t r = recv(client, buf, sizeof buf, MSG_DONTWAIT);
        if (r > 0)
            continue;
        if (r == 0) {
            close(client);
            connect_client();
        }
        return;
    }
}

static void feed(const uint8_t *p, size_t n)
{
    emb__native_server_client_input(server, p, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (server == NULL) {
        struct emb_native_server_config c = {.queue_bytes = 4096, .stall_ms = 60000};
        if ((server = emb_native_server_start(&c)) == NULL)
            abort();
        connect_client();
    }
    if (size == 0)
        return 0;
    if ((data[0] & 1u) == 0) {
        feed(data + 1, size - 1);
    } else {
        for (size_t i = 1; i < size;) {
            size_t len = data[i++];
            if (len > size - i)
                len = size - i;
            uint8_t wire[EMB_FRAME_WIRE_MAX(255)];
            size_t w = emb_frame_encode(wire, sizeof wire, EMB_FRAME_CH_SHELL, data + i, len);
            if (w == 0)
                abort();
            size_t cut = len > 0 ? data[i] % (w + 1) : 0;
            feed(wire, cut);
            feed(wire + cut, w - cut);
            i += len;
        }
    }
    static const uint8_t delimiter = EMB_FRAME_DELIMITER;
    feed(&delimiter, 1);
    drain();
    return 0;
}
