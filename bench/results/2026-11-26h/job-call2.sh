#!/usr/bin/env bash
# Fourteenth round, call 2: the GPU-path tests and the whole wgc_bench (all
# 235 cases) on the current build; call 3 times PyTorch on the same cases.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
for t in test_gemm_f16 test_gemv test_bf16 test_matmul test_conv test_numerics test_softmax_numerics test_reduction test_norm; do
  SECONDS=0; timeout 120 ./$t > $W/$t.txt 2>&1; rc=$?
  echo "$t rc=$rc ${SECONDS}s: $(tail -n 1 $W/$t.txt)" | tee -a $W/tests.txt
done
for op in gemm matmul; do
  SECONDS=0; timeout 60 ./test_diff --seed 14 --cases 300 --op $op > $W/test_diff_$op.txt 2>&1; rc=$?
  echo "test_diff --op $op rc=$rc ${SECONDS}s: $(tail -n 1 $W/test_diff_$op.txt)" | tee -a $W/tests.txt
done
SECONDS=0; ./wgc_bench > $W/wgc.jsonl 2> $W/wgc.err; echo "wgc_bench exit $? (${SECONDS} s), $(grep -c . $W/wgc.jsonl) lines"
grep -c WRONG $W/wgc.jsonl
cd $OUT && tar czf job.tgz w
