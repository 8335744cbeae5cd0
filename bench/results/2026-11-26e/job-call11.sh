#!/usr/bin/env bash
# Round 11, call 11 (call 7 again, for an H200): the matrix-vector axpy kernel's load structure (one
# row against a (K, N) f16 weight) without its math, next to the library
# and PyTorch on the same products.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
SECONDS=0; ./stream_probe --only axpy > $W/stream_probe_axpy.txt 2>&1; echo "probe axpy: exit $? (${SECONDS}s)"; cat $W/stream_probe_axpy.txt
CASES="decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_bf16_m1_k14336_n4096_kn"
for r in 1 2; do ./wgc_bench $CASES > $W/wgc_$r.jsonl 2> $W/wgc_$r.err; done
PYTHONUNBUFFERED=1 python3 torch_bench.py $CASES > $W/torch.jsonl 2> $W/torch.err
for r in 1 2; do python3 compare.py $W/wgc_$r.jsonl $W/torch.jsonl | grep "^| decode"; done
cd $OUT && tar czf job.tgz w
