#!/usr/bin/env bash
# Round 12, call 11: the final library (head, ac24736) against the previous
# one (old, 155d836) on one and two rows against (K, N) weights, hoping for
# an H200; there also the axpy load probe (call 13: with 8 and 16 rows too).
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so head/libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
SECONDS=0; ./test_gemv > $W/test_gemv.txt 2>&1; echo "test_gemv: exit $? (${SECONDS}s)"; tail -n 1 $W/test_gemv.txt
if grep -q H200 $W/gpu.txt; then ./stream_probe --only axpy > $W/stream_probe_axpy.txt 2>&1; grep -E "unroll=4" $W/stream_probe_axpy.txt; fi
KN="decode_f16_m8_k4096_n14336_kn decode_f16_m16_k4096_n14336_kn decode_f16_m8_k14336_n4096_kn decode_f16_m16_k14336_n4096_kn decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_f16_m2_k4096_n14336_kn decode_f16_m2_k14336_n4096_kn decode_f16_m1_k4096_n11008_kn decode_f16_m1_k11008_n4096_kn decode_f16_m2_k4096_n11008_kn decode_f16_m2_k11008_n4096_kn decode_bf16_m1_k14336_n4096_kn decode_bf16_m2_k14336_n4096_kn decode_bf16_m1_k11008_n4096_kn decode_bf16_m2_k11008_n4096_kn"
OUT=$W ./compare_builds.sh old head $KN sgemm_512x512x8192 sgemm_parts_16 2>&1 | tail -50
cd $OUT && tar czf job.tgz w
