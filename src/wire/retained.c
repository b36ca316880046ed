/* The retained ring transport (docs/formats/retained.md). */
#include <emb/retained.h>

#include <string.h>

#include <emb/config.h>
#include <emb/frame.h>

#define EMB__DISCARDING 1u

EMB_STATIC_ASSERT(sizeof(struct emb_retained_ring) == EMB_RETAINED_HEADER_SIZE, "header layout");

/* A reset may strike between any two stores: each store that publishes something is a
 * release, so it lands after the bytes it describes. */
static inline void emb__store(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline uint8_t *emb__data(const struct emb_retained_ring *r)
{
    return (uint8_t *)r + EMB_RETAINED_HEADER_SIZE;
}

static inline uint32_t emb__used(const struct emb_retained_ring *r)
{
    return r->head >= r->tail ? r->head - r->tail : r->size - r->tail + r->head;
}

uint32_t emb_retained_pending(const struct emb_retained_ring *ring)
{
    return ring == NULL ? 0u : emb__used(ring);
}

/* Drops the oldest whole frame: moves tail past the next delimiter before head. Returns
 * false when there is none: what lies between tail and head is the frame in progress. */
static bool emb__drop_oldest(struct emb_retained_ring *r)
{
    const uint8_t *d = emb__data(r);
    uint32_t i = r->tail;
    while (i != r->head) {
        uint8_t b = d[i];
        i = i + 1u == r->size ? 0u : i + 1u;
        if (b == EMB_FRAME_DELIMITER) {
            emb__store(&r->tail, i);
            r->dropped++;
            return true;
        }
    }
    return false;
}

static void emb__copy_in(struct emb_retained_ring *r, const uint8_t *p, uint32_t n)
{
    uint8_t *d = emb__data(r);
    uint32_t h = r->head;
    uint32_t first = r->size - h < n ? r->size - h : n;
    memcpy(d + h, p, first);
    memcpy(d, p + first, n - first);
    h += n;
    if (h >= r->size)
        h -= r->size;
    emb__store(&r->head, h);
}

emb_status emb_retained_write(void *arg, const uint8_t *bytes, uint32_t len)
{
    struct emb_retained_ring *r = arg;
    if (r == NULL || r->magic != EMB_RETAINED_MAGIC || (bytes == NULL && len > 0u))
        return EMB_E_INVALID;
    while (len > 0u) {
        if (r->state & EMB__DISCARDING) {
            /* The rest of a frame longer than the ring: skip through its delimiter. */
            const uint8_t *z = memchr(bytes, EMB_FRAME_DELIMITER, len);
            if (z == NULL)
                return EMB_OK;
            len -= (uint32_t)(z + 1 - bytes);
            bytes = z + 1;
            r->state &= ~EMB__DISCARDING;
            r->lost++;
            continue;
        }
        /* Up to and including the next delimiter, so room is made frame by frame. */
        const uint8_t *z = memchr(bytes, EMB_FRAME_DELIMITER, len);
        uint32_t n = z != NULL ? (uint32_t)(z + 1 - bytes) : len;
        while (r->size - 1u - emb__used(r) < n) {
            if (!emb__drop_oldest(r)) {
                /* Only the frame in progress is left and it does not fit: lose it. */
                emb__store(&r->tail, r->head);
                r->state |= EMB__DISCARDING;
                break;
            }
        }
        if (r->state & EMB__DISCARDING)
            continue;
        emb__copy_in(r, bytes, n);
        bytes += n;
        len -= n;
    }
    return EMB_OK;
}

emb_status emb_retained_put_frame(struct emb_retained_ring *ring, uint8_t channel,
                                  const void *payload, size_t len)
{
    struct emb_frame_encoder enc;
    emb_frame_encode_begin(&enc, emb_retained_write, ring, channel);
    emb_frame_encode_put(&enc, payload, len);
    return emb_frame_encode_end(&enc);
}

/* A region larger than 2 GiB is refused; a 16-bit size_t (AVR) cannot name one. */
#if SIZE_MAX > 0x80000000u
#define EMB__RETAINED_TOO_LARGE(bytes) ((bytes) > 0x80000000u)
#else
#define EMB__RETAINED_TOO_LARGE(bytes) false
#endif

emb_status emb_retained_attach(void *region, size_t bytes, struct emb_retained_info *info)
{
    struct emb_retained_ring *r = region;
    if (r == NULL || ((uintptr_t)region & 3u) != 0u ||
        bytes < EMB_RETAINED_HEADER_SIZE + EMB_RETAINED_MIN_DATA || EMB__RETAINED_TOO_LARGE(bytes))
        return EMB_E_INVALID;
    uint32_t size = (uint32_t)(bytes - EMB_RETAINED_HEADER_SIZE);
    bool intact = r->magic == EMB_RETAINED_MAGIC && r->version == EMB_RETAINED_VERSION &&
                  r->header_size == EMB_RETAINED_HEADER_SIZE && r->size == size &&
                  r->head < size && r->tail < size;
    if (intact) {
        r->starts++;
        if (r->state & EMB__DISCARDING) {
            r->state &= ~EMB__DISCARDING;
            r->lost++;
        } else if (r->head != r->tail) {
            const uint8_t *d = emb__data(r);
            if (d[r->head == 0u ? size - 1u : r->head - 1u] != EMB_FRAME_DELIMITER) {
                /* The reset cut a frame short: end it, the reader drops just that one. */
                static const uint8_t zero = EMB_FRAME_DELIMITER;
                (void)emb_retained_write(r, &zero, 1u);
                r->cut++;
            }
        }
    } else {
        emb__store(&r->magic, 0u);
        memset(r, 0, EMB_RETAINED_HEADER_SIZE);
        r->version = EMB_RETAINED_VERSION;
        r->header_size = EMB_RETAINED_HEADER_SIZE;
        r->size = size;
        emb__store(&r->magic, EMB_RETAINED_MAGIC);
    }
    if (info != NULL) {
        info->intact = intact;
        info->bytes = emb__used(r);
        info->starts = r->starts;
        info->dropped = r->dropped;
        info->cut = r->cut;
        info->lost = r->lost;
    }
    return EMB_OK;
}

emb_status emb_retained_read(const struct emb_retained_ring *ring,
                             emb_status (*write)(void *arg, const uint8_t *bytes, uint32_t len),
                             void *arg)
{
    if (ring == NULL || write == NULL || ring->magic != EMB_RETAINED_MAGIC)
        return EMB_E_INVALID;
    const uint8_t *d = emb__data(ring);
    uint32_t head = ring->head, tail = ring->tail;
    emb_status s = EMB_OK;
    if (tail > head) {
        s = write(arg, d + tail, ring->size - tail);
        tail = 0u;
    }
    if (s == EMB_OK && head > tail)
        s = write(arg, d + tail, head - tail);
    return s;
}

void emb_retained_clear(struct emb_retained_ring *ring)
{
    if (ring == NULL || ring->magic != EMB_RETAINED_MAGIC)
        return;
    emb__store(&ring->tail, ring->head);
    ring->dropped = 0u;
    ring->cut = 0u;
    ring->lost = 0u;
    ring->state = 0u;
}
