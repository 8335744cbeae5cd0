/* The operators the differential test drives, one runner per wgc_op_*
 * function, and helpers shared by the runners. */
#ifndef WGC_DIFF_OPS_H
#define WGC_DIFF_OPS_H

#include "diff.h"

/* diff_ops_elementwise.c */
void run_binary(Case *c);
void run_binary_scalar(Case *c);
void run_unary(Case *c);
void run_leaky_relu(Case *c);
void run_clamp(Case *c);
void run_fma(Case *c);
void run_where(Case *c);
void run_expr(Case *c); /* in diff_ops_binary.c */
/* diff_ops_movement.c */
void run_copy(Case *c);
void run_permute(Case *c);
void run_transpose(Case *c);
void run_cast(Case *c);
void run_fill(Case *c);
void run_arange(Case *c);
/* diff_ops_random.c */
void run_random_uniform(Case *c);
void run_random_normal(Case *c);
/* diff_ops_reduce.c */
void run_reduce(Case *c);
void run_var(Case *c);
void run_std(Case *c);
void run_expr_reduce(Case *c);
/* diff_ops_softmax.c */
void run_softmax(Case *c);
void run_log_softmax(Case *c);
/* diff_ops_attention.c */
void run_attention(Case *c);
/* diff_ops_norm.c */
void run_layer_norm(Case *c);
void run_rms_norm(Case *c);
void run_batch_norm(Case *c);
/* diff_ops_matmul.c */
void run_gemm(Case *c);
void run_matmul(Case *c);
/* diff_ops_gemm_epilogue.c */
void run_gemm_epilogue(Case *c);
/* diff_ops_pool.c */
void run_conv2d(Case *c);
void run_max_pool2d(Case *c);
void run_avg_pool2d(Case *c);
void run_global_avg_pool2d(Case *c);

/* Every operator, in the order the cases cycle through them. */
extern const DiffOp DIFF_OPS[];
extern const int DIFF_OP_COUNT;

extern const WgcDtype DTYPES_ALL[4];
extern const WgcDtype DTYPES_FLOAT[2];

/* Default input values for dtype d: floats in [-4, 4], integers in
 * [-1000, 1000] (u32: [0, 1000]), plus the kinds `flags` allow. */
static inline ValueSpec default_values(Case *c, WgcDtype d, int flags) {
    return dtype_is_float(d) ? draw_values(c, d, -4, 4, flags) : draw_values(c, d, -1000, 1000, flags);
}

#endif
