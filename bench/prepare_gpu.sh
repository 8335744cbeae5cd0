#!/usr/bin/env bash
# Build the release library and the benchmark here, and gather what a GPU
# run needs into .gpu/ (see BENCHMARKS.md). Run from the project root.
set -euo pipefail
cargo build --release
cc -O2 -std=c99 -Wall -Wextra -Iinclude bench/wgc_bench.c bench/harness.c bench/cases_*.c -Ltarget/release -lwgcompute -lm \
    -o target/release/wgc_bench
cc -O2 -std=c99 -Wall -Wextra -Iinclude bench/stream_probe.c -Ltarget/release -lwgcompute -lm \
    -o target/release/stream_probe
../shared/gpu/prepare.sh target/release/libwgcompute.so target/release/wgc_bench target/release/stream_probe \
    bench/torch_bench.py bench/torch_attention.py bench/torch_fusion.py bench/torch_fused_reduce.py bench/compare.py \
    bench/run_gpu.sh \
    bench/compare_builds.sh bench/compare_env.sh
