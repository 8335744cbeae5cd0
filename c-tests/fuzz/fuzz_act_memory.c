/* Actions on buffers: creation with hostile sizes and usages, host writes
 * and reads, recorded copies and fills. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define SENTINEL_PTR ((void *)(uintptr_t)0x5a5a5a5a5a5a5a5aull)

static void act_buffer_create(Fuzz *f) {
    static const uint64_t SIZES[] = {1, 2, 3, 4, 6, 16, 100, 256, 1024, 4096, 4100, 65536, 1u << 20};
    int dev = fz_live_device(f);
    if (dev < 0) return;
    uint64_t size = SIZES[fz_below(f, 13)];
    uint32_t usage = fz_below(f, 8);
    const uint64_t max = f->dev[dev].info.limits.max_buffer_size;
    if (fz_chance(f, 10)) usage = fz_hostile_u32(f);
    if (fz_chance(f, 10)) {
        /* Hostile sizes, all beyond the adapter's limit or zero ... */
        static const uint64_t BAD[] = {0, 0xffffffffffffffffull, 0x8000000000000000ull, 1ull << 40};
        size = fz_chance(f, 30) ? max + 1 + fz_below(f, 8) : BAD[fz_below(f, 4)];
    } else if (fz_chance(f, 1) && fz_enabled(f, "big_buffer")) {
        /* ... or one big enough that operators must bind only their views. */
        size = (128u << 20) + 256;
        for (int i = 0; i < f->nbuf; i++)
            if (f->buf[i].size > (64u << 20)) return; /* one is enough */
    }
    fz_describe(f, "device %d size %llu usage %#x", dev, (unsigned long long)size, usage);
    if (fz_chance(f, 90)) {
        int i = fz_add_buffer(f, dev, size, usage);
        (void)i;
        return;
    }
    /* NULL device or NULL out-pointer. */
    int null_dev = fz_chance(f, 50);
    WgcBuffer *b = (WgcBuffer *)SENTINEL_PTR;
    fz_call(f, "wgc_buffer_create");
    fz_must_fail(f, null_dev ? "a NULL device" : "a NULL out_buffer");
    WgcStatus s = fz_result(f, wgc_buffer_create(null_dev ? NULL : f->dev[dev].h, size, usage, null_dev ? &b : NULL));
    fz_untouched(f, s, b == (WgcBuffer *)SENTINEL_PTR, "*out_buffer");
    if (s == WGC_OK && b != SENTINEL_PTR) wgc_buffer_release(b);
}

static void act_buffer_misc(Fuzz *f) {
    int b = fz_pick_buffer(f, fz_any_device(f));
    uint32_t what = fz_below(f, 3);
    fz_describe(f, "buffer %d what %u", b, what);
    if (what == 0) {
        uint64_t size = 0xdeadbeefdeadbeefull;
        int null_out = fz_chance(f, 5);
        fz_call(f, "wgc_buffer_size");
        if (b < 0) fz_must_fail(f, "a NULL buffer");
        if (null_out) fz_must_fail(f, "a NULL out_size");
        if (b >= 0 && !null_out) fz_must_succeed(f);
        WgcStatus s = fz_result(f, wgc_buffer_size(b >= 0 ? f->buf[b].h : NULL, null_out ? NULL : &size));
        fz_untouched(f, s, size == 0xdeadbeefdeadbeefull, "*out_size");
        if (s == WGC_OK && !null_out && size != f->buf[b].size)
            fz_finding(f, "wgc_buffer_size says %llu, created with %llu", (unsigned long long)size,
                       (unsigned long long)f->buf[b].size);
    } else if (what == 1 && b >= 0) {
        wgc_buffer_retain(f->buf[b].h);
        wgc_buffer_release(f->buf[b].h);
    } else if (b >= 0) {
        fz_remove_buffer(f, b);
    }
}

/* An offset and size around the buffer's edges. */
static void range(Fuzz *f, uint64_t bsize, uint64_t *off, uint64_t *size) {
    if (fz_chance(f, 70)) {
        *off = fz_below(f, (uint32_t)(bsize / 4 + 1)) * 4;
        *size = fz_below(f, (uint32_t)((bsize - *off) / 4 + 1)) * 4;
        if (fz_chance(f, 10)) *off += 1 + fz_below(f, 3);
        if (fz_chance(f, 10)) *size += 1 + fz_below(f, 3);
        if (fz_chance(f, 10)) *size = bsize - *off + 4;
        return;
    }
    *off = fz_chance(f, 50) ? fz_hostile_u64(f) : 0;
    *size = fz_hostile_u64(f);
}

static int in_range(uint64_t off, uint64_t size, uint64_t bsize) {
    return off <= bsize && size <= bsize - off;
}

enum { HOST_BYTES = 1 << 20 };

static void act_buffer_io(Fuzz *f) {
    int b = fz_pick_buffer(f, fz_any_device(f));
    uint64_t bsize = b >= 0 ? f->buf[b].size : 64, off, size;
    range(f, bsize, &off, &size);
    int write = fz_chance(f, 50), null_data = fz_chance(f, 4);
    int valid_range = in_range(off, size, bsize);
    /* The host side holds what the call claims, except for sizes no buffer
     * can take: those must be refused before the data is touched. */
    size_t host = valid_range ? (size_t)size + 64 : 64;
    unsigned char *data = malloc(host);
    for (size_t i = 0; i < host; i++) data[i] = (unsigned char)(0x3c ^ i);
    fz_describe(f, "%s buffer %d (%llu bytes) offset %llu size %llu null_data %d", write ? "write" : "read", b,
                (unsigned long long)bsize, (unsigned long long)off, (unsigned long long)size, null_data);
    FzSum before = {0, 0};
    if (write && b >= 0 && fz_chance(f, 30)) before = fz_checksum(f, b);
    fz_call(f, write ? "wgc_buffer_write" : "wgc_buffer_read");
    if (b >= 0) fz_uses_device(f, f->buf[b].dev);
    if (b < 0) fz_must_fail(f, "a NULL buffer");
    if (!valid_range) fz_must_fail(f, "a range outside the buffer");
    if (write && (off % 4 || size % 4)) fz_must_fail(f, "a write that is not 4-byte aligned");
    if (null_data && size > 0) fz_must_fail(f, "NULL data");
    if (b >= 0 && valid_range && !null_data && (!write || (off % 4 == 0 && size % 4 == 0))) fz_must_succeed(f);
    WgcBuffer *h = b >= 0 ? f->buf[b].h : NULL;
    WgcStatus s = write ? wgc_buffer_write(h, off, null_data ? NULL : data, size)
                        : wgc_buffer_read(h, off, null_data ? NULL : data, size);
    fz_result(f, s);
    if (write) {
        fz_check_unchanged(f, s, b, before, "the buffer");
    } else {
        int untouched = 1;
        for (size_t i = 0; i < host; i++) untouched &= data[i] == (unsigned char)(0x3c ^ i);
        fz_untouched(f, s, untouched, "the read's destination");
    }
    free(data);
}

static void act_copy_fill(Fuzz *f) {
    int dev = fz_live_device(f);
    int st = fz_pick_stream(f, dev);
    int dst = fz_pick_buffer(f, dev), src = fz_chance(f, 15) ? dst : fz_pick_buffer(f, dev);
    int fill = fz_chance(f, 40), null_stream = fz_chance(f, 3);
    uint64_t dsize = dst >= 0 ? f->buf[dst].size : 64, ssize = src >= 0 ? f->buf[src].size : 64;
    uint64_t doff, size, soff, unused;
    range(f, dsize, &doff, &size);
    range(f, ssize, &soff, &unused);
    if (!fill && fz_chance(f, 70) && size <= ssize && soff > ssize - size) soff = (ssize - size) & ~3ull;
    uint32_t pattern = (uint32_t)fz_u64(f);
    if (fill && dst >= 0 && !(f->buf[dst].usage & WGC_BUFFER_USAGE_STORAGE) && !fz_enabled(f, "fill_non_storage"))
        return;
    if (fill && size == 0 && dst >= 0 && st >= 0 && f->buf[dst].dev != f->str[st].dev &&
        !fz_enabled(f, "empty_fill_other_device"))
        return;
    fz_describe(f, "%s stream %d src %d+%llu dst %d+%llu size %llu", fill ? "fill" : "copy", st, src,
                (unsigned long long)soff, dst, (unsigned long long)doff, (unsigned long long)size);
    FzSum before = dst >= 0 && fz_chance(f, 30) ? fz_checksum(f, dst) : (FzSum){0, 0};
    WgcStream *sh = null_stream || st < 0 ? NULL : f->str[st].h;
    int sdev = st >= 0 ? f->str[st].dev : -1;
    fz_call(f, fill ? "wgc_stream_fill_buffer" : "wgc_stream_copy_buffer");
    fz_uses_device(f, sdev);
    if (!sh) fz_must_fail(f, "a NULL stream");
    if (dst < 0) fz_must_fail(f, "a NULL buffer");
    if (dst >= 0 && f->buf[dst].dev != sdev) fz_must_fail(f, "a buffer of another device");
    if (dst >= 0) fz_uses_device(f, f->buf[dst].dev);
    if (!in_range(doff, size, dsize)) fz_must_fail(f, "a range outside the buffer");
    if (doff % 4 || size % 4) fz_must_fail(f, "an offset or size that is not a multiple of 4");
    int ok = sh && dst >= 0 && f->buf[dst].dev == sdev && in_range(doff, size, dsize) && doff % 4 == 0 && size % 4 == 0;
    WgcStatus s;
    if (fill) {
        if (ok) fz_must_succeed(f);
        s = fz_result(f, wgc_stream_fill_buffer(sh, dst >= 0 ? f->buf[dst].h : NULL, doff, size, pattern));
    } else {
        if (src < 0) fz_must_fail(f, "a NULL source");
        if (src >= 0) fz_uses_device(f, f->buf[src].dev);
        if (src >= 0 && f->buf[src].dev != sdev) fz_must_fail(f, "a source of another device");
        if (!in_range(soff, size, ssize)) fz_must_fail(f, "a source range outside the buffer");
        if (soff % 4) fz_must_fail(f, "a source offset that is not a multiple of 4");
        int overlap = src == dst && soff < doff + size && doff < soff + size && size > 0;
        if (overlap) fz_must_fail(f, "overlapping ranges in one buffer");
        if (ok && src >= 0 && f->buf[src].dev == sdev && in_range(soff, size, ssize) && soff % 4 == 0 && !overlap)
            fz_must_succeed(f);
        s = fz_result(f, wgc_stream_copy_buffer(sh, src >= 0 ? f->buf[src].h : NULL, soff,
                                                dst >= 0 ? f->buf[dst].h : NULL, doff, size));
    }
    fz_check_unchanged(f, s, dst, before, "the destination buffer");
}

const FzActionDef fz_memory_actions[] = {
    {"buffer_create", act_buffer_create, 30},
    {"buffer_misc", act_buffer_misc, 20},
    {"buffer_io", act_buffer_io, 40},
    {"copy_fill", act_copy_fill, 50},
    {NULL, NULL, 0},
};
