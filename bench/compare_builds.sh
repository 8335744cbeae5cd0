#!/usr/bin/env bash
# On the GPU machine: the same wgc_bench binary against two library builds
# (folders holding libwgcompute.so, e.g. .gpu/old and .gpu/head), twice each
# and interleaved, then PyTorch once; prints one table per run against
# PyTorch and the old-versus-new comparison of each run pair (cases over 3%
# slower flagged). Cases the old library lacks are reported "unsupported".
# Expects the folder bench/prepare_gpu.sh fills, plus the two library folders.
#   source .gpu/setup.sh && .gpu/compare_builds.sh old head [case ...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}
a=$1 b=$2; shift 2
for v in "$a" "$b"; do ln -sf libwgcompute.so "$here/$v/libwgcompute.so.0"; done
for r in 1 2; do for v in "$a" "$b"; do
  SECONDS=0
  LD_LIBRARY_PATH="$here/$v:${LD_LIBRARY_PATH:-}" "$here/wgc_bench" "$@" > "$out/wgc_${v}_$r.jsonl" 2>"$out/wgc_${v}_$r.err"
  echo "wgc_bench $v run $r: exit $? (${SECONDS} s)"
done; done
SECONDS=0
PYTHONUNBUFFERED=1 python3 "$here/torch_bench.py" "$@" > "$out/torch.jsonl" 2> "$out/torch.err"
echo "torch_bench exit $? (${SECONDS} s)"
for r in 1 2; do
  for v in "$a" "$b"; do
    echo "== $v, run $r"; python3 "$here/compare.py" "$out/wgc_${v}_$r.jsonl" "$out/torch.jsonl"
  done
  echo "== $a -> $b, run $r"; python3 "$here/compare.py" --builds "$out/wgc_${a}_$r.jsonl" "$out/wgc_${b}_$r.jsonl"
done
