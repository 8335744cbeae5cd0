#!/usr/bin/env bash
# Round 12, call 14 (and call 15, the same script on a fresh machine): the final library's one- and two-row (K, N) products
# against PyTorch, and axpy_unit_narrow's fill re-swept with one-row tiles
# (WGC_GEMV_FILL; the default aims for 198 workgroups); on an H200 also the
# axpy load probe.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so head/libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
KN="decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_f16_m2_k4096_n14336_kn decode_f16_m2_k14336_n4096_kn decode_f16_m1_k4096_n11008_kn decode_f16_m1_k11008_n4096_kn decode_f16_m2_k4096_n11008_kn decode_f16_m2_k11008_n4096_kn decode_bf16_m1_k14336_n4096_kn decode_bf16_m2_k14336_n4096_kn decode_bf16_m1_k11008_n4096_kn decode_bf16_m2_k11008_n4096_kn"
if grep -q H200 $W/gpu.txt; then ./stream_probe --only axpy > $W/stream_probe_axpy.txt 2>&1; grep -E "unroll=4" $W/stream_probe_axpy.txt; fi
./wgc_bench $KN > $W/wgc_default.jsonl 2>/dev/null
PYTHONUNBUFFERED=1 python3 torch_bench.py $KN > $W/torch.jsonl 2> $W/torch.err
python3 compare.py $W/wgc_default.jsonl $W/torch.jsonl | grep "^| decode"
ms() { python3 -c "import json,sys; [print(f\"{d['case']:36s} {d['ms']:.4f} {d['check']}\") for d in map(json.loads, open(sys.argv[1])) if 'ms' in d]" "$1"; }
for f in 132 264 396 198; do
  WGC_GEMV_FILL=$f ./wgc_bench $KN > $W/wgc_fill_$f.jsonl 2>/dev/null; echo "== WGC_GEMV_FILL=$f"; ms $W/wgc_fill_$f.jsonl
done
cd $OUT && tar czf job.tgz w
