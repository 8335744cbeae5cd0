#!/usr/bin/env bash
# Round 11, call 8: the axpy load-structure probe and the kernel's own
# workgroup target (WGC_GEMV_FILL 264, the default, 528, 1056) on one row
# against (K, N) f16 weights, with PyTorch.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
SECONDS=0; ./stream_probe --only axpy > $W/stream_probe_axpy.txt 2>&1; echo "probe axpy: exit $? (${SECONDS}s)"; grep -E "unroll=1|roofline" $W/stream_probe_axpy.txt
CASES="decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_bf16_m1_k14336_n4096_kn"
for r in 1 2; do for f in 264 528 1056; do WGC_GEMV_FILL=$f ./wgc_bench $CASES > $W/wgc_fill${f}_$r.jsonl 2> $W/wgc_fill${f}_$r.err; done; done
PYTHONUNBUFFERED=1 python3 torch_bench.py $CASES > $W/torch.jsonl 2> $W/torch.err
for r in 1 2; do for f in 264 528 1056; do echo "== fill $f run $r"; python3 compare.py $W/wgc_fill${f}_$r.jsonl $W/torch.jsonl | grep "^| decode"; done; done
cd $OUT && tar czf job.tgz w
