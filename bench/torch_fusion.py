#!/usr/bin/env python3
"""The PyTorch twin of wgc_bench's fusion cases (bench/cases_fusion.c):
the six-op chain relu(a*b + c).sqrt() * 0.5 + sigmoid(c) over 2^26 f32,
SwiGLU silu(g) * u over 8192x11008 f16, and rms_norm(h + r) returning both
over 8192x4096 f16, each timed eager and with torch.compile (whose first
call, the compile, is reported separately as <case>_first_call in ms of
wall clock), plus a copy of the same essential bytes as the bandwidth
reference. Every variant is checked against a float64 reference before it
is timed. Timing as torch_bench.py: CUDA events, median of 10 runs after a
warm-up of at least 1 s. One JSON object per line:
{"case", "size", "ms", "GBps"} (GBps: essential bytes / time).

    torch_fusion.py [--small]"""
import json
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from torch_bench import median_ms  # noqa: E402  (same warm-up and timing)

dev = "cuda"
SMALL = "--small" in sys.argv


def emit(case, size, ms, nbytes=None, note=None):
    r = {"case": case, "size": size, "ms": round(ms, 4)}
    if nbytes:
        r["GBps"] = round(nbytes / ms / 1e6, 1)
    if note:
        r["note"] = note
    print(json.dumps(r), flush=True)


def check(name, got, ref, tol, slack=0.0):
    """|got - ref| <= tol * (1 + |ref|) + slack elementwise (slack: a
    tensor where rounding in f32 is amplified, as sqrt near 0)."""
    for g, r in zip(got if isinstance(got, tuple) else (got,), ref if isinstance(ref, tuple) else (ref,)):
        err = ((g.double() - r).abs() - tol * (1 + r.abs()) - slack).max().item()
        if err > 0:
            raise SystemExit(f"{name}: wrong result (excess error {err})")


def chain(a, b, c):
    return torch.relu(a * b + c).sqrt() * 0.5 + torch.sigmoid(c)


def swiglu(g, u):
    return F.silu(g) * u


def residual_rms_norm(h, r, w):
    s = h + r
    y = F.rms_norm(s, (s.shape[-1],), w, 1e-6)
    return y, s


def ref_residual_rms_norm(h, r, w):
    s = h.double() + r.double()
    s16 = s.to(h.dtype).double()
    y = s16 * torch.rsqrt((s16 * s16).mean(-1, keepdim=True) + 1e-6) * w.double()
    return y, s


def case(name, size, fn, args, ref, tol, nbytes, slack=0.0):
    ref_out = ref(*[a.double() if a.dtype == torch.float32 else a for a in args])
    eager = fn
    check(name + " eager", eager(*args), ref_out, tol, slack)
    emit(name + "_eager", size, median_ms(lambda: eager(*args), nbytes), nbytes)
    compiled = torch.compile(fn)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = compiled(*args)
    torch.cuda.synchronize()
    emit(name + "_compiled_first_call", size, (time.perf_counter() - t0) * 1e3)
    check(name + " compiled", out, ref_out, tol, slack)
    emit(name + "_compiled", size, median_ms(lambda: compiled(*args), nbytes), nbytes)
    # The copy of the same essential bytes (read + write = nbytes).
    src = torch.empty(nbytes // 2, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    emit(name + "_copy_same_bytes", size, median_ms(lambda: dst.copy_(src), nbytes), nbytes)


def main():
    torch.manual_seed(0)
    n = 100003 if SMALL else 1 << 26
    a, b, c = (torch.rand(n, device=dev) * 6 - 3 for _ in range(3))
    # a * b + c rounds to f32 (|a * b| + |c|) * 2^-24 away; sqrt turns that
    # into up to half its square root near 0, whichever library computes it.
    inner_round = ((a.double() * b.double()).abs() + c.double().abs()) * 2.0**-24
    case("chain6_f32", f"{n}", chain, (a, b, c),
         lambda a, b, c: torch.relu(a * b + c).sqrt() * 0.5 + torch.sigmoid(c), 2e-6, 4 * n * 4,
         slack=0.5 * inner_round.sqrt())

    R, C = (37, 1001) if SMALL else (8192, 11008)
    g = (torch.rand(R, C, device=dev) * 12 - 6).half()
    u = (torch.rand(R, C, device=dev) * 4 - 2).half()
    case("swiglu_f16", f"{R}x{C}", swiglu, (g, u),
         lambda g, u: F.silu(g.double()) * u.double(), 2e-3, 3 * R * C * 2)

    R, C = (37, 1024) if SMALL else (8192, 4096)
    h = (torch.rand(R, C, device=dev) * 2 - 1).half()
    r = (torch.rand(R, C, device=dev) * 2 - 1).half()
    w = (torch.rand(C, device=dev) + 0.5).half()
    case("residual_rms_norm_f16", f"{R}x{C}", residual_rms_norm, (h, r, w), ref_residual_rms_norm, 4e-3,
         4 * R * C * 2 + C * 2)


if __name__ == "__main__":
    main()
