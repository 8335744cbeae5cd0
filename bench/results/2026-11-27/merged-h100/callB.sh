#!/bin/sh
# Final call B: whole networks (new build), fusion and fused reductions
# against PyTorch, channels-last pooling and batch norm new vs old.
cd "$(dirname "$0")"
G=$PWD; R=$OUT/b; mkdir -p $R
mkdir -p new old
cp libwgcompute.so new/ && ln -sf libwgcompute.so new/libwgcompute.so.0
cp libwgcompute_old.so old/libwgcompute.so && ln -sf libwgcompute.so old/libwgcompute.so.0
NEW=$G/new:$LD_LIBRARY_PATH; OLD=$G/old:$LD_LIBRARY_PATH
SECONDS=0
mkdir -p nets && cp wgc_nets test_conv_bn_act torch_nets.py run_nets_gpu.sh nets/ && cp libwgcompute.so nets/
(cd nets && timeout 175 sh run_nets_gpu.sh) > $R/nets.txt 2>&1; echo "nets ${SECONDS} s"
SECONDS=0
LD_LIBRARY_PATH=$NEW timeout 70 ./wgc_bench fusion copy_f32 > $R/wgc_fusion.jsonl 2> $R/wgc_fusion.err; echo "fusion ${SECONDS} s"
SECONDS=0
PYTHONUNBUFFERED=1 timeout 90 python3 torch_fusion.py > $R/torch_fusion.jsonl 2> $R/torch_fusion.err; echo "torch fusion ${SECONDS} s"
SECONDS=0
PYTHONUNBUFFERED=1 timeout 60 python3 torch_fused_reduce.py > $R/torch_fused_reduce.jsonl 2> $R/torch_fused_reduce.err; echo "torch fused reduce ${SECONDS} s"
cat $R/torch_fusion.jsonl $R/torch_fused_reduce.jsonl > $R/torch_fusion_all.jsonl
python3 compare.py $R/wgc_fusion.jsonl $R/torch_fusion_all.jsonl > $R/table_fusion.md 2>&1
SECONDS=0
LD_LIBRARY_PATH=$NEW timeout 40 ./wgc_bench batch_norm pool > $R/wgc_bnpool_new.jsonl 2> $R/wgc_bnpool_new.err
LD_LIBRARY_PATH=$OLD timeout 40 ./wgc_bench batch_norm pool > $R/wgc_bnpool_old.jsonl 2> $R/wgc_bnpool_old.err
PYTHONUNBUFFERED=1 timeout 50 python3 torch_bench.py batch_norm pool > $R/torch_bnpool.jsonl 2> $R/torch_bnpool.err; echo "bn/pool ${SECONDS} s"
python3 compare.py $R/wgc_bnpool_new.jsonl $R/torch_bnpool.jsonl > $R/table_bnpool.md 2>&1
python3 compare.py --builds $R/wgc_bnpool_old.jsonl $R/wgc_bnpool_new.jsonl > $R/table_bnpool_builds.md 2>&1
