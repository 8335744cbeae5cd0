#!/bin/sh
# Whole networks (ResNet-50, MobileNetV2 forward) on wgcompute against
# PyTorch: the reference checks first, then timings, a per-layer profile,
# PyTorch's timings and the ratios, in about 150 s. Run from a folder
# holding wgc_nets, test_conv_bn_act, torch_nets.py and the library
# (libwgcompute.so, or libwgcompute.so.xz): `sh run_nets_gpu.sh` (BENCHMARKS.md, "Whole networks").
cd "$(dirname "$0")"
T0=$(date +%s)
left() { echo $((140 - $(date +%s) + T0)); }
[ -f libwgcompute.so ] || xz -dk libwgcompute.so.xz
ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH=$PWD:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name --format=csv,noheader
D=$(mktemp -d)
echo "## conv2d_bn_act from C against double (tensor-core routes here)"
timeout 20 ./test_conv_bn_act 2>&1 | tail -2
echo "## reference checks: library output (batch 2, 224x224) against PyTorch float64 with the same weights"
for net in resnet50 mobilenetv2; do
  timeout 20 ./wgc_nets --net $net --batch 2 --dtype f32 --iters 0 --check $D/${net}_f32.bin 2>&1 | grep -v adapter
  timeout 20 ./wgc_nets --net $net --batch 2 --dtype f16 --layout nhwc --iters 0 --check $D/${net}_f16.bin 2>&1 | grep -v adapter
done
timeout 40 python3 torch_nets.py --check $D/*.bin
rm -f $D/*.bin
echo "## library timings (wall ms per forward, 20 runs after 0.5 s warm-up) (left: $(left) s)"
: > $D/wgc.jsonl
for net in mobilenetv2 resnet50; do
  timeout 20 ./wgc_nets --net $net --batch 1,32,256 --dtype f32 --layout nchw --iters 20 | tee -a $D/wgc.jsonl
  timeout 20 ./wgc_nets --net $net --batch 1,32,256 --dtype f16 --layout nhwc --iters 20 | tee -a $D/wgc.jsonl
  timeout 10 ./wgc_nets --net $net --batch 32 --dtype f16 --layout nchw --iters 20 | tee -a $D/wgc.jsonl
  timeout 10 ./wgc_nets --net $net --batch 32 --dtype f32 --layout nhwc --iters 20 | tee -a $D/wgc.jsonl
done
echo "## per-layer profile, resnet50 batch 32 f16 nhwc (left: $(left) s)"
[ "$(left)" -gt 60 ] && timeout 12 ./wgc_nets --net resnet50 --batch 32 --dtype f16 --layout nhwc --iters 2 --profile | grep "^#"
echo "## by kernel, resnet50 batch 32 f16 nchw (left: $(left) s)"
[ "$(left)" -gt 55 ] && timeout 10 ./wgc_nets --net resnet50 --batch 32 --dtype f16 --layout nchw --iters 2 --profile | sed -n '/by kernel/,$p'
echo "## PyTorch eager timings and ratios (left: $(left) s)"
[ "$(left)" -gt 25 ] && timeout $(( $(left) - 8 )) python3 torch_nets.py --time --net mobilenetv2,resnet50 --batch 32,256,1 --compile-batch "" | tee $D/torch.jsonl
timeout 10 python3 torch_nets.py --ratios $D/torch.jsonl $D/wgc.jsonl
echo "## per-layer profile, mobilenetv2 batch 32 f16 nhwc (left: $(left) s)"
[ "$(left)" -gt 10 ] && timeout 8 ./wgc_nets --net mobilenetv2 --batch 32 --dtype f16 --layout nhwc --iters 2 --profile | grep "^#"
L=$(left)
echo "## torch.compile f16 channels_last, batch 32 (left: $L s)"
[ "$L" -gt 25 ] && timeout $((L - 2)) python3 torch_nets.py --time --net mobilenetv2,resnet50 --batch 32 --compile-batch 32 --only-compile
echo "## done in $(( $(date +%s) - T0 )) s"
