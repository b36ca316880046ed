/* Growing memory (buffer.h). */
#include "buffer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *emb_array_grow(void *items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap && items != NULL)
        return items;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    void *p = realloc(items, n * size);
    if (p == NULL)
        return NULL;
    *cap = n;
    return p;
}

bool emb_buf_reserve(struct emb_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra > SIZE_MAX - b->len) {
        b->failed = true;
        return false;
    }
    uint8_t *p = emb_array_grow(b->data, &b->cap, b->len + extra, 1);
    if (p == NULL) {
        b->failed = true;
        return false;
    }
    b->data = p;
    return true;
}

bool emb_buf_append(struct emb_buf *b, const void *bytes, size_t n)
{
    if (!emb_buf_reserve(b, n))
        return false;
    if (n != 0)
        memcpy(b->data + b->len, bytes, n);
    b->len += n;
    return true;
}

bool emb_buf_append_byte(struct emb_buf *b, uint8_t byte)
{
    return emb_buf_append(b, &byte, 1);
}

bool emb_buf_printf(struct emb_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !emb_buf_reserve(b, (size_t)n + 1)) {
        b->failed = true;
        return false;
    }
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return true;
}

uint8_t *emb_buf_take(struct emb_buf *b, size_t *len)
{
    uint8_t *p = b->failed ? NULL : b->data;
    if (len != NULL)
        *len = p != NULL ? b->len : 0;
    if (p == NULL)
        free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
    return p;
}

void emb_buf_free(struct emb_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

void emb_free_all(void *const *pointers, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(pointers[i]);
}
