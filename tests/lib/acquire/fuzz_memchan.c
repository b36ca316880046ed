/* libFuzzer target: the memory channel's host reader (memchan_host.c) on a hostile target's
 * memory (fuzz_image.h): find a published control block in the regions, open it (native or
 * SEGGER RTT layout; flags bit 0 says 4-byte target pointers for RTT), take what every up
 * ring holds, write a command into every down ring, and check the generation, as
 * `emb capture --pid/--gdb` does. Seeds: fuzz_memchan_seed's images of the target's own
 * block (src/memchan.c) with frames in its rings. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_image.h"
#include "memchan_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int image_read(void *arg, uint64_t addr, void *buf, size_t n, char *err, size_t errlen)
{
    const uint8_t *p = emb_fuzz_image_at(arg, addr, n);
    if (p == NULL) {
        snprintf(err, errlen, "cannot read %zu bytes at 0x%llx", n, (unsigned long long)addr);
        return -1;
    }
    memcpy(buf, p, n);
    return 0;
}

static int image_write(void *arg, uint64_t addr, const void *buf, size_t n, char *err, size_t errlen)
{
    uint8_t *p = emb_fuzz_image_at(arg, addr, n);
    if (p == NULL) {
        snprintf(err, errlen, "cannot write %zu bytes at 0x%llx", n, (unsigned long long)addr);
        return -1;
    }
    memcpy(p, buf, n);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct emb_fuzz_image img;
    emb_fuzz_image_parse(&img, data, size);
    struct emb_memchan_host_range ranges[EMB_FUZZ_IMAGE_REGIONS];
    for (unsigned r = 0; r < img.n; r++)
        ranges[r] = (struct emb_memchan_host_range){img.region[r].addr, img.region[r].addr + img.region[r].len};
    struct emb_memchan_host_ops ops = {image_read, image_write, &img};
    char err[512];
    uint64_t addr;
    if (img.n == 0 || emb_memchan_host_find(&ops, ranges, img.n, &addr, err, sizeof err) != 0)
        return 0;
    struct emb_memchan_host m;
    if (emb_memchan_host_open(&m, &ops, addr, (img.flags & 1) ? 4 : 8, ranges, img.n, err, sizeof err) != 0)
        return 0;
    if (m.nup > EMB_MCH_MAX_RINGS || m.ndown > EMB_MCH_MAX_RINGS)
        abort();
    static uint8_t buf[1u << 16];
    for (unsigned r = 0; r < m.nup; r++) {
        for (int pass = 0; pass < 2; pass++) {
            size_t got = 0;
            if (emb_memchan_host_read_up(&m, r, buf, sizeof buf, &got, err, sizeof err) != 0)
                break;
            if (got > sizeof buf)
                abort();
        }
    }
    static const uint8_t ping[] = {0x00, 0x09, 0x03, 0x01, 0x78, 0x56, 0x34, 0x12, 0x00};
    for (unsigned r = 0; r < m.ndown; r++) {
        size_t written = 0;
        emb_memchan_host_write_down(&m, r, ping, sizeof ping, &written, err, sizeof err);
        if (written != 0 && written != sizeof ping)
            abort();
    }
    bool same;
    emb_memchan_host_check(&m, &same, err, sizeof err);
    return 0;
}
