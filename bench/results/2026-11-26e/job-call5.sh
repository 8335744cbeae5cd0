#!/usr/bin/env bash
# Round 11, call 5: 128 x 64 tiles over runs of K for f32 products of one
# or two 64 x 64 tiles per SM, against the previous library; GPU tests.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
ln -sf libwgcompute.so head/libwgcompute.so.0
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
for t in test_matmul test_gemv test_bf16 test_gemm_f16; do
  SECONDS=0; ./$t > $W/$t.txt 2>&1; echo "$t: exit $? (${SECONDS}s)"; tail -1 $W/$t.txt
done
OUT=$W ./compare_builds.sh old head sgemm bmm_f32 linear 2>&1 | grep -B2 -A22 "old -> head\|== head, run 2"
cd $OUT && tar czf job.tgz w
