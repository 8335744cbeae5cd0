/* Known computations recorded amid the random work and checked later: a
 * result that another stream's work, a failed launch in the same batch or
 * a reused temporary buffer corrupted shows up here. At the end the same
 * computations run once more on every device as the health check. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static const char *PROBE_KERNEL =
    "struct P { k: f32, n: u32 }\n"
    "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(1) var<uniform> p: P;\n"
    "@compute @workgroup_size(64)\n"
    "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
    "    if (gid.x < p.n) { y[gid.x] = y[gid.x] * 2.0 + p.k; }\n"
    "}\n";

static WgcBuffer *new_buffer(Fuzz *f, int dev, uint64_t bytes) {
    WgcBuffer *b = NULL;
    fz_call(f, "wgc_buffer_create");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, wgc_buffer_create(f->dev[dev].h, bytes, WGC_BUFFER_USAGE_STORAGE, &b)) != WGC_OK) return NULL;
    return b;
}

static WgcTensor view(Fuzz *f, int dev, WgcBuffer *b, uint32_t rank, const int64_t *shape) {
    WgcTensor t;
    fz_call(f, "wgc_tensor_contiguous");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    fz_result(f, wgc_tensor_contiguous(b, WGC_DTYPE_F32, rank, shape, &t));
    return t;
}

/* Each step of a probe must succeed while its device lives. */
static int step_ok(Fuzz *f, int dev, const char *call, WgcStatus s) {
    (void)call;
    return fz_result(f, s) == WGC_OK || fz_device_dead(f, dev);
}

#define STEP(call_name, expr)                                                                                          \
    do {                                                                                                               \
        fz_call(f, call_name);                                                                                         \
        fz_uses_device(f, dev);                                                                                        \
        fz_must_succeed(f);                                                                                            \
        if (!step_ok(f, dev, call_name, (expr))) return 0;                                                             \
    } while (0)

static void expect(FzProbe *p, uint64_t count, double value, double tolerance) {
    p->count = count;
    p->expected = value;
    p->tolerance = tolerance;
}

/* Record probe `kind` on stream `st` of device `dev` into `p`. */
static int record(Fuzz *f, int dev, WgcStream *st, uint32_t kind, FzProbe *p) {
    static const uint64_t SIZES[] = {1000, 4096, 70000, 100000, 300000};
    memset(p, 0, sizeof *p);
    p->dev = dev;
    p->step = f->step;
    uint64_t n = SIZES[fz_below(f, 5)];
    double v = 1.0 + fz_below(f, 2);
    int64_t shape[2] = {(int64_t)n, 1};
    WgcBuffer *in = new_buffer(f, dev, n * 4), *out = NULL;
    if (!in) return 0;
    p->bufs[0] = in;
    WgcTensor tin = view(f, dev, in, 1, shape);
    switch (kind) {
    case 0: { /* a sum of n copies of v: exact in f32 */
        out = new_buffer(f, dev, 4);
        if (!out) return 0;
        WgcTensor tout = view(f, dev, out, 0, shape);
        STEP("wgc_op_fill", wgc_op_fill(st, &tin, v));
        STEP("wgc_op_reduce", wgc_op_reduce(st, WGC_REDUCE_OP_SUM, &tin, NULL, 0, 0, &tout));
        expect(p, 1, (double)n * v, 0);
        snprintf(p->what, sizeof p->what, "sum of %llu x %g", (unsigned long long)n, v);
        break;
    }
    case 1: { /* the variance of 0..n-1 (Welford over a scratch buffer) */
        n = n > 4096 ? 4096 : n;
        shape[0] = (int64_t)n;
        tin = view(f, dev, in, 1, shape);
        out = new_buffer(f, dev, 4);
        if (!out) return 0;
        WgcTensor tout = view(f, dev, out, 0, shape);
        STEP("wgc_op_arange", wgc_op_arange(st, &tin, 0.0, 1.0));
        STEP("wgc_op_var", wgc_op_var(st, &tin, NULL, 0, 0, 0, &tout));
        expect(p, 1, ((double)n * n - 1) / 12.0, ((double)n * n - 1) / 12.0 * 1e-4);
        snprintf(p->what, sizeof p->what, "variance of 0..%llu", (unsigned long long)n - 1);
        break;
    }
    case 2: { /* 1.5 + 2.25 everywhere */
        WgcBuffer *b = new_buffer(f, dev, n * 4);
        if (!b) return 0;
        p->bufs[1] = b;
        out = new_buffer(f, dev, n * 4);
        if (!out) return 0;
        WgcTensor tb = view(f, dev, b, 1, shape), tout = view(f, dev, out, 1, shape);
        STEP("wgc_op_fill", wgc_op_fill(st, &tin, 1.5));
        STEP("wgc_op_fill", wgc_op_fill(st, &tb, 2.25));
        STEP("wgc_op_binary", wgc_op_binary(st, WGC_BINARY_OP_ADD, &tin, &tb, &tout));
        expect(p, n, 3.75, 0);
        snprintf(p->what, sizeof p->what, "1.5 + 2.25 over %llu elements", (unsigned long long)n);
        break;
    }
    case 3: { /* ones (M x K) @ ones (K x N) = K */
        int64_t M = 1 + fz_below(f, 40), K = 1 + fz_below(f, 300), N = 1 + fz_below(f, 40);
        int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
        WgcBuffer *a = new_buffer(f, dev, (uint64_t)(M * K) * 4), *b = new_buffer(f, dev, (uint64_t)(K * N) * 4);
        p->bufs[1] = a;
        p->bufs[2] = b;
        out = new_buffer(f, dev, (uint64_t)(M * N) * 4);
        if (!a || !b || !out) return 0;
        WgcTensor ta = view(f, dev, a, 2, sa), tb = view(f, dev, b, 2, sb), tc = view(f, dev, out, 2, sc);
        STEP("wgc_op_fill", wgc_op_fill(st, &ta, 1.0));
        STEP("wgc_op_fill", wgc_op_fill(st, &tb, 1.0));
        STEP("wgc_op_matmul", wgc_op_matmul(st, &ta, &tb, &tc));
        expect(p, (uint64_t)(M * N), (double)K, 0);
        snprintf(p->what, sizeof p->what, "ones(%lld x %lld) @ ones(%lld x %lld)", (long long)M, (long long)K,
                 (long long)K, (long long)N);
        break;
    }
    case 4: { /* a fill pattern copied to another buffer */
        float five = 5.0f;
        uint32_t bits;
        memcpy(&bits, &five, 4);
        out = new_buffer(f, dev, n * 4);
        if (!out) return 0;
        STEP("wgc_stream_fill_buffer", wgc_stream_fill_buffer(st, in, 0, n * 4, bits));
        STEP("wgc_stream_copy_buffer", wgc_stream_copy_buffer(st, in, 0, out, 0, n * 4));
        expect(p, n, 5.0, 0);
        snprintf(p->what, sizeof p->what, "fill_buffer 5.0 and copy of %llu elements", (unsigned long long)n);
        break;
    }
    case 5: { /* a caller's kernel: y = y * 2 + k, released right after the launch */
        WgcKernelDesc d;
        memset(&d, 0, sizeof d);
        d.struct_size = sizeof d;
        d.source = PROBE_KERNEL;
        d.entry_point = "main";
        WgcKernel *k = NULL;
        STEP("wgc_kernel_create", wgc_kernel_create(f->dev[dev].h, &d, &k));
        struct {
            float k;
            uint32_t n;
        } params = {0.5f, (uint32_t)n};
        WgcBinding b[1] = {{0, in, 0, 0}};
        WgcLaunch l;
        memset(&l, 0, sizeof l);
        l.struct_size = sizeof l;
        l.bindings = b;
        l.binding_count = 1;
        l.params = &params;
        l.params_size = sizeof params;
        l.workgroups[0] = (uint32_t)((n + 63) / 64);
        l.workgroups[1] = l.workgroups[2] = 1;
        fz_call(f, "wgc_op_fill");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        WgcStatus s = fz_result(f, wgc_op_fill(st, &tin, 1.0));
        if (s == WGC_OK) {
            fz_call(f, "wgc_stream_launch");
            fz_uses_device(f, dev);
            fz_must_succeed(f);
            s = fz_result(f, wgc_stream_launch(st, k, &l));
        }
        wgc_kernel_release(k);
        if (s != WGC_OK) return 0;
        out = in;
        p->bufs[0] = NULL;
        expect(p, n, 2.5, 0);
        snprintf(p->what, sizeof p->what, "kernel y * 2 + 0.5 over %llu elements", (unsigned long long)n);
        break;
    }
    default: { /* softmax of a constant: 1 / row length */
        int64_t rows = 1 + fz_below(f, 8), len = (int64_t)(n / (uint64_t)rows);
        int64_t s2[2] = {rows, len};
        tin = view(f, dev, in, 2, s2);
        out = new_buffer(f, dev, (uint64_t)(rows * len) * 4);
        if (!out) return 0;
        WgcTensor tout = view(f, dev, out, 2, s2);
        STEP("wgc_op_fill", wgc_op_fill(st, &tin, 3.0));
        STEP("wgc_op_softmax", wgc_op_softmax(st, &tin, -1, &tout));
        expect(p, (uint64_t)(rows * len), 1.0 / (double)len, 1e-6 / (double)len + 1e-9);
        snprintf(p->what, sizeof p->what, "softmax of a constant, %lld rows of %lld", (long long)rows, (long long)len);
        break;
    }
    }
    p->result = out;
    return 1;
}

static void release_probe(FzProbe *p) {
    for (int i = 0; i < 4; i++) wgc_buffer_release(p->bufs[i]);
    wgc_buffer_release(p->result);
    memset(p, 0, sizeof *p);
}

/* Read a probe's result (blocking) and compare. */
static void verify(Fuzz *f, FzProbe *p) {
    float *got = malloc(p->count * sizeof *got);
    fz_describe(f, "probe from step %llu: %s", (unsigned long long)p->step, p->what);
    fz_call(f, "wgc_buffer_read");
    fz_uses_device(f, p->dev);
    fz_must_succeed(f);
    WgcStatus s = fz_result(f, wgc_buffer_read(p->result, 0, got, p->count * sizeof *got));
    if (s == WGC_OK) {
        for (uint64_t i = 0; i < p->count; i++)
            if (!(fabs(got[i] - p->expected) <= p->tolerance)) {
                fz_finding(f, "probe recorded at step %llu (%s): element %llu is %.9g, expected %.9g",
                           (unsigned long long)p->step, p->what, (unsigned long long)i, got[i], p->expected);
                break;
            }
    }
    free(got);
}

void fz_check_probes(Fuzz *f, int all) {
    for (int i = f->nprobe - 1; i >= 0; i--) {
        if (!all && !fz_chance(f, 50)) continue;
        if (!fz_device_dead(f, f->probe[i].dev)) verify(f, &f->probe[i]);
        release_probe(&f->probe[i]);
        f->probe[i] = f->probe[--f->nprobe];
    }
}

void fz_check_probes_of(Fuzz *f, int dev) {
    for (int i = f->nprobe - 1; i >= 0; i--) {
        if (f->probe[i].dev != dev) continue;
        if (!fz_device_dead(f, dev)) verify(f, &f->probe[i]);
        release_probe(&f->probe[i]);
        f->probe[i] = f->probe[--f->nprobe];
    }
}

static void act_probe(Fuzz *f) {
    int dev = fz_live_device(f);
    if (dev < 0 || fz_device_dead(f, dev)) return;
    int st = fz_pick_stream(f, dev);
    if (st < 0 || f->str[st].dev != dev) return;
    if (f->nprobe == FZ_MAX_PROBES) {
        if (!fz_device_dead(f, f->probe[0].dev)) verify(f, &f->probe[0]);
        release_probe(&f->probe[0]);
        f->probe[0] = f->probe[--f->nprobe];
    }
    uint32_t kind = fz_below(f, 7);
    fz_describe(f, "probe kind %u on stream %d", kind, st);
    FzProbe *p = &f->probe[f->nprobe];
    if (record(f, dev, f->str[st].h, kind, p)) f->nprobe++;
    else release_probe(p);
}

static void act_probe_check(Fuzz *f) {
    fz_check_probes(f, 0);
}

const FzActionDef fz_probe_actions[] = {
    {"probe", act_probe, 25},
    {"probe_check", act_probe_check, 8},
    {NULL, NULL, 0},
};

/* Every probe once on a fresh stream of `dev`, checked at once. */
static void health_of(Fuzz *f, int dev) {
    WgcStream *st = NULL;
    fz_call(f, "wgc_stream_create");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, wgc_stream_create(f->dev[dev].h, &st)) != WGC_OK) return;
    for (uint32_t kind = 0; kind < 7; kind++) {
        FzProbe p;
        if (record(f, dev, st, kind, &p)) verify(f, &p);
        release_probe(&p);
    }
    wgc_stream_release(st);
}

int fz_health_check(Fuzz *f) {
    int before = f->findings;
    f->action = "health_check";
    fz_check_probes(f, 1);
    /* A device nobody destroyed must still compute correctly after all of it,
     * and so must a new one. */
    for (int d = 0; d < FZ_MAX_DEVICES; d++)
        if (f->dev[d].used && f->dev[d].h && !f->dev[d].destroyed) health_of(f, d);
    /* Memory statistics: after every buffer is released and the pool trimmed,
     * nothing stays live or pooled. */
    while (f->nev) fz_remove_event(f, f->nev - 1);
    while (f->nstr) fz_remove_stream(f, f->nstr - 1);
    while (f->nbuf) fz_remove_buffer(f, f->nbuf - 1);
    while (f->nind) fz_remove_indirect(f, f->nind - 1);
    for (int d = 0; d < FZ_MAX_DEVICES; d++) {
        if (!f->dev[d].used || !f->dev[d].h || f->dev[d].destroyed) continue;
        fz_describe(f, "memory statistics of device %d", d);
        fz_call(f, "wgc_device_synchronize");
        fz_uses_device(f, d);
        fz_must_succeed(f);
        fz_result(f, wgc_device_synchronize(f->dev[d].h));
        fz_call(f, "wgc_device_trim_pool");
        fz_uses_device(f, d);
        fz_must_succeed(f);
        fz_result(f, wgc_device_trim_pool(f->dev[d].h, 0));
        WgcMemoryStats m;
        memset(&m, 0, sizeof m);
        m.struct_size = sizeof m;
        fz_call(f, "wgc_device_memory_stats");
        fz_uses_device(f, d);
        fz_must_succeed(f);
        if (fz_result(f, wgc_device_memory_stats(f->dev[d].h, &m)) != WGC_OK) continue;
        if (m.live_bytes > m.peak_bytes || m.pooled_bytes != 0 || m.live_bytes > (64u << 20))
            fz_finding(f, "memory statistics after releasing every buffer: live %llu peak %llu pooled %llu",
                       (unsigned long long)m.live_bytes, (unsigned long long)m.peak_bytes,
                       (unsigned long long)m.pooled_bytes);
    }
    /* A new device on a new instance, with nothing else alive. */
    fz_release_all(f);
    int fresh = 0;
    WgcInstance *inst = NULL;
    WgcDevice *dev = NULL;
    fz_call(f, "wgc_instance_create");
    fz_must_succeed(f);
    if (fz_result(f, wgc_instance_create(WGC_ABI_VERSION, &inst)) == WGC_OK) {
        fz_call(f, "wgc_device_create");
        fz_must_succeed(f);
        if (fz_result(f, wgc_device_create(inst, NULL, &dev)) == WGC_OK) {
            memset(&f->dev[fresh], 0, sizeof f->dev[fresh]);
            f->dev[fresh].used = 1;
            f->dev[fresh].h = dev;
            f->dev[fresh].info.struct_size = sizeof f->dev[fresh].info;
            wgc_device_info(dev, &f->dev[fresh].info);
            health_of(f, fresh);
        }
        wgc_instance_release(inst);
    }
    return f->findings == before;
}
