/* One operator call: a device and stream, valid views for every tensor
 * argument, hostile changes to some of them, and the checks every operator
 * shares (the header's "rules common to every wgc_op_* function"). */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"

int fz_op_begin(Fuzz *f, FzOp *op) {
    memset(op, 0, sizeof *op);
    op->watched = -1;
    op->dev = fz_live_device(f);
    if (op->dev < 0) return 0;
    op->st = fz_pick_stream(f, op->dev);
    if (op->st < 0) return 0;
    op->dev = f->str[op->st].dev; /* tensors go where the stream is */
    op->stream = f->str[op->st].h;
    return 1;
}

int fz_op_arg(Fuzz *f, FzOp *op, FzArg *a, int role, uint32_t dtype, uint32_t rank, const int64_t *shape) {
    a->role = role;
    a->optional = 0;
    if (dtype == WGC_DTYPE_F16 && !f->dev[op->dev].info.has_f16) op->mutated = 1; /* UNSUPPORTED here */
    if (!fz_view(f, op->dev, dtype, rank, shape, role, role == FZ_IN ? op->out_buffer : NULL, &a->t)) return 0;
    a->p = &a->t;
    if (role == FZ_OUT) op->out_buffer = a->t.buffer;
    if (op->nargs < 8) op->args[op->nargs++] = a;
    return 1;
}

void fz_op_null_arg(FzOp *op, FzArg *a) {
    memset(a, 0, sizeof *a);
    a->p = NULL;
    a->optional = 1;
    if (op->nargs < 8) op->args[op->nargs++] = a;
}

void fz_op_mutate(Fuzz *f, FzOp *op) {
    if (!fz_chance(f, 35) || op->nargs == 0) return;
    op->mutated = 1;
    for (int n = fz_chance(f, 20) ? 2 : 1; n > 0; n--) {
        FzArg *a = op->args[fz_below(f, (uint32_t)op->nargs)];
        if (fz_chance(f, 8)) a->p = NULL;
        else if (a->p) fz_mutate_view(f, &a->t);
    }
    if (fz_chance(f, 3)) op->stream = NULL;
}

int fz_same_buffer(const FzArg *a, const FzArg *b) {
    return a->p && b->p && a->t.buffer && a->t.buffer == b->t.buffer;
}

static void describe(Fuzz *f, const FzOp *op, const char *name) {
    char buf[sizeof f->detail];
    int n = snprintf(buf, sizeof buf, "%s stream %d%s %s:", name, op->st, op->stream ? "" : " (NULL)", op->note);
    for (int i = 0; i < op->nargs && n > 0 && (size_t)n < sizeof buf; i++) {
        const FzArg *a = op->args[i];
        if (!a->p) {
            n += snprintf(buf + n, sizeof buf - (size_t)n, " NULL");
            continue;
        }
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %s%u[", a->role == FZ_OUT ? "out:" : "", a->t.dtype);
        for (uint32_t k = 0; k < a->t.rank && k < 8 && (size_t)n < sizeof buf; k++)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%lld/%lld", k ? "," : "", (long long)a->t.shape[k],
                          (long long)a->t.strides[k]);
        if ((size_t)n < sizeof buf)
            n += snprintf(buf + n, sizeof buf - (size_t)n, "]+%lld%s", (long long)a->t.offset, a->t.rank > 8 ? "(rank>8)" : "");
    }
    fz_describe(f, "%s", buf);
}

void fz_op_call(Fuzz *f, FzOp *op, const char *name) {
    describe(f, op, name);
    const FzArg *out = NULL;
    for (int i = 0; i < op->nargs; i++)
        if (op->args[i]->role == FZ_OUT && op->args[i]->p) out = op->args[i];
    op->watched = out ? fz_find_buffer(f, out->t.buffer) : -1;
    if (op->watched >= 0 && fz_chance(f, 20)) op->before = fz_checksum(f, op->watched);
    fz_call(f, name);
    fz_uses_device(f, op->dev);
    if (!op->stream) fz_must_fail(f, "a NULL stream");
    for (int i = 0; i < op->nargs; i++) {
        const FzArg *a = op->args[i];
        if (!a->p) {
            if (!a->optional) fz_must_fail(f, "a NULL tensor");
            continue;
        }
        const char *why = fz_view_invalid(f, &a->t, a->role);
        if (why) fz_must_fail(f, why);
        int d = fz_tensor_dev(f, &a->t);
        fz_uses_device(f, d);
        if (d >= 0 && d != op->dev) fz_must_fail(f, "a tensor of another device");
    }
    if (!op->mutated) fz_must_succeed(f);
}

WgcStatus fz_op_end(Fuzz *f, FzOp *op, WgcStatus s) {
    fz_result(f, s);
    fz_check_unchanged(f, s, op->watched, op->before, "the output buffer");
    return s;
}
