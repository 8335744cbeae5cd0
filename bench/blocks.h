/* The model-block benchmarks (wgc_blocks): whole layers written from the
 * public C API as a user would write them, each checked against a
 * double-precision reference before it is timed, then timed on the GPU
 * (events around each run, median) and by the wall clock (runs back to
 * back, then a wait), then run once more under the profiler, whose top
 * operators are printed. One JSON line per block, as wgc_bench prints, with
 * "wall_ms" added; bench/torch_blocks.py times the PyTorch twins and
 * bench/compare_blocks.py prints the table. */
#ifndef WGC_BLOCKS_H
#define WGC_BLOCKS_H

#include "harness.h"

#include <math.h>

/* A block's case (harness.h's Case: name, class, dtype, size, "block",
 * FLOPs per run), its run function and context, and whether its reference
 * check passed: times it and prints its JSON line and profile. */
void block_report(const Case *c, RunFn fn, void *ctx, int ok);

/* The block's run captured once into a graph and replayed: checked against
 * the eager run's output `out` (bit for bit), then timed as <case>_replay. */
void block_replay(const Case *c, RunFn fn, void *ctx, const HT *out);

/* A view of h's buffer with its dtype: `rank` dims, strides in elements. */
WgcTensor view_of(const HT *h, uint32_t rank, const int64_t *shape, const int64_t *strides, int64_t offset);

/* Random values uniform in [-scale, scale), or 1 + [-scale, scale). */
HT ht_scaled(WgcDtype dt, uint32_t rank, const int64_t *shape, double scale, double center);

/* Count of mismatches between got and ref (|d| <= atol + rtol |ref|),
 * the first few printed under `what`. */
int check_close(const char *what, const float *got, const double *ref, size_t n, double atol, double rtol);

void blocks_llama(void);
void blocks_cnn(void);
void blocks_mlp(void);

#endif
