/* Shell commands on frame channel 3 (docs/formats/shell.md): what a host sends down to a
 * running target over the memory channel's down ring, a UART or a socket, and the target's
 * replies. The handler is transport-free: a transport hands it a command payload and
 * sends back the reply payload it writes.
 *
 * Commands (first payload byte), arguments little-endian:
 *   0x01 PING [u32 cookie]            reply: status, the cookie, u8 window state
 *   0x02 ARM_WINDOW [u32 frame]       arm the trace window now, or at that frame number;
 *                                     reply: status, u32 window state
 *   0x03 SET_LOG_LEVEL u16 module u8 level   (0xFFFF: every module)
 *   0x04 SNAPSHOT                     send a snapshot of the trace rings
 * Reply: the command byte | 0x80, a status byte (enum emb_status), then command data.
 */
#ifndef EMB_SHELL_H
#define EMB_SHELL_H

#include <stddef.h>
#include <stdint.h>

#include <emb/status.h>

#ifdef __cplusplus
extern "C" {
#endif

enum emb_shell_op {
    EMB_SHELL_PING = 0x01,
    EMB_SHELL_ARM_WINDOW = 0x02,
    EMB_SHELL_SET_LOG_LEVEL = 0x03,
    EMB_SHELL_SNAPSHOT = 0x04,
};
#define EMB_SHELL_REPLY 0x80u
#define EMB_SHELL_REPLY_MAX 16u
#define EMB_SHELL_ALL_MODULES 0xFFFFu

/* What the shell cannot do by itself: the logging subsystem sets the level (a module id
 * and a level as emb_log_set_level takes them), the application or its transport sends a
 * snapshot. A missing hook answers EMB_E_NOTFOUND. */
struct emb_shell_hooks {
    emb_status (*set_log_level)(void *arg, uint16_t module, uint8_t level);
    emb_status (*snapshot)(void *arg);
    void *arg;
};

/* Installs the hooks (copied); NULL removes them. */
void emb_shell_set_hooks(const struct emb_shell_hooks *hooks);

/* Handles one command payload; writes the reply payload into `reply` (at least
 * EMB_SHELL_REPLY_MAX bytes) and returns its length (0 for an empty command). */
size_t emb_shell_handle(const uint8_t *cmd, size_t len, uint8_t *reply, size_t cap);

/* Commands handled so far, for tests and status displays. */
uint32_t emb_shell_commands(void);

#ifdef __cplusplus
}
#endif

#endif /* EMB_SHELL_H */
