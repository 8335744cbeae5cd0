#!/bin/sh
# Batch norm (inference) on one or more library builds against PyTorch
# eager, each beside its own copy of the same bytes timed in the same run:
# checks first (test_batch_norm_units and test_batch_norm_layouts against
# double precision on the first build), then wgc_bench's and
# torch_bench.py's norm/batch cases (batch 32 and 256, NCHW and
# channels-last, f32 and f16, each with copy_<case>), and the table of
# bn_copy_table.py: each side's batch norm as a share of its copy's
# bandwidth, and PyTorch's time over each build's. About 5 minutes for two
# builds; BN_FILTER=_n256 (batch 256 only) or BN_FILTER=norm/batch-nhwc
# (channels-last only) runs a part.
#
#   sh run_bn_gpu.sh new [old ...]
#
# Run from a folder holding wgc_bench, test_batch_norm_units,
# test_batch_norm_layouts, torch_bench.py and bn_copy_table.py, with each
# build's library in a sub-folder of its name (new/libwgcompute.so,
# old/libwgcompute.so).
cd "$(dirname "$0")"
[ $# -gt 0 ] || set -- new
FILTER=${BN_FILTER:-norm/batch}
BASE_LD=$LD_LIBRARY_PATH
for b in "$@"; do ln -sf libwgcompute.so "$b/libwgcompute.so.0"; done
nvidia-smi --query-gpu=name --format=csv,noheader
echo "## checks ($1)"
for t in test_batch_norm_units test_batch_norm_layouts; do
  LD_LIBRARY_PATH=$PWD/$1:$BASE_LD timeout 60 ./$t 2>&1 | tail -2
done
echo "## batch norm and the copy of the same bytes ($FILTER)"
rm -f bn_*.jsonl
sides=""
for b in "$@"; do
  LD_LIBRARY_PATH=$PWD/$b:$BASE_LD timeout 240 ./wgc_bench "$FILTER" 2>/dev/null > "bn_$b.jsonl"
  grep -c '"check": "ok"' "bn_$b.jsonl" | sed "s/^/$b: cases checked ok: /"
  grep -v '"check": "ok"' "bn_$b.jsonl" | grep '"case"'
  sides="$sides $b=bn_$b.jsonl"
done
timeout 240 python3 torch_bench.py "$FILTER" 2>/dev/null > bn_torch.jsonl
grep hbm_copy bn_torch.jsonl
python3 bn_copy_table.py $sides torch=bn_torch.jsonl
