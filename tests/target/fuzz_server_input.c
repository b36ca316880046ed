/* libFuzzer target: the native port's TCP record server (ports/native/transport.c) taking
 * bytes from its client: shell command frames on channel 3 gathered up to each delimiter,
 * checked, answered into the server's queue; anything else counted as garbage. A real
 * server is started once (its default owner-only listener); the input reaches the client
 * handling past the listener's peer and token checks, which are not fuzzed here. No
 * client reads the queue, so once it is full replies are dropped as for a slow client.
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

#include <stdlib.h>
#include <string.h>

#include "native_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct emb_native_server *server;

static void feed(const uint8_t *p, size_t n)
{
    emb__native_server_client_input(server, p, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (server == NULL) {
        /* The default listener (owner-only Unix socket); bytes come in through the entry
         * point, past the listener's own checks. */
        struct emb_native_server_config c = {.queue_bytes = 1u << 20};
        if ((server = emb_native_server_start(&c)) == NULL)
            abort();
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
    return 0;
}
