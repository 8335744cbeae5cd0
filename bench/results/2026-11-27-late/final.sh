#!/bin/sh
# Final call: GPU correctness of the merged routes, then whole networks and
# the LLaMA layer, new (main) against old (f911d14) and PyTorch eager and
# torch.compile, within about 540 s.
cd "$(dirname "$0")"
T0=$(date +%s)
left() { echo $((540 - $(date +%s) + T0)); }
G=$PWD; R=$OUT
mkdir -p new old
[ -f new/libwgcompute.so ] || xz -dc new.so.xz > new/libwgcompute.so
[ -f old/libwgcompute.so ] || xz -dc old.so.xz > old/libwgcompute.so
ln -sf libwgcompute.so new/libwgcompute.so.0; ln -sf libwgcompute.so old/libwgcompute.so.0
NEW=$G/new:$LD_LIBRARY_PATH; OLD=$G/old:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/gpu.txt
{
for t in test_conv test_conv_bn_act test_conv_residual test_conv_stem test_conv_winograd test_conv_explain \
         test_gemm_khr_wide test_gemm_epilogue test_expr test_expr_f16_round test_rope test_batch_norm_layouts test_expr_reduce; do
  S=$(date +%s)
  LD_LIBRARY_PATH=$NEW timeout 40 ./$t > t.out 2>&1; rc=$?
  echo "== $t rc=$rc $(( $(date +%s) - S )) s: $(tail -1 t.out)"
  [ $rc -ne 0 ] && tail -8 t.out
done
} > $R/tests.txt 2>&1
cat $R/tests.txt
echo "## nets new/old (left $(left))"
for v in new old; do
  B=./wgc_nets; [ $v = old ] && B=./wgc_nets_old
  LP=$NEW; [ $v = old ] && LP=$OLD
  for net in resnet50 mobilenetv2; do
    LD_LIBRARY_PATH=$LP timeout 40 $B --net $net --batch 1,32,256 --dtype f32 --layout nchw --iters 20 | sed "s/^{/{\"build\": \"$v\", /"
    LD_LIBRARY_PATH=$LP timeout 40 $B --net $net --batch 1,32,256 --dtype f16 --layout nhwc --iters 20 | sed "s/^{/{\"build\": \"$v\", /"
  done
done > $R/nets.jsonl 2> $R/nets.err
grep -c net $R/nets.jsonl
echo "## llama new/old (left $(left))"
LD_LIBRARY_PATH=$NEW timeout 70 ./wgc_blocks llama_prefill_512_f16 llama_prefill_2048_f16 llama_decode_1k_f16 llama_decode_8k_f16 > $R/llama_new.jsonl 2> $R/llama_new.err
LD_LIBRARY_PATH=$OLD timeout 50 ./wgc_blocks_old llama_prefill_512_f16 llama_prefill_2048_f16 llama_decode_8k_f16 > $R/llama_old.jsonl 2> $R/llama_old.err
grep -h '^{' $R/llama_new.jsonl $R/llama_old.jsonl | cut -c1-200
echo "## torch nets eager (left $(left))"
PYTHONUNBUFFERED=1 timeout 100 python3 torch_nets.py --time --net mobilenetv2,resnet50 --batch 32,256,1 --compile-batch "" > $R/torch_nets.jsonl 2> $R/torch_nets.err
tail -3 $R/torch_nets.err
echo "## torch llama f16 (left $(left))"
L=$(left); [ $L -gt 150 ] && PYTHONUNBUFFERED=1 timeout $((L - 110)) python3 torch_blocks.py llama_prefill_512_f16 llama_prefill_2048_f16 llama_decode_1k_f16 llama_decode_8k_f16 > $R/torch_llama.jsonl 2> $R/torch_llama.err
python3 compare_blocks.py $R/llama_new.jsonl $R/torch_llama.jsonl > $R/table_llama_new.md 2>&1
echo "## profiles (left $(left))"
LD_LIBRARY_PATH=$NEW timeout 15 ./wgc_nets --net resnet50 --batch 32 --dtype f16 --layout nhwc --iters 2 --profile 2>&1 | grep "^#" > $R/profile_r50_f16.txt
LD_LIBRARY_PATH=$NEW timeout 15 ./wgc_nets --net resnet50 --batch 32 --dtype f32 --layout nchw --iters 2 --profile 2>&1 | grep "^#" > $R/profile_r50_f32.txt
echo "## torch.compile nets f16 channels_last (left $(left))"
L=$(left); [ $L -gt 30 ] && PYTHONUNBUFFERED=1 timeout $((L - 5)) python3 torch_nets.py --time --net mobilenetv2,resnet50 --batch 32,256 --compile-batch 32,256 --only-compile > $R/torch_nets_compile.jsonl 2> $R/torch_nets_compile.err
echo "## done in $(( $(date +%s) - T0 )) s"
