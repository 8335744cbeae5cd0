/* Actions over two or more devices: byte copies between devices (hostile
 * offsets, sizes, streams of the wrong device, NULLs) checked against the
 * source's bytes, and communicators with all-reduce and broadcast checked
 * against a host reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* Another live device than `a` where one can be had (created if needed). */
static int other_device(Fuzz *f, int a) {
    int b = fz_live_device(f);
    for (int k = 0; k < 64 && (b == a || b < 0); k++) b = fz_live_device(f);
    return b;
}

/* Picking a stream may release another to make room: whether the stream
 * picked earlier in this step is still in the pool. */
static int stream_kept(const Fuzz *f, int i, const WgcStream *h) {
    return i >= 0 && i < f->nstr && f->str[i].h == h;
}

static void quiet_sync(Fuzz *f, int dev) {
    WgcDevice *h = fz_device_handle(f, dev);
    if (h && !fz_device_dead(f, dev)) (void)wgc_device_synchronize(h);
}

static void act_peer_copy(Fuzz *f) {
    int a = fz_live_device(f);
    if (a < 0) return;
    int b = fz_chance(f, 90) ? other_device(f, a) : a;
    if (b < 0) return;
    int sb = fz_pick_buffer(f, a), db = fz_pick_buffer(f, b);
    int ss = fz_pick_stream(f, a);
    const WgcStream *ss_h = ss >= 0 ? f->str[ss].h : NULL;
    int ds = fz_pick_stream(f, b);
    if (sb < 0 || db < 0 || ss < 0 || ds < 0 || !stream_kept(f, ss, ss_h)) return;
    const FzBuffer *src = &f->buf[sb], *dst = &f->buf[db];
    uint64_t limit = src->size < dst->size ? src->size : dst->size;
    uint64_t size = 4 * (uint64_t)fz_below(f, (uint32_t)(limit / 4 < 65536 ? limit / 4 + 1 : 65536));
    uint64_t so = 4 * (uint64_t)fz_below(f, (uint32_t)((src->size - size) / 4 + 1));
    uint64_t dof = 4 * (uint64_t)fz_below(f, (uint32_t)((dst->size - size) / 4 + 1));
    int hostile = fz_chance(f, 25);
    if (hostile) {
        switch (fz_below(f, 4)) {
        case 0: size = fz_hostile_u64(f); break;
        case 1: so = fz_hostile_u64(f); break;
        case 2: dof = fz_hostile_u64(f); break;
        default: size += 2; break;
        }
    }
    int null_what = fz_chance(f, 4) ? (int)fz_below(f, 4) + 1 : 0;
    fz_describe(f, "buffer %d (dev %d) +%llu -> buffer %d (dev %d) +%llu, %llu bytes, streams %d %d", sb, src->dev,
                (unsigned long long)so, db, dst->dev, (unsigned long long)dof, (unsigned long long)size, ss, ds);
    int verify = !hostile && !null_what && size > 0 && size <= (1u << 20) && fz_chance(f, 50);
    unsigned char *want = NULL, *got = NULL;
    if (verify) {
        /* Nothing else is recorded meanwhile: what the source holds after
         * its device's work is what must arrive. */
        quiet_sync(f, src->dev);
        quiet_sync(f, dst->dev);
        want = malloc(size), got = malloc(size);
        if (!want || !got || wgc_buffer_read(src->h, so, want, size) != WGC_OK) verify = 0;
    }
    fz_call(f, "wgc_buffer_copy_to_device");
    fz_uses_device(f, src->dev);
    fz_uses_device(f, dst->dev);
    fz_uses_device(f, f->str[ss].dev);
    fz_uses_device(f, f->str[ds].dev);
    if (null_what) fz_must_fail(f, "a NULL stream or buffer");
    if (f->str[ss].dev != src->dev || f->str[ds].dev != dst->dev) fz_must_fail(f, "a buffer of another device than its stream");
    if (so % 4 || dof % 4 || size % 4) fz_must_fail(f, "a misaligned offset or size");
    if (so > src->size || size > src->size - so || dof > dst->size || size > dst->size - dof)
        fz_must_fail(f, "a range past a buffer's end");
    if (sb == db && so < dof + size && dof < so + size && size > 0) fz_must_fail(f, "overlapping ranges of one buffer");
    if (!f->must_fail) fz_must_succeed(f);
    WgcStatus s = fz_result(f, wgc_buffer_copy_to_device(null_what == 1 ? NULL : f->str[ss].h, null_what == 2 ? NULL : src->h,
                                                         so, null_what == 3 ? NULL : f->str[ds].h,
                                                         null_what == 4 ? NULL : dst->h, dof, size));
    if (verify && s == WGC_OK && wgc_buffer_read(dst->h, dof, got, size) == WGC_OK && memcmp(want, got, size) != 0)
        fz_finding(f, "the destination of a copy between devices differs from the source");
    free(want);
    free(got);
}

/* A communicator over 1-3 devices (sometimes one twice), then an all-reduce
 * or a broadcast of f32 data checked against the host. */
static void act_collective(Fuzz *f) {
    int devs[3], n = 1 + (int)fz_below(f, 3);
    devs[0] = fz_live_device(f);
    if (devs[0] < 0) return;
    int twice = 0;
    for (int i = 1; i < n; i++) {
        devs[i] = fz_chance(f, 5) ? devs[0] : other_device(f, devs[i - 1]);
        if (devs[i] < 0) return;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) twice |= devs[i] == devs[j];
    const WgcDevice *handles[3];
    for (int i = 0; i < n; i++) {
        handles[i] = fz_device_handle(f, devs[i]);
        if (!handles[i]) return;
    }
    WgcComm *comm = NULL;
    fz_describe(f, "%d devices %d %d %d", n, devs[0], n > 1 ? devs[1] : -1, n > 2 ? devs[2] : -1);
    fz_call(f, "wgc_comm_create");
    for (int i = 0; i < n; i++) fz_uses_device(f, devs[i]);
    if (twice) fz_must_fail(f, "the same device twice");
    else fz_must_succeed(f);
    if (fz_result(f, wgc_comm_create(handles, (uint32_t)n, &comm)) != WGC_OK) return;

    uint32_t len = 1 + fz_below(f, 700);
    WgcBuffer *bufs[3]; /* handles: a new buffer may move others' pool slots */
    float *host[3];
    WgcTensor t[3];
    const WgcStream *streams[3];
    int ok = 1, picked[3];
    for (int i = 0; i < n; i++) host[i] = NULL;
    for (int i = 0; i < n && ok; i++) {
        picked[i] = fz_pick_stream(f, devs[i]);
        if (picked[i] < 0) ok = 0;
        else streams[i] = f->str[picked[i]].h;
    }
    for (int i = 0; i < n && ok; i++) ok = stream_kept(f, picked[i], streams[i]);
    for (int i = 0; i < n && ok; i++) {
        int st = picked[i];
        int bi = fz_storage_buffer(f, devs[i], (uint64_t)len * 4, NULL);
        bufs[i] = bi >= 0 ? f->buf[bi].h : NULL; /* stamped: kept through this step */
        if (bi < 0) {
            ok = 0;
            break;
        }
        host[i] = malloc((size_t)len * 4);
        for (uint32_t k = 0; k < len; k++) host[i][k] = (float)((int)fz_below(f, 33) - 16);
        if (wgc_buffer_write(bufs[i], 0, host[i], (uint64_t)len * 4) != WGC_OK) ok = 0;
        int64_t shape = len;
        if (wgc_tensor_contiguous(bufs[i], WGC_DTYPE_F32, 1, &shape, &t[i]) != WGC_OK) ok = 0;
        for (int j = 0; j < i; j++) ok &= bufs[j] != bufs[i];
        ok &= f->str[st].dev == devs[i];
    }
    if (ok) {
        int broadcast = fz_chance(f, 30);
        uint32_t op = fz_chance(f, 5) ? 2 + fz_below(f, 100) : fz_below(f, 2);
        uint32_t root = fz_chance(f, 5) ? (uint32_t)n + fz_below(f, 4) : fz_below(f, (uint32_t)n);
        int strided = fz_chance(f, 5) && len > 1;
        if (strided) t[0].strides[0] = 2, t[0].shape[0] = len / 2;
        fz_call(f, broadcast ? "wgc_comm_broadcast" : "wgc_comm_all_reduce");
        for (int i = 0; i < n; i++) fz_uses_device(f, devs[i]);
        if (strided && n > 1) fz_must_fail(f, "tensors of different shapes");
        if (strided && n == 1 && !broadcast) fz_must_fail(f, "a strided tensor to reduce");
        if (!broadcast && op > 1) fz_must_fail(f, "an unknown op");
        if (broadcast && root >= (uint32_t)n) fz_must_fail(f, "a root past the last rank");
        if (!f->must_fail) fz_must_succeed(f);
        WgcStatus s = fz_result(f, broadcast ? wgc_comm_broadcast(comm, streams, t, root)
                                             : wgc_comm_all_reduce(comm, streams, t, op));
        if (s == WGC_OK && !strided) {
            float *got = malloc((size_t)len * 4);
            for (int i = 0; i < n; i++) {
                if (wgc_buffer_read(bufs[i], 0, got, (uint64_t)len * 4) != WGC_OK) continue;
                int bad = 0;
                for (uint32_t k = 0; k < len; k++) {
                    float want = broadcast ? host[root][k] : host[0][k];
                    for (int j = 1; j < n && !broadcast; j++)
                        want = op == 0 ? want + host[j][k] : (host[j][k] > want ? host[j][k] : want);
                    bad += got[k] != want;
                }
                if (bad) fz_finding(f, "%s: %d of %u elements wrong on rank %d", f->call, bad, len, i);
            }
            free(got);
        }
    }
    for (int i = 0; i < n; i++) free(host[i]);
    wgc_comm_release(comm);
}

const FzActionDef fz_multi_device_actions[] = {
    {"peer_copy", act_peer_copy, 12},
    {"collective", act_collective, 6},
    {NULL, NULL, 0},
};
