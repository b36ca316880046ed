/* Growing memory the one way: a byte buffer for output being built, and the growth of an
 * array of any element, both checked against overflow of the size arithmetic. */
#ifndef EMB_BASE_BUFFER_H
#define EMB_BASE_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An array of `size`-byte elements at `items` with room for *cap of them, grown to hold at
 * least `need` (capacity doubles, from 16). Returns the array (perhaps moved, *cap
 * updated), or NULL when memory or size_t runs out, with `items` and *cap untouched. */
void *emb_array_grow(void *items, size_t *cap, size_t need, size_t size);

/* Bytes being built. Zero-initialised is empty. After a failed append `failed` is set and
 * every later append fails too, so a writer checks once at the end. */
struct emb_buf {
    uint8_t *data;
    size_t len, cap;
    bool failed;
};

bool emb_buf_reserve(struct emb_buf *b, size_t extra);
bool emb_buf_append(struct emb_buf *b, const void *bytes, size_t n);
bool emb_buf_append_byte(struct emb_buf *b, uint8_t byte);
bool emb_buf_printf(struct emb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the bytes over (the caller frees them) and leaves the buffer empty. NULL when
 * empty or failed. */
uint8_t *emb_buf_take(struct emb_buf *b, size_t *len);
void emb_buf_free(struct emb_buf *b);

/* Frees each pointer given, in order (NULL ones too), so a destructor names everything its
 * object owns in one statement: EMB_FREE_ALL(t->names, t->rows, t). */
void emb_free_all(void *const *pointers, size_t count);
#define EMB_FREE_ALL(...)                                                                  \
    emb_free_all((void *const[]){__VA_ARGS__},                                             \
                 sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

#endif /* EMB_BASE_BUFFER_H */
