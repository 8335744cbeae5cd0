/* A case's life (begin, end), its failure reports and the comparison of
 * outputs with their expected values. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

void case_begin(Case *c, WgcDevice *dev, WgcStream *stream, int has_f16, uint64_t seed, long index, const char *op) {
    memset(c, 0, sizeof *c);
    c->device = dev;
    c->stream = stream;
    c->has_f16 = has_f16;
    c->seed = seed;
    c->index = index;
    c->op = op;
    c->rng = rng_seeded(seed, (uint64_t)index);
}

void case_end(Case *c) {
    for (int k = 0; k < c->ntensors; k++) free(c->tensors[k].val);
    for (int k = 0; k < c->nbufs; k++) {
        DBuf *b = &c->bufs[k];
        wgc_buffer_release(b->buf);
        free(b->init);
        free(b->after);
        free(b->writable);
        free(b->assigned);
    }
    c->ntensors = c->nbufs = 0;
}

void case_param(Case *c, const char *fmt, ...) {
    size_t used = strlen(c->params);
    if (used && used + 1 < sizeof c->params) c->params[used++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->params + used, sizeof c->params - used, fmt, ap);
    va_end(ap);
}

static void print_dims(const char *label, const int64_t *v, uint32_t rank) {
    fprintf(stderr, " %s [", label);
    for (uint32_t k = 0; k < rank; k++) fprintf(stderr, "%s%lld", k ? "," : "", (long long)v[k]);
    fprintf(stderr, "]");
}

static void print_case(const Case *c) {
    fprintf(stderr, "FAIL op=%s seed=%llu case=%ld (rerun: test_diff --seed %llu --case %ld)\n", c->op,
            (unsigned long long)c->seed, c->index, (unsigned long long)c->seed, c->index);
    fprintf(stderr, "  params: %s\n", c->params);
    for (int k = 0; k < c->ntensors; k++) {
        const DTensor *t = &c->tensors[k];
        fprintf(stderr, "  %s: %s", t->name, dtype_name((WgcDtype)t->t.dtype));
        print_dims("shape", t->t.shape, t->t.rank);
        print_dims("strides", t->t.strides, t->t.rank);
        fprintf(stderr, " offset %lld (buffer %d of %zu elements)%s\n", (long long)t->t.offset, t->b->id,
                t->b->elems, t->is_output ? " output" : "");
    }
}

void case_fail(Case *c, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->verbose_failures > 0) {
        if (c->failed == 0) print_case(c);
        fprintf(stderr, "  %s\n", msg);
    } else if (c->failed == 0) {
        fprintf(stderr, "FAIL op=%s seed=%llu case=%ld: %s [%s]\n", c->op, (unsigned long long)c->seed, c->index,
                msg, c->params);
    }
    c->failed++;
}

Expect *expect_alloc(size_t n) { return calloc(n + 1, sizeof(Expect)); }

static int acceptable(WgcDtype d, double got, const Expect *e) {
    if (e->has_alt && (got == e->alt || (isnan(got) && isnan(e->alt)))) return 1;
    switch (e->kind) {
    case EXPECT_SAME:
        if (isnan(e->ref)) return isnan(got);
        return got == e->ref && signbit(got) == signbit(e->ref);
    case EXPECT_NAN_OR_CLOSE:
        if (isnan(got)) return 1;
        break;
    default:
        break;
    }
    if (isnan(e->ref) || isnan(got)) return isnan(e->ref) && isnan(got);
    if (isinf(e->ref) || !dtype_is_float(d)) return got == e->ref;
    /* Within tol of the exact value, then rounded to the dtype (so a bound
     * that reaches past the largest finite value admits the infinity). */
    return got >= dtype_round(d, e->ref - e->tol) && got <= dtype_round(d, e->ref + e->tol);
}

/* Every tensor's logical values (and the expected ones), for --dump. */
static void dump_values(const Case *c, const DTensor *out, const Expect *e) {
    for (int k = 0; k < c->ntensors; k++) {
        const DTensor *t = &c->tensors[k];
        fprintf(stderr, "  %s =", t->name);
        for (size_t i = 0; i < t->n; i++) fprintf(stderr, " %.9g", t->val[i]);
        fprintf(stderr, "\n");
    }
    fprintf(stderr, "  expected %s =", out->name);
    for (size_t i = 0; i < out->n; i++) fprintf(stderr, " %.9g", e[i].ref);
    fprintf(stderr, "\n");
}

int case_check(Case *c, const DTensor *out, const Expect *e, ExplainFn explain) {
    WgcDtype d = (WgcDtype)out->t.dtype;
    size_t bad = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (acceptable(d, out->val[i], &e[i])) continue;
        if (bad++ == 0) {
            int64_t coord[WGC_MAX_RANK];
            unravel(i, (int)out->t.rank, out->t.shape, coord);
            char where[160] = "", why[512] = "";
            size_t used = 0;
            for (uint32_t k = 0; k < out->t.rank; k++)
                used += (size_t)snprintf(where + used, sizeof where - used, "%s%lld", k ? "," : "", (long long)coord[k]);
            if (explain) explain(c, i, why, sizeof why);
            case_fail(c, "%s[%s] (element %zu): got %.9g, expected %.9g (tol %.3g%s)%s%s", out->name, where, i,
                      out->val[i], e[i].ref, isnan(e[i].ref) || isinf(e[i].ref) ? 0.0 : e[i].tol,
                      e[i].kind == EXPECT_SAME ? ", exactly" : e[i].kind == EXPECT_NAN_OR_CLOSE ? ", or NaN" : "",
                      why[0] ? "; " : "", why);
        }
    }
    if (bad) case_fail(c, "%s: %zu of %zu elements wrong", out->name, bad, out->n);
    if (bad && c->dump) dump_values(c, out, e);
    return bad != 0;
}
