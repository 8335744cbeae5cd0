#!/usr/bin/env bash
# Round 11, call 4: the tiled f32 GEMM's blocks and K runs on the products
# with few tiles (WGC_GEMM_TILED_BLOCKS, WGC_GEMM_TILED_FILL), two runs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
CASES="sgemm_8192x100x2048_f32 sgemm_512x512x8192_f32 sgemm_3000x50x5000_f32"
for r in 1 2; do
  for s in "- -" "1x1 1056" "1x1 2112" "2x1 264" "2x1 528" "2x1 1056" "1x2 264" "1x2 528" "2x2 132" "2x2 264" "2x2 528"; do
    set -- $s; tag="b$1_f$2"
    if [ "$1" = "-" ]; then unset WGC_GEMM_TILED_BLOCKS WGC_GEMM_TILED_FILL; else export WGC_GEMM_TILED_BLOCKS=$1 WGC_GEMM_TILED_FILL=$2; fi
    SECONDS=0; ./wgc_bench $CASES > $W/wgc_${tag}_$r.jsonl 2> $W/wgc_${tag}_$r.err; echo "$tag run $r: exit $? (${SECONDS}s)"
  done
done
unset WGC_GEMM_TILED_BLOCKS WGC_GEMM_TILED_FILL
PYTHONUNBUFFERED=1 python3 torch_bench.py $CASES > $W/torch.jsonl 2> $W/torch.err
python3 - "$W" <<'PY'
import json, glob, os, sys, collections
w = sys.argv[1]
t = {}
for l in open(f"{w}/torch.jsonl"):
    l = l.strip()
    if l.startswith("{"):
        d = json.loads(l); t[d.get("case")] = d.get("ms")
rows = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{w}/wgc_*.jsonl")):
    tag = os.path.basename(f)[4:-6]
    for l in open(f):
        l = l.strip()
        if l.startswith("{"):
            d = json.loads(l); rows[d["case"]][tag] = (d["ms"], d["check"])
for c, r in rows.items():
    print(f"== {c} (PyTorch {t.get(c)})")
    for tag, (ms, chk) in sorted(r.items(), key=lambda x: x[1][0]):
        print(f"  {tag:16s} {ms:.4f} {chk}  ratio {t.get(c, 0) / ms:.2f}")
PY
cd $OUT && tar czf job.tgz w
