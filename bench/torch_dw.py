"""MobileNetV2's depthwise layers (3x3, padding 1, bias, ReLU6) in PyTorch
eager (cuDNN, benchmark mode), the counterpart of bench/dw_bench.c.

    python3 torch_dw.py --check
    python3 torch_dw.py --time [--batch 32,256] [--dtype f32,f16] [--layout nchw,nhwc] [--iters 20]
    python3 torch_dw.py --ratios FILE...   (JSON lines of both programs)

--check compares PyTorch's result at batch 2 with float64 on the CPU.
--time prints the copy bandwidth (read + write of 1 GiB) and, per layer,
the mean CUDA-event time of conv + ReLU6 ("torch") and of the conv alone
("torch_conv"), with the bandwidth of input + output bytes over it.
--ratios prints a table: each build's time and GB/s, and PyTorch's time
over the build's ("x torch": above 1 is faster than PyTorch)."""

import argparse
import json
import sys

LAYERS = [(32, 112, 1), (96, 112, 2), (144, 56, 1), (144, 56, 2), (192, 28, 1),
          (192, 28, 2), (384, 14, 1), (576, 14, 1), (576, 14, 2), (960, 7, 1)]


def layer_name(c, h, s):
    return f"dw{c}_{h}_s{s}"


def out_size(h, s):
    return (h + 2 - 3) // s + 1


def check(torch):
    import torch.nn.functional as F
    bad = 0
    for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 2e-3)):
        for layout in ("nchw", "nhwc"):
            fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
            for c, h, s in LAYERS:
                g = torch.Generator().manual_seed(c * 1000 + h)
                x = (torch.rand(2, c, h, h, generator=g) * 2 - 1).to(dtype)
                w = (torch.rand(c, 1, 3, 3, generator=g) * 2 - 1).to(dtype)
                b = (torch.rand(c, generator=g) * 2 - 1).to(dtype)
                ref = F.conv2d(x.double(), w.double(), b.double(), s, 1, 1, c).clamp(0, 6)
                xd = x.cuda().contiguous(memory_format=fmt)
                got = F.relu6(F.conv2d(xd, w.cuda(), b.cuda(), s, 1, 1, c)).double().cpu()
                err = ((got - ref).abs() / (1 + ref.abs())).max().item()
                if not err <= tol:
                    bad += 1
                    print(f"# check {layer_name(c, h, s)} {dtype} {layout}: max relative error {err:.3g}")
    print(json.dumps({"tag": "torch", "check": "all", "wrong": bad}))
    return bad


def cuda_time(torch, fn, iters):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / iters  # us


def time_all(torch, args):
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.empty(1 << 28, device="cuda")
    b = torch.empty_like(a)
    us = cuda_time(torch, lambda: b.copy_(a), 20)
    print(json.dumps({"tag": "torch", "copy_tbs": round(2 * a.numel() * 4 / us / 1e6, 3)}))
    del a, b
    for dname in args.dtype.split(","):
        dtype = torch.float16 if dname == "f16" else torch.float32
        es = 2 if dname == "f16" else 4
        for batch in [int(v) for v in args.batch.split(",")]:
            for layout in args.layout.split(","):
                fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
                for c, h, s in LAYERS:
                    x = torch.rand(batch, c, h, h, device="cuda", dtype=dtype).contiguous(memory_format=fmt)
                    w = torch.rand(c, 1, 3, 3, device="cuda", dtype=dtype)
                    bias = torch.rand(c, device="cuda", dtype=dtype)
                    oh = out_size(h, s)
                    nbytes = es * batch * c * (h * h + oh * oh)
                    for tag, fn in (
                        ("torch", lambda: F.relu6(F.conv2d(x, w, bias, s, 1, 1, c))),
                        ("torch_conv", lambda: F.conv2d(x, w, bias, s, 1, 1, c)),
                    ):
                        t = cuda_time(torch, fn, args.iters)
                        print(json.dumps({"tag": tag, "layer": layer_name(c, h, s), "batch": batch, "dtype": dname,
                                          "layout": layout, "us": round(t, 2), "gbs": round(nbytes / t / 1e3, 1)}))
                        sys.stdout.flush()
                    del x


def ratios(files):
    rows = {}
    tags = []
    for f in files:
        for line in open(f):
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "layer" not in r:
                continue
            key = (r["dtype"], r["layout"], r["batch"], r["layer"])
            rows.setdefault(key, {})[r["tag"]] = r
            if r["tag"] not in tags:
                tags.append(r["tag"])
    builds = [t for t in tags if not t.startswith("torch")]
    head = "| dtype | layout | batch | layer | " + " | ".join(
        f"{t} us (GB/s) | {t} x torch" for t in builds) + " | torch us (GB/s) | torch conv alone us |"
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    for key in sorted(rows, key=lambda k: (k[0], k[1], k[2], [layer_name(*l) for l in LAYERS].index(k[3]))):
        r = rows[key]
        t = r.get("torch")
        cells = []
        for b in builds:
            v = r.get(b)
            if v is None:
                cells += ["-", "-"]
                continue
            cells.append(f"{v['us']:.1f} ({v['gbs']:.0f})")
            cells.append(f"{t['us'] / v['us']:.2f}" if t else "-")
        tc = r.get("torch_conv")
        tail = [f"{t['us']:.1f} ({t['gbs']:.0f})" if t else "-", f"{tc['us']:.1f}" if tc else "-"]
        print("| " + " | ".join([key[0], key[1], str(key[2]), key[3]] + cells + tail) + " |")
    # Whole depthwise work per configuration (sum of the layers' times).
    totals = {}
    for key, r in rows.items():
        for tag, v in r.items():
            totals.setdefault(key[:3], {}).setdefault(tag, 0.0)
            totals[key[:3]][tag] += v["us"]
    print("\n| dtype | layout | batch | " + " | ".join(f"{t} sum us" for t in tags) + " |")
    print("|" + " --- |" * (3 + len(tags)))
    for k in sorted(totals):
        print("| " + " | ".join([k[0], k[1], str(k[2])] + [f"{totals[k].get(t, 0):.1f}" for t in tags]) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--ratios", nargs="*")
    ap.add_argument("--batch", default="32,256")
    ap.add_argument("--dtype", default="f32,f16")
    ap.add_argument("--layout", default="nchw,nhwc")
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    if args.ratios:
        ratios(args.ratios)
        return 0
    import torch
    bad = check(torch) if args.check else 0
    if args.time and not bad:
        time_all(torch, args)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
