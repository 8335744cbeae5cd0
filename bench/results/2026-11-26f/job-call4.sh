#!/usr/bin/env bash
# Round 12, call 4: 512 x 512 x 8192 (f32) against its first pass alone:
# 16 batched products of K = 512 and 1024 (256 workgroups of 128 x 128,
# two per SM), and the split's own first pass as a batched product with A's
# runs strided as the split reads them (the split's 16-run form is
# WGC_GEMM_TILED_FILL=256 WGC_GEMM_TILED_BLOCKS=2x2). PyTorch in the same call.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
ms() { python3 -c "import json,sys; [print(f\"{d['case']:40s} {d['ms']:.4f} {d['check']}\") for d in map(json.loads, open(sys.argv[1])) if 'ms' in d]" "$1"; }
for r in 1 2 3; do
  ./wgc_bench sgemm_parts_ sgemm_512x512x8192 > $W/wgc_$r.jsonl 2>/dev/null; echo "== run $r"; ms $W/wgc_$r.jsonl
  WGC_GEMM_TILED_BLOCKS=2x2 WGC_GEMM_TILED_FILL=256 ./wgc_bench sgemm_512x512x8192 > $W/wgc_16runs_$r.jsonl 2>/dev/null
  echo -n "16 runs: "; ms $W/wgc_16runs_$r.jsonl
done
PYTHONUNBUFFERED=1 python3 torch_bench.py sgemm_parts_ sgemm_512x512x8192 > $W/torch.jsonl 2> $W/torch.err
for r in 1 2 3; do python3 compare.py $W/wgc_$r.jsonl $W/torch.jsonl | grep "^| s"; done
cd $OUT && tar czf job.tgz w
