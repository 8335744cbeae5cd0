#!/usr/bin/env bash
# Round 12, call 5: the axpy load structure (one row against a (K, N) f16
# weight) including narrow column blocks with 256 threads along K (what a
# single pass over K would launch), next to the library's one-row (K, N)
# products and PyTorch; 512 x 512 x 8192 taken apart again.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
SECONDS=0; ./stream_probe --only axpy > $W/stream_probe_axpy.txt 2>&1; echo "probe axpy: exit $? (${SECONDS}s)"; cat $W/stream_probe_axpy.txt
CASES="decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_bf16_m1_k14336_n4096_kn sgemm_512x512x8192 sgemm_parts_16"
for r in 1 2; do ./wgc_bench $CASES > $W/wgc_$r.jsonl 2> $W/wgc_$r.err; done
PYTHONUNBUFFERED=1 python3 torch_bench.py $CASES > $W/torch.jsonl 2> $W/torch.err
for r in 1 2; do python3 compare.py $W/wgc_$r.jsonl $W/torch.jsonl | grep "^| \(decode\|sgemm\)"; done
cd $OUT && tar czf job.tgz w
