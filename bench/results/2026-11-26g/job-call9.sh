#!/usr/bin/env bash
# Round 13, call 9: 4-16 rows on the skinny tensor-core kernels (default)
# against the matrix-vector kernels (WGC_GEMM_SKINNY=0: row_dot_unit_a4 /
# axpy_unit_staged up to 8 rows, bf16 (N, K) up to 32), two runs each,
# interleaved, PyTorch in the same call. On an H200, also job-call6's work.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
SECONDS=0; WGC_GEMM_SKINNY=0 ./test_gemv > $W/test_gemv.txt 2>&1; echo "test_gemv (skinny off): exit $? (${SECONDS}s) $(tail -n 1 $W/test_gemv.txt)"
C=""
for s in k4096_n14336 k14336_n4096; do for m in 4 8; do for l in kn nk; do C="$C decode_f16_m${m}_${s}_${l}"; done; done; done
C="$C decode_f16_m8_k4096_n11008_nk decode_f16_m8_k11008_n4096_nk decode_bf16_m8_k4096_n14336_nk decode_bf16_m16_k4096_n14336_nk decode_bf16_m32_k4096_n14336_nk decode_bf16_m4_k14336_n4096_kn decode_bf16_m8_k14336_n4096_kn"
OUT=$W ./compare_env.sh "WGC_GEMM_SKINNY=1" "WGC_GEMM_SKINNY=0" $C > $W/skinny.txt 2>&1
grep -A22 "SKINNY=1\], run 1" $W/skinny.txt | grep decode | awk -F'|' '{printf "%-36s %8s %8s %6s\n", $2, $6, $7, $8}'
grep -A22 "SKINNY=0\], run 1" $W/skinny.txt | grep decode | awk -F'|' '{printf "%-36s %8s %8s %6s\n", $2, $6, $7, $8}'
grep -A22 "\] -> \[WGC_GEMM_SKINNY=0\], run 2" $W/skinny.txt | grep -E "decode|speed-up" | awk -F'|' '{printf "%-36s %8s %8s %8s\n", $2, $4, $5, $6}'
cd $OUT && tar czf job.tgz w
