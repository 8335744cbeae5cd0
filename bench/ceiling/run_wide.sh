#!/bin/sh
# Round 2: f16 GEMM block tiles of shaders/spirv/gemm_khr_wide.comp (K steps
# of 64, grouped order, 128x256 with K 48) and gemm_khr_global.comp
# (fragments straight from the buffers) against the library and torch.matmul.
cd "$(dirname "$0")"
T0=$(date +%s)
rm -f all.jsonl full.jsonl
left() { echo $((140 - $(date +%s) + T0)); }
[ -f libwgcompute.so ] || xz -dk libwgcompute.so.xz
ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH=$PWD:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "## correctness (double-precision reference)"
for t in m128n128k64s1g8 m128n128w8k64s1g8 m128n256k48s1g8 gm128n128g8 gm128n256g8; do
  timeout 25 ./test_gemm_khr_wide $t 2>&1 | tail -10
done
echo "## timings (quick set)"
timeout 40 python3 torch_gemm_shapes.py quick | tee -a all.jsonl
timeout 20 ./khr_wide_bench library quick | tee -a all.jsonl
for t in m128n128k32s1 m128n128w8k64s1 m128n128w8k64s1g8 m128n128k64s1 m128n128k64s1g8 m128n256k32s1g8 m128n256k48s1g8 gm128n128g8 gm128n256g8; do
  [ "$(left)" -gt 60 ] || { echo "skip $t: time"; continue; }
  WGC_GEMM_KHR_WIDE=$t timeout 15 ./khr_wide_bench $t quick 2>&1 | tee -a all.jsonl
done
python3 compare_wide.py all.jsonl
echo "## probes: no global loads (diag1), neither loads nor staging stores (diag3)"
for p in m128n128k64s1_diag1 m128n128k64s1_diag3 m128n128w8k64s1_diag1 m128n128w8k64s1_diag3; do
  [ "$(left)" -gt 50 ] || { echo "skip $p: time"; continue; }
  WGC_GEMM_KHR_WIDE=$p timeout 10 ./khr_wide_bench $p diag 2>&1
done
echo "## full set: torch, library and the best tiles"
[ "$(left)" -gt 40 ] && timeout 30 python3 torch_gemm_shapes.py | tee -a full.jsonl
[ "$(left)" -gt 25 ] && timeout 20 ./khr_wide_bench library | tee -a full.jsonl
for t in m128n128w8k64s1g8 m128n128k64s1g8; do
  [ "$(left)" -gt 12 ] && WGC_GEMM_KHR_WIDE=$t timeout 15 ./khr_wide_bench $t 2>&1 | tee -a full.jsonl
done
[ -f full.jsonl ] && python3 compare_wide.py full.jsonl
echo "## done in $(( $(date +%s) - T0 )) s"
