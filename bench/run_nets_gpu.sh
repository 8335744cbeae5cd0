#!/bin/sh
# Whole networks (ResNet-50, MobileNetV2 forward) on wgcompute against
# PyTorch: the reference checks first, then timings, ratios and per-layer
# profiles, in about 150 s. Run from a folder holding wgc_nets,
# test_conv_bn_act, torch_nets.py and the library (libwgcompute.so, or
# libwgcompute.so.xz): `sh run_nets_gpu.sh` (BENCHMARKS.md, "Whole networks").
cd "$(dirname "$0")"
T0=$(date +%s)
left() { echo $((140 - $(date +%s) + T0)); }
[ -f libwgcompute.so ] || xz -dk libwgcompute.so.xz
ln -sf libwgcompute.so libwgcompute.so.0
export LD_LIBRARY_PATH=$PWD:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name --format=csv,noheader
D=$(mktemp -d)
echo "## conv2d_bn_act from C against double (tensor-core routes here)"
timeout 20 ./test_conv_bn_act 2>&1 | tail -4
echo "## reference checks: library output (batch 2, 224x224) against PyTorch float64 with the same weights"
for net in resnet50 mobilenetv2; do
  timeout 20 ./wgc_nets --net $net --batch 2 --dtype f32 --iters 0 --check $D/${net}_f32.bin
  timeout 20 ./wgc_nets --net $net --batch 2 --dtype f16 --layout nhwc --iters 0 --check $D/${net}_f16.bin
done
timeout 40 python3 torch_nets.py --check $D/*.bin
rm -f $D/*.bin
echo "## library timings (wall ms per forward, 20 runs after 0.5 s warm-up)"
: > $D/wgc.jsonl
for net in mobilenetv2 resnet50; do
  timeout 25 ./wgc_nets --net $net --batch 1,32,256 --dtype f32 --layout nchw --iters 20 | tee -a $D/wgc.jsonl
  timeout 25 ./wgc_nets --net $net --batch 1,32,256 --dtype f16 --layout nhwc --iters 20 | tee -a $D/wgc.jsonl
done
for net in mobilenetv2 resnet50; do
  [ "$(left)" -gt 75 ] && timeout 15 ./wgc_nets --net $net --batch 32 --dtype f32 --layout nhwc --iters 20 | tee -a $D/wgc.jsonl
  [ "$(left)" -gt 75 ] && timeout 15 ./wgc_nets --net $net --batch 32 --dtype f16 --layout nchw --iters 20 | tee -a $D/wgc.jsonl
done
echo "## PyTorch eager timings and ratios (left: $(left) s)"
timeout 40 python3 torch_nets.py --time --net mobilenetv2,resnet50 --batch 1,32,256 --compile-batch "" --wgc $D/wgc.jsonl
echo "## per-layer profile, resnet50 batch 32 f16 nhwc (left: $(left) s)"
[ "$(left)" -gt 15 ] && timeout 15 ./wgc_nets --net resnet50 --batch 32 --dtype f16 --layout nhwc --iters 3 --profile | grep "^#"
echo "## per-layer profile, mobilenetv2 batch 32 f16 nhwc (left: $(left) s)"
[ "$(left)" -gt 12 ] && timeout 10 ./wgc_nets --net mobilenetv2 --batch 32 --dtype f16 --layout nhwc --iters 3 --profile | grep "^#" | head -80
echo "## by kernel: resnet50 batch 32 f16 nchw, f32 nchw, f32 nhwc (left: $(left) s)"
for c in "f16 nchw" "f32 nchw" "f32 nhwc"; do
  set -- $c
  [ "$(left)" -gt 35 ] && timeout 12 ./wgc_nets --net resnet50 --batch 32 --dtype $1 --layout $2 --iters 2 --profile | sed -n '/by kernel/,$p'
done
L=$(left)
echo "## torch.compile f16 channels_last, batch 32 (left: $L s)"
[ "$L" -gt 20 ] && timeout $((L - 2)) python3 torch_nets.py --time --net mobilenetv2,resnet50 --batch 32 --compile-batch 32 --only-compile
echo "## done in $(( $(date +%s) - T0 )) s"
