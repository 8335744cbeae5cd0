#!/usr/bin/env bash
# Builds glslangValidator 15.3 (GL_NV_cooperative_matrix2, which PyPI's
# glslang 13.1.1 lacks) from the glslang source that crates.io's
# shaderc-sys 0.10.1 bundles, into DIR (default build/glslang-cm2), for
# tools/gen_gemm_spirv.py's VK_NV_cooperative_matrix2 modules:
#   tools/build_glslang_cm2.sh && export WGC_GLSLANG_CM2=$PWD/build/glslang-cm2/StandAlone/glslang
# Needs cargo, cmake and a C++ compiler; a few minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/glslang-cm2}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# cargo fetches the crate's source into its registry; a throwaway manifest names it.
fetch="$out/fetch"
mkdir -p "$fetch/src"
cat > "$fetch/Cargo.toml" <<'TOML'
[package]
name = "fetch-glslang-source"
version = "0.0.0"
edition = "2021"
[dependencies]
shaderc-sys = { version = "=0.10.1", default-features = false }
TOML
: > "$fetch/src/lib.rs"
(cd "$fetch" && cargo fetch -q)
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/shaderc-sys-0.10.1/build/glslang | head -n 1)
cmake -S "$src" -B "$out" -DCMAKE_BUILD_TYPE=Release -DENABLE_OPT=OFF -DGLSLANG_TESTS=OFF -DENABLE_HLSL=OFF \
    -DBUILD_EXTERNAL=OFF -DENABLE_GLSLANG_BINARIES=ON >/dev/null
cmake --build "$out" --parallel "$(nproc 2>/dev/null || echo 2)" --target glslang-standalone
"$out/StandAlone/glslang" --version | head -n 1
