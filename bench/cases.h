/* The case families of wgc_bench, one file each. */
#ifndef WGC_BENCH_CASES_H
#define WGC_BENCH_CASES_H

#include "harness.h"

void cases_elementwise(void);
void cases_reduce(void);
void cases_rows(void);
void cases_gemm(void);
void cases_conv(void);
void cases_conv_winograd(void);
void cases_norm_batch(void);
void cases_index(void);
void cases_latency(void);
void cases_tuning(void);
void cases_graph(void);
void cases_attention(void);
void cases_fusion(void);
void cases_fused_reduce(void);

#endif
