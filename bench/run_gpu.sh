#!/usr/bin/env bash
# Runs both benchmarks on the GPU machine and prints one table. Expects
# wgc_bench, libwgcompute.so and the Python scripts beside it (the folder
# .gpu/ that bench/prepare_gpu.sh fills). Arguments select cases by name or
# class substring (`--list` lists them).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The library's SONAME is libwgcompute.so.0; the carried file is libwgcompute.so.
[ -e "$here/libwgcompute.so.0" ] || ln -sf libwgcompute.so "$here/libwgcompute.so.0"
SECONDS=0
"$here/wgc_bench" "$@" > "$out/wgc.jsonl" 2> "$out/wgc.err"
echo "wgc_bench exit $? (${SECONDS} s)"; grep -v XDG_RUNTIME "$out/wgc.err" | grep -v "^case " | tail -5
SECONDS=0
PYTHONUNBUFFERED=1 python3 "$here/torch_bench.py" "$@" > "$out/torch.jsonl" 2> "$out/torch.err"
echo "torch_bench exit $? (${SECONDS} s)"; tail -3 "$out/torch.err"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 "$here/compare.py" "$out/wgc.jsonl" "$out/torch.jsonl" | tee "$out/table.md"
