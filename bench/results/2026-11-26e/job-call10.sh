#!/usr/bin/env bash
# Round 11, call 10: one and two rows against (K, N) f16/bf16 weights, one thread
# a unit over the K run with no lanes along K (axpy_unit), against the previous
# library; its workgroup target (WGC_GEMV_FILL); GPU tests.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
ln -sf libwgcompute.so head/libwgcompute.so.0
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
for t in test_gemv test_bf16 test_matmul; do SECONDS=0; ./$t > $W/$t.txt 2>&1; echo "$t: exit $? (${SECONDS}s)"; tail -1 $W/$t.txt; done
SECONDS=0; WGC_GEMV_F16_LOAD=8 ./test_gemv > $W/test_gemv_load8.txt 2>&1; echo "test_gemv load8: exit $?"; tail -1 $W/test_gemv_load8.txt
CASES="decode_f16_m1_k4096_n14336_kn decode_f16_m1_k14336_n4096_kn decode_bf16_m1_k14336_n4096_kn"
mkdir -p $W/builds
OUT=$W/builds ./compare_builds.sh old head $CASES decode_f16_m1_k4096_n14336_nk 2>&1 | grep -A8 "old -> head"
for r in 1 2; do for f in 132 528 1056; do WGC_GEMV_FILL=$f ./wgc_bench $CASES > $W/wgc_fill${f}_$r.jsonl 2> $W/wgc_fill${f}_$r.err; done; done
for r in 1 2; do for f in 132 528 1056; do echo "== head, fill $f run $r"; python3 compare.py $W/wgc_fill${f}_$r.jsonl $W/builds/torch.jsonl | grep "^| decode"; done; done
cd $OUT && tar czf job.tgz w
