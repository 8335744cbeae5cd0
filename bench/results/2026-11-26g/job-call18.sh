#!/usr/bin/env bash
# Round 13, call 18: a narrow output, LLaMA-3-8B's key/value projection
# (4096 -> 1024), 1, 2 and 8 rows, both layouts: the default against two
# one-row tiles (WGC_GEMV_NARROW_TILE=1), two runs each, interleaved, then
# against the 256-column kernel (WGC_GEMV_NARROW=0) once; PyTorch in the
# same call.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
SECONDS=0; ./test_gemv > $W/test_gemv.txt 2>&1; echo "test_gemv: exit $? (${SECONDS}s) $(tail -n 1 $W/test_gemv.txt)"
OUT=$W ./compare_env.sh "WGC_GEMV_NARROW_TILE=2" "WGC_GEMV_NARROW_TILE=1" _k4096_n1024_ > $W/kv.txt 2>&1
WGC_GEMV_NARROW=0 ./wgc_bench _k4096_n1024_ > $W/wgc_narrow0.jsonl 2> $W/wgc_narrow0.err
grep -A12 "TILE=2\], run 1" $W/kv.txt | grep decode | awk -F'|' '{printf "%-34s %8s %8s %6s\n", $2, $6, $7, $8}'
grep -A12 "\] -> \[WGC_GEMV_NARROW_TILE=1\], run 2" $W/kv.txt | grep -E "decode" | awk -F'|' '{printf "%-34s %8s %8s %8s\n", $2, $4, $5, $6}'
python3 compare.py --builds $W/wgc_narrow0.jsonl $W/wgc_WGC_GEMV_NARROW_TILE-2_2.jsonl | grep decode | awk -F'|' '{printf "narrow=0 -> default %-34s %8s %8s %8s\n", $2, $4, $5, $6}'
cd $OUT && tar czf job.tgz w
