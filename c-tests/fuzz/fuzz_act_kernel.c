/* Actions on kernels: compiling generated WGSL through hostile descriptors,
 * reflection queries checked against what the source declares, and
 * launches with plausible or hostile bindings, parameters and direct or
 * indirect workgroup counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define SENTINEL_PTR ((void *)(uintptr_t)0x5a5a5a5a5a5a5a5aull)

static void act_kernel_create(Fuzz *f) {
    int dev = fz_live_device(f);
    if (dev < 0) return;
    FzSource src;
    fz_wgsl(f, &f->dev[dev].info, &src);
    union {
        WgcKernelDesc d;
        unsigned char bytes[sizeof(WgcKernelDesc) + 64];
    } u;
    memset(u.bytes, 0xa5, sizeof u.bytes);
    memset(&u.d, 0, sizeof u.d);
    u.d.source = fz_chance(f, 2) ? NULL : src.text;
    u.d.entry_point = src.entry;
    u.d.skip_bounds_checks = src.bounds_unknown ? 0 : fz_chance(f, 20) ? (fz_chance(f, 80) ? 1 : fz_hostile_u32(f)) : 0;
    u.d.struct_size = fz_struct_size(f, sizeof u.d);
    const uint32_t size = u.d.struct_size;
    int null_dev = fz_chance(f, 2), null_desc = fz_chance(f, 2), null_out = fz_chance(f, 2);
    size_t len = strlen(src.text);
    fz_describe(f, "device %d struct_size %u entry %s skip_bounds %u source %zu bytes: %.80s", dev, size,
                src.entry ? src.entry : "(null)", u.d.skip_bounds_checks, len, src.text);
    if (u.d.skip_bounds_checks && src.bounds_unknown) abort(); /* never: UB on the GPU */
    if (f->trace && len < 4096) fprintf(stderr, "----- WGSL\n%s\n-----\n", src.text);
    WgcKernel *k = (WgcKernel *)SENTINEL_PTR;
    fz_call(f, "wgc_kernel_create");
    fz_uses_device(f, dev);
    if (null_dev) fz_must_fail(f, "a NULL device");
    if (null_desc) fz_must_fail(f, "a NULL desc");
    if (null_out) fz_must_fail(f, "a NULL out_kernel");
    if (!null_desc) {
        if (size < 4) fz_must_fail(f, "struct_size below 4");
        if (size < offsetof(WgcKernelDesc, source) + sizeof(void *))
            fz_must_fail(f, "a struct_size that does not cover the source pointer");
        if (size < offsetof(WgcKernelDesc, entry_point) + sizeof(void *))
            fz_must_fail(f, "a struct_size that does not cover the entry point pointer");
        if (!u.d.source) fz_must_fail(f, "a NULL source");
        if (src.must_fail) fz_must_fail(f, src.must_fail);
    }
    int pristine = !null_dev && !null_desc && !null_out && size >= sizeof u.d && u.d.source;
    if (pristine && src.must_compile) fz_must_succeed(f);
    WgcStatus s = fz_result(f, wgc_kernel_create(null_dev ? NULL : f->dev[dev].h, null_desc ? NULL : &u.d,
                                                 null_out ? NULL : &k));
    fz_untouched(f, s, k == (WgcKernel *)SENTINEL_PTR, "*out_kernel");
    free(src.text);
    if (s != WGC_OK || null_out) return;

    /* Reflection must match what the source declares. */
    uint32_t count = 0xdeadbeefu, wg[3] = {0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu};
    fz_call(f, "wgc_kernel_binding_count");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, wgc_kernel_binding_count(k, &count)) == WGC_OK && pristine && src.must_compile &&
        count != src.sig.count)
        fz_finding(f, "wgc_kernel_binding_count says %u, the kernel uses %u", count, src.sig.count);
    fz_call(f, "wgc_kernel_workgroup_size");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, wgc_kernel_workgroup_size(k, wg)) == WGC_OK && src.sig.wg_known &&
        memcmp(wg, src.sig.wg, sizeof wg) != 0)
        fz_finding(f, "wgc_kernel_workgroup_size says %u,%u,%u, the kernel declares %u,%u,%u", wg[0], wg[1], wg[2],
                   src.sig.wg[0], src.sig.wg[1], src.sig.wg[2]);
    if (f->nker == FZ_MAX_KERNELS) fz_remove_kernel(f, (int)fz_below(f, FZ_MAX_KERNELS));
    f->ker[f->nker].h = k;
    f->ker[f->nker].dev = dev;
    f->ker[f->nker].sig = src.sig;
    if (!src.sig.wg_known) memcpy(f->ker[f->nker].sig.wg, wg, sizeof wg);
    fz_child_added(f, dev);
    f->nker++;
}

static void act_kernel_misc(Fuzz *f) {
    int k = fz_pick_kernel(f);
    uint32_t what = fz_below(f, 4);
    fz_describe(f, "kernel %d what %u", k, what);
    if (what == 3) {
        if (k >= 0) fz_remove_kernel(f, k);
        return;
    }
    if (what == 2) {
        if (k >= 0) {
            wgc_kernel_retain(f->ker[k].h);
            wgc_kernel_release(f->ker[k].h);
        }
        return;
    }
    int null_k = k < 0 || fz_chance(f, 5), null_out = fz_chance(f, 5);
    uint32_t out[3] = {0xdeadbeefu, 0xdeadbeefu, 0xdeadbeefu};
    fz_call(f, what ? "wgc_kernel_workgroup_size" : "wgc_kernel_binding_count");
    if (null_k) fz_must_fail(f, "a NULL kernel");
    if (null_out) fz_must_fail(f, "a NULL out-pointer");
    WgcKernel *h = null_k ? NULL : f->ker[k].h;
    WgcStatus s = fz_result(f, what ? wgc_kernel_workgroup_size(h, null_out ? NULL : out)
                                    : wgc_kernel_binding_count(h, null_out ? NULL : out));
    fz_untouched(f, s, out[0] == 0xdeadbeefu && out[1] == 0xdeadbeefu && out[2] == 0xdeadbeefu, "the out-parameter");
}

/* Indirect-argument buffers hold only counts the fuzzer chose: small ones,
 * or ones beyond the adapter's limit that must never run. */
static uint32_t indirect_count(Fuzz *f, uint32_t limit) {
    static const uint32_t SMALL[] = {0, 1, 2, 3, 7};
    if (fz_chance(f, 85) || !fz_enabled(f, "indirect_over_limit")) return SMALL[fz_below(f, 5)];
    return fz_chance(f, 50) ? limit + 1 : fz_chance(f, 50) ? 0xffffffffu : 0x80000000u;
}

static void act_indirect(Fuzz *f) {
    int dev = fz_live_device(f);
    if (dev < 0) return;
    uint32_t limit = f->dev[dev].info.limits.max_compute_workgroups_per_dimension;
    int i = -1;
    for (int j = 0; j < f->nind; j++)
        if (f->ind[j].dev == dev && fz_chance(f, 70)) i = j;
    if (i < 0) {
        if (f->nind == FZ_MAX_INDIRECT) fz_remove_indirect(f, (int)fz_below(f, FZ_MAX_INDIRECT));
        uint64_t size = 12 + 4 * fz_below(f, 16);
        uint32_t usage = fz_chance(f, 50) ? WGC_BUFFER_USAGE_INDIRECT : WGC_BUFFER_USAGE_ALL;
        WgcBuffer *b = (WgcBuffer *)SENTINEL_PTR;
        fz_call(f, "wgc_buffer_create");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        if (fz_result(f, wgc_buffer_create(f->dev[dev].h, size, usage, &b)) != WGC_OK) return;
        i = f->nind++;
        f->ind[i].h = b;
        f->ind[i].dev = dev;
        f->ind[i].size = size;
        f->ind[i].usage = usage;
        fz_child_added(f, dev);
    }
    uint32_t words[32];
    uint64_t n = f->ind[i].size / 4;
    for (uint64_t w = 0; w < n; w++) words[w] = indirect_count(f, limit);
    fz_describe(f, "indirect buffer %d: %u %u %u ...", i, words[0], words[1], words[2]);
    int st = fz_chance(f, 30) ? fz_pick_stream(f, dev) : -1;
    int fill_ok = (f->ind[i].usage & WGC_BUFFER_USAGE_STORAGE) || fz_enabled(f, "fill_non_storage");
    if (st >= 0 && f->str[st].dev == dev && fill_ok) {
        uint64_t w = fz_below(f, (uint32_t)n);
        fz_call(f, "wgc_stream_fill_buffer");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        fz_result(f, wgc_stream_fill_buffer(f->str[st].h, f->ind[i].h, w * 4, (n - w) * 4, words[0]));
    } else {
        fz_call(f, "wgc_buffer_write");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        fz_result(f, wgc_buffer_write(f->ind[i].h, 0, words, n * 4));
    }
}

/* Rough GPU work of a launch: invocations times work per invocation. */
static uint64_t work(const FzKernelSig *sig, const uint32_t *g) {
    uint64_t inv = (uint64_t)sig->wg[0] * sig->wg[1] * sig->wg[2];
    uint64_t cost = sig->cost ? sig->cost : 1;
    uint64_t groups = (uint64_t)g[0] * g[1] * g[2];
    if (inv == 0 || groups == 0) return 0;
    if (inv > UINT64_MAX / cost / groups) return UINT64_MAX;
    return inv * cost * groups;
}

/* Lavapipe runs this many invocation-steps in well under a second. */
#define WORK_LIMIT (1ull << 23)

/* Workgroup counts: small ones that run quickly, or ones past the limit. */
static void workgroups(Fuzz *f, const FzKernelSig *sig, uint32_t limit, uint32_t *g, const char **bad) {
    static const uint32_t SMALL[] = {0, 1, 1, 2, 3, 4, 16};
    for (int i = 0; i < 3; i++) g[i] = SMALL[fz_below(f, 7)];
    if (fz_chance(f, 3)) { /* the limit itself, in one dimension */
        g[0] = g[1] = g[2] = 1;
        g[fz_below(f, 3)] = limit;
    }
    for (int i = 0; work(sig, g) > WORK_LIMIT; i = (i + 1) % 3) g[i] /= 2;
    if (fz_chance(f, 8)) {
        g[fz_below(f, 3)] = fz_chance(f, 50) ? limit + 1 : fz_hostile_u32(f) | (limit + 1);
        *bad = "a workgroup count above the adapter's limit";
    }
}

typedef struct Launch {
    WgcBinding binds[FZ_MAX_SIG_BINDINGS + 2];
    int kind[FZ_MAX_SIG_BINDINGS + 2];
    uint32_t nb;
    unsigned char params[4096];
    uint64_t params_size;
    const char *bad;       /* the launch must be refused */
    const char *maybe_bad; /* no verdict */
} Launch;

/* Bindings as the kernel declares them, on buffers of `dev`. */
static void plausible_bindings(Fuzz *f, const FzKernelSig *sig, int dev, Launch *L) {
    for (uint32_t i = 0; i < sig->count; i++) {
        const FzBindingSig *bs = &sig->b[i];
        if (bs->kind == FZ_BIND_UNIFORM && fz_chance(f, 80)) {
            L->params_size = fz_chance(f, 90) ? 16 : fz_below(f, 24);
            continue;
        }
        uint64_t need = bs->min_size * (fz_chance(f, 70) ? 1 + fz_below(f, 256) : 1);
        int b = -1;
        if (bs->kind == FZ_BIND_UNIFORM) {
            for (int j = 0; j < f->nbuf && b < 0; j++)
                if (f->buf[j].dev == dev && (f->buf[j].usage & WGC_BUFFER_USAGE_UNIFORM) && f->buf[j].size >= 16 &&
                    fz_chance(f, 50))
                    b = j;
            if (b < 0) b = fz_add_buffer(f, dev, 256, WGC_BUFFER_USAGE_UNIFORM | WGC_BUFFER_USAGE_STORAGE);
        } else if (need <= (64u << 20)) {
            b = fz_storage_buffer(f, dev, need, NULL);
        }
        if (b < 0) {
            L->maybe_bad = "a binding the fuzzer could not fill";
            continue;
        }
        f->buf[b].stamp = f->step;
        WgcBinding *e = &L->binds[L->nb];
        L->kind[L->nb++] = bs->kind;
        e->binding = bs->binding;
        e->buffer = f->buf[b].h;
        e->offset = 0;
        e->size = fz_chance(f, 60) ? 0 : (f->buf[b].size / 4) * 4;
        if (bs->kind == FZ_BIND_UNIFORM && fz_chance(f, 30) && fz_enabled(f, "uniform_binding_size"))
            e->size = 4 + 4 * fz_below(f, 2);
    }
}

/* One hostile edit of the bindings or parameters. */
static void hostile_binding(Fuzz *f, const WgcLimits *lim, Launch *L) {
    if (L->nb == 0) return;
    uint32_t idx = fz_below(f, L->nb);
    WgcBinding *e = &L->binds[idx];
    switch (fz_below(f, 7)) {
    case 0: e->buffer = NULL; break;
    case 1: e->binding += 1 + fz_below(f, 3); break;
    case 2:
        e->offset = fz_chance(f, 50) ? 1 + fz_below(f, lim->min_storage_buffer_offset_alignment - 1) : fz_hostile_u64(f);
        L->maybe_bad = "a hostile binding offset";
        break;
    case 3:
        e->size = fz_hostile_u64(f);
        if (L->kind[idx] == FZ_BIND_UNIFORM && !fz_enabled(f, "uniform_binding_size")) e->size = 0;
        L->maybe_bad = "a hostile binding size";
        break;
    case 4: { /* a buffer of another device or usage */
        int other = fz_pick_buffer(f, -1);
        e->buffer = other >= 0 ? f->buf[other].h : NULL;
        L->maybe_bad = "another buffer";
        break;
    }
    case 5: L->nb--; break;
    default:
        L->binds[L->nb] = L->binds[0];
        L->kind[L->nb] = L->kind[0];
        L->nb++;
        break;
    }
}

/* What the header says must be refused, judged on the final bindings. */
static void judge_bindings(const Fuzz *f, const FzKernelSig *sig, int sdev, const WgcLimits *lim, Launch *L) {
    for (uint32_t i = 0; i < L->nb; i++) {
        const WgcBinding *e = &L->binds[i];
        if (!e->buffer) {
            L->bad = "a NULL binding buffer";
            continue;
        }
        int b = fz_find_buffer(f, e->buffer);
        if (b < 0) continue; /* an indirect buffer: judged by the caller */
        const FzBuffer *fb = &f->buf[b];
        if (fb->dev != sdev) L->bad = "a buffer of another device";
        const FzBindingSig *bs = NULL;
        for (uint32_t j = 0; j < sig->count; j++)
            if (sig->b[j].binding == e->binding) bs = &sig->b[j];
        uint64_t align = bs && bs->kind == FZ_BIND_UNIFORM ? lim->min_uniform_buffer_offset_alignment
                                                           : lim->min_storage_buffer_offset_alignment;
        if (e->offset % align) L->bad = "an unaligned binding offset";
        if (e->offset > fb->size) {
            L->bad = "a binding offset past the buffer";
            continue;
        }
        if (e->size && e->size > fb->size - e->offset) L->bad = "a binding range outside the buffer";
        uint64_t bound = e->size ? e->size : ((fb->size - e->offset + 3) / 4) * 4;
        if (!bs) {
            if (sig->exact) L->bad = "a binding the kernel does not use";
            continue;
        }
        if (bound < bs->min_size)
            L->bad = bs->kind == FZ_BIND_UNIFORM ? "a uniform binding smaller than the uniform"
                                                 : "a storage binding smaller than the kernel needs";
        if (bs->kind == FZ_BIND_UNIFORM) {
            if (!(fb->usage & WGC_BUFFER_USAGE_UNIFORM)) L->bad = "a uniform binding without uniform usage";
        } else {
            if (!(fb->usage & WGC_BUFFER_USAGE_STORAGE)) L->bad = "a storage binding without storage usage";
            if (e->size % 4) L->bad = "a binding size that is not a multiple of 4";
            if (bound > lim->max_storage_buffer_binding_size) L->bad = "a binding above the adapter's limit";
        }
    }
    for (uint32_t j = 0; j < sig->count && sig->exact; j++) {
        int given = 0;
        for (uint32_t i = 0; i < L->nb; i++) given |= L->binds[i].binding == sig->b[j].binding;
        int params = sig->b[j].kind == FZ_BIND_UNIFORM && L->params_size > 0;
        if (!given && !params) L->bad = "a binding the kernel uses left out";
        if (params && L->params_size < sig->b[j].min_size) L->bad = "params smaller than the uniform";
        if (given && params) L->bad = "a uniform given both as a buffer and as params";
    }
    for (uint32_t i = 0; i < L->nb; i++)
        for (uint32_t j = i + 1; j < L->nb; j++) {
            if (L->binds[i].binding == L->binds[j].binding) L->bad = "a binding given twice";
            int ki = -1, kj = -1;
            for (uint32_t q = 0; q < sig->count; q++) {
                if (sig->b[q].binding == L->binds[i].binding) ki = sig->b[q].kind;
                if (sig->b[q].binding == L->binds[j].binding) kj = sig->b[q].kind;
            }
            /* wgpu allows a buffer in one usage per dispatch when it is written. */
            int mixed = (ki == FZ_BIND_RW) != (kj == FZ_BIND_RW) && ki >= 0 && kj >= 0;
            if (mixed && L->binds[i].buffer && L->binds[i].buffer == L->binds[j].buffer)
                L->bad = ki == FZ_BIND_UNIFORM || kj == FZ_BIND_UNIFORM ? "one buffer bound as writable storage and as the uniform"
                                                                       : "one buffer bound read-only and writable";
        }
}

static void act_launch(Fuzz *f) {
    int k = fz_pick_kernel(f);
    if (k < 0) return;
    WgcKernel *kh = f->ker[k].h;
    int dev = f->ker[k].dev;
    int st = fz_pick_stream(f, dev);
    k = -1; /* creating a stream may have evicted pool entries: find the kernel again */
    for (int i = 0; i < f->nker; i++)
        if (f->ker[i].h == kh) k = i;
    if (k < 0 || st < 0) return;
    const FzKernelSig *sig = &f->ker[k].sig;
    const int sdev = f->str[st].dev;
    const WgcLimits *lim = &f->dev[dev].info.limits;
    Launch L;
    memset(&L, 0, sizeof L);
    memset(L.params, 0x11, sizeof L.params);
    if (!sig->exact) L.maybe_bad = "a kernel whose bindings are not known exactly";

    plausible_bindings(f, sig, dev, &L);
    if (fz_chance(f, 25)) hostile_binding(f, lim, &L);
    if (fz_chance(f, 5)) {
        L.params_size = fz_below(f, 4096);
        L.maybe_bad = "hostile params";
    }
    int null_params = L.params_size > 0 && fz_chance(f, 3);

    union {
        WgcLaunch l;
        unsigned char bytes[sizeof(WgcLaunch) + 64];
    } u;
    memset(u.bytes, 0xa5, sizeof u.bytes);
    memset(&u.l, 0, sizeof u.l);
    u.l.bindings = L.nb || fz_chance(f, 50) ? L.binds : NULL;
    u.l.binding_count = L.nb;
    if (fz_chance(f, 3)) u.l.bindings = NULL;
    u.l.params = null_params ? NULL : L.params_size ? L.params : NULL;
    u.l.params_size = L.params_size;
    const char *groups_bad = NULL;
    workgroups(f, sig, lim->max_compute_workgroups_per_dimension, u.l.workgroups, &groups_bad);

    int ind = -1;
    const uint32_t small_indirect[3] = {7, 7, 7};
    if (fz_chance(f, 15) && f->nind > 0 && work(sig, small_indirect) <= WORK_LIMIT) {
        ind = (int)fz_below(f, (uint32_t)f->nind);
        const FzBuffer *ib = &f->ind[ind];
        u.l.indirect_buffer = ib->h;
        u.l.indirect_offset = fz_chance(f, 80) ? 4 * fz_below(f, (uint32_t)(ib->size / 4)) : fz_hostile_u64(f);
        /* The indirect buffer also bound as writable storage: wgpu refuses
         * that at submit, so the launch itself must be refused. */
        if ((ib->usage & WGC_BUFFER_USAGE_STORAGE) && fz_chance(f, 20) && fz_enabled(f, "indirect_storage_conflict"))
            for (uint32_t i = 0; i < L.nb; i++)
                if (L.kind[i] == FZ_BIND_RW && L.binds[i].buffer) {
                    L.binds[i].buffer = ib->h;
                    L.binds[i].offset = 0;
                    L.binds[i].size = 0;
                    L.bad = "a buffer bound as writable storage and used for indirect counts";
                    break;
                }
    }
    judge_bindings(f, sig, sdev, lim, &L);
    if (L.bad && strstr(L.bad, "and as the uniform") && !fz_enabled(f, "storage_uniform_conflict")) return;
    if (groups_bad && !u.l.indirect_buffer) L.bad = groups_bad; /* indirect launches ignore the counts */
    if (L.params_size && !u.l.params) L.bad = "NULL params with a non-zero size";
    if (L.nb && !u.l.bindings) L.bad = "NULL bindings with a non-zero count";
    if (ind >= 0) {
        const FzBuffer *ib = &f->ind[ind];
        if (ib->dev != sdev) L.bad = "an indirect buffer of another device";
        if (u.l.indirect_offset % 4) L.bad = "an unaligned indirect offset";
        if (u.l.indirect_offset > ib->size || ib->size - u.l.indirect_offset < 12)
            L.bad = "indirect arguments outside the buffer";
        if (!(ib->usage & WGC_BUFFER_USAGE_INDIRECT)) L.bad = "an indirect buffer without indirect usage";
    }
    u.l.struct_size = fz_struct_size(f, sizeof u.l);
    const uint32_t size = u.l.struct_size;
    int null_stream = fz_chance(f, 2), null_kernel = fz_chance(f, 2), null_launch = fz_chance(f, 2);
    fz_describe(f, "kernel %d stream %d bindings %u params %llu groups %u,%u,%u indirect %d+%llu struct_size %u (%s)", k,
                st, L.nb, (unsigned long long)L.params_size, u.l.workgroups[0], u.l.workgroups[1], u.l.workgroups[2],
                ind, (unsigned long long)u.l.indirect_offset, size, L.bad ? L.bad : L.maybe_bad ? L.maybe_bad : "plausible");

    /* The first writable binding's buffer must be unchanged by a failure. */
    int watched = -1;
    for (uint32_t i = 0; i < L.nb && watched < 0; i++)
        if (L.kind[i] == FZ_BIND_RW && L.binds[i].buffer) watched = fz_find_buffer(f, L.binds[i].buffer);
    FzSum before = watched >= 0 && fz_chance(f, 20) ? fz_checksum(f, watched) : (FzSum){0, 0};
    for (uint32_t i = 0; f->trace && i < L.nb; i++) {
        int b = fz_find_buffer(f, L.binds[i].buffer);
        fprintf(stderr, "    binding %u: buffer %d (%llu bytes, usage %#x) offset %llu size %llu\n", L.binds[i].binding, b,
                b >= 0 ? (unsigned long long)f->buf[b].size : 0ull, b >= 0 ? f->buf[b].usage : 0u,
                (unsigned long long)L.binds[i].offset, (unsigned long long)L.binds[i].size);
    }

    fz_call(f, "wgc_stream_launch");
    fz_uses_device(f, sdev);
    fz_uses_device(f, dev);
    if (null_stream) fz_must_fail(f, "a NULL stream");
    if (null_kernel) fz_must_fail(f, "a NULL kernel");
    if (null_launch) fz_must_fail(f, "a NULL launch");
    if (!null_launch && size < 4) fz_must_fail(f, "struct_size below 4");
    if (sdev != dev) fz_must_fail(f, "a kernel of another device");
    /* Fields past struct_size take defaults (no bindings, no params, zero
     * counts); only a struct that covers everything is judged fully. */
    if (!null_launch && size >= sizeof u.l && L.bad) fz_must_fail(f, L.bad);
    if (!null_stream && !null_kernel && !null_launch && size >= sizeof u.l && !L.bad && !L.maybe_bad && sdev == dev)
        fz_must_succeed(f);
    WgcStatus s = fz_result(f, wgc_stream_launch(null_stream ? NULL : f->str[st].h, null_kernel ? NULL : kh,
                                                 null_launch ? NULL : &u.l));
    fz_check_unchanged(f, s, watched, before, "a writable binding's buffer");
}

const FzActionDef fz_kernel_actions[] = {
    {"kernel_create", act_kernel_create, 40},
    {"kernel_misc", act_kernel_misc, 15},
    {"indirect", act_indirect, 10},
    {"launch", act_launch, 80},
    {NULL, NULL, 0},
};
