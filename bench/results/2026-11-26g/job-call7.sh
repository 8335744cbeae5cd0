#!/usr/bin/env bash
# Round 13, call 7: one and two f32 rows against (K, N) weights on
# axpy_unit_narrow (4 f32 a 16-byte unit) against axpy4 / axpy4_staged
# (WGC_GEMV_NARROW=0), two runs each interleaved, PyTorch in the same call;
# (N, K) and f16 cases alongside as controls.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
for t in test_gemv test_matmul; do SECONDS=0; ./$t > $W/$t.txt 2>&1; echo "$t: exit $? (${SECONDS}s) $(tail -n 1 $W/$t.txt)"; done
C=""
for s in k4096_n14336 k14336_n4096; do for m in 1 2; do for l in kn nk; do C="$C decode_f32_m${m}_${s}_${l}"; done; done; done
C="$C decode_f32_m8_k4096_n14336_kn decode_f16_m1_k4096_n14336_kn decode_f16_m2_k14336_n4096_kn"
OUT=$W ./compare_env.sh "WGC_GEMV_NARROW=0" "WGC_GEMV_NARROW=1" $C > $W/f32.txt 2>&1
grep -A16 "NARROW=1\], run 1" $W/f32.txt | grep decode | awk -F'|' '{printf "%-36s %8s %8s %6s\n", $2, $6, $7, $8}'
grep -B2 -A16 "NARROW=1\], run 2" $W/f32.txt | grep -E "decode|speed-up"
cd $OUT && tar czf job.tgz w
