#!/usr/bin/env bash
# Round 10, call 5 (H100): K splits of tensor-core products with fewer tiles
# than SMs (100-tile convolution shapes, 64 tiles) for WGC_GEMM_COOP_FILL
# 200, 264 and 400 against the then default (132, ceiling rule).
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
CASES="hgemm_conv_shape_512 hgemm_conv_shape_nhwc_3136 conv_f16_3x3_512 conv_f16_nhwc_3x3_512 hgemm_1024x1024"
for r in 1 2; do for f in default 200 264 400; do
  e=""; [ $f = default ] || e="WGC_GEMM_COOP_FILL=$f"
  SECONDS=0; env $e ./wgc_bench $CASES > $W/fill_${f}_$r.jsonl 2>$W/fill_${f}_$r.err; echo "fill $f run $r exit $? (${SECONDS}s)"
done; done
SECONDS=0; python3 torch_bench.py $CASES > $W/torch.jsonl 2>$W/torch.err; echo "torch ${SECONDS}s"
# (then the same summary table as job-call2.sh, over fill_*.jsonl)
cd $OUT && tar czf job.tgz w
