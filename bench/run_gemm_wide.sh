#!/bin/sh
# The wide-block GEMM route on the GPU machine: test_gemm_khr_wide (its
# double-precision checks), then gemm_wide_bench with the route on (`new`)
# and off (`off`: WGC_GEMM_WIDE=0, the route before it), and optionally a
# library built before the change (`old`: its folder in OLD_LIB), against
# torch.matmul, f16 then bf16, twice for f16; one table of the best runs.
# Expects the programs, libwgcompute.so and the Python scripts beside it
# (the folder .gpu/ that BENCHMARKS.md's GEMM section fills).
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}
[ -e "$here/libwgcompute.so.0" ] || ln -sf libwgcompute.so "$here/libwgcompute.so.0"
NEW="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name --format=csv,noheader
LD_LIBRARY_PATH=$NEW "$here/test_gemm_khr_wide" > "$out/wide_test.log" 2>&1
echo "test_gemm_khr_wide exit $?"; grep -v "^  " "$out/wide_test.log" | cut -c1-200
rm -f "$out/wide.jsonl"
for round in 1 2; do
  for dt in f16 bf16; do
    [ "$round" = 2 ] && [ "$dt" = bf16 ] && continue
    if [ -n "${OLD_LIB:-}" ]; then
      [ -e "$OLD_LIB/libwgcompute.so.0" ] || ln -sf libwgcompute.so "$OLD_LIB/libwgcompute.so.0"
      LD_LIBRARY_PATH="$OLD_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$here/gemm_wide_bench" old full $dt >> "$out/wide.jsonl"
    fi
    LD_LIBRARY_PATH=$NEW WGC_GEMM_WIDE=0 "$here/gemm_wide_bench" off full $dt >> "$out/wide.jsonl"
    LD_LIBRARY_PATH=$NEW "$here/gemm_wide_bench" new full $dt >> "$out/wide.jsonl"
    [ "$round" = 1 ] && python3 "$here/torch_gemm_shapes.py" $dt >> "$out/wide.jsonl"
  done
done
python3 "$here/compare_gemm_wide.py" "$out/wide.jsonl" | tee "$out/wide_table.md"
