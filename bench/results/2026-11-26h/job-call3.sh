#!/usr/bin/env bash
# Fourteenth round, call 3: every GEMM and convolution case but the f16/bf16
# decode ones (call 1 timed those), f32 decode, against PyTorch, current build.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
F="gemm/attention gemm/batched gemm/few-tiles gemm/odd gemm/prefill gemm/split-parts gemm/square gemm/tall-skinny conv/ decode_f32"
SECONDS=0; timeout 300 ./wgc_bench $F > $W/wgc.jsonl 2> $W/wgc.err; echo "wgc_bench exit $? (${SECONDS} s), $(grep -c . $W/wgc.jsonl) lines"
SECONDS=0; PYTHONUNBUFFERED=1 timeout 250 python3 torch_bench.py $F > $W/torch.jsonl 2> $W/torch.err; echo "torch_bench exit $? (${SECONDS} s), $(grep -c . $W/torch.jsonl) lines"
python3 compare.py $W/wgc.jsonl $W/torch.jsonl > $W/table.md; grep -v decode $W/table.md | head -80
cd $OUT && tar czf job.tgz w
