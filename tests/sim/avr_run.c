/* Runs AVR firmware on simavr's core (libsimavr) the way a bench would watch a chip: the
 * UART's bytes go to a file, every rising edge of port B bit 0 is a marker whose cycle
 * count is logged (the firmware's measurement points), and when the firmware stops
 * (sleep with interrupts off) or the cycle budget runs out, the whole data space is
 * written to a file: registers, I/O and SRAM at their data addresses, the memory image a
 * debugger would read (the ELF's data addresses are these plus 0x800000).
 *
 * Usage: avr_run MCU HZ FIRMWARE.elf UART.out RAM.bin MARKS.txt [MAX_CYCLES]
 * Exit 0 when the firmware stopped by itself, 1 when it crashed or ran out of cycles,
 * 2 on bad usage or an unreadable firmware. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simavr/avr_ioport.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>

static FILE *uart_out;
static FILE *marks_out;
static elf_firmware_t fw; /* what elf_read_firmware() allocated, freed at the end */

static void on_uart_byte(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    fputc((int)(value & 0xFFu), uart_out);
}

static void on_mark(struct avr_irq_t *irq, uint32_t value, void *param)
{
    avr_t *avr = param;
    if (value != 0u && irq->value == 0u)
        fprintf(marks_out, "%llu\n", (unsigned long long)avr->cycle);
}

static avr_t *load(const char *mcu, unsigned long hz, const char *path)
{
    if (elf_read_firmware(path, &fw) != 0) {
        fprintf(stderr, "avr_run: %s: not a readable AVR ELF\n", path);
        return NULL;
    }
    snprintf(fw.mmcu, sizeof fw.mmcu, "%s", mcu);
    fw.frequency = (uint32_t)hz;
    avr_t *avr = avr_make_mcu_by_name(fw.mmcu);
    if (avr == NULL) {
        fprintf(stderr, "avr_run: simavr has no core %s\n", mcu);
        return NULL;
    }
    avr_init(avr);
    avr_load_firmware(avr, &fw);
    return avr;
}

static void release(avr_t *avr)
{
    avr_terminate(avr);
    for (uint32_t i = 0; i < fw.symbolcount; i++)
        free(fw.symbol[i]);
    free(fw.symbol);
    free(fw.flash);
    free(fw.eeprom);
    free(fw.fuse);
    free(fw.lockbits);
    free(avr);
}

static void attach(avr_t *avr)
{
    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(uint32_t)AVR_UART_FLAG_STDIO; /* the bytes go to our file, not the console */
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                            on_uart_byte, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('B'), 0), on_mark, avr);
}

int main(int argc, char **argv)
{
    if (argc < 7 || argc > 8) {
        fprintf(stderr, "usage: avr_run MCU HZ FIRMWARE.elf UART.out RAM.bin MARKS.txt [MAX_CYCLES]\n");
        return 2;
    }
    unsigned long long budget = argc == 8 ? strtoull(argv[7], NULL, 0) : 200000000ull;
    avr_t *avr = load(argv[1], strtoul(argv[2], NULL, 0), argv[3]);
    uart_out = fopen(argv[4], "wb");
    marks_out = fopen(argv[6], "w");
    if (avr == NULL || uart_out == NULL || marks_out == NULL) {
        fprintf(stderr, "avr_run: cannot start (%s)\n", avr == NULL ? argv[3] : "output files");
        return 2;
    }
    attach(avr);
    int state = cpu_Running;
    while (state != cpu_Done && state != cpu_Crashed && avr->cycle < budget)
        state = avr_run(avr);
    FILE *ram = fopen(argv[5], "wb");
    size_t size = (size_t)avr->ramend + 1u;
    int ok = ram != NULL && fwrite(avr->data, 1, size, ram) == size;
    ok = (ram != NULL && fclose(ram) == 0) && ok;
    fclose(uart_out);
    fclose(marks_out);
    fprintf(stderr, "avr_run: %s after %llu cycles\n",
            state == cpu_Done ? "stopped" : state == cpu_Crashed ? "crashed" : "out of cycles",
            (unsigned long long)avr->cycle);
    if (!ok)
        fprintf(stderr, "avr_run: %s: cannot write the memory image\n", argv[5]);
    release(avr);
    return !ok ? 2 : state == cpu_Done ? 0 : 1;
}
