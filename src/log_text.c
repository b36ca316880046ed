/* The log's plain-text backend (CONFIG_EMB_LOG_TEXT): each call site formats its line on
 * the target with emb_vsnprintf() and writes it to the output at once. For the tiny
 * profile and for a host without the ELF; the format strings then live in the image. */
#include <emb/log.h>
#include <emb/printf.h>

static const char *const emb__level_names[] = {"---", "ERR", "WRN", "INF", "DBG"};

/* "SECONDS.MICROS LVL module file:line  " from the trace clock. */
static int emb__text_prefix(char *buf, size_t size, uint8_t level, const char *module,
                            const char *file, uint32_t line)
{
    uint64_t now = emb_port_timestamp();
    uint64_t hz = emb_port_timestamp_hz();
    unsigned long long secs = hz != 0u ? (unsigned long long)(now / hz) : 0u;
    unsigned micros = hz != 0u ? (unsigned)((now % hz) * 1000000u / hz) : 0u;
    return emb_snprintf(buf, size, "%llu.%06u %s %s %s:%u  ", secs, micros,
                        emb__level_names[level <= EMB_LOG_LEVEL_DBG ? level : 0], module, file,
                        (unsigned)line);
}

/* Writes a finished line; a line that did not fit is cut and still ends in a newline. */
static void emb__text_write(char *buf, int n)
{
    size_t len = n < 0 ? 0u : (size_t)n;
    if (len > CONFIG_EMB_LOG_TEXT_LINE_MAX - 2u)
        len = CONFIG_EMB_LOG_TEXT_LINE_MAX - 2u;
    buf[len++] = '\n';
    emb_port_irq_state s = emb_port_irq_save();
    const struct emb_log_output *out = emb_log_output_acquire();
    if (out != NULL) {
        (void)out->write(out->arg, (const uint8_t *)buf, (uint32_t)len);
        emb_log_output_release();
    }
    emb_port_irq_restore(s);
}

void emb_log_text(uint8_t level, const char *module, const char *file, uint32_t line,
                  const char *fmt, ...)
{
    char buf[CONFIG_EMB_LOG_TEXT_LINE_MAX];
    int n = emb__text_prefix(buf, sizeof buf, level, module, file, line);
    if (n < (int)sizeof buf - 1) {
        va_list ap;
        va_start(ap, fmt);
        n += emb_vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
        va_end(ap);
    }
    emb__text_write(buf, n);
}

void emb_log_text_hexdump(uint8_t level, const char *module, const char *file, uint32_t line,
                          const void *data, uint32_t len, const char *title)
{
    char buf[CONFIG_EMB_LOG_TEXT_LINE_MAX];
    int n = emb__text_prefix(buf, sizeof buf, level, module, file, line);
    if (n < (int)sizeof buf - 1)
        n += emb_snprintf(buf + n, sizeof buf - (size_t)n, "%s (%u bytes)", title, (unsigned)len);
    emb__text_write(buf, n);
    const uint8_t *p = (const uint8_t *)data;
    for (uint32_t off = 0; off < len; off += 16u) {
        n = emb_snprintf(buf, sizeof buf, "    %04x ", (unsigned)off);
        for (uint32_t i = off; i < off + 16u; i++)
            n += i < len ? emb_snprintf(buf + n, sizeof buf - (size_t)n, " %02x", p[i])
                         : emb_snprintf(buf + n, sizeof buf - (size_t)n, "   ");
        n += emb_snprintf(buf + n, sizeof buf - (size_t)n, "  |");
        for (uint32_t i = off; i < off + 16u && i < len; i++)
            n += emb_snprintf(buf + n, sizeof buf - (size_t)n, "%c",
                              p[i] >= 0x20u && p[i] < 0x7Fu ? (char)p[i] : '.');
        n += emb_snprintf(buf + n, sizeof buf - (size_t)n, "|");
        emb__text_write(buf, n);
    }
}
