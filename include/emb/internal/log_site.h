/* Not API: what one EMB_LOG_* or EMB_LOG_HEXDUMP_* call site expands to, part of
 * emb/log.h and included by it alone; names here change without notice. The site's
 * metadata object is docs/formats/log.md ("Interning"). */
#ifndef EMB_INTERNAL_LOG_SITE_H
#define EMB_INTERNAL_LOG_SITE_H

#ifndef EMB_LOG_H
#error "emb/internal/log_site.h is part of emb/log.h: include <emb/log.h>"
#endif

/* The region's start: the linker's __start_emb_log (on a microcontroller the linker
 * fragment defines it). */
extern const uint8_t emb_log_region_start[] __asm__("__start_emb_log");

#define EMB__LOG_ID(site) \
    ((uint32_t)((uintptr_t)&(site) - (uintptr_t)emb_log_region_start) + EMB_LOG_ID_BIAS)

#if defined(__FILE_NAME__)
#define EMB__LOG_FILE __FILE_NAME__
#else
#define EMB__LOG_FILE __FILE__
#endif

/* Checks the arguments against the format as printf would (-Wformat); never called.
 * Repeated flags and a %% with flags or a width (%5%) are -Wformat warnings. Positional
 * arguments, %m and the wide %C and %S are GNU or POSIX printf, which the record cannot
 * reproduce; GCC names them only under -Wpedantic, and a diagnostic pragma around this
 * check would hold for the whole line of the call (GCC maps the argument tokens there: a
 * 0b101 argument would become an error), so `emb log` marks them instead
 * (docs/formats/log.md, "Decoding"). */
static inline void emb__log_check(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void emb__log_check(const char *fmt, ...)
{
    (void)fmt;
}

/* Compile-time and run-time level checks. The first three terms are constants: when
 * they are false the call site is dead code and its metadata object unreferenced. */
#define EMB__LOG_ON(lvl, module)                                                              \
    (CONFIG_EMB_LOG && (lvl) <= CONFIG_EMB_LOG_MAX_LEVEL && (lvl) <= emb__log_level_##module && \
     (lvl) <= __atomic_load_n(&emb_log_module_##module.level, __ATOMIC_RELAXED))

/* The call site's metadata: header, signature, then the strings, in one object. */
#define EMB__LOG_SITE(kind_, lvl_, mod_, nsig_, sigs_, fmt_)                                \
    _Static_assert(sizeof(fmt_) <= 0xFFFFu && sizeof(#mod_) <= 0xFFu &&                       \
                       sizeof(EMB__LOG_FILE) <= 0xFFFFu,                                      \
                   "log format, module or file name too long");                               \
    static const struct {                                                                     \
        uint8_t kind, level, nargs, module_len;                                               \
        uint16_t fmt_len, file_len;                                                           \
        uint32_t line;                                                                        \
        char sig[nsig_];                                                                      \
        char module[sizeof(#mod_)];                                                           \
        char fmt[sizeof(fmt_)];                                                               \
        char file[sizeof(EMB__LOG_FILE)];                                                     \
    } emb__site __attribute__((section(EMB_LOG_SECTION), aligned(EMB_LOG_SITE_ALIGN))) = {   \
        (kind_), (lvl_), (uint8_t)((nsig_) - 1), (uint8_t)sizeof(#mod_), (uint16_t)sizeof(fmt_), \
        (uint16_t)sizeof(EMB__LOG_FILE), (uint32_t)__LINE__, sigs_, #mod_, fmt_, EMB__LOG_FILE}

/* EMB_LOG_MODULE_DEFINE_PARTITION's module record (docs/formats/log.md, "Module
 * records"): unreferenced, so `used` keeps it; only the deferred log's decoder reads it. */
#if CONFIG_EMB_LOG && !CONFIG_EMB_LOG_TEXT && CONFIG_EMB_PARTITIONS
#define EMB__LOG_MODULE_RECORD(name, partition_, pname_)                                      \
    _Static_assert((unsigned long)(partition_) < CONFIG_EMB_PARTITIONS,                       \
                   "log module " #name ": partition not below CONFIG_EMB_PARTITIONS");        \
    _Static_assert(sizeof("" pname_) > 1u && sizeof("" pname_) <= EMB_LOG_PARTITION_NAME_MAX && \
                       sizeof(#name) <= 0xFFu,                                                \
                   "log module " #name ": partition name empty or over 15 characters");      \
    static const struct {                                                                     \
        uint8_t kind, partition, module_len, name_len;                                        \
        char module[sizeof(#name)];                                                           \
        char partition_name[sizeof("" pname_)];                                               \
    } emb__log_module_record_##name                                                           \
        __attribute__((section(EMB_LOG_SECTION), aligned(EMB_LOG_SITE_ALIGN), used)) = {      \
            EMB_LOG_SITE_MODULE, (uint8_t)(partition_), (uint8_t)sizeof(#name),               \
            (uint8_t)sizeof("" pname_), #name, pname_};
#else
#define EMB__LOG_MODULE_RECORD(name, partition_, pname_)
#endif

#if CONFIG_EMB_LOG_TEXT

/* The text backend's call sites: plain varargs calls (C and C++). */
#define EMB__LOG(lvl, module, ...)                                                            \
    do {                                                                                      \
        if (EMB__LOG_ON(lvl, module))                                                         \
            emb_log_text((lvl), #module, EMB__LOG_FILE, (uint32_t)__LINE__, __VA_ARGS__);      \
    } while (0)

#define EMB__LOG_HEX(lvl, module, buf, len, title)                                            \
    do {                                                                                      \
        if (EMB__LOG_ON(lvl, module))                                                         \
            emb_log_text_hexdump((lvl), #module, EMB__LOG_FILE, (uint32_t)__LINE__, (buf),     \
                                 (uint32_t)(len), "" title);                                  \
    } while (0)

#elif defined(__cplusplus)

/* Deferred call sites take their argument types with C11 _Generic: C only, for now. */
#define EMB__LOG(lvl, module, ...)                                                            \
    static_assert(sizeof(emb_log_module_##module) == 0,                                       \
                  "deferred EMB_LOG_* call sites are C (C11 _Generic); in C++ use CONFIG_EMB_LOG_TEXT")
#define EMB__LOG_HEX(lvl, module, buf, len, title) EMB__LOG(lvl, module, title)

#else

#define EMB__LOG(lvl, module, ...)                                                            \
    do {                                                                                      \
        if (EMB__LOG_ON(lvl, module)) {                                                       \
            EMB__LOG_SITE(EMB_LOG_SITE_PRINTF, lvl, module, EMB__LOG_NARGS(__VA_ARGS__),       \
                          {EMB__LOG_MAP(EMB__LOG_SIGC, __VA_ARGS__) 0}, EMB__LOG_FMT(__VA_ARGS__)); \
            if (0)                                                                            \
                emb__log_check(__VA_ARGS__);                                                  \
            EMB__LOG_MAP(EMB__LOG_DECL, __VA_ARGS__)                                          \
            _Static_assert(EMB_LOG_RECORD_HEADER_MAX + 0u EMB__LOG_MAP(EMB__LOG_MAXSIZE, __VA_ARGS__) <= \
                               CONFIG_EMB_LOG_RECORD_MAX,                                     \
                           "log record may exceed CONFIG_EMB_LOG_RECORD_MAX");                \
            struct emb_log_reservation emb__res;                                              \
            uint8_t *emb__p = EMB__LOG_RESERVE(                                               \
                &emb__res, EMB__LOG_ID(emb__site),                                            \
                EMB_LOG_RECORD_HEADER + 0u EMB__LOG_MAP(EMB__LOG_SIZE, __VA_ARGS__));         \
            if (emb__p != NULL) {                                                             \
                EMB__LOG_MAP(EMB__LOG_PUT, __VA_ARGS__)                                       \
                (void)emb__p;                                                                 \
                EMB__LOG_COMMIT(&emb__res);                                                   \
            }                                                                                 \
        }                                                                                     \
    } while (0)

#define EMB__LOG_HEX(lvl, module, buf, len, title)                                            \
    do {                                                                                      \
        if (EMB__LOG_ON(lvl, module)) {                                                       \
            EMB__LOG_SITE(EMB_LOG_SITE_HEXDUMP, lvl, module, 1, {0}, "" title);               \
            const uint8_t *emb__b = (const uint8_t *)(buf);                                   \
            uint32_t emb__n = (uint32_t)(len);                                                \
            uint32_t emb__c = emb__n > CONFIG_EMB_LOG_HEXDUMP_MAX ? CONFIG_EMB_LOG_HEXDUMP_MAX : emb__n; \
            struct emb_log_reservation emb__res;                                              \
            uint8_t *emb__p = EMB__LOG_RESERVE(&emb__res, EMB__LOG_ID(emb__site),             \
                                                  EMB_LOG_RECORD_HEADER + 2u + emb__c);       \
            if (emb__p != NULL) {                                                             \
                emb_put_le16(emb__p, (uint16_t)(emb__c | (emb__n > emb__c ? EMB_LOG_HEX_CLIPPED : 0u))); \
                if (emb__c > 0u)                                                              \
                    EMB_WIRE_COPY(emb__p + 2, emb__b, emb__c);                                \
                EMB__LOG_COMMIT(&emb__res);                                                   \
            }                                                                                 \
        }                                                                                     \
    } while (0)

#endif /* CONFIG_EMB_LOG_TEXT */

#endif /* EMB_INTERNAL_LOG_SITE_H */
