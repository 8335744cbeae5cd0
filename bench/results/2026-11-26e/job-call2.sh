#!/usr/bin/env bash
# Round 11, call 2: the skinny tensor-core kernel with one step of loads in
# flight (n1k64p1) against two (n1k64, the default for (N, K) weights), at
# the split rule's workgroups and at 6 per SM; test_gemm_f16 under p1.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $W/gpu.txt
SECONDS=0; WGC_GEMM_SKINNY_TILE=n1k64p1 ./test_gemm_f16 > $W/test_gemm_f16_p1.txt 2>&1; echo "test_gemm_f16 p1: exit $? (${SECONDS}s)"; tail -1 $W/test_gemm_f16_p1.txt
CASES="decode_f16_m8_k4096_n14336_nk decode_f16_m16_k4096_n14336_nk decode_f16_m8_k14336_n4096_nk decode_f16_m16_k14336_n4096_nk decode_f16_m8_k4096_n128256 decode_f16_m16_k4096_n128256 decode_bf16_m8_k4096_n14336_nk"
for r in 1 2; do
  for s in "n1k64" "n1k64p1" "n1k64p1 792" "n1k64 792"; do
    set -- $s; tag="$1${2:+_fill$2}"
    SECONDS=0
    if [ -n "${2:-}" ]; then export WGC_GEMM_SKINNY_FILL=$2; else unset WGC_GEMM_SKINNY_FILL; fi
    WGC_GEMM_SKINNY_TILE=$1 ./wgc_bench $CASES > $W/wgc_${tag}_$r.jsonl 2> $W/wgc_${tag}_$r.err
    echo "$tag run $r: exit $? (${SECONDS}s)"
  done
done
unset WGC_GEMM_SKINNY_FILL
PYTHONUNBUFFERED=1 python3 torch_bench.py $CASES > $W/torch.jsonl 2> $W/torch.err
for f in $W/wgc_*_1.jsonl $W/wgc_*_2.jsonl; do echo "== $(basename $f)"; python3 compare.py $f $W/torch.jsonl | grep "^| decode"; done
cd $OUT && tar czf job.tgz w
