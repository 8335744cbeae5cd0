#!/bin/sh
# f16 GEMM block tiles of shaders/spirv/gemm_khr_wide.comp on VK_KHR_cooperative_matrix
# (WGC_GEMM_KHR_WIDE=<tile>) against the library's current route and torch.matmul,
# correctness first. On the GPU machine, from a folder holding khr_wide_bench and
# test_gemm_khr_wide (built here), libwgcompute.so (or .xz), torch_gemm_shapes.py
# and compare_wide.py: sh run_wide.sh (about 140 s).
cd "$(dirname "$0")"
T0=$(date +%s)
rm -f all.jsonl
left() { echo $((140 - $(date +%s) + T0)); }
[ -f libwgcompute.so ] || xz -dk libwgcompute.so.xz
ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH=$PWD:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
ALL="m128n128k32s1 m128n128k32s2 m128n128k32s2g8 m128n256k16s2 m128n256k16s2g8 m128n256k32s1 m256n128k32s1 m256n128k16s2 m128n128w8k64s1 m128n128w8k32s2 m128n128k64s1 m128n256k32s1g8"
FIRST="m128n256k16s2g8 m128n128k32s2 m256n128k32s1 m128n128w8k64s1"
echo "## correctness (double-precision reference)"
for t in $FIRST; do timeout 25 ./test_gemm_khr_wide $t 2>&1 | tail -12; done
echo "## timings (quick set)"
timeout 40 python3 torch_gemm_shapes.py quick | tee -a all.jsonl
timeout 20 ./khr_wide_bench library quick | tee -a all.jsonl
# The library's other tensor-core routes: its KHR kernel with two staging
# buffers, and the VK_NV_cooperative_matrix2 kernel.
WGC_GEMM_SPIRV=1 WGC_GEMM_SPIRV_STAGES=2 timeout 20 ./khr_wide_bench lib_khr_s2 quick | tee -a all.jsonl
WGC_GEMM_SPIRV=2 timeout 20 ./khr_wide_bench lib_coopmat2 quick | tee -a all.jsonl
for t in $ALL; do
  [ "$(left)" -gt 45 ] || { echo "skip $t: time"; continue; }
  WGC_GEMM_KHR_WIDE=$t timeout 15 ./khr_wide_bench $t quick 2>&1 | tee -a all.jsonl
done
echo "## table"
python3 compare_wide.py all.jsonl
echo "## probes: no global loads (diag1), no staging stores (diag2), neither (diag3)"
for t in m128n128k32s1 m128n128k32s2 m128n256k16s2; do
  for d in 1 2 3; do
    [ "$(left)" -gt 25 ] || { echo "skip ${t}_diag$d: time"; continue; }
    WGC_GEMM_KHR_WIDE=${t}_diag$d timeout 10 ./khr_wide_bench ${t}_diag$d diag 2>&1
  done
done
echo "## correctness of the other tiles"
for t in $ALL; do
  case " $FIRST " in *" $t "*) continue ;; esac
  [ "$(left)" -gt 8 ] || { echo "skip check $t: time"; continue; }
  timeout 8 ./test_gemm_khr_wide $t 2>&1 | tail -10
done
echo "## full set: library, torch and two tiles"
rm -f full.jsonl
[ "$(left)" -gt 20 ] && timeout 30 python3 torch_gemm_shapes.py | tee -a full.jsonl
[ "$(left)" -gt 12 ] && timeout 20 ./khr_wide_bench library | tee -a full.jsonl
for t in m128n256k16s2g8 m128n128k32s2g8; do
  [ "$(left)" -gt 10 ] && WGC_GEMM_KHR_WIDE=$t timeout 15 ./khr_wide_bench $t 2>&1 | tee -a full.jsonl
done
python3 compare_wide.py full.jsonl
echo "## done in $(( $(date +%s) - T0 )) s"
