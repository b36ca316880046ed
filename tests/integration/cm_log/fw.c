/* A minimal Cortex-M firmware that logs through the deferred log: linked with the
 * metadata fragment (ports/cortex-m/emb_log.ld) to check, on the ELF, that no format
 * string reaches a loadable segment. It is linked, not run. */
#include <emb/cortex_m.h>
#include <emb/log.h>

EMB_LOG_MODULE_DEFINE(sensor, EMB_LOG_LEVEL_DBG);

static struct emb_log_ring ring;
static uint8_t ring_buf[EMB_LOG_RING_BUF_SIZE(1024u)];
static uint8_t frame[16];
volatile uint32_t uart_data;

static emb_status uart_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    (void)arg;
    for (uint32_t i = 0; i < len; i++)
        uart_data = bytes[i];
    return EMB_OK;
}

void Reset_Handler(void);
void Reset_Handler(void)
{
    static const struct emb_log_output out = {uart_write, 0};
    emb_cm_log_init(&ring, ring_buf, 1024u);
    emb_log_write_hello(&out, 0);
    for (unsigned id = 0;; id++) {
        EMB_LOG_ERR(sensor, "sensor %u failed: %d", id, -5);
        EMB_LOG_INF(sensor, "temperature %d.%u C on %s", 21, 5u, "the probe");
        EMB_LOG_HEXDUMP_DBG(sensor, frame, sizeof frame, "rx frame");
        emb_log_drain(&ring, &out, 0);
    }
}

extern uint32_t __stack_top;
__attribute__((section(".vectors"), used)) static const void *const vectors[2] = {
    &__stack_top,
    (const void *)Reset_Handler,
};
