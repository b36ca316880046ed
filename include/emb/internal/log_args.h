/* Not API: how a deferred call site captures its arguments, part of emb/log.h and
 * included by it alone; names here change without notice. Per argument, C11 _Generic
 * tables choose the capture, the signature letter, the record size and the encoder; the
 * EMB__LOG_MAP_n macros apply one of them to each argument of the list. The record's
 * argument encoding is docs/formats/log.md ("Records"). */
#ifndef EMB_INTERNAL_LOG_ARGS_H
#define EMB_INTERNAL_LOG_ARGS_H

#ifndef EMB_LOG_H
#error "emb/internal/log_args.h is part of emb/log.h: include <emb/log.h>"
#endif

/* A captured argument: the value's bits, or a string and its length byte. */
struct emb__log_val {
    uint64_t u;
    const char *s;
    uint32_t n;
};

static inline struct emb__log_val emb__lv_i32(int32_t v) { struct emb__log_val r = {(uint32_t)v, 0, 0}; return r; }
static inline struct emb__log_val emb__lv_u32(uint32_t v) { struct emb__log_val r = {v, 0, 0}; return r; }
static inline struct emb__log_val emb__lv_i64(int64_t v) { struct emb__log_val r = {(uint64_t)v, 0, 0}; return r; }
static inline struct emb__log_val emb__lv_u64(uint64_t v) { struct emb__log_val r = {v, 0, 0}; return r; }
static inline struct emb__log_val emb__lv_long(long v)
{
    struct emb__log_val r = {sizeof(long) == 8u ? (uint64_t)v : (uint32_t)v, 0, 0};
    return r;
}
static inline struct emb__log_val emb__lv_ulong(unsigned long v) { struct emb__log_val r = {v, 0, 0}; return r; }
static inline struct emb__log_val emb__lv_f64(double v)
{
    struct emb__log_val r = {0, 0, 0};
    EMB_WIRE_COPY(&r.u, &v, sizeof v);
    return r;
}
static inline struct emb__log_val emb__lv_ptr(const volatile void *v)
{
    struct emb__log_val r = {(uintptr_t)v, 0, 0};
    return r;
}
/* Measures at most CONFIG_EMB_LOG_STR_MAX + 1 bytes: a longer string is clipped. */
static inline struct emb__log_val emb__lv_str(const char *s)
{
    struct emb__log_val r = {0, s, EMB_LOG_STR_NULL};
    if (s == NULL)
        return r;
    uint32_t n = 0;
    while (n <= CONFIG_EMB_LOG_STR_MAX && s[n] != '\0')
        n++;
    r.n = n > CONFIG_EMB_LOG_STR_MAX ? (CONFIG_EMB_LOG_STR_MAX | EMB_LOG_STR_CLIPPED) : n;
    return r;
}
/* Firmware buffers are uint8_t: a %s of one is the string it holds, not its address. */
static inline struct emb__log_val emb__lv_ustr(const unsigned char *s) { return emb__lv_str((const char *)s); }
static inline struct emb__log_val emb__lv_sstr(const signed char *s) { return emb__lv_str((const char *)s); }

static inline uint8_t *emb__lp_32(uint8_t *p, struct emb__log_val v) { emb_put_le32(p, (uint32_t)v.u); return p + 4; }
static inline uint8_t *emb__lp_64(uint8_t *p, struct emb__log_val v) { emb_put_le64(p, v.u); return p + 8; }
static inline uint8_t *emb__lp_long(uint8_t *p, struct emb__log_val v)
{
    return sizeof(long) == 8u ? emb__lp_64(p, v) : emb__lp_32(p, v);
}
static inline uint8_t *emb__lp_ptr(uint8_t *p, struct emb__log_val v)
{
    return sizeof(void *) == 8u ? emb__lp_64(p, v) : emb__lp_32(p, v);
}
static inline uint8_t *emb__lp_str(uint8_t *p, struct emb__log_val v)
{
    uint32_t n = v.n & ~EMB_LOG_STR_CLIPPED;
    p[0] = (uint8_t)v.n;
    if (n > 0u)
        EMB_WIRE_COPY(p + 1, v.s, n);
    return p + 1 + n;
}

/* The argument types recorded as strings (signature 's'), as _Generic associations that
 * all select `e`. */
#define EMB__LOG_STR_TYPES(e)                                                                 \
    char *: e, const char *: e, unsigned char *: e, const unsigned char *: e, signed char *: e, \
        const signed char *: e

#define EMB__LOG_VAL(x)                                                                       \
    _Generic((x), _Bool: emb__lv_u32, char: emb__lv_i32, signed char: emb__lv_i32,            \
             unsigned char: emb__lv_u32, short: emb__lv_i32, unsigned short: emb__lv_u32,     \
             int: emb__lv_i32, unsigned int: emb__lv_u32, long: emb__lv_long,                 \
             unsigned long: emb__lv_ulong, long long: emb__lv_i64,                            \
             unsigned long long: emb__lv_u64, float: emb__lv_f64, double: emb__lv_f64,        \
             char *: emb__lv_str, const char *: emb__lv_str, unsigned char *: emb__lv_ustr,   \
             const unsigned char *: emb__lv_ustr, signed char *: emb__lv_sstr,                \
             const signed char *: emb__lv_sstr, default: emb__lv_ptr)(x)

#define EMB__LOG_PUTARG(x)                                                                    \
    _Generic((x), _Bool: emb__lp_32, char: emb__lp_32, signed char: emb__lp_32,               \
             unsigned char: emb__lp_32, short: emb__lp_32, unsigned short: emb__lp_32,        \
             int: emb__lp_32, unsigned int: emb__lp_32, long: emb__lp_long,                   \
             unsigned long: emb__lp_long, long long: emb__lp_64, unsigned long long: emb__lp_64, \
             float: emb__lp_64, double: emb__lp_64, EMB__LOG_STR_TYPES(emb__lp_str),         \
             default: emb__lp_ptr)

#define EMB__LOG_SIG(x)                                                                       \
    _Generic((x), _Bool: 'u', char: 'i', signed char: 'i', unsigned char: 'u', short: 'i',    \
             unsigned short: 'u', int: 'i', unsigned int: 'u',                                \
             long: (sizeof(long) == 8u ? 'I' : 'i'), unsigned long: (sizeof(long) == 8u ? 'U' : 'u'), \
             long long: 'I', unsigned long long: 'U', float: 'f', double: 'f',                \
             EMB__LOG_STR_TYPES('s'), default: 'p')

/* Bytes an argument takes in the record: its fixed size, or 1 + the copied length. */
#define EMB__LOG_FIXSIZE(x)                                                                   \
    _Generic((x), long: sizeof(long), unsigned long: sizeof(long), long long: 8u,             \
             unsigned long long: 8u, float: 8u, double: 8u, default: 4u)
#define EMB__LOG_ARGSIZE(x, v)                                                                \
    _Generic((x), EMB__LOG_STR_TYPES(1u + ((v).n & 0x7Fu)),                                  \
             _Bool: 4u, char: 4u, signed char: 4u, unsigned char: 4u, short: 4u,              \
             unsigned short: 4u, int: 4u, unsigned int: 4u, long: EMB__LOG_FIXSIZE(x),        \
             unsigned long: EMB__LOG_FIXSIZE(x), long long: 8u, unsigned long long: 8u,       \
             float: 8u, double: 8u, default: sizeof(void *))
#define EMB__LOG_ARGMAX(x)                                                                    \
    _Generic((x), EMB__LOG_STR_TYPES(1u + CONFIG_EMB_LOG_STR_MAX),                           \
             _Bool: 4u, char: 4u, signed char: 4u, unsigned char: 4u, short: 4u,              \
             unsigned short: 4u, int: 4u, unsigned int: 4u, long: EMB__LOG_FIXSIZE(x),        \
             unsigned long: EMB__LOG_FIXSIZE(x), long long: 8u, unsigned long long: 8u,       \
             float: 8u, double: 8u, default: sizeof(void *))

/* Argument lists: EMB__LOG_MAP(M, fmt, a1, ..., an) is M(1, a1) ... M(n, an). Up to 15
 * arguments after the format. */
#define EMB__LOG_CAT(a, b) EMB__LOG_CAT_(a, b)
#define EMB__LOG_CAT_(a, b) a##b
#define EMB__LOG_NARGS(...)                                                                   \
    EMB__LOG_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define EMB__LOG_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15,    \
                        a16, n, ...) n
#define EMB__LOG_FMT(...) EMB__LOG_FMT_(__VA_ARGS__, 0)
#define EMB__LOG_FMT_(fmt, ...) fmt
#define EMB__LOG_MAP(M, ...) EMB__LOG_CAT(EMB__LOG_MAP_, EMB__LOG_NARGS(__VA_ARGS__))(M, __VA_ARGS__)
#define EMB__LOG_MAP_1(M, f)
#define EMB__LOG_MAP_2(M, f, a) M(1, a)
#define EMB__LOG_MAP_3(M, f, a, b) M(1, a) M(2, b)
#define EMB__LOG_MAP_4(M, f, a, b, c) M(1, a) M(2, b) M(3, c)
#define EMB__LOG_MAP_5(M, f, a, b, c, d) M(1, a) M(2, b) M(3, c) M(4, d)
#define EMB__LOG_MAP_6(M, f, a, b, c, d, e) EMB__LOG_MAP_5(M, f, a, b, c, d) M(5, e)
#define EMB__LOG_MAP_7(M, f, a, b, c, d, e, g) EMB__LOG_MAP_6(M, f, a, b, c, d, e) M(6, g)
#define EMB__LOG_MAP_8(M, f, a, b, c, d, e, g, h) EMB__LOG_MAP_7(M, f, a, b, c, d, e, g) M(7, h)
#define EMB__LOG_MAP_9(M, f, a, b, c, d, e, g, h, i)                                          \
    EMB__LOG_MAP_8(M, f, a, b, c, d, e, g, h) M(8, i)
#define EMB__LOG_MAP_10(M, f, a, b, c, d, e, g, h, i, j)                                      \
    EMB__LOG_MAP_9(M, f, a, b, c, d, e, g, h, i) M(9, j)
#define EMB__LOG_MAP_11(M, f, a, b, c, d, e, g, h, i, j, k)                                   \
    EMB__LOG_MAP_10(M, f, a, b, c, d, e, g, h, i, j) M(10, k)
#define EMB__LOG_MAP_12(M, f, a, b, c, d, e, g, h, i, j, k, l)                                \
    EMB__LOG_MAP_11(M, f, a, b, c, d, e, g, h, i, j, k) M(11, l)
#define EMB__LOG_MAP_13(M, f, a, b, c, d, e, g, h, i, j, k, l, m)                             \
    EMB__LOG_MAP_12(M, f, a, b, c, d, e, g, h, i, j, k, l) M(12, m)
#define EMB__LOG_MAP_14(M, f, a, b, c, d, e, g, h, i, j, k, l, m, n)                          \
    EMB__LOG_MAP_13(M, f, a, b, c, d, e, g, h, i, j, k, l, m) M(13, n)
#define EMB__LOG_MAP_15(M, f, a, b, c, d, e, g, h, i, j, k, l, m, n, o)                       \
    EMB__LOG_MAP_14(M, f, a, b, c, d, e, g, h, i, j, k, l, m, n) M(14, o)
#define EMB__LOG_MAP_16(M, f, a, b, c, d, e, g, h, i, j, k, l, m, n, o, q)                    \
    EMB__LOG_MAP_15(M, f, a, b, c, d, e, g, h, i, j, k, l, m, n, o) M(15, q)

#define EMB__LOG_DECL(i, x) const struct emb__log_val emb__v##i = EMB__LOG_VAL(x);
#define EMB__LOG_SIZE(i, x) +EMB__LOG_ARGSIZE(x, emb__v##i)
#define EMB__LOG_MAXSIZE(i, x) +EMB__LOG_ARGMAX(x)
#define EMB__LOG_PUT(i, x) emb__p = EMB__LOG_PUTARG(x)(emb__p, emb__v##i);
#define EMB__LOG_SIGC(i, x) EMB__LOG_SIG(x),

#endif /* EMB_INTERNAL_LOG_ARGS_H */
