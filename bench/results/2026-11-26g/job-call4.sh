#!/usr/bin/env bash
# Round 13, call 4: axpy_unit_narrow with one tile of both rows and 4 loads
# in flight a thread (head) against the previous library (old, c27594e:
# two one-row tiles, one load at a time) on one and two rows against (K, N)
# weights; then head with one-row tiles (WGC_GEMV_NARROW_TILE=1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
ln -sf libwgcompute.so head/libwgcompute.so.0
export LD_LIBRARY_PATH="$here/head:${LD_LIBRARY_PATH:-}"
for t in test_gemv test_gemm_f16 test_bf16; do
  SECONDS=0; ./$t > $W/$t.txt 2>&1; echo "$t: exit $? (${SECONDS}s) $(tail -n 1 $W/$t.txt)"
done
SECONDS=0; WGC_GEMV_NARROW_TILE=1 ./test_gemv > $W/test_gemv_tile1.txt 2>&1; echo "test_gemv tile 1: exit $? (${SECONDS}s) $(tail -n 1 $W/test_gemv_tile1.txt)"
C=""
for d in f16 bf16; do for s in k4096_n14336 k14336_n4096 k4096_n11008 k11008_n4096; do for m in 1 2; do C="$C decode_${d}_m${m}_${s}_kn"; done; done; done
C="$C decode_f16_m1_k2048_n8192_kn decode_f16_m1_k8192_n2048_kn"
OUT=$W ./compare_builds.sh old head $C > $W/builds.txt 2>&1; grep -A40 "old -> head, run 2" $W/builds.txt
for r in 1 2; do WGC_GEMV_NARROW_TILE=1 ./wgc_bench $C > $W/wgc_tile1_$r.jsonl 2> $W/wgc_tile1_$r.err; done
python3 compare.py --builds $W/wgc_head_1.jsonl $W/wgc_tile1_1.jsonl > $W/tile1_cmp_1.md
python3 compare.py --builds $W/wgc_head_2.jsonl $W/wgc_tile1_2.jsonl > $W/tile1_cmp_2.md
echo "== head -> head with one-row tiles, run 2"; tail -n 24 $W/tile1_cmp_2.md
cd $OUT && tar czf job.tgz w
