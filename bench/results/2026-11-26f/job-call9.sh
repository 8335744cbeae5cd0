#!/usr/bin/env bash
# Round 12, call 9: the committed axpy_unit_narrow (head, 37138b3) against
# the previous library (old, 155d836); two rows as two one-row tiles
# (head2: `let mt = if narrow { 1 } else { ... }` in plan_rows, as kept), timed after them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so head/libwgcompute.so.0; ln -sf libwgcompute.so head2/libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
SECONDS=0; LD_LIBRARY_PATH="$here/head:$here" ./test_gemv > $W/test_gemv.txt 2>&1; echo "test_gemv: exit $? (${SECONDS}s)"; tail -1 $W/test_gemv.txt
KN="decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_f16_m2_k4096_n14336_kn decode_f16_m2_k14336_n4096_kn decode_f16_m1_k4096_n11008_kn decode_f16_m1_k11008_n4096_kn decode_f16_m2_k4096_n11008_kn decode_f16_m2_k11008_n4096_kn decode_bf16_m1_k14336_n4096_kn decode_bf16_m2_k14336_n4096_kn decode_bf16_m1_k11008_n4096_kn decode_bf16_m2_k11008_n4096_kn"
OUT=$W ./compare_builds.sh old head $KN 2>&1 | tail -42
ms() { python3 -c "import json,sys; [print(f\"{d['case']:36s} {d['ms']:.4f} {d['check']}\") for d in map(json.loads, open(sys.argv[1])) if 'ms' in d]" "$1"; }
for r in 1 2; do
  LD_LIBRARY_PATH="$here/head2:$here" ./wgc_bench $KN > $W/wgc_head2_$r.jsonl 2>/dev/null; echo "== head2 run $r"; ms $W/wgc_head2_$r.jsonl
done
cd $OUT && tar czf job.tgz w
