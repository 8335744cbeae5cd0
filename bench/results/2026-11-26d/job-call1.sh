#!/usr/bin/env bash
# Round 10, call 1 (H100): skinny tiles of fewer subgroups (one or two
# subgroups per workgroup; code not kept, see BENCHMARKS.md "Tenth round"),
# stream_probe, and the tiled SGEMM with 16-byte tile loads
# (WGC_GEMM_TILED_VEC4; code not kept) against single-element loads.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
for t in n1k64s1 n1k64s2 n2k32s1; do
  SECONDS=0; WGC_GEMM_SPIRV=1 WGC_GEMM_SKINNY_TILE=$t ./test_gemm_f16 > $W/test_$t.txt 2>&1; echo "test_gemm_f16 $t: exit $? (${SECONDS}s)"; tail -2 $W/test_$t.txt
done
SECONDS=0; ./stream_probe > $W/stream_probe.txt 2>&1; echo "stream_probe exit $? (${SECONDS}s)"; cat $W/stream_probe.txt
CASES="decode_f16_m8 decode_f16_m32"
for r in 1 2; do
  for v in "default" "WGC_GEMM_SPIRV=1" "WGC_GEMM_SPIRV=1 WGC_GEMM_SKINNY_TILE=n1k64s1" "WGC_GEMM_SPIRV=1 WGC_GEMM_SKINNY_TILE=n1k64s2" "WGC_GEMM_SPIRV=1 WGC_GEMM_SKINNY_TILE=n2k32s1"; do
    tag=$(echo "$v" | tr -c 'A-Za-z0-9\n' '_')
    e=""; [ "$v" = default ] || e="$v"
    SECONDS=0; env $e ./wgc_bench $CASES > $W/wgc_${tag}_$r.jsonl 2>$W/wgc_${tag}_$r.err; echo "[$v] run $r: exit $? (${SECONDS}s)"
  done
done
SECONDS=0; WGC_GEMM_TILED_VEC4=0 ./test_matmul > $W/test_matmul_novec.txt 2>&1; echo "test_matmul vec4 off: exit $?"; ./test_matmul > $W/test_matmul.txt 2>&1; echo "test_matmul: exit $? (${SECONDS}s)"
S="sgemm bmm_f32 qk_bmm_f32"
for r in 1 2; do for v in "WGC_GEMM_TILED_VEC4=0" "default"; do
  tag=$(echo "$v" | tr -c 'A-Za-z0-9\n' '_'); e=""; [ "$v" = default ] || e="$v"
  SECONDS=0; env $e ./wgc_bench $S > $W/sg_${tag}_$r.jsonl 2>$W/sg_${tag}_$r.err; echo "sgemm [$v] run $r: exit $? (${SECONDS}s)"
done; done
SECONDS=0; python3 torch_bench.py $CASES $S > $W/torch.jsonl 2>$W/torch.err; echo "torch ${SECONDS}s"
# (The summary table printed here is the same as in job-call2.sh.)
cd $OUT && tar czf job.tgz w
