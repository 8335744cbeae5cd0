#!/usr/bin/env bash
# Round 12, call 7: axpy_unit_narrow with four steps of K loaded before
# their products (head2) against the previous library (old) and the first
# version (head: one step); its fill for two rows.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W/a $W/b
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
ln -sf libwgcompute.so head2/libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
SECONDS=0; LD_LIBRARY_PATH="$here/head2:$here" ./test_gemv > $W/test_gemv.txt 2>&1; echo "test_gemv: exit $? (${SECONDS}s)"; tail -1 $W/test_gemv.txt
KN="decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_f16_m2_k4096_n14336_kn decode_f16_m2_k14336_n4096_kn decode_f16_m1_k4096_n11008_kn decode_f16_m1_k11008_n4096_kn decode_f16_m2_k4096_n11008_kn decode_f16_m2_k11008_n4096_kn decode_bf16_m1_k14336_n4096_kn decode_bf16_m2_k14336_n4096_kn decode_bf16_m1_k11008_n4096_kn decode_bf16_m2_k11008_n4096_kn"
OUT=$W/a ./compare_builds.sh old head2 $KN 2>&1 | tail -20
OUT=$W/b ./compare_builds.sh head head2 $KN 2>&1 | tail -20
ms() { python3 -c "import json,sys; [print(f\"{d['case']:36s} {d['ms']:.4f} {d['check']}\") for d in map(json.loads, open(sys.argv[1])) if 'ms' in d]" "$1"; }
for f in 264 396; do
  WGC_GEMV_FILL=$f LD_LIBRARY_PATH="$here/head2:$here" ./wgc_bench $KN > $W/wgc_fill_$f.jsonl 2>/dev/null; echo "== head2 WGC_GEMV_FILL=$f"; ms $W/wgc_fill_$f.jsonl
done
cd $OUT && tar czf job.tgz w
