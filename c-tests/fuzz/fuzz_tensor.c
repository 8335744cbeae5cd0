/* Tensor views: valid ones of every layout (contiguous, permuted, padded,
 * reversed, broadcast), hostile mutations of them, and the header's rules
 * for which views an operator must refuse. */
#include <string.h>

#include "fuzz.h"

__extension__ typedef __int128 fz_i128;

uint32_t fz_dtype_size(uint32_t dtype) {
    return dtype == WGC_DTYPE_F16 || dtype == WGC_DTYPE_BF16 ? 2 : 4;
}

void fz_random_shape(Fuzz *f, uint32_t rank, int64_t *shape, uint64_t max_elems) {
    static const int64_t DIMS[] = {1, 1, 2, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 64, 100};
    uint64_t n = 1;
    for (uint32_t k = 0; k < rank; k++) {
        shape[k] = fz_chance(f, 3) ? 0 : DIMS[fz_below(f, (uint32_t)(sizeof DIMS / sizeof DIMS[0]))];
        while (shape[k] > 1 && n * (uint64_t)shape[k] > max_elems) shape[k] /= 2;
        if (shape[k]) n *= (uint64_t)shape[k];
    }
}

int fz_tensor_dev(const Fuzz *f, const WgcTensor *t) {
    int b = t ? fz_find_buffer(f, t->buffer) : -1;
    return b >= 0 ? f->buf[b].dev : -1;
}

int fz_view(Fuzz *f, int dev, uint32_t dtype, uint32_t rank, const int64_t *shape, int role,
            const WgcBuffer *avoid, WgcTensor *t) {
    uint32_t order[8];
    int64_t strides[8] = {0};
    for (uint32_t k = 0; k < rank; k++) order[k] = k;
    if (rank > 1 && fz_chance(f, 30)) /* a permuted (e.g. transposed) layout */
        for (uint32_t k = rank - 1; k > 0; k--) {
            uint32_t j = fz_below(f, k + 1), tmp = order[k];
            order[k] = order[j];
            order[j] = tmp;
        }
    int64_t step = 1;
    for (uint32_t i = rank; i-- > 0;) {
        uint32_t k = order[i];
        strides[k] = step;
        step *= (shape[k] ? shape[k] : 1) * (fz_chance(f, 10) ? 2 : 1); /* sometimes padded */
    }
    int64_t lo = 0, hi = 0, empty = 0;
    for (uint32_t k = 0; k < rank; k++) {
        if (role == FZ_IN && fz_chance(f, 10)) strides[k] = 0; /* broadcast */
        else if (fz_chance(f, 10)) strides[k] = -strides[k];   /* reversed */
        if (shape[k] == 0) empty = 1;
        int64_t reach = (shape[k] > 0 ? shape[k] - 1 : 0) * strides[k];
        if (reach < 0) lo += reach;
        else hi += reach;
    }
    int64_t offset = -lo + (fz_chance(f, 20) ? (int64_t)fz_below(f, 16) : 0);
    uint64_t elems = empty ? (uint64_t)offset + 1 : (uint64_t)(offset + hi + 1);
    uint64_t bytes = elems * fz_dtype_size(dtype);
    int b = fz_storage_buffer(f, dev, bytes, avoid);
    if (b < 0) return 0;
    memset(t, 0, sizeof *t);
    t->buffer = f->buf[b].h;
    t->dtype = dtype;
    t->rank = rank;
    for (uint32_t k = 0; k < rank; k++) {
        t->shape[k] = shape[k];
        t->strides[k] = strides[k];
    }
    t->offset = offset;
    return 1;
}

/* |a * b|, saturated far above any buffer. */
static fz_i128 reach(int64_t dim, int64_t stride) {
    const fz_i128 cap = (fz_i128)1 << 100;
    fz_i128 d = dim > 0 ? (fz_i128)dim - 1 : 0, s = stride;
    if (s < 0) s = -s;
    if (d == 0 || s == 0) return 0;
    if (d > cap / s) return cap;
    return d * s;
}

const char *fz_view_invalid(const Fuzz *f, const WgcTensor *t, int role) {
    if (!t->buffer) return "a view of a NULL buffer";
    int b = fz_find_buffer(f, t->buffer);
    if (t->dtype > WGC_DTYPE_BF16) return "an unknown dtype";
    if (t->rank > WGC_MAX_RANK) return "rank above WGC_MAX_RANK";
    for (uint32_t k = 0; k < t->rank; k++)
        if (t->shape[k] < 0) return "a negative dimension";
    if (t->offset < 0) return "a negative offset";
    unsigned __int128 count = 1;
    int empty = 0, overflow = 0;
    for (uint32_t k = 0; k < t->rank; k++) {
        if (t->shape[k] == 0) empty = 1;
        count *= (uint64_t)t->shape[k];
        if (count >> 64) {
            overflow = 1;
            count = (unsigned __int128)1 << 64;
        }
    }
    if (empty) return NULL;
    if (overflow) return "an element count above 2^64";
    fz_i128 lo = t->offset, hi = t->offset;
    for (uint32_t k = 0; k < t->rank; k++) {
        if (t->strides[k] < 0) lo -= reach(t->shape[k], t->strides[k]);
        else hi += reach(t->shape[k], t->strides[k]);
    }
    if (lo < 0) return "a view reaching below its buffer's start";
    if (b >= 0 && (hi + 1) * fz_dtype_size(t->dtype) > (fz_i128)f->buf[b].size)
        return "a view reaching past its buffer's end";
    if (role == FZ_OUT)
        for (uint32_t k = 0; k < t->rank; k++)
            if (t->shape[k] > 1 && t->strides[k] == 0) return "an output whose elements share memory";
    return NULL;
}

static uint64_t elements(const WgcTensor *t) {
    uint64_t n = 1;
    for (uint32_t k = 0; k < t->rank && k < 8; k++) {
        if (t->shape[k] <= 0) return 0;
        if (n > UINT64_MAX / (uint64_t)t->shape[k]) return UINT64_MAX; /* overflows */
        n *= (uint64_t)t->shape[k];
    }
    return n;
}

/* One hostile change. A change that leaves a valid but enormous view (a
 * huge broadcast) is undone: such work is legal and would only be slow. */
void fz_mutate_view(Fuzz *f, WgcTensor *t) {
    for (int attempt = 0; attempt < 4; attempt++) {
        WgcTensor m = *t;
        uint32_t k = fz_below(f, 8);
        switch (fz_below(f, 9)) {
        case 0: {
            int b = fz_pick_buffer(f, fz_tensor_dev(f, t));
            m.buffer = b >= 0 ? f->buf[b].h : NULL;
            break;
        }
        case 1: m.dtype = fz_enum(f, 5); break;
        case 2: m.rank = fz_chance(f, 80) ? fz_below(f, 10) : fz_hostile_u32(f); break;
        case 3: m.shape[k] = fz_hostile_i64(f); break;
        case 4: m.strides[k] = fz_chance(f, 50) ? fz_hostile_i64(f) : (int64_t)fz_below(f, 3) - 1; break;
        case 5: /* (wrapping: an earlier edit may have left it huge) */
            m.offset = fz_chance(f, 50) ? fz_hostile_i64(f) : (int64_t)((uint64_t)m.offset + fz_below(f, 64) + 1);
            break;
        case 6: /* the element count wraps to 0 in 64 bits */
            if (!fz_enabled(f, "view_count_overflow")) break;
            m.rank = 2 + fz_below(f, 2);
            for (uint32_t i = 0; i < m.rank; i++) {
                m.shape[i] = (int64_t)1 << (32 + fz_below(f, 2));
                m.strides[i] = 0;
            }
            break;
        case 7: /* a dim one past what the buffer holds */
            if (m.rank > 0) m.shape[k % m.rank] = (int64_t)((uint64_t)m.shape[k % m.rank] + 1);
            break;
        default: /* swap two strides (an overlapping or transposed view) */
            if (m.rank > 1) {
                int64_t s = m.strides[0];
                m.strides[0] = m.strides[m.rank - 1 < 8 ? m.rank - 1 : 7];
                m.strides[m.rank - 1 < 8 ? m.rank - 1 : 7] = s;
            }
            break;
        }
        if (fz_view_invalid(f, &m, FZ_IN) == NULL && elements(&m) > (1u << 22)) continue;
        if (elements(&m) == UINT64_MAX && !fz_enabled(f, "view_count_overflow")) continue;
        *t = m;
        return;
    }
}
