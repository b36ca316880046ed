/* An open-addressing map from a 64-bit key to a 32-bit index, and the 64-bit mix it hashes
 * with: how the host finds a thing by number (a thread index, a handle, a group's key). */
#ifndef EMB_BASE_KEY_MAP_H
#define EMB_BASE_KEY_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* h with v mixed in. */
uint64_t emb_key_mix64(uint64_t h, uint64_t v);

/* Zero-initialised it is empty; it grows (twice the room) before it is half full. */
struct emb_key_map {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap, n;
};
/* The index put for key, or UINT32_MAX when there is none. */
uint32_t emb_key_map_get(const struct emb_key_map *m, uint64_t key);
/* Puts (or replaces) key's index; false when memory ran out (the map is as it was). */
bool emb_key_map_put(struct emb_key_map *m, uint64_t key, uint32_t val);
void emb_key_map_free(struct emb_key_map *m);

#endif /* EMB_BASE_KEY_MAP_H */
