#!/usr/bin/env python3
"""The PyTorch side of the benchmark: the same cases as wgc_bench, timed with
CUDA events (median of repeated runs after a warm-up), on random inputs.
Prints one JSON object per case: {"case", "size", "ms"}."""
import json
import sys
import time

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
dev = "cuda"


def median_ms(fn, warmup=3, reps=10):
    # At least 2 s of warm-up, as in wgc_bench, so both are timed in the same state.
    start = time.perf_counter()
    runs = 0
    while runs < warmup or time.perf_counter() - start < 2.0:
        fn()
        runs += 1
        if runs % 4 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def emit(case, size, ms):
    print(json.dumps({"case": case, "size": size, "ms": ms}), flush=True)


def main(only):
    def want(c):
        return not only or any(o in c or c in o for o in only)

    g = torch.Generator(device=dev).manual_seed(0)
    # The memory ceiling: a large device-to-device copy (bytes read + written).
    src = torch.rand(1 << 29, device=dev, generator=g)
    dst = torch.empty_like(src)
    ms = median_ms(lambda: dst.copy_(src))
    print(json.dumps({"case": "hbm_copy", "size": "2 GiB", "ms": ms,
                      "gbps": 2 * src.numel() * 4 / ms / 1e6,
                      "gpu": torch.cuda.get_device_name()}), flush=True)
    del src, dst
    if want("add"):
        n = 1 << 28
        a = torch.rand(n, device=dev, generator=g)
        b = torch.rand(n, device=dev, generator=g)
        out = torch.empty_like(a)
        emit("add_f32", "2^28", median_ms(lambda: torch.add(a, b, out=out)))
        del a, b, out
    if want("sum"):
        n = 1 << 28
        a = torch.rand(n, device=dev, generator=g)
        emit("sum_f32", "2^28", median_ms(lambda: torch.sum(a)))
        del a
    if want("softmax") or want("layer_norm"):
        x = torch.randn(65536, 4096, device=dev, generator=g)
        out = torch.empty_like(x)
        if want("softmax"):
            emit("softmax_f32", "65536x4096", median_ms(lambda: torch.softmax(x, dim=-1, out=out)))
        if want("layer_norm"):
            w = torch.rand(4096, device=dev, generator=g)
            bias = torch.rand(4096, device=dev, generator=g)
            emit("layer_norm_f32", "65536x4096",
                 median_ms(lambda: torch.nn.functional.layer_norm(x, (4096,), w, bias, 1e-5)))
        del x, out
    for n in (4096, 8192):
        if want("sgemm"):
            a = torch.randn(n, n, device=dev, generator=g)
            b = torch.randn(n, n, device=dev, generator=g)
            c = torch.empty(n, n, device=dev)
            emit("sgemm_f32", f"{n}^3", median_ms(lambda: torch.mm(a, b, out=c)))
        if want("hgemm"):
            a = torch.randn(n, n, device=dev, generator=g).half()
            b = torch.randn(n, n, device=dev, generator=g).half()
            emit("gemm_f16_f32acc", f"{n}^3", median_ms(lambda: torch.mm(a, b)))
    if want("bmm"):
        a = torch.randn(512, 128, 128, device=dev, generator=g)
        b = torch.randn(512, 128, 128, device=dev, generator=g)
        c = torch.empty(512, 128, 128, device=dev)
        emit("bmm_f32", "512x128^3", median_ms(lambda: torch.bmm(a, b, out=c)))
    if want("conv"):
        convs = [
            ("conv_3x3_64_56", (32, 64, 56, 56), (64, 64, 3, 3), 1, 1),
            ("conv_1x1_256_512_s2", (32, 256, 56, 56), (512, 256, 1, 1), 2, 0),
            ("conv_7x7_3_64_s2", (32, 3, 224, 224), (64, 3, 7, 7), 2, 3),
        ]
        for name, ishape, wshape, stride, pad in convs:
            x = torch.randn(*ishape, device=dev, generator=g)
            w = torch.randn(*wshape, device=dev, generator=g)
            emit(name, "N=32", median_ms(lambda: torch.nn.functional.conv2d(x, w, stride=stride, padding=pad)))
    if want("small"):
        x = torch.rand(1 << 20, device=dev, generator=g)
        y = torch.empty_like(x)

        def chain():
            for i in range(500):
                torch.add(x, 1.0, out=y)
                torch.mul(y, 0.5, out=x)

        emit("small_ops_1000", "1000 x 2^20", median_ms(chain, warmup=2, reps=5) / 1000.0)


if __name__ == "__main__":
    main(sys.argv[1:])
