/* What the start-up code (startup.c) offers main.c. */
#ifndef TEMPLATE_BOARD_H
#define TEMPLATE_BOARD_H

#include <stdint.h>

/* The MPS2 FPGA images' core clock, as QEMU models it. */
#define BOARD_CPU_HZ 25000000u

/* Writes text to UART0 (QEMU's standard output). */
void board_puts(const char *s);

#endif
