/* Shell commands on frame channel 3 (docs/formats/shell.md). */
#include <emb/shell.h>

#include <emb/trace.h>
#include <emb/wire.h>

static struct emb_shell_hooks emb__hooks;
static uint32_t emb__commands;

void emb_shell_set_hooks(const struct emb_shell_hooks *hooks)
{
    if (hooks != NULL)
        emb__hooks = *hooks;
    else
        memset(&emb__hooks, 0, sizeof emb__hooks);
}

uint32_t emb_shell_commands(void)
{
    return emb__commands;
}

static emb_status emb__arm(const uint8_t *args, size_t n)
{
    if (emb_trace_mode() != EMB_TRACE_MODE_WINDOW)
        return EMB_E_STATE;
    if (n >= 4u)
        emb_trace_window_arm_at(emb_get_le32(args));
    else
        emb_trace_window_arm();
    return EMB_OK;
}

size_t emb_shell_handle(const uint8_t *cmd, size_t len, uint8_t *reply, size_t cap)
{
    if (len == 0u || cap < EMB_SHELL_REPLY_MAX)
        return 0;
    const uint8_t *args = cmd + 1;
    size_t n = len - 1u;
    size_t out = 2;
    emb_status st;
    emb__commands++;
    switch (cmd[0]) {
    case EMB_SHELL_PING:
        st = EMB_OK;
        emb_put_le32(reply + 2, n >= 4u ? emb_get_le32(args) : 0u);
        reply[6] = (uint8_t)emb_trace_window_state(); /* lets a host wait for the window */
        out = 7;
        break;
    case EMB_SHELL_ARM_WINDOW:
        st = emb__arm(args, n);
        emb_put_le32(reply + 2, (uint32_t)emb_trace_window_state());
        out = 6;
        break;
    case EMB_SHELL_SET_LOG_LEVEL:
        if (n < 3u)
            st = EMB_E_INVALID;
        else if (emb__hooks.set_log_level == NULL)
            st = EMB_E_NOTFOUND;
        else
            st = emb__hooks.set_log_level(emb__hooks.arg, emb_get_le16(args), args[2]);
        break;
    case EMB_SHELL_SNAPSHOT:
        st = emb__hooks.snapshot != NULL ? emb__hooks.snapshot(emb__hooks.arg) : EMB_E_NOTFOUND;
        break;
    default:
        st = EMB_E_INVALID;
        break;
    }
    reply[0] = (uint8_t)(cmd[0] | EMB_SHELL_REPLY);
    reply[1] = (uint8_t)st;
    return out;
}
