#!/usr/bin/env python3
"""The PyTorch twin of bench/gemm_epilogue_bench.c: F.gelu(F.linear(x, w, b))
in f16 at prefill shapes against the bare F.linear, eager and with
torch.compile, and relu(conv2d(x, w, b)) (3x3, 64 channels, 56x56, batch
32) against the bare conv2d, f16 and f32. Each variant is checked against a
float64 reference (sampled rows) before it is timed; CUDA events, median of
15 runs of 5 calls after a warm-up. One line per result.

    torch_gemm_epilogue.py [--small]   (--small: tiny shapes, CPU allowed)"""
import sys
import time

import torch
import torch.nn.functional as F

SMALL = "--small" in sys.argv
dev = "cuda" if torch.cuda.is_available() else "cpu"


def median_ms(fn, runs=15, calls=5):
    for _ in range(3):
        fn()
    if dev == "cpu":
        t = []
        for _ in range(runs):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            t.append((time.perf_counter() - t0) * 1e3 / calls)
        return sorted(t)[runs // 2]
    torch.cuda.synchronize()
    t = []
    for _ in range(runs):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(calls):
            fn()
        e1.record()
        e1.synchronize()
        t.append(e0.elapsed_time(e1) / calls)
    return sorted(t)[runs // 2]


def check(name, got, ref, atol, rtol):
    err = (got.double() - ref).abs() - (atol + rtol * ref.abs())
    bad = int((err > 0).sum())
    print(f"{name} check: {bad} of {ref.numel()} checked elements wrong", flush=True)
    if bad:
        raise SystemExit(f"{name}: reference check failed")


def gemm(m, n, k):
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.rand(m, k, device=dev, generator=g).mul_(2).sub_(1).half()
    w = torch.rand(n, k, device=dev, generator=g).mul_(0.1).sub_(0.05).half()
    b = torch.rand(n, device=dev, generator=g).mul_(2).sub_(1).half()
    bare = lambda: F.linear(x, w)  # noqa: E731
    eager = lambda: F.gelu(F.linear(x, w, b))  # noqa: E731
    compiled_fn = torch.compile(lambda x, w, b: F.gelu(F.linear(x, w, b)))
    compiled = lambda: compiled_fn(x, w, b)  # noqa: E731
    rows = torch.arange(0, m, max(1, m // 16), device=dev)
    ref = F.gelu(F.linear(x[rows].double(), w.double(), b.double()))
    t0 = time.perf_counter()
    first = compiled()
    print(f"f16 {m}x{n}x{k} compile first call: {(time.perf_counter() - t0) * 1e3:.0f} ms", flush=True)
    for name, fn in (("eager", eager), ("compiled", compiled)):
        check(f"f16 {m}x{n}x{k} {name}", fn()[rows], ref, 2e-3, 4e-3)
    del first
    if SMALL:
        return
    tb = median_ms(bare)
    flops = 2.0 * m * n * k / 1e9
    for name, fn in (("eager gelu(linear)", eager), ("compiled gelu(linear)", compiled)):
        t = median_ms(fn)
        print(f"torch f16 {m}x{n}x{k}: bare linear {tb:.4f} ms ({flops / tb:.1f} TFLOP/s), {name} {t:.4f} ms "
              f"({flops / t:.1f} TFLOP/s), ratio {t / tb:.3f}", flush=True)


def conv(dtype, n, ch, hw):
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.rand(n, ch, hw, hw, device=dev, generator=g).mul_(2).sub_(1).to(dtype)
    w = torch.rand(ch, ch, 3, 3, device=dev, generator=g).mul_(0.2).sub_(0.1).to(dtype)
    b = torch.rand(ch, device=dev, generator=g).sub_(0.5).to(dtype)
    bare = lambda: F.conv2d(x, w, b, padding=1)  # noqa: E731
    eager = lambda: F.relu(F.conv2d(x, w, b, padding=1))  # noqa: E731
    compiled_fn = torch.compile(lambda x, w, b: F.relu(F.conv2d(x, w, b, padding=1)))
    compiled = lambda: compiled_fn(x, w, b)  # noqa: E731
    ref = F.relu(F.conv2d(x[:2].double(), w.double(), b.double(), padding=1))
    tol = 2e-3 if dtype == torch.float16 else 1e-4
    name = f"conv {str(dtype)[6:]} {n}x{ch}x{hw}x{hw} 3x3"
    for label, fn in (("eager", eager), ("compiled", compiled)):
        check(f"{name} {label}", fn()[:2], ref, tol, tol)
    if SMALL:
        return
    tb = median_ms(bare)
    for label, fn in (("eager relu(conv)", eager), ("compiled relu(conv)", compiled)):
        t = median_ms(fn)
        print(f"torch {name}: bare conv {tb:.4f} ms, {label} {t:.4f} ms, ratio {t / tb:.3f}", flush=True)


if __name__ == "__main__":
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if SMALL:
        gemm(70, 66, 40)
        conv(torch.float32, 2, 8, 9)
    else:
        for m, n, k in ((2048, 4096, 4096), (2048, 11008, 4096), (2048, 4096, 11008)):
            gemm(m, n, k)
        conv(torch.float16, 32, 64, 56)
        conv(torch.float32, 32, 64, 56)
