/* Buffers and views of a case: random layouts (transposed, padded, reversed,
 * offset, gapped, zero strides), a sentinel pattern in every element that no
 * input owns, upload, and read-back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

size_t numel_of(int rank, const int64_t *shape) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= (size_t)shape[i];
    return n;
}

void unravel(size_t i, int rank, const int64_t *shape, int64_t *coord) {
    for (int d = rank - 1; d >= 0; d--) {
        coord[d] = (int64_t)(i % (size_t)shape[d]);
        i /= (size_t)shape[d];
    }
}

int64_t view_element(const WgcTensor *t, size_t i) {
    int64_t p = t->offset;
    for (int d = (int)t->rank - 1; d >= 0; d--) {
        p += (int64_t)(i % (size_t)t->shape[d]) * t->strides[d];
        i /= (size_t)t->shape[d];
    }
    return p;
}

/* The sentinel: a NaN with a position-dependent payload (a large integer
 * for i32/u32), so a stray write of any computed value shows. */
static void sentinel(DBuf *b, size_t p) {
    if (b->esize == 4) {
        uint32_t v = 0x7FA00000u | (uint32_t)((p * 2654435761u) & 0xFFFFFu);
        memcpy(b->init + 4 * p, &v, 4);
    } else {
        uint16_t v = (uint16_t)(0x7E00u | (p * 37u & 0x1FFu));
        memcpy(b->init + 2 * p, &v, 2);
    }
}

static void store(uint8_t *bytes, WgcDtype d, size_t p, double v) {
    switch (d) {
    case WGC_DTYPE_F32: { float f = (float)v; memcpy(bytes + 4 * p, &f, 4); break; }
    case WGC_DTYPE_F16: { uint16_t h = f16_bits_of(v); memcpy(bytes + 2 * p, &h, 2); break; }
    case WGC_DTYPE_I32: { int32_t x = (int32_t)v; memcpy(bytes + 4 * p, &x, 4); break; }
    default: { uint32_t x = (uint32_t)v; memcpy(bytes + 4 * p, &x, 4); break; }
    }
}

static double load(const uint8_t *bytes, WgcDtype d, size_t p) {
    switch (d) {
    case WGC_DTYPE_F32: { float f; memcpy(&f, bytes + 4 * p, 4); return f; }
    case WGC_DTYPE_F16: { uint16_t h; memcpy(&h, bytes + 2 * p, 2); return f16_value(h); }
    case WGC_DTYPE_I32: { int32_t x; memcpy(&x, bytes + 4 * p, 4); return x; }
    default: { uint32_t x; memcpy(&x, bytes + 4 * p, 4); return x; }
    }
}

static void dbuf_grow(DBuf *b, size_t elems) {
    if (elems <= b->elems) return;
    if (elems > b->cap) {
        size_t cap = elems * 2 + 16;
        b->init = realloc(b->init, cap * b->esize);
        b->after = realloc(b->after, cap * b->esize);
        b->writable = realloc(b->writable, cap);
        b->assigned = realloc(b->assigned, cap);
        b->cap = cap;
    }
    for (size_t p = b->elems; p < elems; p++) {
        sentinel(b, p);
        b->writable[p] = 0;
        b->assigned[p] = 0;
    }
    b->elems = elems;
}

typedef struct Layout {
    int64_t strides[WGC_MAX_RANK];
    int64_t offset;
    size_t span;
} Layout;

static Layout draw_layout(Rng *r, int rank, const int64_t *shape, int view) {
    Layout L;
    memset(&L, 0, sizeof L);
    size_t n = numel_of(rank, shape);
    int64_t skew = rng_chance(r, 0.5) ? rng_int(r, 1, 5) : 0;
    if (rng_chance(r, 0.3)) { /* row-major */
        int64_t acc = 1;
        for (int d = rank - 1; d >= 0; d--) {
            L.strides[d] = acc;
            acc *= shape[d] > 0 ? shape[d] : 1;
        }
        L.offset = skew;
        L.span = (size_t)skew + n;
        return L;
    }
    int order[WGC_MAX_RANK]; /* physical order of the dims, outermost first */
    for (int d = 0; d < rank; d++) order[d] = d;
    int how = rng_int(r, 0, 2);
    if (how == 1 && rank >= 2) {
        order[rank - 2] = rank - 1;
        order[rank - 1] = rank - 2;
    } else if (how == 2) {
        for (int d = rank - 1; d > 0; d--) {
            int k = rng_int(r, 0, d), t = order[d];
            order[d] = order[k];
            order[k] = t;
        }
    }
    int64_t ext[WGC_MAX_RANK], start[WGC_MAX_RANK];
    int zero[WGC_MAX_RANK], rev[WGC_MAX_RANK];
    int64_t inner = rng_chance(r, 0.15) ? rng_int(r, 2, 3) : 1;
    for (int attempt = 0; attempt < 2; attempt++) {
        size_t footprint = (size_t)inner;
        for (int d = 0; d < rank; d++) {
            zero[d] = (view & VIEW_ZERO_STRIDES) && shape[d] > 1 && rng_chance(r, 0.2);
            int64_t pad = !zero[d] && attempt == 0 && rng_chance(r, 0.3) ? rng_int(r, 1, 3) : 0;
            ext[d] = zero[d] ? 1 : shape[d] + pad;
            start[d] = pad ? rng_int(r, 0, (int)pad) : 0;
            rev[d] = !zero[d] && shape[d] > 1 && rng_chance(r, 0.25);
            footprint *= (size_t)(ext[d] > 0 ? ext[d] : 1);
        }
        if (footprint <= 4 * n + 64) break;
        inner = 1; /* too much padding for a small tensor: try once more without */
    }
    int64_t acc = inner;
    int64_t pstride[WGC_MAX_RANK];
    for (int k = rank - 1; k >= 0; k--) {
        int d = order[k];
        pstride[d] = zero[d] ? 0 : acc;
        acc *= ext[d] > 0 ? ext[d] : 1;
    }
    L.offset = skew;
    for (int d = 0; d < rank; d++) {
        int64_t first = rev[d] ? start[d] + shape[d] - 1 : start[d];
        L.offset += first * pstride[d];
        L.strides[d] = rev[d] ? -pstride[d] : pstride[d];
    }
    L.span = (size_t)(skew + acc);
    return L;
}

static DBuf *new_buffer(Case *c, size_t esize) {
    if (c->nbufs == DIFF_MAX_BUFFERS) {
        fprintf(stderr, "diff: too many buffers in one case\n");
        exit(2);
    }
    DBuf *b = &c->bufs[c->nbufs];
    memset(b, 0, sizeof *b);
    b->esize = esize;
    b->id = c->nbufs++;
    return b;
}

static DTensor *new_tensor(Case *c, const char *name) {
    if (c->ntensors == DIFF_MAX_TENSORS) {
        fprintf(stderr, "diff: too many tensors in one case\n");
        exit(2);
    }
    DTensor *t = &c->tensors[c->ntensors++];
    memset(t, 0, sizeof *t);
    t->name = name;
    return t;
}

DTensor *case_tensor(Case *c, const char *name, WgcDtype d, int rank, const int64_t *shape, int view,
                     const ValueSpec *spec, const DTensor *share) {
    DBuf *b = share ? share->b : new_buffer(c, dtype_size(d));
    if (b->esize != dtype_size(d)) {
        fprintf(stderr, "diff: %s shares a buffer of another element size\n", name);
        exit(2);
    }
    if (!spec) view &= ~VIEW_ZERO_STRIDES; /* outputs never repeat elements */
    Layout L = draw_layout(&c->rng, rank, shape, view);
    size_t base = b->elems + (share ? (size_t)rng_int(&c->rng, 0, 2) : 0);
    dbuf_grow(b, base + L.span);
    DTensor *t = new_tensor(c, name);
    t->b = b;
    t->is_output = spec == NULL;
    t->t.dtype = d;
    t->t.rank = (uint32_t)rank;
    for (int k = 0; k < rank; k++) {
        t->t.shape[k] = shape[k];
        t->t.strides[k] = L.strides[k];
    }
    t->t.offset = (int64_t)base + L.offset;
    t->n = numel_of(rank, shape);
    t->val = calloc(t->n + 1, sizeof(double));
    for (size_t i = 0; i < t->n; i++) {
        size_t p = (size_t)view_element(&t->t, i);
        if (spec) {
            if (!b->assigned[p]) {
                store(b->init, d, p, value_draw(&c->rng, spec));
                b->assigned[p] = 1;
            }
            t->val[i] = load(b->init, d, p);
        } else {
            b->writable[p] = 1;
        }
    }
    return t;
}

DTensor *case_in_place(Case *c, const char *name, const DTensor *input) {
    DTensor *t = new_tensor(c, name);
    *t = *input;
    t->name = name;
    t->is_output = 1;
    t->val = calloc(t->n + 1, sizeof(double));
    for (size_t i = 0; i < t->n; i++) t->b->writable[view_element(&t->t, i)] = 1;
    return t;
}

void case_set(Case *c, DTensor *t, size_t i, double v) {
    (void)c;
    int64_t p = view_element(&t->t, i);
    store(t->b->init, (WgcDtype)t->t.dtype, (size_t)p, v);
    double stored = load(t->b->init, (WgcDtype)t->t.dtype, (size_t)p);
    for (size_t j = 0; j < t->n; j++)
        if (view_element(&t->t, j) == p) t->val[j] = stored;
}

void case_upload(Case *c) {
    for (int k = 0; k < c->nbufs; k++) {
        DBuf *b = &c->bufs[k];
        dbuf_grow(b, b->elems + (size_t)rng_int(&c->rng, 0, 3)); /* slack after the last view */
        size_t bytes = (b->elems * b->esize + 3) & ~(size_t)3;
        if (bytes == 0) bytes = 4;
        dbuf_grow(b, bytes / b->esize);
        WgcStatus s = wgc_buffer_create(c->device, bytes, WGC_BUFFER_USAGE_STORAGE, &b->buf);
        if (s != WGC_OK) {
            fprintf(stderr, "diff: wgc_buffer_create(%zu): %s\n", bytes, wgc_last_error_message());
            exit(2);
        }
        s = wgc_buffer_write(b->buf, 0, b->init, bytes);
        if (s != WGC_OK) {
            fprintf(stderr, "diff: wgc_buffer_write: %s\n", wgc_last_error_message());
            exit(2);
        }
    }
    for (int k = 0; k < c->ntensors; k++) c->tensors[k].t.buffer = c->tensors[k].b->buf;
}

void case_download(Case *c) {
    for (int k = 0; k < c->nbufs; k++) {
        DBuf *b = &c->bufs[k];
        WgcStatus s = wgc_buffer_read(b->buf, 0, b->after, b->elems * b->esize);
        if (s != WGC_OK) {
            case_fail(c, "wgc_buffer_read of buffer %d: %s (%s)", k, wgc_status_string(s), wgc_last_error_message());
            memcpy(b->after, b->init, b->elems * b->esize);
        }
    }
    for (int k = 0; k < c->ntensors; k++) {
        DTensor *t = &c->tensors[k];
        if (!t->is_output) continue;
        for (size_t i = 0; i < t->n; i++)
            t->val[i] = load(t->b->after, (WgcDtype)t->t.dtype, (size_t)view_element(&t->t, i));
    }
}

/* Elements that must be unchanged: all but the outputs' (or all, after a failed call). */
static int check_unchanged(Case *c, int all) {
    int bad = 0;
    for (int k = 0; k < c->nbufs; k++) {
        DBuf *b = &c->bufs[k];
        for (size_t p = 0; p < b->elems; p++) {
            if (!all && b->writable[p]) continue;
            if (memcmp(b->init + p * b->esize, b->after + p * b->esize, b->esize) == 0) continue;
            if (bad++ == 0) {
                uint32_t was = 0, now = 0;
                memcpy(&was, b->init + p * b->esize, b->esize);
                memcpy(&now, b->after + p * b->esize, b->esize);
                case_fail(c, "buffer %d element %zu changed (0x%x -> 0x%x) %s", k, p, was, now,
                          all ? "by a call that failed" : "outside every output view");
            }
        }
    }
    if (bad) case_fail(c, "%d element(s) changed that must not be", bad);
    return bad;
}

int case_check_untouched(Case *c) { return check_unchanged(c, 0); }

void case_expect_status(Case *c, WgcStatus s, WgcStatus want, const char *call) {
    if (s != want) {
        case_fail(c, "%s returned %s, expected %s (%s)", call, wgc_status_string(s), wgc_status_string(want),
                  wgc_last_error_message());
        return;
    }
    if (want != WGC_OK && wgc_last_error_message()[0] == '\0') case_fail(c, "%s failed without a message", call);
    case_download(c);
    check_unchanged(c, 1);
}

int case_expect_ok(Case *c, WgcStatus s, const char *call) {
    if (s == WGC_OK) return 1;
    case_fail(c, "%s returned %s: %s", call, wgc_status_string(s), wgc_last_error_message());
    return 0;
}

size_t broadcast_index(size_t i, const DTensor *out, const DTensor *in) {
    int ro = (int)out->t.rank, ri = (int)in->t.rank;
    size_t idx = 0, mul = 1;
    for (int d = ro - 1; d >= 0; d--) {
        size_t coord = i % (size_t)out->t.shape[d];
        i /= (size_t)out->t.shape[d];
        int di = d - (ro - ri);
        if (di < 0) continue;
        if (in->t.shape[di] != 1) idx += coord * mul;
        mul *= (size_t)in->t.shape[di];
    }
    return idx;
}

void explain_inputs(Case *c, size_t i, char *buf, size_t len) {
    const DTensor *out = (const DTensor *)c->user;
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < c->ntensors && used < len; k++) {
        const DTensor *t = &c->tensors[k];
        if (t->is_output) continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%.9g", used ? " " : "", t->name,
                                 t->val[broadcast_index(i, out, t)]);
    }
}
