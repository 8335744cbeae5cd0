#!/bin/sh
# f32 implicit-GEMM convolutions with K split into f32 slabs
# (new) against the compare-exchange split of main (old): correctness first,
# then ResNet-50 f32 NCHW at batch 1 and 32 with the per-layer profile, then
# the split's fill (WGC_CONV_SPLIT_FILL: at 12f5e8f split where the 64x64 tiles are
# under a third of it; default 1056 on 132 SMs) compared on the new library.
cd "$(dirname "$0")"
T0=$(date +%s)
left() { echo $((115 - $(date +%s) + T0)); }
G=$PWD
mkdir -p new old
[ -f new/libwgcompute.so ] || xz -dc new.so.xz > new/libwgcompute.so
[ -f old/libwgcompute.so ] || xz -dc old.so.xz > old/libwgcompute.so
ln -sf libwgcompute.so new/libwgcompute.so.0
ln -sf libwgcompute.so old/libwgcompute.so.0
NEW=$G/new:$LD_LIBRARY_PATH
OLD=$G/old:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name --format=csv,noheader
echo "## correctness (new): C conv tests against double, then ResNet-50 f32 at 64x64 against the double CPU forward"
S0=$(date +%s); LD_LIBRARY_PATH=$NEW timeout 25 ./test_conv > tc.txt 2>&1; echo "test_conv rc=$? in $(( $(date +%s) - S0 )) s"; tail -4 tc.txt
S0=$(date +%s); LD_LIBRARY_PATH=$NEW timeout 15 ./test_conv_bn_act > tcb.txt 2>&1; echo "test_conv_bn_act rc=$? in $(( $(date +%s) - S0 )) s"; tail -3 tcb.txt
for fill in default 0 2112; do
  if [ $fill = default ]; then unset WGC_CONV_SPLIT_FILL; else export WGC_CONV_SPLIT_FILL=$fill; fi
  echo "# --ref, WGC_CONV_SPLIT_FILL=$fill"
  LD_LIBRARY_PATH=$NEW timeout 15 ./wgc_nets --net resnet50 --batch 1,2 --size 64 --dtype f32 --iters 0 --ref 2>&1 | grep -v adapter
done
unset WGC_CONV_SPLIT_FILL
echo "## correctness (old), the same --ref (left $(left) s)"
LD_LIBRARY_PATH=$OLD timeout 15 ./wgc_nets --net resnet50 --batch 1,2 --size 64 --dtype f32 --iters 0 --ref 2>&1 | grep -v adapter
echo "## new: resnet50 f32 nchw batch 1,32 --profile (left $(left) s)"
LD_LIBRARY_PATH=$NEW timeout 25 ./wgc_nets --net resnet50 --dtype f32 --layout nchw --batch 1,32 --profile 2>&1 | grep -v adapter
echo "## old: resnet50 f32 nchw batch 1,32 --profile (left $(left) s)"
LD_LIBRARY_PATH=$OLD timeout 25 ./wgc_nets --net resnet50 --dtype f32 --layout nchw --batch 1,32 --profile 2>&1 | grep -v adapter
echo "## split fill on the new library: wall ms per forward, then the split layers' profile rows (left $(left) s)"
for fill in 0 528 1056 2112; do
  [ "$(left)" -gt 12 ] || break
  echo "# WGC_CONV_SPLIT_FILL=$fill"
  WGC_CONV_SPLIT_FILL=$fill LD_LIBRARY_PATH=$NEW timeout 12 ./wgc_nets --net resnet50 --dtype f32 --layout nchw --batch 1,32 --profile 2>&1 \
    | grep -E '^\{|layer3\.[01]\.conv[12] |layer4\.[01]\.conv[12] |by kernel|conv_gemm|split_sum'
done
echo "## repeat, new then old, wall ms only (left $(left) s)"
[ "$(left)" -gt 10 ] && LD_LIBRARY_PATH=$NEW timeout 10 ./wgc_nets --net resnet50 --dtype f32 --layout nchw --batch 1,32 2>&1 | grep '^{'
[ "$(left)" -gt 10 ] && LD_LIBRARY_PATH=$OLD timeout 10 ./wgc_nets --net resnet50 --dtype f32 --layout nchw --batch 1,32 2>&1 | grep '^{'
echo "## done in $(( $(date +%s) - T0 )) s"
