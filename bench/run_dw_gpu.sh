#!/bin/sh
# MobileNetV2's depthwise layers and channels-last pooling and batch norm,
# on one or more library builds against PyTorch eager, in about 100 s:
# checks first (test_conv_depthwise and wgc_dw_bench --check against
# double precision, torch_dw.py --check), then timings and tables
# (BENCHMARKS.md, "Depthwise convolutions").
#
#   sh run_dw_gpu.sh new [old ...]
#
# Run from a folder holding wgc_dw_bench, wgc_bench, test_conv_depthwise,
# torch_dw.py, torch_bench.py and pair_bench.py, with each build's library
# in a sub-folder of its name (new/libwgcompute.so, old/libwgcompute.so).
cd "$(dirname "$0")"
[ $# -gt 0 ] || set -- new
BASE_LD=$LD_LIBRARY_PATH
for b in "$@"; do ln -sf libwgcompute.so "$b/libwgcompute.so.0"; done
nvidia-smi --query-gpu=name --format=csv,noheader
echo "## checks ($1)"
LD_LIBRARY_PATH=$PWD/$1:$BASE_LD timeout 30 ./test_conv_depthwise 2>&1 | tail -3
LD_LIBRARY_PATH=$PWD/$1:$BASE_LD timeout 30 ./wgc_dw_bench --check --iters 0 --tag "$1"
timeout 60 python3 torch_dw.py --check | tail -3
echo "## depthwise layers"
rm -f dw.jsonl pb_*.jsonl
for b in "$@"; do
  LD_LIBRARY_PATH=$PWD/$b:$BASE_LD timeout 60 ./wgc_dw_bench --tag "$b" --iters 20 >> dw.jsonl
done
timeout 60 python3 torch_dw.py --time --iters 20 >> dw.jsonl
grep copy_tbs dw.jsonl
python3 torch_dw.py --ratios dw.jsonl
echo "## channels-last pooling and batch norm"
pairs=""
for b in "$@"; do
  LD_LIBRARY_PATH=$PWD/$b:$BASE_LD timeout 30 ./wgc_bench pool/ norm/batch-nhwc 2>/dev/null > "pb_$b.jsonl"
  pairs="$pairs $b=pb_$b.jsonl"
done
timeout 30 python3 torch_bench.py pool/ norm/batch-nhwc 2>/dev/null > pb_torch.jsonl
grep hbm_copy pb_torch.jsonl
python3 pair_bench.py $pairs torch=pb_torch.jsonl
