#!/usr/bin/env bash
# Round 11, call 1: 16-byte weight loads in the matrix-vector row-dot
# kernel (one and two rows of f16/bf16 against (N, K) weights) against the
# previous library; GPU tests; the load-structure probe at the vocabulary
# projection's size.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"; [ -e libwgcompute.so.0 ] || ln -sf libwgcompute.so libwgcompute.so.0
ln -sf libwgcompute.so head/libwgcompute.so.0
export LD_LIBRARY_PATH="$here/head:$here:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
SECONDS=0; ./test_gemv > $W/test_gemv.txt 2>&1; echo "test_gemv: exit $? (${SECONDS}s)"; tail -1 $W/test_gemv.txt
SECONDS=0; WGC_GEMV_F16_LOAD=8 ./test_gemv > $W/test_gemv_load8.txt 2>&1; echo "test_gemv load8: exit $? (${SECONDS}s)"; tail -1 $W/test_gemv_load8.txt
SECONDS=0; ./test_bf16 > $W/test_bf16.txt 2>&1; echo "test_bf16: exit $? (${SECONDS}s)"; tail -1 $W/test_bf16.txt
SECONDS=0; ./stream_probe --only vocab > $W/stream_probe_vocab.txt 2>&1; echo "probe vocab: exit $? (${SECONDS}s)"; cat $W/stream_probe_vocab.txt
SECONDS=0; ./stream_probe --only stream > $W/stream_probe_stream.txt 2>&1; echo "probe stream: exit $? (${SECONDS}s)"; grep -E "splits=(1|2)|roofline" $W/stream_probe_stream.txt | head -40
OUT=$W ./compare_builds.sh old head decode_f16_m1_ decode_bf16_m1_ decode_f32_m1_ decode_f16_m8_k4096_n128256 decode_f16_m16_k4096_n128256 decode_f16_m8_k4096_n14336_nk decode_f16_m16_k4096_n14336_nk 2>&1 | tail -90
cd $OUT && tar czf job.tgz w
