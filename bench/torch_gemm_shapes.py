"""torch.matmul (cuBLAS) on gemm_wide_bench.c's products, timed the same
way (CUDA events around R back-to-back products, median of 5, after a
warm-up), each checked first against a float64 product of sampled rows.
f32 C: torch.mm with out_dtype=float32 where this PyTorch has it, else
the 16-bit product converted (said in the line's "how").
    python3 torch_gemm_shapes.py [f16|bf16] [shapes]     (bf16: the first five shapes)
`shapes`: as gemm_wide_bench's, (N, K) weights on 2048 x 4096 x 4096,
2048 x 11008 x 4096, 4096^3 and 8192^3 (bf16: 4096^3)."""
import json
import sys

import torch

SHAPES = [  # name, m, n, k (as gemm_wide_bench.c's FULL)
    ("llama7b_qo_2048x4096x4096", 2048, 4096, 4096),
    ("llama7b_qkv_2048x12288x4096", 2048, 12288, 4096),
    ("llama7b_up_2048x11008x4096", 2048, 11008, 4096),
    ("llama7b_down_2048x4096x11008", 2048, 4096, 11008),
    ("4096^3", 4096, 4096, 4096),
    ("8192^3", 8192, 8192, 8192),
    ("odd_4095x4097x1023", 4095, 4097, 1023),
    ("llama7b_up_1024x11008x4096", 1024, 11008, 4096),
    ("lm_head_512x32000x4096", 512, 32000, 4096),
]


def product(a, b, out_f16):
    """The product into a 16-bit C (the inputs' dtype) or f32."""
    if out_f16:
        return (lambda: torch.matmul(a, b)), "matmul"
    try:
        torch.mm(a[:8], b, out_dtype=torch.float32)
        return (lambda: torch.mm(a, b, out_dtype=torch.float32)), "mm out_dtype=f32"
    except (TypeError, RuntimeError):
        return (lambda: torch.matmul(a, b).float()), "matmul then .float()"


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.manual_seed(0)
    bf16 = len(sys.argv) > 1 and sys.argv[1] == "bf16"
    dt = torch.bfloat16 if bf16 else torch.float16
    warmed = False
    few = len(sys.argv) > 2 and sys.argv[2] == "shapes"
    shapes = SHAPES[:5] if bf16 else SHAPES
    if few:
        shapes = [SHAPES[4]] if bf16 else [SHAPES[i] for i in (0, 2, 4, 5)]
    for name, m, n, k in shapes:
        for b_nk in (1, 0) if not few else (1,):
            for out_f16 in (1, 0):
                a = torch.rand(m, k, device="cuda", dtype=dt) * 2 - 1
                if b_nk:
                    b = (torch.rand(n, k, device="cuda", dtype=dt) * 2 - 1).t()
                else:
                    b = torch.rand(k, n, device="cuda", dtype=dt) * 2 - 1
                f, how = product(a, b, out_f16)
                got = f()
                rows = torch.arange(0, m, max(1, m // 16), device="cuda")
                ref = a[rows].double() @ b.double()
                tol = 1e-4 + 1e-6 * k + (ref.abs() * ((1 / 128 if bf16 else 1 / 1024) if out_f16 else 0))
                ok = bool(((got[rows].double() - ref).abs() <= tol).all())
                flop = 2.0 * m * n * k
                reps = 4 if flop > 5e11 else 10
                for _ in range(max(3, int((5e14 if not warmed else 2e12) / flop))):
                    f()
                warmed = True
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
                out = ("bf16" if bf16 else "f16") if out_f16 else "f32"
                line = {"route": "torch", "in": "bf16" if bf16 else "f16", "shape": name, "b": "nk" if b_nk else "kn",
                        "out": out,
                        "ms": round(per[2], 4), "tflops": round(tf, 1), "check": "ok" if ok else "WRONG", "how": how}
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    sys.exit(main())
