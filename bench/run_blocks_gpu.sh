#!/usr/bin/env bash
# Runs the model blocks on the GPU machine: wgc_blocks, then the PyTorch
# twins (eager and torch.compile) in the same call, then the table and the
# profiles. Expects wgc_blocks, libwgcompute.so and the Python scripts beside
# it (.gpu/, filled by bench/prepare_blocks_gpu.sh). Arguments select blocks
# by name or class substring; results go to $OUT (default /tmp).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -e "$here/libwgcompute.so.0" ] || ln -sf libwgcompute.so "$here/libwgcompute.so.0"
SECONDS=0
"$here/wgc_blocks" "$@" > "$out/wgc_blocks.jsonl" 2> "$out/wgc_blocks.err"
echo "wgc_blocks exit $? (${SECONDS} s)"; grep -v XDG_RUNTIME "$out/wgc_blocks.err" | grep -v "^  check" | tail -5
SECONDS=0
# The decoder layer from Python too: WGC_PY_BLOCKS names the python/ folder
# of the source tree (the package and its header beside it); needs cffi.
if [ -n "${WGC_PY_BLOCKS:-}" ] && python3 -c "import cffi, numpy" 2>/dev/null; then
    PYTHONUNBUFFERED=1 WGC_LIBRARY_PATH="$here/libwgcompute.so" PYTHONPATH="$WGC_PY_BLOCKS" \
        python3 "$here/py_blocks.py" "$@" > "$out/py_blocks.jsonl" 2> "$out/py_blocks.err"
    echo "py_blocks exit $? (${SECONDS} s)"; tail -2 "$out/py_blocks.err"
elif [ -n "${WGC_PY_BLOCKS:-}" ]; then
    echo "py_blocks not run: this python3 has no cffi or numpy"
fi
SECONDS=0
PYTHONUNBUFFERED=1 python3 "$here/torch_blocks.py" "$@" > "$out/torch_blocks.jsonl" 2> "$out/torch_blocks.err"
echo "torch_blocks exit $? (${SECONDS} s)"; grep -v "^  " "$out/torch_blocks.err" | tail -3
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
ours="$out/wgc_blocks.jsonl"
[ -s "$out/py_blocks.jsonl" ] && ours="$ours,$out/py_blocks.jsonl"
python3 "$here/compare_blocks.py" "$ours" "$out/torch_blocks.jsonl" --profiles | tee "$out/blocks_table.md"
