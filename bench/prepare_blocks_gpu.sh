#!/usr/bin/env bash
# Build the release library and wgc_blocks here, and gather what a GPU run
# of the model blocks needs into .gpu/ (see BENCHMARKS.md). Run from the
# project root.
set -euo pipefail
cargo build --release
cc -O2 -std=c99 -Wall -Wextra -Iinclude -Ibench bench/blocks_main.c bench/blocks_llama.c bench/blocks_cnn.c \
    bench/blocks_mlp.c bench/harness.c -Ltarget/release -lwgcompute -lm -o target/release/wgc_blocks
../shared/gpu/prepare.sh target/release/libwgcompute.so target/release/wgc_blocks \
    bench/torch_blocks.py bench/py_blocks.py bench/compare_blocks.py bench/run_blocks_gpu.sh
