#!/usr/bin/env python3
"""The LLaMA decoder layer of bench/blocks_llama.c written with the Python
package as a user would (operators that allocate their outputs, views by
slicing and transposing), where the binding's own cost is the point: the
same cases (prefill 512 and 2048, decode against KV caches of 1k and 8k,
f16 and bf16), checked against NumPy in float64 (the sampled rows' keys,
values and outputs, attention over the caches the GPU wrote), then timed:
GPU time (events around one run, median of 20 after a warm-up of at least
1 s) and wall time (20 runs back to back, then a wait), and profiled once.
One JSON line per case as wgc_blocks prints them, named py_<case>, which
compare_blocks.py puts against the PyTorch twin of <case>. Decode cases are
also captured once into a graph (`wg.capture`) and replayed per step:
`replay_check` compares a replay's output with the eager run's, then
`replay_ms` (GPU) and `replay_wall_ms` (20 replays back to back, then a
wait) are timed as above.

Attention is `wg.scaled_dot_product_attention` (no score tensor), except in
bf16 prefill: QK^T, mask add, softmax and PV through a (H, T, S) score
tensor, as C's bench/blocks_llama.c; WGC_BLOCKS_ATTENTION=fused or =chain
picks one form everywhere.

    py_blocks.py [--small] [FILTER ...]
"""
import json
import math
import os
import sys
import time

import numpy as np

import wgcompute as wg

SMALL = "--small" in sys.argv
FILTERS = [a for a in sys.argv[1:] if not a.startswith("--")]
ROPE_BASE, EPS = 10000.0, 1e-5
# Attention form: the fused operator except in bf16 prefill (no
# tensor-core route there), the chain; WGC_BLOCKS_ATTENTION=fused|chain
# picks one everywhere.
ATTENTION = os.environ.get("WGC_BLOCKS_ATTENTION", "")
rng = np.random.default_rng(7)


def sz(full, small):
    return small if SMALL else full


class Layer:
    def __init__(self, dt, T, past):
        self.dt, self.T, self.past = dt, T, past
        self.chain = ATTENTION == "chain" or (ATTENTION != "fused" and dt == "bfloat16" and T > 1)
        self.D, self.H, self.F = sz(4096, 64), sz(32, 4), sz(11008, 176)
        self.Dh, self.S = self.D // self.H, past + T
        D, F = self.D, self.F
        self.norm_dt = "float32" if dt == "bfloat16" else dt

        def make(shape, scale, center=0.0, dtype=None):
            host = (center + scale * rng.uniform(-1, 1, size=shape)).astype(np.float32)
            t = wg.asarray(host).astype(dtype or dt)
            return t, t.astype("float32").numpy().astype(np.float64)  # the values as stored

        sd, sf = math.sqrt(3.0 / D), math.sqrt(3.0 / F)
        self.x, self.x64 = make((T, D), 1.0)
        self.g1, self.g1_64 = make((D,), 0.1, 1.0, self.norm_dt)
        self.g2, self.g2_64 = make((D,), 0.1, 1.0, self.norm_dt)
        self.w, self.w64 = {}, {}
        for name, shape, s in (("wq", (D, D), sd), ("wk", (D, D), sd), ("wv", (D, D), sd), ("wo", (D, D), sd),
                               ("wg", (F, D), sd), ("wu", (F, D), sd), ("wd", (D, F), sf)):
            self.w[name], self.w64[name] = make(shape, s)
        self.kc, _ = make((self.S, D), 1.0)
        self.vc, _ = make((self.S, D), 1.0)
        self.mask = None
        if T > 1 and self.chain:
            keep = np.arange(self.S)[None, :] <= past + np.arange(T)[:, None]
            self.mask = wg.asarray(np.where(keep, 0.0, -np.inf).astype(np.float32))

    def norm(self, x, g):
        if self.dt != "bfloat16":
            return wg.rms_norm(x, self.D, g, eps=EPS)
        return wg.rms_norm(x.astype("float32"), self.D, g, eps=EPS).astype(self.dt)

    def rope(self, t):
        """RoPE in place on t (T, H, Dh)."""
        if self.dt != "bfloat16":
            wg.rope(t, seq_axis=0, position_offset=self.past, out=t)
        else:
            wg.cast(wg.rope(t.astype("float32"), seq_axis=0, position_offset=self.past), self.dt, out=t)

    def attention(self, q, k, v):
        """softmax(q k^T / sqrt(Dh) + mask) v per head; q (H, T, Dh), k and v (H, S, Dh);
        causal from the bottom right (each new token sees the cache and itself)."""
        if not self.chain:
            return wg.scaled_dot_product_attention(q, k, v, is_causal=self.T > 1, causal_alignment="bottom_right")
        scores = wg.gemm(q, k, alpha=1.0 / math.sqrt(self.Dh), transpose_b=True, out_dtype="float32")
        if self.mask is not None:
            wg.add(scores, self.mask, out=scores)
        return wg.softmax(scores, -1).astype(self.dt) @ v

    def __call__(self):
        T, D, H, Dh, S, p = self.T, self.D, self.H, self.Dh, self.S, self.past
        w = self.w
        h = self.norm(self.x, self.g1)
        q = wg.gemm(h, w["wq"], transpose_b=True)
        k_new, v_new = self.kc[p:p + T], self.vc[p:p + T]
        wg.gemm(h, w["wk"], c=k_new, transpose_b=True)
        wg.gemm(h, w["wv"], c=v_new, transpose_b=True)
        self.rope(q.reshape(T, H, Dh))
        self.rope(k_new.reshape(T, H, Dh))
        heads = (1, 0, 2)
        o = self.attention(q.reshape(T, H, Dh).transpose(heads), self.kc.reshape(S, H, Dh).transpose(heads),
                           self.vc.reshape(S, H, Dh).transpose(heads))
        x2 = self.x + wg.gemm(o.transpose(heads).reshape(T, D), w["wo"], transpose_b=True)
        h2 = self.norm(x2, self.g2)
        act = wg.silu(wg.gemm(h2, w["wg"], transpose_b=True)) * wg.gemm(h2, w["wu"], transpose_b=True)
        self.out = x2 + wg.gemm(act, w["wd"], transpose_b=True)
        return self.out


def rms(x, g):
    return x / np.sqrt((x * x).mean() + EPS) * g


def rope_ref(x, H, Dh, pos):
    x = x.reshape(H, Dh).copy()
    i = np.arange(Dh // 2)
    ang = pos * ROPE_BASE ** (-2.0 * i / Dh)
    a, b = x[:, :Dh // 2].copy(), x[:, Dh // 2:].copy()
    x[:, :Dh // 2], x[:, Dh // 2:] = a * np.cos(ang) - b * np.sin(ang), a * np.sin(ang) + b * np.cos(ang)
    return x.reshape(-1)


def check(L):
    """Mismatches of sampled rows' keys, values and outputs against float64."""
    kc = L.kc.astype("float32").numpy().astype(np.float64)
    vc = L.vc.astype("float32").numpy().astype(np.float64)
    out = L.out.astype("float32").numpy()
    tol = 0.08 if L.dt == "bfloat16" else 0.03
    rows = range(L.T) if SMALL or L.T <= 3 else (0, L.T // 2, L.T - 1)
    bad, worst = 0, 0.0
    H, Dh, w = L.H, L.Dh, L.w64
    for t in rows:
        pos = L.past + t
        h = rms(L.x64[t], L.g1_64)
        q = rope_ref(w["wq"] @ h, H, Dh, pos)
        refs = [(kc[pos], rope_ref(w["wk"] @ h, H, Dh, pos)), (vc[pos], w["wv"] @ h)]
        o = np.empty(L.D)
        for hd in range(H):
            sl = slice(hd * Dh, (hd + 1) * Dh)
            s = kc[:pos + 1, sl] @ q[sl] / math.sqrt(Dh)
            e = np.exp(s - s.max())
            o[sl] = e @ vc[:pos + 1, sl] / e.sum()
        x2 = L.x64[t] + w["wo"] @ o
        h2 = rms(x2, L.g2_64)
        g = w["wg"] @ h2
        refs.append((out[t], x2 + w["wd"] @ (g / (1 + np.exp(-g)) * (w["wu"] @ h2))))
        for got, ref in refs:
            d = np.abs(got - ref)
            bad += int((~(d <= tol + tol * np.abs(ref))).sum())
            worst = max(worst, float(d.max()))
    sys.stderr.write(f"  check: {bad} values outside {tol} + {tol} |ref|, largest difference {worst:.3g}\n")
    return bad


def time_case(L):
    stream = wg.current_stream()
    start = waited = time.perf_counter()
    runs = 0
    while runs < 2 or (not SMALL and time.perf_counter() - start < 1.0):
        L()
        runs += 1
        if runs % 64 == 0 or time.perf_counter() - waited > 0.02:
            stream.synchronize()
            waited = time.perf_counter()
    stream.synchronize()
    gpu = []
    for _ in range(2 if SMALL else 20):
        e0 = stream.record_event()
        L()
        e1 = stream.record_event()
        e1.wait()
        gpu.append(e0.elapsed_ms(e1))
    gpu.sort()
    reps = 2 if SMALL else 20
    t0 = time.perf_counter()
    for _ in range(reps):
        L()
    stream.synchronize()
    return gpu[len(gpu) // 2], (time.perf_counter() - t0) * 1e3 / reps


def replay_case(L, r):
    """Capture one step, replay it: its output against the eager run's, then
    GPU and wall time per replayed step (fields replay_*)."""
    stream = wg.current_stream()
    eager = L.out.astype("float32").numpy()
    with wg.capture() as g:
        L()
    g.replay()
    got = L.out.astype("float32").numpy()
    diff = float(np.abs(got - eager).max())
    same = bool(np.allclose(got, eager, rtol=1e-3, atol=1e-3))
    sys.stderr.write(f"  replay check: largest difference from the eager step {diff:.3g}\n")
    r["replay_check"] = "ok" if same else "WRONG"
    r["replay_dispatches"] = g.counts()["dispatches"]
    if not same:
        return 1
    start = time.perf_counter()
    while not SMALL and time.perf_counter() - start < 0.5:
        for _ in range(16):
            g.replay()
        stream.synchronize()
    gpu = []
    for _ in range(2 if SMALL else 20):
        e0 = stream.record_event()
        g.replay()
        e1 = stream.record_event()
        e1.wait()
        gpu.append(e0.elapsed_ms(e1))
    gpu.sort()
    reps = 2 if SMALL else 20
    t0 = time.perf_counter()
    for _ in range(reps):
        g.replay()
    stream.synchronize()
    r["replay_ms"], r["replay_wall_ms"] = gpu[len(gpu) // 2], (time.perf_counter() - t0) * 1e3 / reps
    g.close()
    return 0


def case(name, dt, T, past, label):
    short = {"float16": "f16", "bfloat16": "bf16"}[dt]
    full = f"py_{name}_{short}"
    cls = "block/py-llama-prefill" if T > 1 else "block/py-llama-decode"
    if FILTERS and not any(f in full or f in cls for f in FILTERS):
        return 0
    L = Layer(dt, T, past)
    size = f"{label} T={T} S={L.S} D={L.D} H={L.H} F={L.F}"
    sys.stderr.write(f"case {full} ({size})\n")
    flops = 2.0 * T * (4.0 * L.D * L.D + 3.0 * L.D * L.F) + 4.0 * L.H * T * L.S * L.Dh
    L()
    ok = check(L) == 0
    r = {"case": full, "class": cls, "dtype": short, "size": size, "ms": -1, "wall_ms": -1,
         "check": "ok" if ok else "WRONG", "limit": "block", "amount": flops}
    if ok:
        r["ms"], r["wall_ms"] = time_case(L)
        if T == 1:
            ok = replay_case(L, r) == 0
    print(json.dumps(r), flush=True)
    if ok:
        with wg.profile() as p:
            L()
        print(f"# profile of {full} ({size}), one run, {len(p.records)} GPU commands")
        for line in p.table(max_rows=8).splitlines():
            print(f"#   {line}")
    return 0 if ok else 1


def main():
    dev = wg.default_device()
    sys.stderr.write(f"adapter: {dev}\n")
    wrong = 0
    for dt in ("float16", "bfloat16"):
        wrong += case("llama_prefill_512", dt, sz(512, 13), 0, "prefill 512")
        wrong += case("llama_prefill_2048", dt, sz(2048, 29), 0, "prefill 2048")
        wrong += case("llama_decode_1k", dt, 1, sz(1024, 37), "decode, KV cache 1k")
        wrong += case("llama_decode_8k", dt, 1, sz(8192, 70), "decode, KV cache 8k")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
