#!/bin/sh
# Round 3: two staging buffers at constant offsets (m128n128k32s2u), one
# buffer in two buffers' workgroup memory (m128n128k32s1x, an occupancy
# probe), fragments straight from the buffers (gm...), 128x256 tiles, against
# the library and torch.matmul; correctness of the new structure first.
cd "$(dirname "$0")"
T0=$(date +%s)
rm -f all.jsonl full.jsonl
left() { echo $((140 - $(date +%s) + T0)); }
[ -f libwgcompute.so ] || xz -dk libwgcompute.so.xz
ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH=$PWD:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "## correctness (double-precision reference)"
timeout 25 ./test_gemm_khr_wide m128n128k32s2u 2>&1 | tail -10 | cut -c1-160
echo "## timings (quick set)"
timeout 40 python3 torch_gemm_shapes.py quick | tee -a all.jsonl
timeout 20 ./khr_wide_bench library quick | tee -a all.jsonl
for t in m128n128w8k64s1g8 m128n128k32s2u m128n128k32s1x gm128n128g8 gm128n256g8 m128n256k48s1g8 m128n256k32s1g8 m128n128w8k64s1; do
  [ "$(left)" -gt 30 ] || { echo "skip $t: time"; continue; }
  WGC_GEMM_KHR_WIDE=$t timeout 15 ./khr_wide_bench $t quick 2>&1 | tee -a all.jsonl
done
python3 compare_wide.py all.jsonl
echo "## full set: library and the best tile again"
[ "$(left)" -gt 20 ] && timeout 20 ./khr_wide_bench library | tee -a full.jsonl
[ "$(left)" -gt 12 ] && WGC_GEMM_KHR_WIDE=m128n128w8k64s1g8 timeout 15 ./khr_wide_bench m128n128w8k64s1g8 2>&1 | tee -a full.jsonl
[ -f full.jsonl ] && python3 compare_wide.py full.jsonl
echo "## done in $(( $(date +%s) - T0 )) s"
