#!/usr/bin/env bash
# Round 13, call 6 and later tries, on an H200 only (elsewhere it stops at
# once): the narrow kernel against the one before it (WGC_GEMV_NARROW=0) on
# one and two rows, every f16/bf16 decode case against PyTorch, and the
# axpy load probe.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
grep -q H200 $W/gpu.txt && { SECONDS=0; ./test_gemv > $W/test_gemv.txt 2>&1; echo "test_gemv: exit $? (${SECONDS}s) $(tail -n 1 $W/test_gemv.txt)"; }
C=""
for d in f16 bf16; do for s in k4096_n14336 k14336_n4096 k4096_n11008 k11008_n4096; do for m in 1 2; do C="$C decode_${d}_m${m}_${s}_kn"; done; done; done
if grep -q H200 $W/gpu.txt; then
  OUT=$W ./compare_env.sh "WGC_GEMV_NARROW=0" "WGC_GEMV_NARROW=1" $C > $W/narrow.txt 2>&1; grep -A20 "NARROW=1\], run 2" $W/narrow.txt | head -22; tail -n 20 $W/narrow.txt
  SECONDS=0; ./wgc_bench decode_f16 decode_bf16 > $W/wgc_all.jsonl 2> $W/wgc_all.err; echo "wgc_bench all decode: exit $? (${SECONDS}s)"
  SECONDS=0; PYTHONUNBUFFERED=1 python3 torch_bench.py decode_f16 decode_bf16 > $W/torch_all.jsonl 2> $W/torch_all.err; echo "torch_bench: exit $? (${SECONDS}s)"
  python3 compare.py $W/wgc_all.jsonl $W/torch_all.jsonl > $W/table_all.md; grep -E "_kn|class|decode " $W/table_all.md | head -60
  ./stream_probe --only axpy > $W/stream_probe_axpy.txt 2>&1; tail -n 30 $W/stream_probe_axpy.txt
else
  echo "not an H200: nothing timed"
fi
cd $OUT && tar czf job.tgz w
