#!/usr/bin/env bash
# Round 13, call 1: axpy_unit_narrow_rows (WGC_GEMV_NARROW_ROWS=16) against the
# default skinny tensor-core kernels on 4-16 rows against (K, N) weights;
# on an H100 then the fill and tile sweeps, on an H200 the 1-2 row kernel too.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
for t in test_gemv test_gemm_f16 test_bf16; do
  SECONDS=0; WGC_GEMV_NARROW_ROWS=16 ./$t > $W/$t.txt 2>&1; echo "$t (narrow rows): exit $? (${SECONDS}s) $(tail -n 1 $W/$t.txt)"
done
ROWS="decode_f16_m4_k4096_n14336_kn decode_f16_m8_k4096_n14336_kn decode_f16_m12_k4096_n14336_kn decode_f16_m16_k4096_n14336_kn decode_f16_m4_k14336_n4096_kn decode_f16_m8_k14336_n4096_kn decode_f16_m12_k14336_n4096_kn decode_f16_m16_k14336_n4096_kn decode_f16_m8_k4096_n11008_kn decode_f16_m8_k11008_n4096_kn decode_bf16_m4_k14336_n4096_kn decode_bf16_m8_k14336_n4096_kn decode_bf16_m12_k14336_n4096_kn decode_bf16_m16_k14336_n4096_kn"
OUT=$W ./compare_env.sh "WGC_GEMV_NARROW_ROWS=0" "WGC_GEMV_NARROW_ROWS=16" $ROWS > $W/rows.txt 2>&1; tail -n 40 $W/rows.txt
if grep -q H200 $W/gpu.txt; then
  ONE="decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_f16_m2_k4096_n14336_kn decode_f16_m2_k14336_n4096_kn decode_f16_m1_k4096_n11008_kn decode_f16_m1_k11008_n4096_kn decode_bf16_m1_k14336_n4096_kn decode_bf16_m2_k14336_n4096_kn"
  mkdir -p $W/one; OUT=$W/one ./compare_env.sh "WGC_GEMV_NARROW=0" "WGC_GEMV_NARROW=1" $ONE > $W/one.txt 2>&1; tail -n 30 $W/one.txt
else
  F16="decode_f16_m4_k4096_n14336_kn decode_f16_m8_k4096_n14336_kn decode_f16_m16_k4096_n14336_kn decode_f16_m4_k14336_n4096_kn decode_f16_m8_k14336_n4096_kn decode_f16_m16_k14336_n4096_kn"
  for v in "WGC_GEMV_NARROW_TILE=4" "WGC_GEMV_FILL=132" "WGC_GEMV_FILL=264" "WGC_GEMV_FILL=396"; do
    tag=$(echo $v | tr '=' '-')
    env WGC_GEMV_NARROW_ROWS=16 $v ./wgc_bench $F16 > $W/sweep_$tag.jsonl 2>$W/sweep_$tag.err
    echo "== $v"; python3 -c "
import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(f\"{r['case']:36s} {r['ms']:.4f} {r['check']}\")" $W/sweep_$tag.jsonl
  done
fi
cd $OUT && tar czf job.tgz w
