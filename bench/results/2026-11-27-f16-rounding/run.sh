#!/bin/sh
# f16 rounding of generated expression kernels (WGC_EXPR_F16_ROUND =
# integer | quantize | pack): exactness on the GPU first, then the f16
# fusion cases under each rounding, interleaved. Under 120 s.
cd "$(dirname "$0")" || exit 1
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
[ -f libwgcompute.so.0 ] || xz -dk libwgcompute.so.0.xz || exit 1
chmod +x wgc_bench test_expr test_expr_reduce test_expr_f16_round 2>/dev/null
export LD_LIBRARY_PATH=$PWD:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name --format=csv,noheader

echo "== test_expr_f16_round (every rounding, bit for bit against round-to-nearest-even) [$(elapsed) s]"
timeout 40 ./test_expr_f16_round 2>&1 | tail -40

run_test() { # mode program seconds
    echo "== WGC_EXPR_F16_ROUND=$1 $2 [$(elapsed) s]"
    WGC_EXPR_F16_ROUND=$1 timeout "$3" "./$2" > out.txt 2>&1
    rc=$?
    tail -25 out.txt
    [ $rc -eq 124 ] && echo "(timed out after $3 s)"
    echo "(exit $rc)"
}
run_test quantize test_expr 20
run_test pack test_expr 20

bench_round() {
    for m in "$@"; do
        echo "== bench WGC_EXPR_F16_ROUND=$m [$(elapsed) s]"
        WGC_EXPR_F16_ROUND=$m timeout 20 ./wgc_bench fused_swiglu_f16 fused_mean_sqdev_last_f16 fused_sum_xy_last_f16 2>&1 \
            | grep -v _first_call
    done
}
bench_round integer quantize pack

run_test quantize test_expr_reduce 30
run_test pack test_expr_reduce 30

if [ "$(elapsed)" -lt 80 ]; then bench_round pack quantize integer; fi
if [ "$(elapsed)" -lt 95 ]; then run_test integer test_expr 20; fi
if [ "$(elapsed)" -lt 90 ]; then run_test integer test_expr_reduce 28; fi
echo "== done [$(elapsed) s]"
