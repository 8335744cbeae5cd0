#!/usr/bin/env bash
# Fourteenth round, call 4, on an H200 only: one and two f32 rows against a
# (K, N) weight in axpy_unit_narrow's blocks (experimental
# WGC_GEMV_NARROW_F32=1) against axpy4 (=0), and with fills 264/396.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
grep -q H200 $W/gpu.txt || { echo "not an H200: nothing timed"; cd $OUT && tar czf job.tgz w; exit 0; }
WGC_GEMV_NARROW_F32=1 ./test_gemv > $W/test_gemv.txt 2>&1; echo "test_gemv (f32 narrow): $? $(tail -n 1 $W/test_gemv.txt)"
C="decode_f32_m1_k4096_n14336_kn decode_f32_m1_k14336_n4096_kn decode_f32_m2_k4096_n14336_kn decode_f32_m2_k14336_n4096_kn decode_f32_m1_k14336_n4096_nk decode_f32_m2_k14336_n4096_nk"
mkdir -p $W/a; OUT=$W/a ./compare_env.sh "WGC_GEMV_NARROW_F32=0" "WGC_GEMV_NARROW_F32=1" $C > $W/narrow_f32.txt 2>&1
grep -A12 "\] -> \[" $W/narrow_f32.txt
for f in 264 396; do for r in 1; do WGC_GEMV_NARROW_F32=1 WGC_GEMV_FILL=$f ./wgc_bench $C 2>/dev/null | python3 -c "
import json,sys
for l in sys.stdin:
    j=json.loads(l); print('fill $f run $r', j['case'], j.get('ms'), j.get('check'))"; done; done | tee $W/fills.txt
cd $OUT && tar czf job.tgz w
