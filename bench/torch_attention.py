#!/usr/bin/env python3
"""The PyTorch side of wgc_bench's attention cases (bench/cases_attention.c):
the same names and shapes, timed as bench/torch_bench.py times (CUDA events,
median after a warm-up). Each case first checks
torch.nn.functional.scaled_dot_product_attention on sampled rows against a
float64 evaluation. The unfused cases run PyTorch's own QK^T, causal mask
add, softmax and PV. Causal masks are aligned to the bottom-right
(``causal_lower_right``); with Sq == Skv that is ``is_causal=True``; for
decode (Sq 1) every key is visible, so no mask.

    torch_attention.py [--list] [FILTER ...]

Prints one JSON object per case: {"case", "size", "ms", "tflops" or "gbps"}."""
import json
import sys

import torch
import torch.nn.functional as F

import torch_bench as tb

f16 = torch.float16


def check(q, k, v, out, causal, rows=16):
    """Sampled rows of out against float64."""
    B, H, S, D = q.shape
    g = H // k.shape[1]
    idx = torch.randint(0, B * H * S, (rows,), device="cpu", generator=torch.Generator().manual_seed(0))
    for r in idx.tolist():
        b, h, i = r // (H * S), (r // S) % H, r % S
        qq = q[b, h, i].double()
        kk, vv = k[b, h // g].double(), v[b, h // g].double()
        s = kk @ qq / D ** 0.5
        if causal:
            s[i + kk.shape[0] - S + 1:] = float("-inf")
        ref = torch.softmax(s, 0) @ vv
        err = (out[b, h, i].double() - ref).abs().max().item()
        if err > 4e-3:
            sys.exit(f"torch SDPA check failed: row {(b, h, i)} off by {err}")


def case(name, cls, B, Hq, Hkv, Sq, Skv, D, causal, unfused):
    if not tb.want(name, cls):
        return
    q = tb.rnd(B, Hq, Sq, D, dtype=f16)
    k = tb.rnd(B, Hkv, Skv, D, dtype=f16)
    v = tb.rnd(B, Hkv, Skv, D, dtype=f16)
    gqa = Hq != Hkv
    mask = None
    if causal and Sq > 1:
        mask = torch.full((Sq, Skv), float("-inf"), device=tb.dev, dtype=f16).triu(Skv - Sq + 1)
    if unfused:
        qs = q / D ** 0.5
        kt = k.transpose(-1, -2)

        def fn():
            s = torch.matmul(qs, kt)
            if mask is not None:
                s = s + mask
            return torch.matmul(torch.softmax(s, -1), v)
    else:
        is_causal = bool(causal) and Sq == Skv

        def fn():
            return F.scaled_dot_product_attention(q, k, v, attn_mask=None if is_causal else mask,
                                                  is_causal=is_causal, enable_gqa=gqa)
    check(q, k, v, fn(), causal and Sq > 1)
    ms = tb.median_ms(fn, tb.nbytes(q, k, v))
    size = f"{B}x{Hq}x{Sq}x{D} kv {Hkv}x{Skv}{' causal' if causal else ''}"
    r = {"case": name, "size": size, "ms": ms}
    if Sq == 1:
        r["gbps"] = 2 * B * Hkv * Skv * D * 2 / ms / 1e6
    else:
        r["tflops"] = 4 * B * Hq * Sq * Skv * D * (0.5 if causal else 1) / ms / 1e9
    print(json.dumps(r), flush=True)
    del q, k, v, mask
    torch.cuda.empty_cache()


def main(args):
    for a in args:
        if a == "--list":
            tb.LIST = True
        elif a.startswith("-"):
            sys.exit(f"usage: {sys.argv[0]} [--list] [FILTER ...]")
        else:
            tb.FILTERS.append(a)
    if not tb.LIST:
        tb.g = torch.Generator(device=tb.dev).manual_seed(0)
    for unfused in (0, 1):
        for causal in (0, 1):
            for D in (64, 128):
                for S in (512, 2048, 8192):
                    B = 2 if S == 8192 else 8
                    if unfused and S == 8192:
                        continue  # as wgc_bench: the scores would not fit one binding there
                    if unfused and S == 2048:
                        B = 1
                    name = f"attn_{'unfused_' if unfused else ''}prefill_s{S}_d{D}{'_causal' if causal else ''}_f16"
                    case(name, "attention/unfused" if unfused else "attention/prefill", B, 32, 32, S, S, D, causal,
                         unfused)
    for causal in (0, 1):
        for S in (512, 2048):
            name = f"attn_prefill_s{S}_d256{'_causal' if causal else ''}_f16"
            case(name, "attention/prefill", 8, 32, 32, S, S, 256, causal, 0)
    for gqa in (0, 1):
        for B in (1, 8):
            for kv in (1024, 2048, 4096, 8192, 16384, 32768):
                name = f"attn_decode_kv{kv // 1024}k_{'gqa' if gqa else 'mha'}_b{B}_f16"
                case(name, "attention/decode", B, 32, 8 if gqa else 32, 1, kv, 128, 1, 0)


if __name__ == "__main__":
    main(sys.argv[1:])
