#!/usr/bin/env bash
# Round 12, call 6: one and two rows against (K, N) f16/bf16 weights in
# 64-column blocks with 32 lanes along K (axpy_unit_narrow) against the
# previous library (axpy_unit_staged); the new kernel's fill; GPU tests.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
ln -sf libwgcompute.so head/libwgcompute.so.0
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
for t in test_gemv test_bf16; do SECONDS=0; ./$t > $W/$t.txt 2>&1; echo "$t: exit $? (${SECONDS}s)"; tail -1 $W/$t.txt; done
KN="decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_f16_m2_k4096_n14336_kn decode_f16_m2_k14336_n4096_kn decode_f16_m1_k4096_n11008_kn decode_f16_m1_k11008_n4096_kn decode_f16_m2_k4096_n11008_kn decode_f16_m2_k11008_n4096_kn decode_bf16_m1_k14336_n4096_kn decode_bf16_m2_k14336_n4096_kn decode_bf16_m1_k11008_n4096_kn decode_bf16_m2_k11008_n4096_kn"
OUT=$W ./compare_builds.sh old head $KN decode_f16_m8_k4096_n14336_kn decode_f16_m1_k4096_n11008_nk decode_f16_m2_k11008_n4096_nk 2>&1 | tail -45
ms() { python3 -c "import json,sys; [print(f\"{d['case']:36s} {d['ms']:.4f} {d['check']}\") for d in map(json.loads, open(sys.argv[1])) if 'ms' in d]" "$1"; }
for f in 132 264 528; do
  WGC_GEMV_FILL=$f ./wgc_bench $KN > $W/wgc_fill_$f.jsonl 2>/dev/null; echo "== WGC_GEMV_FILL=$f"; ms $W/wgc_fill_$f.jsonl
done
cd $OUT && tar czf job.tgz w
