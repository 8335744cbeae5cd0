#!/usr/bin/env python3
"""The PyTorch twin of wgc_bench's fused reduction cases
(bench/cases_fused_reduce.c): sum(x*y) over the last dim of 8192x4096 (f32
and f16), mean((x-m)^2) over the last dim with m a (8192, 1) column (f32
and f16), and max(|x|) over all of 2^26 f32, each timed eager and with
torch.compile (whose first call, the compile, is reported separately as
<case>_compiled_first_call in ms of wall clock), plus a copy of the same
essential bytes (each input read once, the output written once) as the
bandwidth reference. Every variant is checked against a float64 reference
before it is timed. Timing as torch_bench.py: CUDA events, median of 10
runs after a warm-up of at least 1 s. One JSON object per line:
{"case", "size", "ms", "GBps"} (GBps: essential bytes / time).

    torch_fused_reduce.py [--small]"""
import json
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_bench import median_ms  # noqa: E402  (same warm-up and timing)

dev = "cuda"
SMALL = "--small" in sys.argv


def emit(case, size, ms, nbytes=None):
    r = {"case": case, "size": size, "ms": round(ms, 4)}
    if nbytes:
        r["GBps"] = round(nbytes / ms / 1e6, 1)
    print(json.dumps(r), flush=True)


def check(name, got, ref, atol, rtol):
    err = ((got.double() - ref).abs() - atol - rtol * ref.abs()).max().item()
    if err > 0:
        raise SystemExit(f"{name}: wrong result (excess error {err})")


def dot(x, y):
    return (x * y).sum(-1)


def sqdev(x, m):
    return ((x - m) * (x - m)).mean(-1)


def maxabs(x):
    return x.abs().max()


def case(name, size, fn, args, ref, atol, rtol, nbytes):
    check(name + " eager", fn(*args), ref, atol, rtol)
    emit(name + "_eager", size, median_ms(lambda: fn(*args), nbytes), nbytes)
    compiled = torch.compile(fn)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = compiled(*args)
    torch.cuda.synchronize()
    emit(name + "_compiled_first_call", size, (time.perf_counter() - t0) * 1e3)
    check(name + " compiled", out, ref, atol, rtol)
    emit(name + "_compiled", size, median_ms(lambda: compiled(*args), nbytes), nbytes)
    src = torch.empty(nbytes // 2, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    emit(name + "_copy_same_bytes", size, median_ms(lambda: dst.copy_(src), nbytes), nbytes)


def rows_cases(dt, tag, R, C):
    es = torch.finfo(dt).bits // 8
    rel = 2e-3 if dt == torch.float16 else 1e-5
    x = (torch.rand(R, C, device=dev) * 2 - 1).to(dt)
    y = (torch.rand(R, C, device=dev) * 2 - 1).to(dt)
    p = x.double() * y.double()
    case(f"sum_xy_last_{tag}", f"{R}x{C}", dot, (x, y), p.sum(-1), rel * p.abs().sum(-1), rel,
         2 * R * C * es + R * es)
    m = (torch.rand(R, 1, device=dev) * 2 - 1).to(dt)
    d2 = (x.double() - m.double()) ** 2
    case(f"mean_sqdev_last_{tag}", f"{R}x{C}", sqdev, (x, m), d2.mean(-1), rel * d2.mean(-1), rel,
         R * C * es + 2 * R * es)


def main():
    torch.manual_seed(0)
    R, C = (37, 1001) if SMALL else (8192, 4096)
    rows_cases(torch.float32, "f32", R, C)
    n = 100003 if SMALL else 1 << 26
    x = torch.rand(n, device=dev) * 200 - 100
    case("max_abs_all_f32", f"{n}", maxabs, (x,), x.double().abs().max(), 0.0, 0.0, n * 4 + 4)
    rows_cases(torch.float16, "f16", R, C)


if __name__ == "__main__":
    main()
