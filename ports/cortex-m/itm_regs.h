/* The ITM's registers (ARMv7-M Architecture Reference Manual, C1.7), reached through
 * accessors: volatile loads and stores on the target, calls into a model of the ITM in a
 * host build with EMB_ITM_MODEL defined (tests/integration/itm_model.h), so the writer
 * the tests run is the one the target runs. */
#ifndef EMB_ITM_REGS_H
#define EMB_ITM_REGS_H

#include <stdint.h>

#define EMB_ITM_STIM(port) (0xE0000000u + 4u * (uint32_t)(port)) /* stimulus port 0..31 */
#define EMB_ITM_TER 0xE0000E00u    /* trace enable, a bit per stimulus port (0..31) */
#define EMB_ITM_TCR 0xE0000E80u    /* trace control */
#define EMB_ITM_TCR_ITMENA 0x1u    /* the ITM is enabled */
#define EMB_ITM_STIM_FIFOREADY 0x1u /* a read of a stimulus port: it can take a write */

#ifdef EMB_ITM_MODEL
uint32_t emb_itm_model_read32(uint32_t addr);
void emb_itm_model_write(uint32_t addr, uint32_t value, unsigned size);
#define EMB_ITM_READ32(addr) emb_itm_model_read32(addr)
#define EMB_ITM_WRITE32(addr, v) emb_itm_model_write((addr), (uint32_t)(v), 4u)
#define EMB_ITM_WRITE16(addr, v) emb_itm_model_write((addr), (uint16_t)(v), 2u)
#define EMB_ITM_WRITE8(addr, v) emb_itm_model_write((addr), (uint8_t)(v), 1u)
#else
#define EMB_ITM_READ32(addr) (*(volatile const uint32_t *)(uintptr_t)(addr))
#define EMB_ITM_WRITE32(addr, v) (*(volatile uint32_t *)(uintptr_t)(addr) = (uint32_t)(v))
#define EMB_ITM_WRITE16(addr, v) (*(volatile uint16_t *)(uintptr_t)(addr) = (uint16_t)(v))
#define EMB_ITM_WRITE8(addr, v) (*(volatile uint8_t *)(uintptr_t)(addr) = (uint8_t)(v))
#endif

#endif /* EMB_ITM_REGS_H */
