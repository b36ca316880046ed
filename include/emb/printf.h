/* A small freestanding vsnprintf for the target: the log's text backend uses it where
 * there is no libc printf, or no room for one.
 *
 * Conversions: d i u o x X c s p f F and %%, with the flags - + space # 0, a width and a
 * precision (digits or *), and the length modifiers hh h l ll z j t. Output matches the
 * GNU C library's for these: %p prints 0x and lowercase hex (after the sign flags: %+p is
 * +0x1), or (nil); a NULL %s prints (null) (nothing when the precision is below 6); %f is
 * exact (correctly rounded, ties to even, as glibc does in the default rounding mode) for
 * any double and precisions up to 60 digits, zeros beyond. Other conversions (e, g, a, n, L) are copied to the output as
 * written and consume no argument.
 *
 * Stack: about 100 bytes, and about 600 more while a %f is formatted (the digits of a
 * double's integer part and a 1152-bit work area). Reentrant: no static state.
 */
#ifndef EMB_PRINTF_H
#define EMB_PRINTF_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* As C's vsnprintf: writes at most `size` bytes including the terminating NUL (nothing
 * when size is 0) and returns the length the whole output would have had. */
int emb_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

int emb_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif /* EMB_PRINTF_H */
