#!/usr/bin/env bash
# Round 12, call 2: 512 x 512 x 8192 (f32) against its run count: 128 x
# 128 tiles over 8-32 runs of K (WGC_GEMM_TILED_BLOCKS=2x2 with
# WGC_GEMM_TILED_FILL aimed at 16 x runs), 64 x 64 tiles at the default
# fills; the first pass's work as batched products (17 x 496, 16 x 512,
# 17 x 992) and the second pass's as a column sum of 17 slabs. PyTorch in
# the same call.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
ms() { python3 -c "import json,sys; [print(f\"{d['case']:34s} {d['ms']:.4f} {d['check']}\") for d in map(json.loads, open(sys.argv[1])) if 'ms' in d]" "$1"; }
for r in 1 2; do
  ./wgc_bench sgemm_parts_ sum_axis0_slabs sgemm_512x512x8192 > $W/wgc_parts_$r.jsonl 2>/dev/null; echo "== parts run $r"; ms $W/wgc_parts_$r.jsonl
  for f in 128 144 256 272 304 384 512 528 1024; do
    WGC_GEMM_TILED_BLOCKS=2x2 WGC_GEMM_TILED_FILL=$f ./wgc_bench sgemm_512x512x8192 > $W/wgc_2x2_${f}_$r.jsonl 2>/dev/null
    echo -n "2x2 fill $f: "; ms $W/wgc_2x2_${f}_$r.jsonl
  done
  for f in 528 1056; do
    WGC_GEMM_TILED_BLOCKS=1x1 WGC_GEMM_TILED_FILL=$f ./wgc_bench sgemm_512x512x8192 > $W/wgc_1x1_${f}_$r.jsonl 2>/dev/null
    echo -n "1x1 fill $f: "; ms $W/wgc_1x1_${f}_$r.jsonl
  done
done
PYTHONUNBUFFERED=1 python3 torch_bench.py sgemm_parts_ sum_axis0_slabs sgemm_512x512x8192 > $W/torch.jsonl 2> $W/torch.err
python3 compare.py $W/wgc_parts_1.jsonl $W/torch.jsonl | grep "^| s"
python3 compare.py $W/wgc_parts_2.jsonl $W/torch.jsonl | grep "^| s"
cd $OUT && tar czf job.tgz w
