#!/usr/bin/env bash
# Round 11, call 6: the final library. The 128 x 64 rule (runs of at
# least 512) against the previous library on the f32 products it could
# touch; then every decode case against PyTorch.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
ln -sf libwgcompute.so head/libwgcompute.so.0
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
SECONDS=0; ./test_matmul > $W/test_matmul.txt 2>&1; echo "test_matmul: exit $? (${SECONDS}s)"; tail -1 $W/test_matmul.txt
mkdir -p $W/builds
OUT=$W/builds ./compare_builds.sh old head sgemm_1000 sgemm_8192x100 sgemm_3000x50 sgemm_512x512 sgemm_tall 2>&1 | grep -A12 "old -> head"
SECONDS=0; ./wgc_bench gemm/decode > $W/wgc_decode.jsonl 2> $W/wgc_decode.err; echo "wgc decode: exit $? (${SECONDS}s)"
SECONDS=0; PYTHONUNBUFFERED=1 python3 torch_bench.py gemm/decode > $W/torch_decode.jsonl 2> $W/torch_decode.err; echo "torch decode: exit $? (${SECONDS}s)"
python3 compare.py $W/wgc_decode.jsonl $W/torch_decode.jsonl | tee $W/decode_table.md | grep "^| decode\|GPU"
cd $OUT && tar czf job.tgz w
