#!/usr/bin/env bash
# Round 11, call 3: the matrix-vector axpy kernel with 16-byte loads issuing
# four values of K a pass (one or two rows against (K, N) f16/bf16 weights)
# against the previous library; GPU tests.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
ln -sf libwgcompute.so head/libwgcompute.so.0
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
SECONDS=0; ./test_gemv > $W/test_gemv.txt 2>&1; echo "test_gemv: exit $? (${SECONDS}s)"; tail -1 $W/test_gemv.txt
SECONDS=0; ./test_bf16 > $W/test_bf16.txt 2>&1; echo "test_bf16: exit $? (${SECONDS}s)"; tail -1 $W/test_bf16.txt
OUT=$W ./compare_builds.sh old head decode_f16_m1_ decode_bf16_m1_ decode_f32_m1_ 2>&1 | grep -A30 "old -> head"
cd $OUT && tar czf job.tgz w
