#!/usr/bin/env bash
# The tensor-core ceiling through Vulkan against CUDA on the same GPU (see
# BENCHMARKS.md, "GEMM ceiling"). On the GPU machine, from a folder holding
# coop_ceiling (built here against libwgcompute.so), coop_loop.wgsl,
# mma_loop.cu, staged_gemm.cu and torch_peak.py: bash run.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -e "$here/libwgcompute.so.0" ] || ln -sf libwgcompute.so "$here/libwgcompute.so.0"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nvcc -O3 -arch=sm_90 -o /tmp/mma_loop "$here/mma_loop.cu" && /tmp/mma_loop | tee /tmp/mma_loop.jsonl
# The multiprocessor count, as CUDA reports it, sizes the Vulkan grid too.
sms=$(head -1 /tmp/mma_loop.jsonl | sed 's/.*"sms":\([0-9]*\).*/\1/')
cuobjdump -sass /tmp/mma_loop | grep -c HMMA | sed 's/^/HMMA instructions in the CUDA probe: /'
"$here/coop_ceiling" "$here/coop_loop.wgsl" "$sms"
python3 "$here/torch_peak.py"
# The library's GEMM algorithm written in CUDA (register staging as the
# SPIR-V kernels do, and cp.async), at 8192^3 and prefill shapes.
nvcc -O3 -arch=sm_90 -o /tmp/staged_gemm "$here/staged_gemm.cu" && /tmp/staged_gemm
