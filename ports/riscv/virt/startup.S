/* Start-up code for QEMU's RISC-V virt machine (RV32, machine mode, -bios none): every
 * hart enters here with a0 = its mhartid and a1 = the device tree (virt.h says what each
 * then does). */
    .section .text.start, "ax"
    .globl _start
_start:
    csrr a0, mhartid
    lui t1, %hi(VIRT_HARTS)
    addi t1, t1, %lo(VIRT_HARTS)
    bgeu a0, t1, park
    /* tp: this hart's block of the port (struct emb_rv_hart, 16 bytes). */
    la tp, emb_rv_harts
    slli t0, a0, 4
    add tp, tp, t0
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
    /* sp: the top of this hart's stack, hart 0's highest. */
    la sp, __stacks_top
    lui t1, %hi(VIRT_STACK_SIZE)
    addi t1, t1, %lo(VIRT_STACK_SIZE)
    mul t2, a0, t1
    sub sp, sp, t2
    la t0, emb_rv_trap_entry
    csrw mtvec, t0
    bnez a0, secondary
    la t0, __bss_start
    la t1, __bss_end
1:  bgeu t0, t1, 2f
    sw zero, 0(t0)
    addi t0, t0, 4
    j 1b
2:  mv a0, a1 /* the device tree */
    call virt_main
    j park
secondary:
    /* The flag is in .data, which the loader wrote: hart 0 zeroing .bss leaves it alone. */
    la t0, virt_go
3:  lw t1, 0(t0)
    bnez t1, 4f
    j 3b
4:  fence r, rw
    call virt_hart_main
park:
    csrw mie, zero
5:  wfi
    j 5b

/* The port's trap entry (emb/riscv.h): the caller-saved registers on this hart's stack,
 * then emb_rv_trap(mcause, mepc, mtval, saved). Direct mode: 4-byte aligned. */
    .text
    .balign 4
    .globl emb_rv_trap_entry
emb_rv_trap_entry:
    addi sp, sp, -64
    sw ra, 0(sp)
    sw t0, 4(sp)
    sw t1, 8(sp)
    sw t2, 12(sp)
    sw a0, 16(sp)
    sw a1, 20(sp)
    sw a2, 24(sp)
    sw a3, 28(sp)
    sw a4, 32(sp)
    sw a5, 36(sp)
    sw a6, 40(sp)
    sw a7, 44(sp)
    sw t3, 48(sp)
    sw t4, 52(sp)
    sw t5, 56(sp)
    sw t6, 60(sp)
    csrr a0, mcause
    csrr a1, mepc
    csrr a2, mtval
    mv a3, sp
    call emb_rv_trap
    lw ra, 0(sp)
    lw t0, 4(sp)
    lw t1, 8(sp)
    lw t2, 12(sp)
    lw a0, 16(sp)
    lw a1, 20(sp)
    lw a2, 24(sp)
    lw a3, 28(sp)
    lw a4, 32(sp)
    lw a5, 36(sp)
    lw a6, 40(sp)
    lw a7, 44(sp)
    lw t3, 48(sp)
    lw t4, 52(sp)
    lw t5, 56(sp)
    lw t6, 60(sp)
    addi sp, sp, 64
    mret

    .data
    .balign 4
    .globl virt_go
virt_go:
    .word 0
