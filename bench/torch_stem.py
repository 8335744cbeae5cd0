#!/usr/bin/env python3
"""PyTorch (cuDNN, benchmark mode, TF32 off) on the first-layer
convolutions that wgc_bench's conv/stem cases time: ResNet-50's conv1 (7x7
stride 2, 3 -> 64) at batch 32 and 256 and MobileNetV2's features.0 (3x3
stride 2, 3 -> 32) at batch 256, f16, NCHW and channels_last, no bias.
Each convolution is first checked at batch 2 against a float64 reference
(tolerance 2^-10 * (|x| * |w| summed + |ref|)), then timed: CUDA events
around each run, median of 20 after 1 s of warm-up. One JSON line per case,
named as wgc_bench names it.

    torch_stem.py"""
import json
import time

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
dev = "cuda"

CASES = [
    # name, N, C, H, O, K, stride, pad, channels_last
    ("conv_f16_7x7_3_64_s2", 32, 3, 224, 64, 7, 2, 3, False),
    ("conv_f16_nhwc_7x7_3_64_s2", 32, 3, 224, 64, 7, 2, 3, True),
    ("conv_f16_7x7_3_64_s2_n256", 256, 3, 224, 64, 7, 2, 3, False),
    ("conv_f16_nhwc_7x7_3_64_s2_n256", 256, 3, 224, 64, 7, 2, 3, True),
    ("conv_f16_3x3_3_32_s2_n256", 256, 3, 224, 32, 3, 2, 1, False),
    ("conv_f16_nhwc_3x3_3_32_s2_n256", 256, 3, 224, 32, 3, 2, 1, True),
]


def operands(N, C, H, O, K, cl, g):
    x = torch.rand(N, C, H, H, device=dev, generator=g).mul_(2).sub_(1).half()
    w = torch.rand(O, C, K, K, device=dev, generator=g).mul_(2).sub_(1).half()
    if cl:
        x = x.to(memory_format=torch.channels_last)
        w = w.to(memory_format=torch.channels_last)
    return x, w


def check(name, C, H, O, K, s, p, cl, g):
    x, w = operands(2, C, H, O, K, cl, g)
    y = F.conv2d(x, w, stride=s, padding=p)
    ref = F.conv2d(x.double(), w.double(), stride=s, padding=p)
    mag = F.conv2d(x.double().abs(), w.double().abs(), stride=s, padding=p)
    bad = ((y.double() - ref).abs() > (mag + ref.abs()) / 1024 + 1e-6).sum().item()
    layout = "channels_last" if y.is_contiguous(memory_format=torch.channels_last) else "nchw"
    print(json.dumps({"check": name, "wrong": bad, "of": y.numel(), "out_layout": layout}), flush=True)
    return bad == 0


def median_ms(fn):
    start = time.perf_counter()
    while time.perf_counter() - start < 1.0:
        for _ in range(8):
            fn()
        torch.cuda.synchronize()
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def main():
    g = torch.Generator(device=dev)
    g.manual_seed(1)
    print(json.dumps({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                      "gpu": torch.cuda.get_device_name()}), flush=True)
    for name, N, C, H, O, K, s, p, cl in CASES:
        ok = check(name, C, H, O, K, s, p, cl, g)
        x, w = operands(N, C, H, O, K, cl, g)
        ms = median_ms(lambda: F.conv2d(x, w, stride=s, padding=p))
        oh = (H + 2 * p - K) // s + 1
        tflops = 2.0 * N * O * oh * oh * C * K * K / ms / 1e9
        print(json.dumps({"case": name, "ms": round(ms, 4), "tflops": round(tflops, 2), "check": "ok" if ok else "WRONG"}),
              flush=True)
        del x, w
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
