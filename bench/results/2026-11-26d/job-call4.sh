#!/usr/bin/env bash
# Round 10, call 4: the f16 3x3 convolutions against plain GEMMs of their
# implicit GEMMs' shapes, ours and PyTorch's (cuDNN, cuBLAS), one call.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
CASES="conv_f16_3x3 conv_f16_nhwc hgemm_conv_shape"
for r in 1 2; do
  SECONDS=0; ./wgc_bench $CASES > $W/wgc_$r.jsonl 2>$W/wgc_$r.err; echo "wgc_bench run $r exit $? (${SECONDS}s)"
done
SECONDS=0; python3 torch_bench.py $CASES > $W/torch.jsonl 2>$W/torch.err; echo "torch ${SECONDS}s"
for r in 1 2; do python3 compare.py $W/wgc_$r.jsonl $W/torch.jsonl | grep -v "^$" | head -24; done
cd $OUT && tar czf job.tgz w
