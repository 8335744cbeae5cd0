#!/usr/bin/env bash
# Round 12, call 1: 512 x 512 x 8192 (f32) taken apart into its first
# pass's work (17 batched products of K = 496 and 992, no split) next to
# 8192^3; the axpy kernel's load structure (one row against a (K, N) f16
# weight); the one-row (K, N) decode cases. PyTorch in the same call.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
CASES="sgemm_512x512x8192_f32 sgemm_parts_ sgemm_8192x100x2048_f32 decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_bf16_m1_k14336_n4096_kn"
for r in 1 2; do ./wgc_bench $CASES > $W/wgc_$r.jsonl 2> $W/wgc_$r.err; done
./wgc_bench sgemm_f32 > $W/wgc_sq.jsonl 2> $W/wgc_sq.err
PYTHONUNBUFFERED=1 python3 torch_bench.py $CASES sgemm_f32 > $W/torch.jsonl 2> $W/torch.err
for r in 1 2; do python3 compare.py $W/wgc_$r.jsonl $W/torch.jsonl | grep "^| \(sgemm\|decode\)"; done
python3 compare.py $W/wgc_sq.jsonl $W/torch.jsonl | grep "^| sgemm"
SECONDS=0; ./stream_probe --only axpy > $W/stream_probe_axpy.txt 2>&1; echo "probe axpy: exit $? (${SECONDS}s)"; cat $W/stream_probe_axpy.txt
cd $OUT && tar czf job.tgz w
