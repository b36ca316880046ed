/* One status type for the whole library. */
#ifndef EMB_STATUS_H
#define EMB_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum emb_status {
    EMB_OK = 0,
    EMB_E_INVALID,   /* an argument is out of range or a structure is not initialised */
    EMB_E_NOSPACE,   /* the caller's buffer or a ring has no room */
    EMB_E_BUSY,      /* the operation conflicts with one in progress */
    EMB_E_STATE,     /* not allowed in the current mode or state */
    EMB_E_NOTFOUND,  /* no such context, record or object */
    EMB_E_IO,        /* a port or transport failed */
    EMB_E_CORRUPT,   /* stored data failed its magic, length or CRC check */
} emb_status;

/* Short English text for a status; never NULL. */
const char *emb_strerror(emb_status status);

#ifdef __cplusplus
}
#endif

#endif /* EMB_STATUS_H */
