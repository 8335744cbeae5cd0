#!/usr/bin/env bash
# On the GPU machine: the same wgc_bench binary against two library builds
# (folders holding libwgcompute.so, e.g. .gpu/old and .gpu/head), twice each
# and interleaved, then PyTorch once; prints one table per run. Expects the
# folder bench/prepare_gpu.sh fills, plus the two library folders.
#   source .gpu/setup.sh && .gpu/compare_builds.sh old head [case ...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}
a=$1 b=$2; shift 2
for v in "$a" "$b"; do ln -sf libwgcompute.so "$here/$v/libwgcompute.so.0"; done
for r in 1 2; do for v in "$a" "$b"; do
  LD_LIBRARY_PATH="$here/$v:${LD_LIBRARY_PATH:-}" "$here/wgc_bench" "$@" > "$out/wgc_${v}_$r.jsonl" 2>/dev/null
  echo "wgc_bench $v run $r: exit $?"
done; done
PYTHONUNBUFFERED=1 python3 "$here/torch_bench.py" "$@" > "$out/torch.jsonl" 2> "$out/torch.err"
echo "torch_bench exit $?"
for r in 1 2; do for v in "$a" "$b"; do
  echo "== $v, run $r"; python3 "$here/compare.py" "$out/wgc_${v}_$r.jsonl" "$out/torch.jsonl"
done; done
