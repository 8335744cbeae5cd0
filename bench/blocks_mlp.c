/* One training step of a small MLP (784 -> 1024 -> ReLU -> 10, batch 256,
 * f32, mean squared error) from today's operators: the forward pass, a
 * hand-written backward pass (GEMMs with transposed views, column sums,
 * the ReLU mask from a comparison) and the SGD update in place. The
 * reference computes the same step in double from the same weights. */
#include "blocks.h"

typedef struct {
    int64_t B, I, Hd, O;
    float lr;
    HT x, y, w1, b1, w2, b2;
    HT pre, h, out, diff, sq, loss, dout, dw2, db2, dh, mask, mask32, dw1, db1;
} Mlp;

static WgcStatus run_step(void *p) {
    Mlp *m = p;
    WgcStream *s = g_stream;
    int32_t rows = 0;
    WgcStatus st = wgc_op_gemm(s, 1.0f, &m->x.t, 0, &m->w1.t, 1, 0.0f, &m->pre.t);
    if (st == WGC_OK) st = wgc_op_binary(s, WGC_BINARY_OP_ADD, &m->pre.t, &m->b1.t, &m->pre.t);
    if (st == WGC_OK) st = wgc_op_unary(s, WGC_UNARY_OP_RELU, &m->pre.t, &m->h.t);
    if (st == WGC_OK) st = wgc_op_gemm(s, 1.0f, &m->h.t, 0, &m->w2.t, 1, 0.0f, &m->out.t);
    if (st == WGC_OK) st = wgc_op_binary(s, WGC_BINARY_OP_ADD, &m->out.t, &m->b2.t, &m->out.t);
    /* loss = mean((out - y)^2); d loss / d out = 2 (out - y) / (B O) */
    if (st == WGC_OK) st = wgc_op_binary(s, WGC_BINARY_OP_SUB, &m->out.t, &m->y.t, &m->diff.t);
    if (st == WGC_OK) st = wgc_op_binary(s, WGC_BINARY_OP_MUL, &m->diff.t, &m->diff.t, &m->sq.t);
    if (st == WGC_OK) st = wgc_op_reduce(s, WGC_REDUCE_OP_MEAN, &m->sq.t, NULL, 0, 0, &m->loss.t);
    if (st == WGC_OK)
        st = wgc_op_binary_scalar(s, WGC_BINARY_OP_MUL, &m->diff.t, 2.0 / (double)(m->B * m->O), &m->dout.t);
    /* Layer 2: dW2 = dout^T h, db2 = sum of dout's rows, dh = dout W2. */
    if (st == WGC_OK) st = wgc_op_gemm(s, 1.0f, &m->dout.t, 1, &m->h.t, 0, 0.0f, &m->dw2.t);
    if (st == WGC_OK) st = wgc_op_reduce(s, WGC_REDUCE_OP_SUM, &m->dout.t, &rows, 1, 0, &m->db2.t);
    if (st == WGC_OK) st = wgc_op_matmul(s, &m->dout.t, &m->w2.t, &m->dh.t);
    /* ReLU: the gradient passes where the pre-activation was positive
     * (comparisons give u32 0/1: cast to f32 to multiply). */
    if (st == WGC_OK) st = wgc_op_binary_scalar(s, WGC_BINARY_OP_GT, &m->pre.t, 0.0, &m->mask.t);
    if (st == WGC_OK) st = wgc_op_cast(s, &m->mask.t, &m->mask32.t);
    if (st == WGC_OK) st = wgc_op_binary(s, WGC_BINARY_OP_MUL, &m->dh.t, &m->mask32.t, &m->dh.t);
    /* Layer 1: dW1 = dpre^T x, db1 = sum of dpre's rows. */
    if (st == WGC_OK) st = wgc_op_gemm(s, 1.0f, &m->dh.t, 1, &m->x.t, 0, 0.0f, &m->dw1.t);
    if (st == WGC_OK) st = wgc_op_reduce(s, WGC_REDUCE_OP_SUM, &m->dh.t, &rows, 1, 0, &m->db1.t);
    /* SGD: w += -lr * dw, each gradient scaled in place first. */
    HT *params[4] = {&m->w1, &m->b1, &m->w2, &m->b2}, *grads[4] = {&m->dw1, &m->db1, &m->dw2, &m->db2};
    for (int i = 0; i < 4 && st == WGC_OK; i++) {
        st = wgc_op_binary_scalar(s, WGC_BINARY_OP_MUL, &grads[i]->t, -(double)m->lr, &grads[i]->t);
        if (st == WGC_OK) st = wgc_op_binary(s, WGC_BINARY_OP_ADD, &params[i]->t, &grads[i]->t, &params[i]->t);
    }
    return st;
}

/* The step in double: the loss and every parameter's update (-lr * grad). */
static int check_step(Mlp *m) {
    int64_t B = m->B, I = m->I, Hd = m->Hd, O = m->O;
    double *pre = calloc(B * Hd, sizeof *pre), *dout = calloc(B * O, sizeof *dout);
    double *dpre = calloc(B * Hd, sizeof *dpre), loss = 0;
    double *dw1 = calloc(Hd * I, sizeof *dw1), *db1 = calloc(Hd, sizeof *db1);
    double *dw2 = calloc(O * Hd, sizeof *dw2), *db2 = calloc(O, sizeof *db2);
    const float *x = m->x.host, *y = m->y.host, *w1 = m->w1.host, *b1 = m->b1.host, *w2 = m->w2.host,
                *b2 = m->b2.host;
    for (int64_t b = 0; b < B; b++) {
        for (int64_t j = 0; j < Hd; j++) {
            double acc = b1[j];
            for (int64_t i = 0; i < I; i++) acc += (double)x[b * I + i] * w1[j * I + i];
            pre[b * Hd + j] = acc;
        }
        for (int64_t o = 0; o < O; o++) {
            double acc = b2[o];
            for (int64_t j = 0; j < Hd; j++) acc += (pre[b * Hd + j] > 0 ? pre[b * Hd + j] : 0) * w2[o * Hd + j];
            double d = acc - y[b * O + o];
            loss += d * d / (double)(B * O);
            dout[b * O + o] = 2 * d / (double)(B * O);
        }
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t o = 0; o < O; o++) {
            double g = dout[b * O + o];
            db2[o] += g;
            for (int64_t j = 0; j < Hd; j++) {
                double hj = pre[b * Hd + j] > 0 ? pre[b * Hd + j] : 0;
                dw2[o * Hd + j] += g * hj;
                if (pre[b * Hd + j] > 0) dpre[b * Hd + j] += g * w2[o * Hd + j];
            }
        }
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < Hd; j++) {
            double g = dpre[b * Hd + j];
            db1[j] += g;
            if (g != 0)
                for (int64_t i = 0; i < I; i++) dw1[j * I + i] += g * x[b * I + i];
        }
    int bad = 0;
    float *got = ht_read(&m->loss);
    bad += check_close("loss", got, &loss, 1, 0, 1e-4);
    free(got);
    const char *names[4] = {"w1 update", "b1 update", "w2 update", "b2 update"};
    HT *g[4] = {&m->dw1, &m->db1, &m->dw2, &m->db2};
    double *refs[4] = {dw1, db1, dw2, db2};
    size_t sizes[4] = {(size_t)(Hd * I), (size_t)Hd, (size_t)(O * Hd), (size_t)O};
    for (int k = 0; k < 4; k++) {
        double mx = 0;
        for (size_t i = 0; i < sizes[k]; i++) {
            refs[k][i] *= -m->lr;
            mx = fabs(refs[k][i]) > mx ? fabs(refs[k][i]) : mx;
        }
        got = ht_read(g[k]);
        bad += check_close(names[k], got, refs[k], sizes[k], 1e-4 * mx, 1e-4);
        free(got);
    }
    free(pre), free(dout), free(dpre), free(dw1), free(db1), free(dw2), free(db2);
    return bad;
}

void blocks_mlp(void) {
    Mlp m = {.B = SZ(256, 8), .I = SZ(784, 20), .Hd = SZ(1024, 33), .O = SZ(10, 6), .lr = 0.1f};
    Case c = {"mlp_train_step_f32", "block/mlp-train", "f32", "", "block", 0, 0};
    snprintf(c.size, sizeof c.size, "B=%lld %lld->%lld->%lld", (long long)m.B, (long long)m.I, (long long)m.Hd,
             (long long)m.O);
    c.amount = 6.0 * m.B * (m.I * m.Hd + m.Hd * m.O);
    if (!case_begin(&c)) return;
    int64_t bi[2] = {m.B, m.I}, bo[2] = {m.B, m.O}, hi[2] = {m.Hd, m.I}, oh[2] = {m.O, m.Hd}, h1[1] = {m.Hd},
            o1[1] = {m.O}, bh[2] = {m.B, m.Hd};
    m.x = ht_scaled(WGC_DTYPE_F32, 2, bi, 1.0, 0), m.y = ht_scaled(WGC_DTYPE_F32, 2, bo, 1.0, 0);
    m.w1 = ht_scaled(WGC_DTYPE_F32, 2, hi, sqrt(3.0 / m.I), 0), m.b1 = ht_scaled(WGC_DTYPE_F32, 1, h1, 0.1, 0);
    m.w2 = ht_scaled(WGC_DTYPE_F32, 2, oh, sqrt(3.0 / m.Hd), 0), m.b2 = ht_scaled(WGC_DTYPE_F32, 1, o1, 0.1, 0);
    m.pre = ht_empty(WGC_DTYPE_F32, 2, bh), m.h = ht_empty(WGC_DTYPE_F32, 2, bh), m.dh = ht_empty(WGC_DTYPE_F32, 2, bh);
    m.mask = ht_empty(WGC_DTYPE_U32, 2, bh), m.mask32 = ht_empty(WGC_DTYPE_F32, 2, bh);
    m.out = ht_empty(WGC_DTYPE_F32, 2, bo), m.diff = ht_empty(WGC_DTYPE_F32, 2, bo);
    m.sq = ht_empty(WGC_DTYPE_F32, 2, bo), m.dout = ht_empty(WGC_DTYPE_F32, 2, bo);
    m.loss = ht_empty(WGC_DTYPE_F32, 0, NULL);
    m.dw1 = ht_empty(WGC_DTYPE_F32, 2, hi), m.db1 = ht_empty(WGC_DTYPE_F32, 1, h1);
    m.dw2 = ht_empty(WGC_DTYPE_F32, 2, oh), m.db2 = ht_empty(WGC_DTYPE_F32, 1, o1);
    if (case_first_run(&c, run_step, &m)) block_report(&c, run_step, &m, check_step(&m) == 0);
    HT *all[] = {&m.x, &m.y, &m.w1, &m.b1, &m.w2, &m.b2, &m.pre, &m.h, &m.out, &m.diff, &m.sq, &m.loss, &m.dout,
                 &m.dw2, &m.db2, &m.dh, &m.mask, &m.mask32, &m.dw1, &m.db1};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) ht_free(all[i]);
}
