#!/usr/bin/env bash
# Run on the GPU machine from the project root, after `source .gpu/setup.sh`
# (see BENCHMARKS.md): our benchmark and PyTorch's, then one table.
# Arguments select cases by substring (none: all).
set -uo pipefail
out=${OUT:-/tmp}
wgc_bench "$@" > "$out/wgc.jsonl" 2> "$out/wgc.err"; echo "wgc_bench exit $?"; tail -3 "$out/wgc.err"
python3 bench/torch_bench.py "$@" > "$out/torch.jsonl" 2> "$out/torch.err"; echo "torch exit $?"; tail -3 "$out/torch.err"
python3 bench/compare.py "$out/wgc.jsonl" "$out/torch.jsonl" | tee "$out/table.md"
