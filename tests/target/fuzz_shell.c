/* libFuzzer target: the target's shell command handler (src/shell.c), built for the host
 * with the trace core it arms: whatever a host sends on channel 3. Input: [flags:u8] then
 * commands [len:u8][bytes]; flags bit 0 puts the trace in window mode, bit 1 installs the
 * hooks. Every reply must fit EMB_SHELL_REPLY_MAX, echo the command with the reply bit,
 * carry a PING's cookie back, and hand SET_LOG_LEVEL's arguments to the hook unchanged.
 * Seeds: every command of docs/formats/shell.md, with and without arguments. */
#include <emb/shell.h>
#include <emb/trace.h>
#include <emb/wire.h>

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint16_t got_module;
static uint8_t got_level;
static unsigned snapshots;

static emb_status set_level(void *arg, uint16_t module, uint8_t level)
{
    (void)arg;
    got_module = module;
    got_level = level;
    return level > 7 ? EMB_E_INVALID : EMB_OK;
}

static emb_status snapshot(void *arg)
{
    (void)arg;
    snapshots++;
    return EMB_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    static const uint8_t uuid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    emb_trace_init(uuid, (data[0] & 1) ? EMB_TRACE_MODE_WINDOW : EMB_TRACE_MODE_SNAPSHOT, ~0u);
    const struct emb_shell_hooks hooks = {set_level, snapshot, NULL};
    emb_shell_set_hooks((data[0] & 2) ? &hooks : NULL);
    for (size_t i = 1; i < size;) {
        size_t len = data[i++];
        if (len > size - i)
            len = size - i;
        const uint8_t *cmd = data + i;
        i += len;
        uint8_t reply[EMB_SHELL_REPLY_MAX + 8];
        memset(reply, 0xAA, sizeof reply);
        got_module = 0;
        got_level = 0;
        size_t n = emb_shell_handle(cmd, len, reply, EMB_SHELL_REPLY_MAX);
        if (len == 0) {
            if (n != 0)
                abort();
            continue;
        }
        if (n < 2 || n > EMB_SHELL_REPLY_MAX || reply[EMB_SHELL_REPLY_MAX] != 0xAA ||
            reply[0] != (uint8_t)(cmd[0] | EMB_SHELL_REPLY))
            abort();
        if (cmd[0] == EMB_SHELL_PING && (n != 7 || emb_get_le32(reply + 2) !=
                                                       (len >= 5 ? emb_get_le32(cmd + 1) : 0u)))
            abort();
        if (cmd[0] == EMB_SHELL_SET_LOG_LEVEL && (data[0] & 2) && len >= 4 &&
            (got_module != emb_get_le16(cmd + 1) || got_level != cmd[3]))
            abort();
        if (reply[1] == EMB_OK && cmd[0] == EMB_SHELL_ARM_WINDOW && !(data[0] & 1))
            abort(); /* arming needs window mode */
    }
    return 0;
}
