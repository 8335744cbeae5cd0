#!/bin/sh
# The wide-block GEMM's shapes (WGC_GEMM_WIDE_SHAPE, src/ops/gemm/wide.rs)
# on the GPU machine: test_gemm_khr_wide under each (its double-precision
# checks), then gemm_wide_bench's `shapes` products under each, the KHR
# kernel (`off`: WGC_GEMM_WIDE=0, unless NO_OFF is set) and torch.matmul, f16 twice and bf16
# once (the second f16 round only while under BUDGET_S seconds, default
# 75); one table of the best runs. Expects the programs, libwgcompute.so
# and the Python scripts beside it.
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}
SHAPES=${SHAPES:-"128 k32 n64 n64k32"}
start=$(date +%s)
# Each program at most 40 s where `timeout` exists (a hung kernel stops one run only).
t=""; command -v timeout > /dev/null && t="timeout 40"
[ -e "$here/libwgcompute.so.0" ] || ln -sf libwgcompute.so "$here/libwgcompute.so.0"
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name --format=csv,noheader
for shape in $SHAPES; do
  WGC_GEMM_WIDE_SHAPE=$shape $t "$here/test_gemm_khr_wide" > "$out/wide_test_$shape.log" 2>&1
  echo "test_gemm_khr_wide WGC_GEMM_WIDE_SHAPE=$shape exit $?"
  echo "  (N, K) weights ran $(grep "khr_wide.*b_t=1" "$out/wide_test_$shape.log" | grep -m1 -o "blocks of [0-9]* x [0-9]*")"
  grep -v "^  " "$out/wide_test_$shape.log" | grep -v ": [0-9]* entries, 0 wrong" | cut -c1-200
done
rm -f "$out/shapes.jsonl"
for round in 1 2; do
  for shape in $SHAPES; do
    [ "$round" = 2 ] && [ $(($(date +%s) - start)) -gt "${BUDGET_S:-75}" ] && break
    WGC_GEMM_WIDE_SHAPE=$shape $t "$here/gemm_wide_bench" "$shape" shapes f16 | tee -a "$out/shapes.jsonl"
    [ "$round" = 1 ] && WGC_GEMM_WIDE_SHAPE=$shape $t "$here/gemm_wide_bench" "$shape" shapes bf16 | tee -a "$out/shapes.jsonl"
  done
  if [ "$round" = 1 ]; then
    [ -z "${NO_OFF:-}" ] && WGC_GEMM_WIDE=0 $t "$here/gemm_wide_bench" off shapes f16 | tee -a "$out/shapes.jsonl"
    python3 "$here/torch_gemm_shapes.py" f16 shapes | tee -a "$out/shapes.jsonl"
    python3 "$here/torch_gemm_shapes.py" bf16 shapes | tee -a "$out/shapes.jsonl"
    python3 "$here/compare_gemm_wide_shapes.py" "$out/shapes.jsonl"
  fi
done
echo "elapsed $(($(date +%s) - start)) s"
python3 "$here/compare_gemm_wide_shapes.py" "$out/shapes.jsonl" | tee "$out/shapes_table.md"
