"""PyTorch's side of the handoff probe: F.linear (x @ w.T, f16 in and out, cuBLAS) on
handoff_probe's products, timed the same way (CUDA events around each product, median
of 20 after 10 warm-up runs), each checked first against a float64 product of sampled
entries. One JSON line per product.
    python3 torch_linear.py [MxNxK,...]"""
import json
import sys

import torch
import torch.nn.functional as F

SHAPES = [(2048, 4096, 4096), (2048, 11008, 4096), (2048, 4096, 11008), (4096, 4096, 4096), (8192, 8192, 8192)]


def main():
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    shapes = SHAPES
    if len(sys.argv) > 1:
        shapes = [tuple(int(d) for d in s.split("x")) for s in sys.argv[1].split(",") if s]
    gen = torch.Generator(device="cuda").manual_seed(0)
    for m, n, k in shapes:
        x = torch.rand(m, k, device="cuda", dtype=torch.float16, generator=gen) * 2 - 1
        w = torch.rand(n, k, device="cuda", dtype=torch.float16, generator=gen) * 2 - 1
        y = F.linear(x, w)
        rows = torch.randint(0, m, (64,), device="cuda", generator=gen)
        cols = torch.randint(0, n, (64,), device="cuda", generator=gen)
        ref = (x[rows].double() * w[cols].double()).sum(dim=1)
        mag = (x[rows].double() * w[cols].double()).abs().sum(dim=1)
        err = (y[rows, cols].double() - ref).abs()
        ok = bool((err <= ref.abs() * 2**-10 + mag * 2**-16 + 2**-14).all())
        line = {"probe": "torch_gemm", "shape": f"{m}x{n}x{k}", "torch": torch.__version__, "ok": ok,
                "max_abs_err": float(err.max())}
        if ok:
            for _ in range(10):
                F.linear(x, w)
            events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(20)]
            for start, end in events:
                start.record()
                F.linear(x, w)
                end.record()
            torch.cuda.synchronize()
            times = sorted(start.elapsed_time(end) for start, end in events)
            median = (times[9] + times[10]) / 2
            line.update(median_ms=round(median, 5), min_ms=round(times[0], 5),
                        tflops=round(2.0 * m * n * k / (median * 1e-3) / 1e12, 1))
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
