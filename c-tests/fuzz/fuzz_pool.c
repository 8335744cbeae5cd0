/* Pools of live handles. The fuzzer holds one reference per pool entry and
 * never passes a handle it has released; a released device's record stays
 * until its last child is gone, so children know their device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define SENTINEL_PTR ((void *)(uintptr_t)0x5a5a5a5a5a5a5a5aull)

WgcInstance *fz_instance(Fuzz *f) {
    if (f->ninst > 0 && fz_chance(f, 95)) return f->inst[fz_below(f, (uint32_t)f->ninst)];
    if (f->ninst == FZ_MAX_INSTANCES) return f->inst[fz_below(f, (uint32_t)f->ninst)];
    WgcInstance *inst = (WgcInstance *)SENTINEL_PTR;
    fz_call(f, "wgc_instance_create");
    fz_must_succeed(f);
    WgcStatus s = fz_result(f, wgc_instance_create(WGC_ABI_VERSION, &inst));
    if (s != WGC_OK) return f->ninst ? f->inst[0] : NULL;
    f->inst[f->ninst++] = inst;
    return inst;
}

static void free_record_if_unused(Fuzz *f, int dev) {
    FzDevice *d = &f->dev[dev];
    if (d->used && !d->h && d->children == 0) memset(d, 0, sizeof *d);
}

void fz_child_added(Fuzz *f, int dev) {
    if (dev >= 0) f->dev[dev].children++;
}

void fz_child_removed(Fuzz *f, int dev) {
    if (dev < 0) return;
    f->dev[dev].children--;
    free_record_if_unused(f, dev);
}

static int create_device(Fuzz *f) {
    int slot = -1;
    for (int i = 0; i < FZ_MAX_DEVICES; i++)
        if (!f->dev[i].used) {
            slot = i;
            break;
        }
    if (slot < 0) return -1;
    WgcInstance *inst = fz_instance(f);
    if (!inst) return -1;
    WgcDevice *h = (WgcDevice *)SENTINEL_PTR;
    fz_call(f, "wgc_device_create");
    fz_must_succeed(f);
    if (fz_result(f, wgc_device_create(inst, NULL, &h)) != WGC_OK) return -1;
    FzDevice *d = &f->dev[slot];
    memset(d, 0, sizeof *d);
    d->used = 1;
    d->h = h;
    d->info.struct_size = sizeof d->info;
    fz_call(f, "wgc_device_info");
    fz_uses_device(f, slot);
    fz_must_succeed(f);
    fz_result(f, wgc_device_info(h, &d->info));
    return slot;
}

/* All records taken (released devices whose children live on): drop the
 * children of one of them, so that a new device fits. */
static void free_a_record(Fuzz *f) {
    int victim = -1;
    for (int i = 0; i < FZ_MAX_DEVICES; i++)
        if (f->dev[i].used && (!f->dev[i].h || f->dev[i].destroyed) && (victim < 0 || fz_chance(f, 50))) victim = i;
    if (victim < 0) victim = (int)fz_below(f, FZ_MAX_DEVICES);
    fz_check_probes_of(f, victim);
    for (int i = f->nev - 1; i >= 0; i--)
        if (f->ev[i].dev == victim) fz_remove_event(f, i);
    for (int i = f->nstr - 1; i >= 0; i--)
        if (f->str[i].dev == victim) fz_remove_stream(f, i);
    for (int i = f->nker - 1; i >= 0; i--)
        if (f->ker[i].dev == victim) fz_remove_kernel(f, i);
    for (int i = f->nbuf - 1; i >= 0; i--)
        if (f->buf[i].dev == victim) fz_remove_buffer(f, i);
    for (int i = f->nind - 1; i >= 0; i--)
        if (f->ind[i].dev == victim) fz_remove_indirect(f, i);
    if (f->dev[victim].used && f->dev[victim].h) {
        wgc_device_release(f->dev[victim].h);
        f->dev[victim].h = NULL;
    }
    free_record_if_unused(f, victim);
}

int fz_live_device(Fuzz *f) {
    int alive[FZ_MAX_DEVICES], nalive = 0, held[FZ_MAX_DEVICES], nheld = 0;
    for (int i = 0; i < FZ_MAX_DEVICES; i++) {
        if (!f->dev[i].used || !f->dev[i].h) continue;
        held[nheld++] = i;
        if (!f->dev[i].destroyed) alive[nalive++] = i;
    }
    if (nheld > 0 && fz_chance(f, 4)) return held[fz_below(f, (uint32_t)nheld)];
    if (nalive > 0 && (nalive >= 2 || fz_chance(f, 98))) return alive[fz_below(f, (uint32_t)nalive)];
    int d = create_device(f);
    if (d < 0 && nalive == 0) {
        free_a_record(f);
        d = create_device(f);
    }
    if (d >= 0) return d;
    return nheld ? held[fz_below(f, (uint32_t)nheld)] : -1;
}

int fz_any_device(Fuzz *f) {
    int list[FZ_MAX_DEVICES], n = 0;
    for (int i = 0; i < FZ_MAX_DEVICES; i++)
        if (f->dev[i].used) list[n++] = i;
    return n ? list[fz_below(f, (uint32_t)n)] : -1;
}

WgcDevice *fz_device_handle(Fuzz *f, int dev) {
    return dev >= 0 ? f->dev[dev].h : NULL;
}

static int valid_usage(uint32_t usage) {
    return (usage & ~(uint32_t)WGC_BUFFER_USAGE_ALL) == 0;
}

int fz_add_buffer(Fuzz *f, int dev, uint64_t size, uint32_t usage) {
    WgcDevice *h = fz_device_handle(f, dev);
    if (!h) return -1;
    if (f->nbuf == FZ_MAX_BUFFERS) {
        int victim = (int)fz_below(f, FZ_MAX_BUFFERS);
        for (int tries = 0; tries < FZ_MAX_BUFFERS && f->buf[victim].stamp == f->step; tries++)
            victim = (victim + 1) % FZ_MAX_BUFFERS;
        if (f->buf[victim].stamp == f->step) return -1;
        fz_remove_buffer(f, victim);
    }
    WgcBuffer *b = (WgcBuffer *)SENTINEL_PTR;
    fz_call(f, "wgc_buffer_create");
    fz_uses_device(f, dev);
    if (size > 0 && size <= f->dev[dev].info.limits.max_buffer_size && valid_usage(usage)) fz_must_succeed(f);
    WgcStatus s = fz_result(f, wgc_buffer_create(h, size, usage, &b));
    fz_untouched(f, s, b == (WgcBuffer *)SENTINEL_PTR, "*out_buffer");
    if (s != WGC_OK) return -1;
    if (!b || b == (WgcBuffer *)SENTINEL_PTR) {
        fz_finding(f, "wgc_buffer_create returned WGC_OK without a buffer");
        return -1;
    }
    FzBuffer *e = &f->buf[f->nbuf];
    e->h = b;
    e->dev = dev;
    e->size = size;
    e->usage = usage ? usage : WGC_BUFFER_USAGE_STORAGE;
    e->stamp = f->step;
    fz_child_added(f, dev);
    return f->nbuf++;
}

void fz_remove_buffer(Fuzz *f, int i) {
    wgc_buffer_release(f->buf[i].h);
    fz_child_removed(f, f->buf[i].dev);
    f->buf[i] = f->buf[--f->nbuf];
}

void fz_remove_indirect(Fuzz *f, int i) {
    wgc_buffer_release(f->ind[i].h);
    fz_child_removed(f, f->ind[i].dev);
    f->ind[i] = f->ind[--f->nind];
}

void fz_remove_kernel(Fuzz *f, int i) {
    wgc_kernel_release(f->ker[i].h);
    fz_child_removed(f, f->ker[i].dev);
    f->ker[i] = f->ker[--f->nker];
}

void fz_remove_stream(Fuzz *f, int i) {
    wgc_stream_release(f->str[i].h);
    fz_child_removed(f, f->str[i].dev);
    f->str[i] = f->str[--f->nstr];
}

void fz_remove_event(Fuzz *f, int i) {
    wgc_event_release(f->ev[i].h);
    fz_child_removed(f, f->ev[i].dev);
    f->ev[i] = f->ev[--f->nev];
}

int fz_find_buffer(const Fuzz *f, const WgcBuffer *h) {
    for (int i = 0; i < f->nbuf; i++)
        if (f->buf[i].h == h) return i;
    return -1;
}

int fz_pick_buffer(Fuzz *f, int dev) {
    if (f->nbuf == 0 || fz_chance(f, 2)) return -1;
    int pick = (int)fz_below(f, (uint32_t)f->nbuf);
    if (fz_chance(f, 85)) {
        int list[FZ_MAX_BUFFERS], n = 0;
        for (int i = 0; i < f->nbuf; i++)
            if (f->buf[i].dev == dev) list[n++] = i;
        if (n) pick = list[fz_below(f, (uint32_t)n)];
    }
    f->buf[pick].stamp = f->step;
    return pick;
}

int fz_storage_buffer(Fuzz *f, int dev, uint64_t bytes, const WgcBuffer *avoid) {
    int list[FZ_MAX_BUFFERS], n = 0;
    for (int i = 0; i < f->nbuf; i++) {
        const FzBuffer *b = &f->buf[i];
        if (b->dev == dev && (b->usage & WGC_BUFFER_USAGE_STORAGE) && b->size >= bytes && b->h != avoid)
            list[n++] = i;
    }
    if (n && fz_chance(f, 80)) {
        int i = list[fz_below(f, (uint32_t)n)];
        f->buf[i].stamp = f->step;
        return i;
    }
    uint64_t size = bytes < 4 ? 4 : (bytes + 3) & ~3ull;
    if (fz_chance(f, 30)) size += 4 * fz_below(f, 64);
    uint32_t usage = fz_chance(f, 70) ? WGC_BUFFER_USAGE_STORAGE : WGC_BUFFER_USAGE_ALL;
    return fz_add_buffer(f, dev, size, usage);
}

int fz_pick_stream(Fuzz *f, int dev) {
    if (f->nstr > 0 && fz_chance(f, 85)) {
        int list[FZ_MAX_STREAMS], n = 0;
        for (int i = 0; i < f->nstr; i++)
            if (f->str[i].dev == dev) list[n++] = i;
        if (n) return list[fz_below(f, (uint32_t)n)];
        if (fz_chance(f, 10)) return (int)fz_below(f, (uint32_t)f->nstr); /* another device's */
    }
    WgcDevice *h = fz_device_handle(f, dev);
    if (!h) return f->nstr ? (int)fz_below(f, (uint32_t)f->nstr) : -1;
    if (f->nstr == FZ_MAX_STREAMS) fz_remove_stream(f, (int)fz_below(f, FZ_MAX_STREAMS));
    WgcStream *s = (WgcStream *)SENTINEL_PTR;
    fz_call(f, "wgc_stream_create");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    WgcStatus st = fz_result(f, wgc_stream_create(h, &s));
    fz_untouched(f, st, s == (WgcStream *)SENTINEL_PTR, "*out_stream");
    if (st != WGC_OK) return -1;
    f->str[f->nstr].h = s;
    f->str[f->nstr].dev = dev;
    fz_child_added(f, dev);
    return f->nstr++;
}

int fz_pick_kernel(Fuzz *f) {
    return f->nker ? (int)fz_below(f, (uint32_t)f->nker) : -1;
}

int fz_pick_event(Fuzz *f) {
    return f->nev ? (int)fz_below(f, (uint32_t)f->nev) : -1;
}

void fz_release_all(Fuzz *f) {
    while (f->nev) fz_remove_event(f, f->nev - 1);
    while (f->nstr) fz_remove_stream(f, f->nstr - 1);
    while (f->nker) fz_remove_kernel(f, f->nker - 1);
    while (f->nbuf) fz_remove_buffer(f, f->nbuf - 1);
    while (f->nind) fz_remove_indirect(f, f->nind - 1);
    for (int i = 0; i < FZ_MAX_DEVICES; i++) {
        if (f->dev[i].used && f->dev[i].h) {
            wgc_device_release(f->dev[i].h);
            f->dev[i].h = NULL;
        }
        free_record_if_unused(f, i);
    }
    while (f->ninst) wgc_instance_release(f->inst[--f->ninst]);
}
