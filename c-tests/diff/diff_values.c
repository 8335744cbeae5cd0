/* What a case is made of: dtypes, shapes and input values, drawn from the
 * case's random stream. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diff_ops.h"

const char *value_kind_name(int kind) {
    static const char *names[VAL_COUNT] = {"normal", "integers", "wide", "special", "offset"};
    return kind >= 0 && kind < VAL_COUNT ? names[kind] : "?";
}

static double draw_int(Rng *r, const ValueSpec *s) {
    int i32 = s->dtype == WGC_DTYPE_I32;
    switch (s->kind) {
    case VAL_WIDE: /* any 32-bit pattern */
        return i32 ? (double)(int32_t)(uint32_t)rng_u64(r) : (double)(uint32_t)rng_u64(r);
    case VAL_SPECIAL:
        if (rng_chance(r, s->p_special)) {
            static const double edges_i[] = {-2147483648.0, 2147483647.0, -1, 0, 1, -2147483647.0};
            static const double edges_u[] = {0, 1, 4294967295.0, 2147483648.0, 2147483647.0};
            return i32 ? edges_i[rng_int(r, 0, 5)] : edges_u[rng_int(r, 0, 4)];
        }
        break;
    case VAL_INTEGERS:
        return i32 ? rng_int(r, -4, 4) : rng_int(r, 0, 8);
    default:
        break;
    }
    double lo = i32 ? s->lo : (s->lo < 0 ? 0 : s->lo);
    double v = floor(rng_range(r, lo, s->hi + 1));
    return v > s->hi ? s->hi : v;
}

double value_draw(Rng *r, const ValueSpec *s) {
    if (!dtype_is_float(s->dtype)) return draw_int(r, s);
    double v;
    switch (s->kind) {
    case VAL_INTEGERS:
        v = rng_int(r, -4, 4);
        break;
    case VAL_WIDE:
        v = exp2(rng_range(r, log2(s->tiny), log2(s->huge))) * (rng_chance(r, 0.5) ? -1 : 1);
        break;
    case VAL_SPECIAL:
        if (rng_chance(r, s->p_special)) {
            for (;;) {
                int k = rng_int(r, 0, 6);
                if (k == 0 && s->no_nan) continue;
                if ((k == 1 || k == 2) && s->no_inf) continue;
                double sign = rng_chance(r, 0.5) ? -1 : 1;
                switch (k) {
                case 0: v = NAN; break;
                case 1: v = INFINITY; break;
                case 2: v = -INFINITY; break;
                case 3: v = 0.0 * sign; break;
                case 4: v = sign * s->huge * rng_range(r, 0.5, 1); break;
                case 5: v = sign * s->tiny * rng_range(r, 1, 2); break;
                default: v = sign * rng_int(r, 1, 3); break; /* exact small values: ties with the rest */
                }
                break;
            }
        } else {
            v = rng_range(r, s->lo, s->hi);
        }
        break;
    case VAL_OFFSET:
        v = s->offset + rng_range(r, s->lo, s->hi);
        break;
    default:
        v = rng_range(r, s->lo, s->hi);
        break;
    }
    if (s->kind != VAL_WIDE && isfinite(v) && v != 0 && fabs(v) < s->min_abs) v = copysign(s->min_abs, v);
    return dtype_round(s->dtype, v);
}

ValueSpec draw_values(Case *c, WgcDtype d, double lo, double hi, int flags) {
    ValueSpec s;
    memset(&s, 0, sizeof s);
    s.dtype = d;
    s.lo = lo;
    s.hi = hi;
    s.huge = dtype_max(d);
    s.tiny = dtype_min_normal(d);
    s.p_special = 0.15;
    s.no_nan = !(flags & ALLOW_NAN);
    s.no_inf = !(flags & ALLOW_INF);
    int kinds[8], n = 0;
    kinds[n++] = VAL_NORMAL;
    kinds[n++] = VAL_NORMAL;
    kinds[n++] = VAL_INTEGERS;
    if (flags & ALLOW_WIDE) kinds[n++] = VAL_WIDE;
    if (flags & ALLOW_SPECIAL) {
        kinds[n++] = VAL_SPECIAL;
        kinds[n++] = VAL_SPECIAL;
    }
    if (flags & ALLOW_OFFSET) kinds[n++] = VAL_OFFSET;
    s.kind = kinds[rng_int(&c->rng, 0, n - 1)];
    if (s.kind == VAL_OFFSET) s.offset = (rng_chance(&c->rng, 0.5) ? -1 : 1) * pow(10.0, rng_range(&c->rng, 1, 4));
    return s;
}

WgcDtype draw_dtype(Case *c, const WgcDtype *allowed, int count) {
    WgcDtype pool[8];
    int n = 0;
    for (int k = 0; k < count; k++)
        if (allowed[k] != WGC_DTYPE_F16 || c->has_f16) pool[n++] = allowed[k];
    return pool[rng_int(&c->rng, 0, n - 1)];
}

int draw_shape(Rng *r, int rmin, int rmax, size_t max_numel, double p_zero, int64_t *shape) {
    int rank = rng_int(r, rmin, rmax);
    for (int d = 0; d < rank; d++) {
        double u = rng_unit(r);
        shape[d] = u < 0.25 ? 1 : u < 0.75 ? rng_int(r, 2, 7) : u < 0.95 ? rng_int(r, 8, 40) : rng_int(r, 41, 300);
    }
    for (;;) {
        size_t n = numel_of(rank, shape);
        if (n <= max_numel) break;
        int big = 0;
        for (int d = 1; d < rank; d++)
            if (shape[d] > shape[big]) big = d;
        shape[big] = (shape[big] + 1) / 2;
    }
    if (rank > 0 && rng_chance(r, p_zero)) shape[rng_int(r, 0, rank - 1)] = 0;
    return rank;
}

int draw_broadcast_shape(Rng *r, int rank, const int64_t *out, int64_t *shape) {
    int rb = rng_chance(r, 0.5) ? rank : rng_int(r, 0, rank);
    for (int d = 0; d < rb; d++) {
        int64_t od = out[rank - rb + d];
        shape[d] = rng_chance(r, 0.3) ? 1 : od;
    }
    return rb;
}

const WgcDtype DTYPES_ALL[4] = {WGC_DTYPE_F32, WGC_DTYPE_F16, WGC_DTYPE_I32, WGC_DTYPE_U32};
const WgcDtype DTYPES_FLOAT[2] = {WGC_DTYPE_F32, WGC_DTYPE_F16};

void complete_broadcast(Rng *r, int n, int *ranks, int64_t (*shapes)[WGC_MAX_RANK], int ro, const int64_t *so) {
    int longest = 0;
    for (int k = 1; k < n; k++)
        if (ranks[k] > ranks[longest]) longest = k;
    if (ranks[longest] < ro) { /* give the longest the output's leading dims */
        int add = ro - ranks[longest];
        for (int d = ranks[longest] - 1; d >= 0; d--) shapes[longest][d + add] = shapes[longest][d];
        for (int d = 0; d < add; d++) shapes[longest][d] = so[d];
        ranks[longest] = ro;
    }
    for (int d = 0; d < ro; d++) {
        int covered = 0, pick = -1, seen = 0;
        for (int k = 0; k < n; k++) {
            int dk = d - (ro - ranks[k]);
            if (dk < 0) continue;
            covered |= shapes[k][dk] == so[d];
            if (rng_int(r, 0, seen++) == 0) pick = k; /* a random input that has this dim */
        }
        if (!covered) shapes[pick][d - (ro - ranks[pick])] = so[d];
    }
}
