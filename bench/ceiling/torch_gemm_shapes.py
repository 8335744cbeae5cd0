"""torch.matmul (cuBLAS) on khr_wide_bench.c's products, timed the same way
(CUDA events around R back-to-back products, median of 5), each checked
first against a float64 product of sampled rows. f32 C: torch.mm with
out_dtype=float32 where this PyTorch has it."""
import json
import sys

import torch

PEAK = 989.4
SHAPES = [  # name, m, n, k, B stored (N, K), f16 C, in the quick set
    ("4096^3", 4096, 4096, 4096, 1, 1, 1),
    ("4096^3", 4096, 4096, 4096, 0, 1, 0),
    ("4096^3", 4096, 4096, 4096, 1, 0, 0),
    ("8192^3", 8192, 8192, 8192, 1, 1, 1),
    ("8192^3", 8192, 8192, 8192, 0, 1, 0),
    ("8192x8192x1024", 8192, 8192, 1024, 1, 1, 0),
    ("llama7b_qkv_2048x4096x4096", 2048, 4096, 4096, 1, 1, 1),
    ("llama7b_up_2048x11008x4096", 2048, 11008, 4096, 1, 1, 1),
    ("llama7b_down_2048x4096x11008", 2048, 4096, 11008, 1, 1, 1),
    ("llama7b_up_2048x11008x4096", 2048, 11008, 4096, 1, 0, 0),
    ("llama3_up_2048x14336x4096", 2048, 14336, 4096, 1, 1, 0),
    ("llama3_down_2048x4096x14336", 2048, 4096, 14336, 1, 1, 0),
    ("odd_4095x4097x1023", 4095, 4097, 1023, 0, 1, 0),
]


def main():
    quick = len(sys.argv) > 1 and sys.argv[1] == "quick"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    for name, m, n, k, b_nk, out_f16, in_quick in SHAPES:
        if quick and not in_quick:
            continue
        a = torch.rand(m, k, device="cuda", dtype=torch.float16) * 2 - 1
        b = (torch.rand(n, k, device="cuda", dtype=torch.float16) * 2 - 1).t() if b_nk else \
            torch.rand(k, n, device="cuda", dtype=torch.float16) * 2 - 1
        if out_f16:
            def f():
                return torch.matmul(a, b)
        else:
            try:
                torch.mm(a[:8], b, out_dtype=torch.float32)

                def f():
                    return torch.mm(a, b, out_dtype=torch.float32)
            except (TypeError, RuntimeError):
                def f():
                    return torch.matmul(a, b).float()
        got = f()
        rows = torch.arange(0, m, max(1, m // 16), device="cuda")
        ref = a[rows].double() @ b.double()
        tol = 1e-4 + 1e-6 * k + (ref.abs() / 1024 if out_f16 else 0)
        ok = bool(((got[rows].double() - ref).abs() <= tol).all())
        flop = 2.0 * m * n * k
        reps = 4 if flop > 5e11 else 10
        for _ in range(max(3, int(2e12 / flop))):
            f()
        per = []
        for _ in range(5):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(reps):
                f()
            e1.record()
            torch.cuda.synchronize()
            per.append(e0.elapsed_time(e1) / reps)
        per.sort()
        tf = flop / (per[2] * 1e9)
        print(json.dumps({"route": "torch", "shape": name, "b": "nk" if b_nk else "kn", "out": "f16" if out_f16 else "f32",
                          "ms": round(per[2], 4), "tflops": round(tf, 1), "of_peak": round(tf / PEAK, 3),
                          "check": "ok" if ok else "WRONG"}), flush=True)


if __name__ == "__main__":
    main()
