#!/usr/bin/env bash
# Round 12, call 3: the split-K second pass with eight slab loads in flight
# (not-kept-split-sum-eight-loads-in-flight.patch) against the previous library, on the
# products and convolutions that split K; GPU tests of the split paths.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
ln -sf libwgcompute.so head/libwgcompute.so.0
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
for t in test_matmul test_gemm_f16 test_conv; do SECONDS=0; ./$t > $W/$t.txt 2>&1; echo "$t: exit $? (${SECONDS}s)"; tail -1 $W/$t.txt; done
OUT=$W ./compare_builds.sh old head sgemm_512x512x8192 sgemm_8192x100x2048 sgemm_3000x50x5000 hgemm_1024x1024x4096 sgemm_1000 decode_f32_m16 decode_f32_m32 conv_f16_3x3 conv_3x3 sgemm_parts_16 2>&1 | tail -120
cd $OUT && tar czf job.tgz w
