#!/usr/bin/env bash
# Round 10, call 7: the tiled f32 kernel's K split aiming for 256 workgroups
# of 128 x 128 (WGC_GEMM_TILED_FILL=512: 16 runs for 512 x 512 x 8192, one
# wave of 2 per SM) against the default (528: 17 runs, 272 workgroups).
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
OUT=$W ./compare_env.sh "WGC_GEMM_TILED_FILL=528" "WGC_GEMM_TILED_FILL=512" sgemm_512x512 sgemm_3000x50 sgemm_8192x100 2>&1 | tail -30
cd $OUT && tar czf job.tgz w
