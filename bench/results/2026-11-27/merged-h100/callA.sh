#!/bin/sh
# Final call A: GPU correctness of the merged routes, the GEMM epilogue bench,
# the LLaMA layer new (fused attention, wide GEMM) vs old main vs PyTorch.
cd "$(dirname "$0")"
G=$PWD; R=$OUT/a; mkdir -p $R
mkdir -p new old
cp libwgcompute.so new/ && ln -sf libwgcompute.so new/libwgcompute.so.0
cp libwgcompute_old.so old/libwgcompute.so && ln -sf libwgcompute.so old/libwgcompute.so.0
NEW=$G/new:$LD_LIBRARY_PATH; OLD=$G/old:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
SECONDS=0
{
echo "== test_gemm_epilogue (default)"; LD_LIBRARY_PATH=$NEW timeout 40 ./test_gemm_epilogue 2>&1 | tail -3
echo "== test_gemm_epilogue WGC_GEMM_WIDE=1"; WGC_GEMM_WIDE=1 LD_LIBRARY_PATH=$NEW timeout 40 ./test_gemm_epilogue 2>&1 | tail -3
echo "== test_gemm_khr_wide"; LD_LIBRARY_PATH=$NEW timeout 40 ./test_gemm_khr_wide 2>&1 | grep -i "fail\|wrong [1-9]" | tail -5
echo "== test_expr_reduce"; LD_LIBRARY_PATH=$NEW timeout 70 ./test_expr_reduce 2>&1 | tail -4
echo "== test_expr"; LD_LIBRARY_PATH=$NEW timeout 30 ./test_expr 2>&1 | tail -6
echo "== test_conv_bn_act"; LD_LIBRARY_PATH=$NEW timeout 30 ./test_conv_bn_act 2>&1 | tail -2
echo "== test_conv_depthwise"; LD_LIBRARY_PATH=$NEW timeout 30 ./test_conv_depthwise 2>&1 | tail -2
echo "(tests ${SECONDS} s)"
} > $R/tests.txt 2>&1
SECONDS=0
LD_LIBRARY_PATH=$NEW timeout 60 ./gemm_epilogue_bench > $R/gemm_epilogue.txt 2>&1; echo "epilogue ${SECONDS} s"
SECONDS=0
LD_LIBRARY_PATH=$NEW timeout 100 ./wgc_blocks llama > $R/wgc_llama_new.jsonl 2> $R/wgc_llama_new.err; echo "llama new ${SECONDS} s"
SECONDS=0
WGC_BLOCKS_ATTENTION=chain LD_LIBRARY_PATH=$OLD timeout 90 ./wgc_blocks llama_prefill llama_decode > $R/wgc_llama_old.jsonl 2> $R/wgc_llama_old.err; echo "llama old ${SECONDS} s"
SECONDS=0
PYTHONUNBUFFERED=1 timeout 170 python3 torch_blocks.py llama_prefill llama_decode > $R/torch_llama.jsonl 2> $R/torch_llama.err; echo "torch llama ${SECONDS} s"
python3 compare_blocks.py $R/wgc_llama_new.jsonl $R/torch_llama.jsonl --profiles > $R/table_llama_new.md 2>&1
python3 compare_blocks.py $R/wgc_llama_old.jsonl $R/torch_llama.jsonl > $R/table_llama_old.md 2>&1
cat $R/tests.txt
