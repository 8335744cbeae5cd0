/* A graph of random operators: a random sequence of elementwise operators,
 * reductions, copies and fills over the action's own buffers is captured,
 * with what a capture must refuse tried in between; the same sequence runs
 * eagerly on twin buffers. Replays (as captured, onto rebound buffers, with
 * new values for the operators' scalars, on any stream of the device) must
 * give the eager results bit for bit; hostile tables and values must fail
 * and record nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

enum { GB = 4, GMAX_OPS = 8 };

typedef struct GOp {
    int kind; /* 0 x op s, 1 x op y, 2 unary, 3 copy, 4 fill, 5 sum into element 0 */
    uint32_t op;
    double s;
    int a, b, dst;
    uint32_t value; /* kind 0: its replay value's index */
} GOp;

typedef struct GSet {
    WgcBuffer *b[GB];
} GSet;

static int make_set(Fuzz *f, int dev, uint64_t bytes, const float *init, GSet *set) {
    memset(set, 0, sizeof *set);
    for (int i = 0; i < GB; i++) {
        fz_call(f, "wgc_buffer_create");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        if (fz_result(f, wgc_buffer_create(f->dev[dev].h, bytes, WGC_BUFFER_USAGE_STORAGE, &set->b[i])) != WGC_OK)
            return 0;
        fz_call(f, "wgc_buffer_write");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        if (fz_result(f, wgc_buffer_write(set->b[i], 0, init + i * (bytes / 4), bytes)) != WGC_OK) return 0;
    }
    return 1;
}

static void free_set(GSet *set) {
    for (int i = 0; i < GB; i++) wgc_buffer_release(set->b[i]);
    memset(set, 0, sizeof *set);
}

/* Record op `o` on `s` over `set` with scalar `s_value`. */
static WgcStatus record_op(WgcStream *s, const GOp *o, const GSet *set, int64_t n, double s_value) {
    WgcTensor a, b, y, y0;
    if (wgc_tensor_contiguous(set->b[o->a], WGC_DTYPE_F32, 1, &n, &a) != WGC_OK ||
        wgc_tensor_contiguous(set->b[o->b], WGC_DTYPE_F32, 1, &n, &b) != WGC_OK ||
        wgc_tensor_contiguous(set->b[o->dst], WGC_DTYPE_F32, 1, &n, &y) != WGC_OK ||
        wgc_tensor_contiguous(set->b[o->dst], WGC_DTYPE_F32, 0, NULL, &y0) != WGC_OK)
        return WGC_ERROR_INTERNAL;
    switch (o->kind) {
    case 0: return wgc_op_binary_scalar(s, o->op, &a, s_value, &y);
    case 1: return wgc_op_binary(s, o->op, &a, &b, &y);
    case 2: return wgc_op_unary(s, o->op, &a, &y);
    case 3: return wgc_stream_copy_buffer(s, set->b[o->a], 0, set->b[o->dst], 0, (uint64_t)n * 4);
    case 4: return wgc_stream_fill_buffer(s, set->b[o->dst], 0, (uint64_t)n * 4, (uint32_t)o->op);
    default: return wgc_op_reduce(s, WGC_REDUCE_OP_SUM, &a, NULL, 0, 0, &y0);
    }
}

static void random_op(Fuzz *f, GOp *o) {
    static const uint32_t BIN[] = {WGC_BINARY_OP_ADD, WGC_BINARY_OP_SUB, WGC_BINARY_OP_MUL, WGC_BINARY_OP_MAXIMUM};
    static const uint32_t UN[] = {WGC_UNARY_OP_NEG, WGC_UNARY_OP_ABS, WGC_UNARY_OP_TANH, WGC_UNARY_OP_RELU,
                                  WGC_UNARY_OP_SIGMOID};
    memset(o, 0, sizeof *o);
    o->kind = (int)fz_below(f, 6);
    o->a = (int)fz_below(f, GB);
    o->b = (int)fz_below(f, GB);
    do o->dst = (int)fz_below(f, GB);
    while (o->dst == o->a || o->dst == o->b);
    o->op = o->kind <= 1 ? BIN[fz_below(f, 4)] : o->kind == 2 ? UN[fz_below(f, 5)] : (uint32_t)fz_u64(f);
    if (o->kind == 4) o->op = 0x3f800000u + fz_below(f, 1 << 20); /* floats near 1 */
    o->s = ((double)fz_below(f, 2001) - 1000.0) / 256.0;
}

/* Mark the buffers `o` binds. */
static void mark_used(const GOp *o, int *used) {
    used[o->dst] = 1;
    if (o->kind != 4) used[o->a] = 1;
    if (o->kind == 1) used[o->b] = 1;
}

/* `used`: the set's buffers the capture holds so far (a host transfer of
 * another one is allowed). */
static void misuse(Fuzz *f, int dev, WgcStream *s, const GSet *set, const int *used, uint64_t bytes) {
    uint32_t what = fz_below(f, 4);
    int k = (int)fz_below(f, GB);
    while (!used[k]) k = (k + 1) % GB;
    float tmp[4] = {0, 0, 0, 0};
    WgcEvent *ev = NULL;
    const char *names[] = {"wgc_buffer_read", "wgc_buffer_write", "wgc_stream_synchronize", "wgc_stream_record_event"};
    fz_call(f, names[what]);
    fz_uses_device(f, dev);
    fz_must_fail(f, "a captured buffer or a capturing stream");
    WgcStatus st;
    uint64_t m = bytes < sizeof tmp ? bytes : sizeof tmp;
    switch (what) {
    case 0: st = wgc_buffer_read(set->b[k], 0, tmp, m); break;
    case 1: st = wgc_buffer_write(set->b[k], 0, tmp, m); break;
    case 2: st = wgc_stream_synchronize(s); break;
    default: st = wgc_stream_record_event(s, &ev); break;
    }
    st = fz_result(f, st);
    if (st != WGC_OK && st != WGC_ERROR_DEVICE_LOST && st != WGC_ERROR_INVALID_OPERATION)
        fz_finding(f, "%s during a capture: %s, expected WGC_ERROR_INVALID_OPERATION", names[what],
                   wgc_status_string(st));
    if (st == WGC_OK) wgc_event_release(ev);
}

/* Every buffer of `got` equals the same of `want`, bit for bit. */
static void compare_sets(Fuzz *f, int dev, const GSet *got, const GSet *want, uint64_t bytes, const char *what) {
    float *x = malloc(bytes), *y = malloc(bytes);
    for (int i = 0; i < GB && x && y; i++) {
        fz_call(f, "wgc_buffer_read");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        if (fz_result(f, wgc_buffer_read(got->b[i], 0, x, bytes)) != WGC_OK) break;
        fz_call(f, "wgc_buffer_read");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        if (fz_result(f, wgc_buffer_read(want->b[i], 0, y, bytes)) != WGC_OK) break;
        if (memcmp(x, y, bytes)) {
            for (uint64_t k = 0; k < bytes / 4; k++)
                if (memcmp(&x[k], &y[k], 4)) {
                    fz_finding(f, "%s: buffer %d element %llu is %g, the eager run's %g", what, i,
                               (unsigned long long)k, x[k], y[k]);
                    break;
                }
            break;
        }
    }
    free(x);
    free(y);
}

/* The sequence eagerly on a twin set made from `init`, with `values` for its scalars. */
static int eager(Fuzz *f, int dev, WgcStream *s, const GOp *ops, int nops, const double *values, int64_t n,
                 const float *init, GSet *twin) {
    if (!make_set(f, dev, (uint64_t)n * 4, init, twin)) return 0;
    for (int i = 0; i < nops; i++) {
        fz_call(f, "an eager operator");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        if (fz_result(f, record_op(s, &ops[i], twin, n, ops[i].kind == 0 ? values[i] : 0)) != WGC_OK) return 0;
    }
    return 1;
}

static WgcStatus replay(WgcGraph *g, WgcStream *s, const WgcGraphRebind *rb, uint32_t nrb, const WgcGraphValue *v,
                        uint32_t nv) {
    WgcGraphReplay r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    r.rebinds = rb;
    r.rebind_count = nrb;
    r.values = v;
    r.value_count = nv;
    return wgc_graph_replay(g, s, &r);
}

/* One of the device's existing streams (picking with fz_pick_stream could
 * release another, the capturing one included, to make room). */
static WgcStream *existing_stream(Fuzz *f, int dev, WgcStream *fallback) {
    int list[FZ_MAX_STREAMS], n = 0;
    for (int i = 0; i < f->nstr; i++)
        if (f->str[i].dev == dev) list[n++] = i;
    return n ? f->str[list[fz_below(f, (uint32_t)n)]].h : fallback;
}

void fz_act_graph_ops(Fuzz *f) {
    int dev = fz_live_device(f);
    if (dev < 0 || fz_device_dead(f, dev)) return;
    int si = fz_pick_stream(f, dev);
    if (si < 0 || f->str[si].dev != dev) return;
    WgcStream *s = f->str[si].h;
    int64_t n = 1 + (int64_t)fz_below(f, 300);
    uint64_t bytes = (uint64_t)n * 4;
    float *init = malloc(GB * bytes);
    if (!init) return;
    for (int64_t i = 0; i < GB * n; i++) init[i] = (float)((double)fz_below(f, 4001) / 1000.0 - 2.0);
    int nops = 1 + (int)fz_below(f, GMAX_OPS);
    GOp ops[GMAX_OPS];
    double captured[GMAX_OPS], changed[GMAX_OPS];
    for (int i = 0; i < nops; i++) {
        random_op(f, &ops[i]);
        captured[i] = ops[i].s;
        changed[i] = ops[i].kind == 0 && fz_chance(f, 50) ? ops[i].s * -0.5 + 1.0 : ops[i].s;
    }
    fz_describe(f, "stream %d, %d operators over %lld floats", si, nops, (long long)n);
    GSet cap, twin, other;
    memset(&twin, 0, sizeof twin);
    memset(&other, 0, sizeof other);
    WgcGraph *g = NULL;
    if (!make_set(f, dev, bytes, init, &cap)) goto done;

    fz_call(f, "wgc_stream_begin_capture");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, wgc_stream_begin_capture(s)) != WGC_OK) goto done;
    int recorded = 1, used[GB] = {0, 0, 0, 0};
    for (int i = 0; i < nops; i++) {
        fz_call(f, "wgc_stream_capture_value_count");
        fz_must_succeed(f);
        fz_result(f, wgc_stream_capture_value_count(s, &ops[i].value));
        fz_call(f, "a captured operator");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        if (fz_result(f, record_op(s, &ops[i], &cap, n, ops[i].s)) != WGC_OK) recorded = 0;
        mark_used(&ops[i], used);
        if (fz_chance(f, 15)) misuse(f, dev, s, &cap, used, bytes);
    }
    fz_call(f, "wgc_stream_end_capture");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, wgc_stream_end_capture(s, &g)) != WGC_OK || !recorded) goto done;
    uint32_t nvalues = 0;
    fz_call(f, "wgc_graph_value_count");
    fz_must_succeed(f);
    fz_result(f, wgc_graph_value_count(g, &nvalues));

    /* As captured, on this or another stream of the device. */
    WgcStream *t = existing_stream(f, dev, s);
    fz_call(f, "wgc_graph_replay");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, wgc_graph_replay(g, t, NULL)) != WGC_OK) goto done;
    if (!eager(f, dev, s, ops, nops, captured, n, init, &twin)) goto done;
    compare_sets(f, dev, &cap, &twin, bytes, "a replay as captured");
    free_set(&twin);

    /* Onto other buffers (every slot the sequence used), with new scalars. */
    if (!make_set(f, dev, bytes, init, &other)) goto done;
    WgcGraphRebind rb[GB];
    uint32_t nrb = 0;
    for (int i = 0; i < GB; i++) {
        uint32_t slot;
        if (wgc_graph_buffer_slot(g, cap.b[i], &slot) == WGC_OK) rb[nrb].slot = slot, rb[nrb++].buffer = other.b[i];
    }
    WgcGraphValue vals[GMAX_OPS];
    uint32_t nv = 0;
    for (int i = 0; i < nops; i++)
        if (ops[i].kind == 0 && changed[i] != captured[i]) vals[nv].index = ops[i].value, vals[nv]._reserved = 0,
                                                            vals[nv++].value = changed[i];
    int released = fz_chance(f, 30);
    if (released) free_set(&cap); /* the graph holds them */
    fz_call(f, "wgc_graph_replay");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, replay(g, t, rb, nrb, vals, nv)) != WGC_OK) goto done;
    if (!eager(f, dev, s, ops, nops, changed, n, init, &twin)) goto done;
    compare_sets(f, dev, &other, &twin, bytes, "a rebound replay with new values");

    /* Hostile: a value index past the graph's, a slot past its slots, a
     * small buffer; each refused, and nothing of it runs. */
    WgcGraphValue bad_v = {nvalues + fz_below(f, 3), 0, 1.0};
    WgcGraphRebind bad_rb = {0, NULL};
    uint32_t slots = 0;
    wgc_graph_counts(g, NULL, NULL, &slots);
    WgcBuffer *small = NULL;
    uint32_t what = fz_below(f, 3);
    if (what == 2 && (n == 1 || !nrb || wgc_buffer_create(f->dev[dev].h, bytes - 4, WGC_BUFFER_USAGE_STORAGE, &small)))
        what = 0;
    fz_call(f, "wgc_graph_replay");
    fz_uses_device(f, dev);
    if (what == 0) {
        fz_must_fail(f, "a replay value index past the graph's");
        fz_result(f, replay(g, t, rb, nrb, &bad_v, 1));
    } else if (what == 1) {
        bad_rb.slot = slots + fz_below(f, 5);
        bad_rb.buffer = other.b[0];
        fz_must_fail(f, "a slot past the graph's");
        fz_result(f, replay(g, t, &bad_rb, 1, NULL, 0));
    } else {
        bad_rb.slot = rb[0].slot;
        bad_rb.buffer = small;
        fz_must_fail(f, "a buffer smaller than the captured one");
        fz_result(f, replay(g, t, &bad_rb, 1, NULL, 0));
    }
    wgc_buffer_release(small);
    compare_sets(f, dev, &other, &twin, bytes, "after a refused replay");

done:
    wgc_graph_release(g);
    free_set(&cap);
    free_set(&twin);
    free_set(&other);
    free(init);
}
