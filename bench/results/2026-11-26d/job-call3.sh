#!/usr/bin/env bash
# Round 10, call 3 (asked for an H200, ran on the H100): stream_probe, and the cases it explains (decode
# at 32 rows, square SGEMM) against PyTorch in the same call.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
SECONDS=0; ./stream_probe > $W/stream_probe.txt 2>&1; echo "stream_probe exit $? (${SECONDS}s)"; cat $W/stream_probe.txt
CASES="decode_f16_m32 sgemm_f32"
SECONDS=0; ./wgc_bench $CASES > $W/wgc.jsonl 2>$W/wgc.err; echo "wgc_bench exit $? (${SECONDS}s)"
SECONDS=0; python3 torch_bench.py $CASES > $W/torch.jsonl 2>$W/torch.err; echo "torch ${SECONDS}s"
python3 compare.py $W/wgc.jsonl $W/torch.jsonl
cd $OUT && tar czf job.tgz w
