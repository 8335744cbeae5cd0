#!/usr/bin/env bash
# Round 10, call 6: tensor-core K splits sized to one wave (2 resident
# workgroups per SM) against the previous library: tests on the GPU, then
# the products and convolutions with few tiles.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
ln -sf libwgcompute.so head/libwgcompute.so.0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
for t in test_gemm_f16 test_conv test_bf16; do
  SECONDS=0; ./$t > $W/$t.txt 2>&1; echo "$t: exit $? (${SECONDS}s)"; tail -1 $W/$t.txt
done
OUT=$W ./compare_builds.sh old head hgemm_conv_shape hgemm_1024x1024 conv_f16 bgemm qk_bmm_f16 2>&1 | tail -80
cd $OUT && tar czf job.tgz w
