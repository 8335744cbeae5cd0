#!/usr/bin/env python3
"""Join the two benchmark outputs into one table: case, size, our time,
PyTorch's time, ratio (PyTorch time / our time: above 1 means faster than
PyTorch), target, and the fraction of the hardware limit (measured copy
bandwidth for memory-bound cases, the datasheet FLOP rate for GEMM/conv)."""
import json
import sys

# Dense datasheet rates of the SXM parts (H100 and H200 share them), FLOP/s.
PEAK_FP32 = 67e12
PEAK_FP16_TENSOR = 989e12

# case -> (bytes moved or FLOPs, kind, target ratio)
GIB = 1 << 30
CASES = {
    "add_f32": (3 * 4 * (1 << 28), "bytes", 0.95),
    "sum_f32": (4 * (1 << 28), "bytes", 0.90),
    "softmax_f32": (2 * 4 * 65536 * 4096, "bytes", 1.0),
    "layer_norm_f32": (2 * 4 * 65536 * 4096, "bytes", 1.0),
    ("sgemm_f32", "4096^3"): (2 * 4096**3, "fp32", 0.75),
    ("sgemm_f32", "8192^3"): (2 * 8192**3, "fp32", 0.75),
    ("gemm_f16_f32acc", "4096^3"): (2 * 4096**3, "fp16", 0.5),
    ("gemm_f16_f32acc", "8192^3"): (2 * 8192**3, "fp16", 0.5),
    "bmm_f32": (2 * 512 * 128**3, "fp32", 0.75),
    "conv_3x3_64_56": (2 * 32 * 64 * 56 * 56 * 64 * 9, "fp32", 0.6),
    "conv_1x1_256_512_s2": (2 * 32 * 512 * 28 * 28 * 256, "fp32", 0.6),
    "conv_7x7_3_64_s2": (2 * 32 * 64 * 112 * 112 * 3 * 49, "fp32", 0.6),
    "small_ops_1000": (2 * 4 * (1 << 20), "bytes", None),
    "small_ops_1000_wall": (2 * 4 * (1 << 20), "bytes", None),
}


def load(path):
    rows = {}
    extra = {}
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r["case"] == "hbm_copy":
            extra = r
            continue
        rows[(r["case"], r["size"])] = r
    return rows, extra


def main(ours_path, torch_path):
    ours, _ = load(ours_path)
    theirs, copy = load(torch_path)
    bw = copy.get("gbps", 0) * 1e9
    print(f"GPU: {copy.get('gpu', '?')}; measured copy bandwidth {bw / 1e12:.2f} TB/s (read + write)\n")
    print("| case | size | wgcompute ms | PyTorch ms | ratio | target | fraction of limit | check |")
    print("| --- | --- | ---: | ---: | ---: | --- | ---: | --- |")
    for key, r in ours.items():
        case, size = key
        t = theirs.get(key) or theirs.get(("small_ops_1000", size) if case.startswith("small_ops") else key)
        spec = CASES.get((case, size)) or CASES.get(case)
        ms = r["ms"]
        ratio = t["ms"] / ms if t else float("nan")
        frac = ""
        target = ""
        if spec:
            amount, kind, tgt = spec
            sec = ms / 1e3
            if kind == "bytes" and bw:
                frac = f"{amount / sec / bw:.0%} of {bw / 1e12:.2f} TB/s"
            elif kind == "fp32":
                frac = f"{amount / sec / PEAK_FP32:.0%} of 67 TFLOP/s ({amount / sec / 1e12:.1f})"
            elif kind == "fp16":
                frac = f"{amount / sec / PEAK_FP16_TENSOR:.0%} of 989 TFLOP/s ({amount / sec / 1e12:.1f})"
            target = f">= {tgt}" if tgt else ("<= 0.005 ms/op" if case.startswith("small") else "")
            if case.startswith("small"):
                frac = f"{ms * 1000:.1f} us/op"
        theirs_ms = f"{t['ms']:.4f}" if t else "-"
        print(f"| {case} | {size} | {ms:.4f} | {theirs_ms} | {ratio:.2f} | {target} | {frac} | {r['check']} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
