#!/usr/bin/env bash
# Round 13, call 3: every f16 and bf16 decode case with the library as it is,
# PyTorch in the same call, and (K, N) one and two rows under
# WGC_GEMV_NARROW=0 (the kernel before axpy_unit_narrow) for the old-new
# comparison where the call lands on an H200. LLaMA-3.2-1B's 32 MiB weights
# stay in L2 between calls: how fast each kernel reads without the memory.
set -u
here=$(cd "$(dirname "$0")" && pwd)
W=$OUT/w; mkdir -p $W
cd "$here"
ln -sf libwgcompute.so libwgcompute.so.0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $W/gpu.txt
export LD_LIBRARY_PATH="$here:${LD_LIBRARY_PATH:-}"
SECONDS=0; ./test_gemv > $W/test_gemv.txt 2>&1; echo "test_gemv: exit $? (${SECONDS}s) $(tail -n 1 $W/test_gemv.txt)"
SMALL="_m1_k4096_n14336_kn _m1_k14336_n4096_kn _m2_k4096_n14336_kn _m2_k14336_n4096_kn _m1_k4096_n11008_kn _m1_k11008_n4096_kn _m2_k4096_n11008_kn _m2_k11008_n4096_kn _m1_k2048_n8192_kn _m1_k8192_n2048_kn"
SECONDS=0; ./wgc_bench decode_f16 decode_bf16 > $W/wgc_1.jsonl 2> $W/wgc_1.err; echo "wgc_bench all decode: exit $? (${SECONDS}s)"
SECONDS=0; WGC_GEMV_NARROW=0 ./wgc_bench $SMALL > $W/wgc_narrow0.jsonl 2> $W/wgc_narrow0.err; echo "wgc_bench narrow=0: exit $? (${SECONDS}s)"
SECONDS=0; ./wgc_bench $SMALL _k2048_ _k8192_ > $W/wgc_2.jsonl 2> $W/wgc_2.err; echo "wgc_bench second run: exit $? (${SECONDS}s)"
SECONDS=0; PYTHONUNBUFFERED=1 python3 torch_bench.py decode_f16 decode_bf16 > $W/torch.jsonl 2> $W/torch.err; echo "torch_bench: exit $? (${SECONDS}s)"
python3 compare.py $W/wgc_1.jsonl $W/torch.jsonl > $W/table_1.md
python3 compare.py $W/wgc_2.jsonl $W/torch.jsonl > $W/table_2.md
python3 compare.py --builds $W/wgc_narrow0.jsonl $W/wgc_2.jsonl > $W/narrow_cmp.md
grep -E "_k(2048|8192)_|_m(4|12)_|_m8_k(4096|11008)_n(11008|4096)|class|---" $W/table_1.md | head -40
cat $W/narrow_cmp.md | tail -16
cd $OUT && tar czf job.tgz w
