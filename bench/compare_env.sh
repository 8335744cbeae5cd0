#!/usr/bin/env bash
# On the GPU machine: the same wgc_bench binary and library under two
# settings of environment variables (each a space-separated list of
# VAR=value, e.g. "WGC_GEMM_SPIRV=0" and "WGC_GEMM_SPIRV=1"), twice each and
# interleaved, then PyTorch once; prints one table per run against PyTorch
# and the first-versus-second comparison of each run pair (cases over 3%
# slower flagged). Expects the folder bench/prepare_gpu.sh fills.
#   source .gpu/setup.sh && .gpu/compare_env.sh "WGC_GEMM_SPIRV=0" "WGC_GEMM_SPIRV=1" gemm
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}
a=$1 b=$2; shift 2
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -e "$here/libwgcompute.so.0" ] || ln -sf libwgcompute.so "$here/libwgcompute.so.0"
tag() { echo "$1" | tr -c 'A-Za-z0-9_=\n' '_' | tr '=' '-'; }
for r in 1 2; do for v in "$a" "$b"; do
  SECONDS=0
  # shellcheck disable=SC2086 # the setting is a list of VAR=value words
  env $v "$here/wgc_bench" "$@" > "$out/wgc_$(tag "$v")_$r.jsonl" 2>"$out/wgc_$(tag "$v")_$r.err"
  echo "wgc_bench [$v] run $r: exit $? (${SECONDS} s)"
  grep -v XDG_RUNTIME "$out/wgc_$(tag "$v")_$r.err" | grep -v "^case " | tail -3
done; done
SECONDS=0
PYTHONUNBUFFERED=1 python3 "$here/torch_bench.py" "$@" > "$out/torch.jsonl" 2> "$out/torch.err"
echo "torch_bench exit $? (${SECONDS} s)"
for r in 1 2; do
  for v in "$a" "$b"; do
    echo "== [$v], run $r"; python3 "$here/compare.py" "$out/wgc_$(tag "$v")_$r.jsonl" "$out/torch.jsonl"
  done
  echo "== [$a] -> [$b], run $r"
  python3 "$here/compare.py" --builds "$out/wgc_$(tag "$a")_$r.jsonl" "$out/wgc_$(tag "$b")_$r.jsonl"
done
