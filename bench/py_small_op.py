#!/usr/bin/env python3
"""Wall time per small operator from Python: ``y = x * c + 0`` on 4096
floats in a loop (two operators per iteration, each with a new output
tensor), synchronised at the end, for wgcompute and, where PyTorch with a
GPU is installed, the same loop in PyTorch eager. Also the round trip
``(x.cuda() * 2).cpu()`` of 4 KiB with its wgcompute twin. Each result is
checked against NumPy before it is timed. Prints one JSON object per case:
{"case", "lib", "us"} (median of the repetitions).

    py_small_op.py [--iters N] [--reps R] [--no-torch] [--profile]

--profile prints cProfile's top functions of the wgcompute loop instead
(where the binding's own time goes).
"""
import argparse
import json
import time

import numpy as np

N = 4096


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def emit(case, lib, us, note=""):
    row = {"case": case, "lib": lib, "us": round(us, 3)}
    if note:
        row["note"] = note
    print(json.dumps(row), flush=True)


def wgcompute_cases(iters, reps, profile):
    import wgcompute as wg

    dev = wg.default_device()
    host = (np.arange(N, dtype=np.float32) % 97) * 0.25 - 3.0
    x = wg.asarray(host)
    c = 1.5

    def loop():
        y = x
        for _ in range(iters):
            y = x * c + 0
        return y

    got = loop().numpy()  # also warms kernels, bind groups and the pool
    if not np.array_equal(got, host * np.float32(c)):
        raise SystemExit("wgcompute: x * c + 0 is wrong")
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        loop()
        dev.synchronize()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
        return
    walls, hosts = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        loop()
        t1 = time.perf_counter()
        dev.synchronize()
        walls.append((time.perf_counter() - t0) * 1e6 / (2 * iters))
        hosts.append((t1 - t0) * 1e6 / (2 * iters))
    emit("small_op_4096_wall", "wgcompute", median(walls), "x * c + 0, per operator")
    emit("small_op_4096_host", "wgcompute", min(hosts), "the loop without its final wait, per operator (best run)")

    def trip():
        return (wg.asarray(host) * 2).numpy()

    if not np.array_equal(trip(), host * 2):
        raise SystemExit("wgcompute: round trip is wrong")
    walls = []
    for _ in range(max(reps * 20, 50)):
        t0 = time.perf_counter()
        trip()
        walls.append((time.perf_counter() - t0) * 1e6)
    emit("roundtrip_alloc_4k_wall", "wgcompute", median(walls), "(asarray(x) * 2).numpy()")


def torch_cases(iters, reps):
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        return
    host_np = (np.arange(N, dtype=np.float32) % 97) * 0.25 - 3.0
    x = torch.from_numpy(host_np).cuda()
    c = 1.5

    def loop():
        y = x
        for _ in range(iters):
            y = x * c + 0
        return y

    if not np.array_equal(loop().cpu().numpy(), host_np * np.float32(c)):
        raise SystemExit("torch: x * c + 0 is wrong")
    walls, hosts = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        loop()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - t0) * 1e6 / (2 * iters))
        hosts.append((t1 - t0) * 1e6 / (2 * iters))
    emit("small_op_4096_wall", "torch", median(walls), "x * c + 0, per operator")
    emit("small_op_4096_host", "torch", min(hosts), "the loop without its final wait, per operator (best run)")

    host = torch.from_numpy(host_np)

    def trip():
        return (host.cuda() * 2).cpu()

    if not np.array_equal(trip().numpy(), host_np * 2):
        raise SystemExit("torch: round trip is wrong")
    for _ in range(50):
        trip()
    walls = []
    for _ in range(max(reps * 20, 50)):
        t0 = time.perf_counter()
        trip()
        walls.append((time.perf_counter() - t0) * 1e6)
    emit("roundtrip_alloc_4k_wall", "torch", median(walls), "(x.cuda() * 2).cpu(), pageable host tensor")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    wgcompute_cases(a.iters, a.reps, a.profile)
    if not a.no_torch and not a.profile:
        torch_cases(a.iters, a.reps)


if __name__ == "__main__":
    main()
