#!/usr/bin/env bash
# Round 10, call 8 (asked for an H200, ran on the H100): the tensor-core K split for one wave against the
# previous library (04dfdff) on the products with fewer tiles than SMs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
OUT=$W ./compare_builds.sh old head hgemm_conv_shape_512 hgemm_conv_shape_nhwc_3136 hgemm_1024x1024 conv_f16_3x3_512 2>&1 | grep -A12 "old -> head"
cd $OUT && tar czf job.tgz w
