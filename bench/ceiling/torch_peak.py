"""cuBLAS through PyTorch on the same GPU: the vendor's f16/bf16 GEMM rate
(square products, f32 accumulation), checked against an f32 product first."""
import json
import torch

torch.backends.cuda.matmul.allow_tf32 = False
for dtype in (torch.float16, torch.bfloat16):
    for n in (4096, 8192):
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        ref = a[:64].float() @ b.float()
        err = ((a @ b)[:64].float() - ref).abs().max().item() / ref.abs().max().item()
        for _ in range(10):
            a @ b
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ms = []
        for _ in range(20):
            e0.record()
            a @ b
            e1.record()
            torch.cuda.synchronize()
            ms.append(e0.elapsed_time(e1))
        ms.sort()
        t = ms[len(ms) // 2]
        print(json.dumps({"probe": "cublas", "dtype": str(dtype).split(".")[1], "n": n, "ms": round(t, 4),
                          "tflops": round(2 * n**3 / (t * 1e9), 1), "check": "ok" if err < 1e-2 else "WRONG"}))
