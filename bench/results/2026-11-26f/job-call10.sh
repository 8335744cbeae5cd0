#!/usr/bin/env bash
# Round 12, call 10: the final library (head, ac24736) against the previous
# one (old, 155d836) on every decode case and the few-tile products with
# their parts; GPU tests; on an H200 also the axpy load probe.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so head/libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
for t in test_gemv test_bf16 test_matmul; do SECONDS=0; ./$t > $W/$t.txt 2>&1; echo "$t: exit $? (${SECONDS}s)"; tail -1 $W/$t.txt; done
if grep -q H200 $W/gpu.txt; then ./stream_probe --only axpy > $W/stream_probe_axpy.txt 2>&1; grep -E "runs=(4|16|1|2) unroll=4 \((224|256|64|128|448)" $W/stream_probe_axpy.txt; fi
OUT=$W ./compare_builds.sh old head decode_ sgemm_512x512x8192 sgemm_parts_ 2>&1 | tail -160
cd $OUT && tar czf job.tgz w
