"""PyTorch's side of bench/conv_layers_bench.c: the same layers as
relu_(conv2d(x, w, b)) in channels_last (cuDNN, benchmark mode, TF32
off), each first checked at batch 1 against float64, then timed with CUDA
events (median of 15 runs of 5 calls after a warm-up). One JSON line per
layer, dtype and batch, as wgc_conv_layers prints them.

    python3 torch_conv_layers.py [--batch 32,256] [--dtype f16,f32]
"""
import json
import sys

import torch
import torch.nn.functional as F

LAYERS = [(64, 64, 56, 1), (256, 64, 56, 1), (64, 256, 56, 1), (256, 128, 56, 1), (128, 512, 28, 1),
          (512, 128, 28, 1), (256, 1024, 14, 1), (1024, 256, 14, 1), (512, 2048, 7, 1), (2048, 512, 7, 1),
          (64, 64, 56, 3), (128, 128, 28, 3), (256, 256, 14, 3), (512, 512, 7, 3), (24, 144, 56, 1),
          (144, 24, 56, 1), (32, 192, 28, 1), (192, 32, 28, 1)]


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main():
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    batches = [int(b) for b in arg("--batch", "32,256").split(",")]
    dtypes = {"f16": torch.half, "f32": torch.float}
    names = arg("--dtype", "f16,f32").split(",")
    for name in names:
        dt = dtypes[name]
        for c, o, hw, k in LAYERS:
            w = (torch.rand(o, c, k, k, device="cuda", dtype=torch.float64) * 2 - 1) / (c * k * k) ** 0.5
            b = torch.rand(o, device="cuda", dtype=torch.float64) - 0.5
            x = torch.rand(1, c, hw, hw, device="cuda", dtype=torch.float64) * 2 - 1
            ref = F.relu(F.conv2d(x, w, b, 1, k // 2))
            cl = torch.channels_last
            got = F.relu_(F.conv2d(x.to(dt).to(memory_format=cl), w.to(dt).to(memory_format=cl), b.to(dt), 1, k // 2))
            err = (got.double() - ref).abs().max().item() / ref.abs().max().item()
            if err > (1e-2 if name == "f16" else 1e-5):
                sys.exit(f"conv{k}x{k} {c}->{o} {name}: relative error {err}")
            for n in batches:
                xt = (torch.rand(n, c, hw, hw, device="cuda", dtype=dt) * 2 - 1).to(memory_format=cl)
                wt, bt = w.to(dt).to(memory_format=cl), b.to(dt)

                def f():
                    return F.relu_(F.conv2d(xt, wt, bt, 1, k // 2))

                for _ in range(20):
                    f()
                torch.cuda.synchronize()
                times = []
                for _ in range(15):
                    e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
                    e0.record()
                    for _ in range(5):
                        f()
                    e1.record()
                    torch.cuda.synchronize()
                    times.append(e0.elapsed_time(e1) / 5)
                ms = sorted(times)[len(times) // 2]
                case = f"conv{k}x{k}_{c}_{o}_{hw}"
                print(json.dumps({"case": case, "dtype": name, "batch": n, "ms": round(ms, 4), "check": "ok"}), flush=True)


if __name__ == "__main__":
    main()
