#!/usr/bin/env python3
"""The PyTorch twins of wgc_blocks' model blocks (same names, sizes, dtypes
and formulas), each checked against the same block in float64 on the GPU,
then timed eagerly and under torch.compile: GPU time (CUDA events around
one run, median of 20 after a warm-up of at least 1 s) and wall time (20
runs back to back, then a wait). One JSON object per block:
{"case", "size", "eager_ms", "eager_wall_ms", "compile_ms", "compile_wall_ms",
"check"}.

    torch_blocks.py [--list] [--small] [--no-compile] [FILTER ...]

--small runs the tiny sizes (on the CPU when there is no GPU); FILTERs
select blocks whose name or class contains one of them."""
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True

SMALL = "--small" in sys.argv
LIST = "--list" in sys.argv
COMPILE = "--no-compile" not in sys.argv
FILTERS = [a for a in sys.argv[1:] if not a.startswith("--")]
dev = "cuda" if torch.cuda.is_available() else "cpu"
DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
ROPE_BASE, EPS, BN_EPS = 10000.0, 1e-5, 1e-5
gen = torch.Generator(device=dev).manual_seed(1234)


def sz(full, small):
    return small if SMALL else full


def rand(*shape, scale=1.0, center=0.0, dtype=torch.float64):
    return (center + scale * (2 * torch.rand(*shape, generator=gen, device=dev, dtype=torch.float64) - 1)).to(dtype)


def sync():
    if dev == "cuda":
        torch.cuda.synchronize()


def gpu_ms(fn, reps=20):
    start = waited = time.perf_counter()
    runs = 0
    while runs < 2 or (not SMALL and time.perf_counter() - start < 1.0):
        fn()
        runs += 1
        if runs % 64 == 0 or time.perf_counter() - waited > 0.02:
            sync()
            waited = time.perf_counter()
    sync()
    if dev != "cuda":
        return wall_ms(fn, reps)
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def wall_ms(fn, reps=20):
    sync()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - t0) * 1e3 / reps


def close(got, ref, tol):
    """Count of elements off by more than tol + tol |ref|, and the largest difference."""
    got, ref = got.double(), ref.double()
    diff = (got - ref).abs()
    bad = int((~(diff <= tol + tol * ref.abs())).sum())
    return bad, float(diff.max()) if diff.numel() else 0.0


def want(name, cls):
    if FILTERS and not any(f in name or f in cls for f in FILTERS):
        return False
    if LIST:
        print(f"{name:34} {cls}")
        return False
    return True


def report(name, size, fn, check):
    """check() -> (bad, largest difference) of fn's result against float64."""
    sys.stderr.write(f"case {name} ({size})\n")
    r = {"case": name, "size": size}
    bad, worst = check(fn)
    r["check"] = "ok" if bad == 0 else "WRONG"
    sys.stderr.write(f"  eager: {bad} values outside tolerance, largest difference {worst:.3g}\n")
    r["eager_ms"], r["eager_wall_ms"] = gpu_ms(fn), wall_ms(fn)
    if COMPILE:
        # Every case of a kind shares its code object: start each from an
        # empty cache, so none falls back to eager at the recompile limit.
        torch._dynamo.reset()
        compiled = torch.compile(fn, dynamic=False)
        cbad, cworst = check(compiled)
        sys.stderr.write(f"  compiled: {cbad} values outside tolerance, largest difference {cworst:.3g}\n")
        if cbad:
            r["check"] = "WRONG"
        r["compile_ms"], r["compile_wall_ms"] = gpu_ms(compiled), wall_ms(compiled)
    print(json.dumps(r), flush=True)


# ---- the LLaMA decoder layer ----

def rms_norm(x, g):
    x32 = x.float() if x.dtype != torch.float64 else x
    y = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + EPS) * g.to(x32.dtype)
    return y.to(x.dtype)


def rope(t, cos, sin):
    """Half-split rotation of t (T, H, Dh) with cos, sin (T, Dh)."""
    half = t.shape[-1] // 2
    rotated = torch.cat((-t[..., half:], t[..., :half]), dim=-1)
    return t * cos[:, None, :] + rotated * sin[:, None, :]


def llama_layer(x, w, kc, vc, cos, sin, mask, past, H):
    T, D = x.shape
    S, Dh = kc.shape[0], D // H
    h = rms_norm(x, w["g1"])
    q = (h @ w["wq"].T).view(T, H, Dh)
    k = (h @ w["wk"].T).view(T, H, Dh)
    kc[past:past + T] = rope(k, cos, sin).view(T, D)
    vc[past:past + T] = h @ w["wv"].T
    q = rope(q, cos, sin).transpose(0, 1)
    kh, vh = kc.view(S, H, Dh).transpose(0, 1), vc.view(S, H, Dh).transpose(0, 1)
    scores = (q @ kh.transpose(-1, -2)).float() * (1.0 / math.sqrt(Dh))
    if mask is not None:
        scores = scores + mask
    p = torch.softmax(scores, dim=-1).to(x.dtype)
    o = (p @ vh).transpose(0, 1).reshape(T, D)
    x2 = x + o @ w["wo"].T
    h2 = rms_norm(x2, w["g2"])
    return x2 + (F.silu(h2 @ w["wg"].T) * (h2 @ w["wu"].T)) @ w["wd"].T


def llama_case(name, dtn, T, past, label):
    D, H, Fm = sz(4096, 64), sz(32, 4), sz(11008, 176)
    Dh, S = D // H, past + T
    full = f"{name}_{dtn}"
    cls = "block/llama-prefill" if T > 1 else "block/llama-decode"
    if not want(full, cls):
        return
    size = f"{label} T={T} S={S} D={D} H={H} F={Fm}"
    dt = DT[dtn]
    sd, sf = math.sqrt(3.0 / D), math.sqrt(3.0 / Fm)
    w64 = {"g1": rand(D, scale=0.1, center=1.0), "g2": rand(D, scale=0.1, center=1.0)}
    for k, shape, s in (("wq", (D, D), sd), ("wk", (D, D), sd), ("wv", (D, D), sd), ("wo", (D, D), sd),
                        ("wg", (Fm, D), sd), ("wu", (Fm, D), sd), ("wd", (D, Fm), sf)):
        w64[k] = rand(*shape, scale=s)
    # Inputs rounded to the dtype first, so the float64 reference sees the same values.
    w = {k: v.to(torch.float32 if k in ("g1", "g2") else dt) for k, v in w64.items()}
    w64 = {k: v.double() for k, v in w.items()}
    x = rand(T, D).to(dt)
    kc, vc = rand(S, D).to(dt), rand(S, D).to(dt)
    pos = torch.arange(past, past + T, device=dev, dtype=torch.float64)
    inv = ROPE_BASE ** (-torch.arange(0, Dh // 2, device=dev, dtype=torch.float64) * 2.0 / Dh)
    ang = torch.outer(pos, inv)
    cos64, sin64 = torch.cat((ang.cos(), ang.cos()), -1), torch.cat((ang.sin(), ang.sin()), -1)
    cos, sin = cos64.to(dt), sin64.to(dt)
    mask = None
    if T > 1:
        keep = torch.arange(S, device=dev)[None, :] <= (past + torch.arange(T, device=dev))[:, None]
        mask = torch.where(keep, 0.0, float("-inf")).to(device=dev, dtype=torch.float32)
    kc64, vc64 = kc.double(), vc.double()
    ref = llama_layer(x.double(), w64, kc64, vc64, cos64, sin64, None if mask is None else mask.double(), past, H)
    tol = 0.08 if dtn == "bf16" else 0.03

    def fn():
        return llama_layer(x, w, kc, vc, cos, sin, mask, past, H)

    def check(f):
        return close(f(), ref, tol)

    report(full, size, fn, check)


# ---- convolutional blocks ----

def conv_bn(cin, cout, k, groups, dt):
    conv = torch.nn.Conv2d(cin, cout, k, padding=k // 2, groups=groups, bias=False)
    bn = torch.nn.BatchNorm2d(cout, eps=BN_EPS)
    with torch.no_grad():
        conv.weight.copy_(rand(*conv.weight.shape, scale=math.sqrt(3.0 / (cin // groups * k * k))))
        bn.running_mean.copy_(rand(cout, scale=0.1))
        bn.running_var.copy_(rand(cout, scale=0.25, center=1.0))
        bn.weight.copy_(rand(cout, scale=0.2, center=1.0))
        bn.bias.copy_(rand(cout, scale=0.1))
    return torch.nn.Sequential(conv, bn).to(dev, dt).eval()


class Block(torch.nn.Module):
    def __init__(self, mobile, c, mid, dt):
        super().__init__()
        self.mobile = mobile
        self.a = conv_bn(c, mid, 1, 1, dt)
        self.b = conv_bn(mid, mid, 3, mid if mobile else 1, dt)
        self.c = conv_bn(mid, c, 1, 1, dt)

    def forward(self, x):
        act = (lambda t: F.relu6(t)) if self.mobile else F.relu
        y = self.c(act(self.b(act(self.a(x))))) + x
        return y if self.mobile else F.relu(y)


def cnn_case(mobile, dtn):
    n, hw = sz(32, 2), sz(56, 9)
    c, mid = (32, 192) if mobile else (256, 64)
    name = f"{'mobilenetv2_block' if mobile else 'resnet50_bottleneck'}_{dtn}"
    if not want(name, "block/mobilenetv2" if mobile else "block/resnet50"):
        return
    dt = DT[dtn]
    block = Block(mobile, c, mid, dt)
    ref_block = Block(mobile, c, mid, torch.float64)
    ref_block.load_state_dict({k: v.double() for k, v in block.state_dict().items()})
    x = rand(n, c, hw, hw).to(dt)
    with torch.no_grad():
        ref = ref_block(x.double())
    tol = 2e-2 if dtn == "f16" else 1e-3

    @torch.no_grad()
    def fn():
        return block(x)

    report(name, f"N={n} {hw}x{hw} {c}->{mid}->{c}", fn, lambda f: close(f(), ref, tol))


# ---- the MLP training step ----

def mlp_step(x, y, p, lr):
    w1, b1, w2, b2 = p
    B, O = y.shape
    pre = x @ w1.T + b1
    h = torch.relu(pre)
    out = h @ w2.T + b2
    diff = out - y
    loss = (diff * diff).mean()
    dout = diff * (2.0 / (B * O))
    dw2, db2 = dout.T @ h, dout.sum(0)
    dh = (dout @ w2) * (pre > 0).to(x.dtype)
    dw1, db1 = dh.T @ x, dh.sum(0)
    for param, grad in zip(p, (dw1, db1, dw2, db2)):
        param.add_(grad, alpha=-lr)
    return loss


def mlp_case():
    B, I, Hd, O = sz(256, 8), sz(784, 20), sz(1024, 33), sz(10, 6)
    name = "mlp_train_step_f32"
    if not want(name, "block/mlp-train"):
        return
    x, y = rand(B, I).float(), rand(B, O).float()
    p0 = [rand(Hd, I, scale=math.sqrt(3.0 / I)).float(), rand(Hd, scale=0.1).float(),
          rand(O, Hd, scale=math.sqrt(3.0 / Hd)).float(), rand(O, scale=0.1).float()]
    p = [t.clone() for t in p0]
    ref_p = [t.double() for t in p0]
    ref_loss = mlp_step(x.double(), y.double(), ref_p, 0.1)

    def fn():
        return mlp_step(x, y, p, 0.1)

    def check(f):
        for t, t0 in zip(p, p0):
            t.copy_(t0)
        loss = f()
        bad, worst = close(loss, ref_loss, 1e-4)
        for t, r in zip(p, ref_p):
            b, wst = close(t, r, 1e-4)
            bad, worst = bad + b, max(worst, wst)
        return bad, worst

    report(name, f"B={B} {I}->{Hd}->{O}", fn, check)


def main():
    if not LIST:
        name = torch.cuda.get_device_name() if dev == "cuda" else "cpu"
        sys.stderr.write(f"torch {torch.__version__} on {name}\n")
    for dtn in ("f16", "bf16"):
        llama_case("llama_prefill_512", dtn, sz(512, 13), 0, "prefill 512")
        llama_case("llama_prefill_2048", dtn, sz(2048, 29), 0, "prefill 2048")
        llama_case("llama_decode_1k", dtn, 1, sz(1024, 37), "decode, KV cache 1k")
        llama_case("llama_decode_8k", dtn, 1, sz(8192, 70), "decode, KV cache 8k")
    for dtn in ("f32", "f16"):
        cnn_case(False, dtn)
        cnn_case(True, dtn)
    mlp_case()


if __name__ == "__main__":
    main()
