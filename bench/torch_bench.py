#!/usr/bin/env python3
"""The PyTorch side of the benchmark: the same cases as wgc_bench (same
names, sizes and layouts: transposed weights as .t() views and so on), timed
the same way: CUDA events around each run, median of repeated runs after a
warm-up of at least 1 s under load. Prints one JSON object per
case: {"case", "size", "ms"} (and "note" where PyTorch runs it differently).

    torch_bench.py [--list] [FILTER ...]

FILTERs select cases whose name or class contains one of them."""
import json
import sys
import time

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
dev = "cuda"
f32, f16, bf16 = torch.float32, torch.float16, torch.bfloat16
GIB = 1 << 30

FILTERS = []
LIST = False
g = None  # torch.Generator on the GPU, set in main


def warm_ms(in_bytes):
    # As wgc_bench: at least 1 s with work kept queued (the clocks stay low
    # under a light load after the host was busy), 2 s after gigabyte inputs.
    return 2000 if in_bytes > GIB else 1000


def median_ms(fn, in_bytes, reps=10):
    start = time.perf_counter()
    waited = start
    runs = 0
    limit = warm_ms(in_bytes) / 1e3
    while runs < 2 or time.perf_counter() - start < limit:
        fn()
        runs += 1
        if runs % 64 == 0 or time.perf_counter() - waited > 0.02:
            torch.cuda.synchronize()
            waited = time.perf_counter()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def emit(case, size, ms, note=None):
    r = {"case": case, "size": size, "ms": ms}
    if note:
        r["note"] = note
    print(json.dumps(r), flush=True)


def want(name, cls):
    if FILTERS and not any(f in name or f in cls for f in FILTERS):
        return False
    if LIST:
        print(f"{name:34} {cls}")
        return False
    return True


def nbytes(*ts):
    return sum(t.numel() * t.element_size() for t in ts)


def rnd(*shape, dtype=f32):
    return (torch.rand(*shape, device=dev, generator=g) * 2 - 1).to(dtype)


def dims(*shape):
    # wgc_bench's size strings: powers of two above 65536 as 2^k
    return "x".join(f"2^{s.bit_length() - 1}" if s > 65536 and s & (s - 1) == 0 else str(s) for s in shape)


def run(name, cls, size, make, reps=10):
    """make() -> (fn, inputs, note); nothing is allocated unless selected."""
    if not want(name, cls):
        return
    fn, inputs, note = make()
    emit(name, size, median_ms(fn, nbytes(*inputs), reps), note)


# ---- elementwise and movement ----
def elementwise():
    def copy():
        src = rnd(1 << 28)
        dst = torch.empty_like(src)
        return (lambda: dst.copy_(src)), [src], None

    run("copy_f32", "elementwise/copy", "2^28", copy)

    def add(R, C, dtype, mode):
        def make():
            a = rnd(R, C, dtype=dtype)
            b = rnd(C, dtype=dtype) if mode == "bias" else rnd(C, R, dtype=dtype).t() if mode == "t" else rnd(R, C, dtype=dtype)
            out = torch.empty(R, C, device=dev, dtype=dtype)
            return (lambda: torch.add(a, b, out=out)), [a, b], None
        return make

    run("add_f32", "elementwise/contiguous", "2^28", add(1 << 14, 1 << 14, f32, ""))
    run("bias_add_f32", "elementwise/broadcast", "16384x4096 + bias", add(16384, 4096, f32, "bias"))
    run("bias_add_f16", "elementwise/broadcast", "8192x14336 + bias", add(8192, 14336, f16, "bias"))
    run("add_transposed_f32", "elementwise/strided", "8192x8192 + B^T view", add(8192, 8192, f32, "t"))
    run("add_odd_f32", "elementwise/contiguous", "10007x10009", add(10007, 10009, f32, ""))
    run("add_bf16", "elementwise/contiguous", "2^28", add(1 << 14, 1 << 14, bf16, ""))
    run("bias_add_bf16", "elementwise/broadcast", "8192x14336 + bias", add(8192, 14336, bf16, "bias"))

    def unary(fn, R, C, dtype):
        def make():
            x = rnd(R, C, dtype=dtype)
            return (lambda: fn(x)), [x], None
        return make

    run("silu_f16", "elementwise/unary", "8192x14336", unary(F.silu, 8192, 14336, f16))
    run("gelu_tanh_f32", "elementwise/unary", "16384x4096",
        unary(lambda x: F.gelu(x, approximate="tanh"), 16384, 4096, f32))

    def cast(src_t, dst_t):
        def make():
            x = rnd(1 << 28, dtype=src_t)
            out = torch.empty(1 << 28, device=dev, dtype=dst_t)
            return (lambda: out.copy_(x)), [x], None
        return make

    run("cast_f32_f16", "elementwise/cast", "2^28", cast(f32, f16))
    run("cast_f16_f32", "elementwise/cast", "2^28", cast(f16, f32))
    run("cast_f32_bf16", "elementwise/cast", "2^28", cast(f32, bf16))
    run("cast_bf16_f32", "elementwise/cast", "2^28", cast(bf16, f32))

    def permute(shape, perm, dtype):
        def make():
            x = rnd(*shape, dtype=dtype)
            out = torch.empty(*[shape[p] for p in perm], device=dev, dtype=dtype)
            return (lambda: out.copy_(x.permute(*perm))), [x], None
        return make

    run("permute_heads_f16", "movement/permute", "8x2048x32x128 perm 0213", permute((8, 2048, 32, 128), (0, 2, 1, 3), f16))
    run("permute_nchw_nhwc_f32", "movement/permute", "32x256x56x56 perm 0231",
        permute((32, 256, 56, 56), (0, 2, 3, 1), f32))

    def concat(R, Ca, Cb, dtype):
        def make():
            a, b = rnd(R, Ca, dtype=dtype), rnd(R, Cb, dtype=dtype)
            out = torch.empty(R, Ca + Cb, device=dev, dtype=dtype)
            return (lambda: torch.cat([a, b], dim=1, out=out)), [a, b], None
        return make

    run("concat_last_f32", "movement/concat", "16384x2048 + 16384x2048 axis 1", concat(16384, 2048, 2048, f32))
    run("concat_odd_f16", "movement/concat", "8192x4097 + 8192x1023 axis 1", concat(8192, 4097, 1023, f16))

    def normal():
        out = torch.empty(1 << 28, device=dev)
        return (lambda: out.normal_(generator=g)), [], None

    run("random_normal_f32", "random/normal", "2^28", normal)


# ---- reductions ----
def reductions():
    def red(shape, fn, dtype=f32):
        def make():
            x = rnd(*shape, dtype=dtype)
            return (lambda: fn(x)), [x], None
        return make

    def sz(shape, axes):
        return dims(*shape) + " axes " + ",".join(map(str, axes))

    run("sum_f32", "reduce/all", "2^28", red((1 << 28,), torch.sum))
    for name, shape, dtype in (("sum_axis0_f32", (8192, 8192), f32), ("sum_axis0_odd_f32", (10007, 3001), f32),
                               ("sum_axis0_f16", (4096, 4096), f16), ("sum_axis0_slabs_f32", (17, 512 * 512), f32)):
        run(name, "reduce/column", sz(shape, (0,)), red(shape, lambda x: torch.sum(x, 0), dtype))
    run("sum_axis1_f32", "reduce/middle", sz((32, 4096, 512), (1,)), red((32, 4096, 512), lambda x: torch.sum(x, 1)))
    run("mean_axes02_f32", "reduce/several-axes", sz((256, 1024, 256), (0, 2)),
        red((256, 1024, 256), lambda x: torch.mean(x, (0, 2))))
    run("var_axes023_f32", "reduce/several-axes", sz((64, 256, 56, 56), (0, 2, 3)),
        red((64, 256, 56, 56), lambda x: torch.var(x, (0, 2, 3), correction=0)))
    run("argmax_rows1000_f32", "reduce/argmax-short", sz((4096, 1000), (1,)), red((4096, 1000), lambda x: torch.argmax(x, 1)))
    run("argmax_vocab_f32", "reduce/argmax-long", sz((32, 128256), (1,)), red((32, 128256), lambda x: torch.argmax(x, 1)))
    run("var_rows4096_f32", "reduce/var-row", sz((16384, 4096), (1,)),
        red((16384, 4096), lambda x: torch.var(x, 1, correction=0)))
    run("sum_rows4096_f16", "reduce/row", sz((16384, 4096), (1,)), red((16384, 4096), lambda x: torch.sum(x, 1), f16))
    run("sum_rows4096_bf16", "reduce/row", sz((16384, 4096), (1,)), red((16384, 4096), lambda x: torch.sum(x, 1), bf16))
    run("max_rows1001_f32", "reduce/row", sz((30000, 1001), (1,)), red((30000, 1001), lambda x: torch.amax(x, 1)))
    run("mean_rows32_f32", "reduce/short-rows", sz((1 << 21, 32), (1,)), red((1 << 21, 32), lambda x: torch.mean(x, 1)))


# ---- softmax and norms ----
def rows():
    def op(kind, R, C, dtype):
        def make():
            x = rnd(R, C, dtype=dtype)
            w, b = rnd(C, dtype=dtype), rnd(C, dtype=dtype)
            out = torch.empty_like(x)
            fns = {
                "softmax": lambda: torch.softmax(x, dim=-1, out=out),
                "log_softmax": lambda: F.log_softmax(x, dim=-1),
                "layer_norm": lambda: F.layer_norm(x, (C,), w, b, 1e-5),
                "rms_norm": lambda: F.rms_norm(x, (C,), w, 1e-6),
            }
            return fns[kind], [x], None
        return make

    for name, cls, kind, R, C, dtype in (
        ("softmax_f32", "softmax/rows", "softmax", 65536, 4096, f32),
        ("softmax_rows32_f32", "softmax/short-rows", "softmax", 1 << 21, 32, f32),
        ("softmax_rows32_f16", "softmax/short-rows", "softmax", 1 << 21, 32, f16),
        ("softmax_attn2048_f16", "softmax/rows", "softmax", 65536, 2048, f16),
        ("softmax_vocab50k_f32", "softmax/long-rows", "softmax", 256, 50257, f32),
        ("softmax_vocab128k_f32", "softmax/long-rows", "softmax", 32, 128256, f32),
        ("log_softmax_vocab32k_f32", "softmax/log", "log_softmax", 512, 32000, f32),
        ("log_softmax_rows1000_f32", "softmax/log", "log_softmax", 4096, 1000, f32),
        ("layer_norm_f32", "norm/long-rows", "layer_norm", 65536, 4096, f32),
        ("layer_norm_rows4096_f16", "norm/long-rows", "layer_norm", 16384, 4096, f16),
        ("layer_norm_rows256_f32", "norm/short-rows", "layer_norm", 1 << 20, 256, f32),
        ("layer_norm_rows256_f16", "norm/short-rows", "layer_norm", 1 << 20, 256, f16),
        ("rms_norm_rows4096_f32", "norm/long-rows", "rms_norm", 16384, 4096, f32),
        ("rms_norm_rows4096_f16", "norm/long-rows", "rms_norm", 16384, 4096, f16),
        ("rms_norm_rows256_f32", "norm/short-rows", "rms_norm", 1 << 20, 256, f32),
        ("rms_norm_rows256_f16", "norm/short-rows", "rms_norm", 1 << 20, 256, f16),
    ):
        run(name, cls, dims(R, C), op(kind, R, C, dtype))


# ---- matrix products ----
def mm_f32_out(a, b):
    """f16 x f16 (or bf16) -> f32 where this PyTorch has out_dtype; else the inputs' dtype out (noted)."""
    try:
        torch.mm(a[:1, :1], b[:1, :1], out_dtype=f32)
        return (lambda: torch.mm(a, b, out_dtype=f32)), None
    except (TypeError, RuntimeError):
        return (lambda: torch.mm(a, b)), f"{str(a.dtype)[6:]} out (no out_dtype in this PyTorch)"


def gemms():
    def mm(M, N, K, dtype, out_dtype, b_t=False, batch=0):
        def make():
            shape_a = (batch, M, K) if batch else (M, K)
            a = rnd(*shape_a, dtype=dtype)
            if b_t:
                b = rnd(*((batch, N, K) if batch else (N, K)), dtype=dtype).transpose(-1, -2)
            else:
                b = rnd(*((batch, K, N) if batch else (K, N)), dtype=dtype)
            note = None
            if batch:
                if dtype == f16 and out_dtype == f32:
                    try:
                        torch.bmm(a[:, :1, :1], b[:, :1, :1], out_dtype=f32)
                        fn = lambda: torch.bmm(a, b, out_dtype=f32)  # noqa: E731
                    except (TypeError, RuntimeError):
                        fn, note = (lambda: torch.bmm(a, b)), "f16 out (no out_dtype in this PyTorch)"
                else:
                    c = torch.empty(batch, M, N, device=dev, dtype=out_dtype)
                    fn = lambda: torch.bmm(a, b, out=c)  # noqa: E731
            elif dtype in (f16, bf16) and out_dtype == f32:
                fn, note = mm_f32_out(a, b)
            else:
                c = torch.empty(M, N, device=dev, dtype=out_dtype)
                fn = lambda: torch.mm(a, b, out=c)  # noqa: E731
            return fn, [a, b], note
        return make

    def size(M, N, K, b_t, batch=0, decode=False):
        s = f"M={M} N={N} K={K}" + ((" W(N,K)^T" if decode else " B^T view") if b_t else "")
        return f"{batch}x {s}" if batch else s

    for n in (4096, 8192):
        run("sgemm_f32", "gemm/square", f"{n}^3", mm(n, n, n, f32, f32), 5 if n == 8192 else 10)
    run("gemm_bf16", "gemm/square", "4096^3", mm(4096, 4096, 4096, bf16, bf16))
    for n in (4096, 8192):
        # f16 out, as before: the figures in BENCHMARKS.md were taken so
        run("gemm_f16_f32acc", "gemm/square", f"{n}^3", mm(n, n, n, f16, f16), 5 if n == 8192 else 10)
    run("bmm_f32", "gemm/batched", "512x128^3", mm(128, 128, 128, f32, f32, batch=512))
    for out_name, out_dtype in (("f32out", f32), ("f16out", f16)):
        for t in (False, True):
            lay = "nk" if t else "kn"
            run(f"hgemm_prefill_up_{out_name}_{lay}", "gemm/prefill", size(4096, 14336, 4096, t),
                mm(4096, 14336, 4096, f16, out_dtype, t))
            run(f"hgemm_prefill_down_{out_name}_{lay}", "gemm/prefill", size(2048, 4096, 14336, t),
                mm(2048, 4096, 14336, f16, out_dtype, t))
    for dname, dtype in (("f16", f16), ("f32", f32)):
        for t in (False, True):
            for K, N in ((4096, 14336), (14336, 4096)):
                for M in (1, 8, 16, 32):
                    run(f"decode_{dname}_m{M}_k{K}_n{N}_{'nk' if t else 'kn'}", "gemm/decode",
                        size(M, N, K, t, decode=True), mm(M, N, K, dtype, dtype, t), 20)
    for M in (1, 8, 16, 32):
        run(f"decode_bf16_m{M}_k4096_n14336_nk", "gemm/decode", size(M, 14336, 4096, True, decode=True),
            mm(M, 14336, 4096, bf16, bf16, True), 20)
    for M in (1, 8, 16, 32):
        run(f"decode_bf16_m{M}_k14336_n4096_kn", "gemm/decode", size(M, 4096, 14336, False, decode=True),
            mm(M, 4096, 14336, bf16, bf16, False), 20)
    def decode(dname, dtype, M, K, N, t):
        run(f"decode_{dname}_m{M}_k{K}_n{N}_{'nk' if t else 'kn'}", "gemm/decode", size(M, N, K, t, decode=True),
            mm(M, N, K, dtype, dtype, t), 20)
    for t in (False, True):
        decode("f16", f16, 2, 4096, 14336, t)
        decode("f16", f16, 2, 14336, 4096, t)
        for M in (1, 2):
            decode("f16", f16, M, 4096, 11008, t)
            decode("f16", f16, M, 11008, 4096, t)
    decode("bf16", bf16, 2, 14336, 4096, False)
    for M in (1, 2):
        decode("bf16", bf16, M, 11008, 4096, False)
    for t in (False, True):
        for M in (4, 12):
            decode("f16", f16, M, 4096, 14336, t)
            decode("f16", f16, M, 14336, 4096, t)
        decode("f16", f16, 8, 4096, 11008, t)
        decode("f16", f16, 8, 11008, 4096, t)
    for M in (4, 12):
        decode("bf16", bf16, M, 14336, 4096, False)
    for t in (False, True):
        for M in (1, 2, 8):
            decode("f16", f16, M, 4096, 1024, t)
    for t in (False, True):
        decode("f32", f32, 2, 4096, 14336, t)
        decode("f32", f32, 2, 14336, 4096, t)
    for t in (False, True):
        for M in (1, 8, 16):
            decode("f16", f16, M, 2048, 8192, t)
            decode("f16", f16, M, 8192, 2048, t)
    for dname, dtype in (("f16", f16), ("bf16", bf16)):
        for M in (1, 8, 16, 32):
            run(f"decode_{dname}_m{M}_k4096_n128256_nk", "gemm/decode", size(M, 128256, 4096, True, decode=True),
                mm(M, 128256, 4096, dtype, dtype, True), 20)
    run("bgemm_prefill_up_bf16out_nk", "gemm/prefill", size(4096, 14336, 4096, True),
        mm(4096, 14336, 4096, bf16, bf16, True))
    run("bgemm_prefill_down_f32out_kn", "gemm/prefill", size(2048, 4096, 14336, False),
        mm(2048, 4096, 14336, bf16, f32, False))
    for name, cls, M, N, K in (("sgemm_1000_f32", "gemm/odd", 1000, 1000, 1000),
                               ("sgemm_4095x4097x1023_f32", "gemm/odd", 4095, 4097, 1023),
                               ("sgemm_3000x50x5000_f32", "gemm/odd", 3000, 50, 5000),
                               ("sgemm_tall_65536x64x64_f32", "gemm/tall-skinny", 65536, 64, 64)):
        run(name, cls, size(M, N, K, False), mm(M, N, K, f32, f32))
    for M, N, K in ((4000, 4000, 4000), (4000, 4096, 4096), (4096, 4096, 4080), (4095, 4097, 1023)):
        run(f"hgemm_{M}x{N}x{K}_f16out", "gemm/odd", size(M, N, K, False), mm(M, N, K, f16, f16))
    run("hgemm_2047x4096x4095_f16out_nk", "gemm/odd", size(2047, 4096, 4095, True),
        mm(2047, 4096, 4095, f16, f16, True))
    run("bgemm_4095x4097x1023_f32out", "gemm/odd", size(4095, 4097, 1023, False), mm(4095, 4097, 1023, bf16, f32))
    for M, N, K in ((8192, 100, 2048), (512, 512, 8192)):
        run(f"sgemm_{M}x{N}x{K}_f32", "gemm/few-tiles", size(M, N, K, False), mm(M, N, K, f32, f32))
    for B, K in ((17, 496), (16, 512), (16, 1024), (17, 992)):
        run(f"sgemm_parts_{B}x512x512x{K}_f32", "gemm/split-parts", size(512, 512, K, False, B),
            mm(512, 512, K, f32, f32, batch=B))
    def runs_strided(B, M, N, KR):
        def make():
            a = rnd(M, B * KR).view(M, B, KR).transpose(0, 1)
            b = rnd(B, KR, N)
            c = torch.empty(B, M, N, device=dev, dtype=f32)
            return (lambda: torch.bmm(a, b, out=c)), [a, b], None
        return make
    run("sgemm_parts_16x512x512x512_strided_f32", "gemm/split-parts", "16x M=512 N=512 K=512 A runs strided",
        runs_strided(16, 512, 512, 512))
    run("hgemm_1024x1024x4096_f16out", "gemm/few-tiles", size(1024, 1024, 4096, False),
        mm(1024, 1024, 4096, f16, f16))
    run("qk_bmm_f16", "gemm/attention", size(2048, 2048, 128, True, 32), mm(2048, 2048, 128, f16, f32, True, 32))
    run("qk_bmm_f32", "gemm/attention", size(2048, 2048, 128, True, 32), mm(2048, 2048, 128, f32, f32, True, 32))
    run("qk_bmm_f32_d64", "gemm/attention", size(1024, 1024, 64, True, 64), mm(1024, 1024, 64, f32, f32, True, 64))
    # The f16 3x3 convolutions' implicit GEMMs as plain products (cases_gemm.c).
    for M, N, K in ((64, 32 * 56 * 56, 576), (128, 64 * 28 * 28, 1152), (256, 64 * 14 * 14, 2304),
                    (512, 64 * 7 * 7, 4608)):
        run(f"hgemm_conv_shape_{M}_{N}", "conv/gemm-shape", size(M, N, K, False), mm(M, N, K, f16, f16))
        run(f"hgemm_conv_shape_nhwc_{N}_{M}", "conv/gemm-shape", size(N, M, K, True), mm(N, M, K, f16, f16, True))
    run("sgemm_linear_2048x4096x4096_nk", "gemm/prefill", size(2048, 4096, 4096, True),
        mm(2048, 4096, 4096, f32, f32, True))


# ---- convolution and pooling ----
def convs():
    def conv(N, C, H, O, K, stride, pad, groups=1, dtype=f32, channels_last=False):
        def make():
            x = rnd(N, C, H, H, dtype=dtype)
            w = rnd(O, C // groups, K, K, dtype=dtype)
            if channels_last:
                x = x.to(memory_format=torch.channels_last)
                w = w.to(memory_format=torch.channels_last)
            return (lambda: F.conv2d(x, w, stride=stride, padding=pad, groups=groups)), [x, w], None
        return make

    def size(N, C, H, O, K, s, groups=1):
        return f"N={N} C={C} {H}x{H} O={O} k{K} s{s}" + (" depthwise" if groups > 1 else "")

    run("conv_3x3_64_56", "conv/3x3", "N=32", conv(32, 64, 56, 64, 3, 1, 1))
    run("conv_1x1_256_512_s2", "conv/1x1", "N=32", conv(32, 256, 56, 512, 1, 2, 0))
    run("conv_7x7_3_64_s2", "conv/stem", "N=32", conv(32, 3, 224, 64, 7, 2, 3))
    for name, cls, a in (("conv_3x3_128_28_n64", "conv/3x3", (64, 128, 28, 128, 3, 1, 1)),
                         ("conv_3x3_256_14_n64", "conv/3x3", (64, 256, 14, 256, 3, 1, 1)),
                         ("conv_1x1_256_64_56", "conv/1x1", (32, 256, 56, 64, 1, 1, 0)),
                         ("conv_dw3x3_256_28_n64", "conv/depthwise", (64, 256, 28, 256, 3, 1, 1, 256)),
                         ("conv_dw3x3_s2_144_56_n64", "conv/depthwise", (64, 144, 56, 144, 3, 2, 1, 144))):
        run(name, cls, size(*a[:6], *a[7:]), conv(*a))
    # f16, channels-first (cudnn.benchmark on, as above).
    for name, cls, a in (("conv_f16_3x3_64_56", "conv/3x3", (32, 64, 56, 64, 3, 1, 1)),
                         ("conv_f16_3x3_128_28_n64", "conv/3x3", (64, 128, 28, 128, 3, 1, 1)),
                         ("conv_f16_3x3_256_14_n64", "conv/3x3", (64, 256, 14, 256, 3, 1, 1)),
                         ("conv_f16_1x1_256_64_56", "conv/1x1", (32, 256, 56, 64, 1, 1, 0)),
                         ("conv_f16_7x7_3_64_s2", "conv/stem", (32, 3, 224, 64, 7, 2, 3)),
                         ("conv_f16_dw3x3_256_28_n64", "conv/depthwise", (64, 256, 28, 256, 3, 1, 1, 256))):
        run(name, cls, size(*a[:6], *a[7:]), conv(*a[:7], groups=a[7] if len(a) > 7 else 1, dtype=f16))
    run("conv_f16_3x3_512_7_n64", "conv/3x3", size(64, 512, 7, 512, 3, 1), conv(64, 512, 7, 512, 3, 1, 1, dtype=f16))
    # f16 channels-last: input, weight and output (torch.channels_last).
    for name, a in (("conv_f16_nhwc_3x3_64_56", (32, 64, 56, 64, 3, 1, 1)),
                    ("conv_f16_nhwc_3x3_128_28_n64", (64, 128, 28, 128, 3, 1, 1)),
                    ("conv_f16_nhwc_3x3_256_14_n64", (64, 256, 14, 256, 3, 1, 1)),
                    ("conv_f16_nhwc_3x3_512_7_n64", (64, 512, 7, 512, 3, 1, 1)),
                    ("conv_f16_nhwc_3x3_s2_128_56_n64", (64, 128, 56, 128, 3, 2, 1))):
        run(name, "conv/3x3-nhwc", size(*a[:6]), conv(*a, dtype=f16, channels_last=True))
    # ResNet-50's f32 3x3 stride-1 layers (cases_conv_winograd.c): cuDNN,
    # TF32 off, checked on image 0 against float64 first (its largest error
    # in the note).
    def conv3(N, C, H, channels_last):
        def make():
            fn, inputs, _ = conv(N, C, H, C, 3, 1, 1, channels_last=channels_last)()
            x, w = inputs
            err = (fn()[:1].double() - F.conv2d(x[:1].double(), w.double(), padding=1)).abs().max().item()
            bound = 1e-5 * (1 + (9 * C) ** 0.5)
            return fn, inputs, f"max err on image 0 {err:.2e} ({'within' if err <= bound else 'PAST'} {bound:.1e})"
        return make

    for c, h in ((64, 56), (128, 28), (256, 14), (512, 7)):
        sz = size(32, c, h, c, 3, 1)
        run(f"conv_f32_3x3_{c}_{h}_n32", "conv/3x3-f32", sz, conv3(32, c, h, False))
        run(f"conv_f32_3x3_{c}_{h}_n256", "conv/3x3-f32", size(256, c, h, c, 3, 1), conv3(256, c, h, False))
        run(f"conv_f32_nhwc_3x3_{c}_{h}_n32", "conv/3x3-f32-nhwc", sz + " channels-last", conv3(32, c, h, True))

    def pool(fn, N, C, H, dtype=f32, channels_last=False):
        def make():
            x = rnd(N, C, H, H, dtype=dtype)
            if channels_last:
                x = x.to(memory_format=torch.channels_last)
            return (lambda: fn(x)), [x], None
        return make

    run("max_pool_3x3_s2_64_112", "pool/max", "N=32 C=64 112x112 k3 s2 p1",
        pool(lambda x: F.max_pool2d(x, 3, 2, 1), 32, 64, 112))
    run("max_pool_2x2_256_56_f16", "pool/max", "N=32 C=256 56x56 k2 s2 p0",
        pool(lambda x: F.max_pool2d(x, 2, 2), 32, 256, 56, f16))
    run("avg_pool_3x3_s1_192_28", "pool/avg", "N=64 C=192 28x28 k3 s1 p1",
        pool(lambda x: F.avg_pool2d(x, 3, 1, 1), 64, 192, 28))
    run("global_avg_pool_2048_7_n256", "pool/global", "N=256 C=2048 7x7 k7 s1 p0",
        pool(lambda x: F.adaptive_avg_pool2d(x, 1), 256, 2048, 7))
    for dtype, tag in ((f32, ""), (f16, "_f16")):
        run("max_pool_nhwc_3x3_s2_64_112" + tag, "pool/max-nhwc", "N=32 C=64 112x112 k3 s2 p1 channels-last",
            pool(lambda x: F.max_pool2d(x, 3, 2, 1), 32, 64, 112, dtype, True))
        run("avg_pool_nhwc_3x3_s1_192_28" + tag, "pool/avg-nhwc", "N=64 C=192 28x28 k3 s1 p1 channels-last",
            pool(lambda x: F.avg_pool2d(x, 3, 1, 1), 64, 192, 28, dtype, True))
        run("global_avg_pool_nhwc_2048_7_n256" + tag, "pool/global-nhwc", "N=256 C=2048 7x7 k7 s1 p0 channels-last",
            pool(lambda x: F.adaptive_avg_pool2d(x, 1), 256, 2048, 7, dtype, True))
        run("max_pool_nhwc_3x3_s2_64_112_n256" + tag, "pool/max-nhwc", "N=256 C=64 112x112 k3 s2 p1 channels-last",
            pool(lambda x: F.max_pool2d(x, 3, 2, 1), 256, 64, 112, dtype, True))


# ---- batch norm (inference) ----
def batch_norms():
    def bn(N, C, H, dtype, channels_last):
        def make():
            x = rnd(N, C, H, H, dtype=dtype)
            if channels_last:
                x = x.to(memory_format=torch.channels_last)
            mean, w, b = rnd(C, dtype=dtype), rnd(C, dtype=dtype), rnd(C, dtype=dtype)
            var = (0.75 + 0.5 * rnd(C)).to(dtype)

            def fn():
                return F.batch_norm(x, mean, var, w, b, training=False, eps=1e-5)
            # Checked against a double-precision reference before timing (on
            # the first images at most: the double copies of batch 256 would
            # take gigabytes).
            k = min(N, 8)
            d = lambda t: t.double().view(1, C, 1, 1)
            ref = (x[:k].double() - d(mean)) / torch.sqrt(d(var) + 1e-5) * d(w) + d(b)
            tol = 1e-3 if dtype == f16 else 1e-5
            err = ((fn()[:k].double() - ref).abs() - tol * (1 + ref.abs())).max().item()
            assert err <= 0, f"batch_norm {N} {C} {H} {dtype}: off by {err}"
            del ref
            return fn, [x], None
        return make

    # PyTorch's copy of the same bytes (wgc_bench's copy_<case>).
    def copy(N, C, H, dtype):
        def make():
            src = rnd(N * C * H * H, dtype=dtype)
            dst = torch.empty_like(src)
            return (lambda: dst.copy_(src)), [src], None
        return make

    def both(N, C, dtype, cl, suffix):
        name = f"batch_norm{'_f16' if dtype == f16 else ''}{'_nhwc' if cl else ''}_{C}_56{suffix}"
        size = f"N={N} C={C} 56x56" + (" channels-last" if cl else "")
        cls = "norm/batch-nhwc" if cl else "norm/batch"
        run(name, cls, size, bn(N, C, 56, dtype, cl))
        torch.cuda.empty_cache()
        run("copy_" + name, cls, f"{N * C * 56 * 56} elements (the bytes of {name})", copy(N, C, 56, dtype))
        torch.cuda.empty_cache()

    for cl in (False, True):
        for dtype in (f32, f16):
            for C in (64, 256, 192):
                both(32, C, dtype, cl, "")
    for cl in (False, True):
        for dtype in (f32, f16):
            for C in (64, 256):
                both(256, C, dtype, cl, "_n256")

    # wgc_bench runs these as one convolution with the batch norm folded in
    # (done once, untimed); PyTorch eager runs conv then batch_norm.
    def conv_bn(N, C, H, O, K, dtype):
        def make():
            x, w = rnd(N, C, H, H, dtype=dtype), rnd(O, C, K, K, dtype=dtype)
            mean, gw, b = rnd(O, dtype=dtype), rnd(O, dtype=dtype), rnd(O, dtype=dtype)
            var = (0.75 + 0.5 * rnd(O)).to(dtype)
            fn = lambda: F.batch_norm(F.conv2d(x, w, padding=K // 2), mean, var, gw, b, training=False, eps=1e-5)
            return fn, [x, w], None
        return make

    for dtype in (f32, f16):
        tag = "_f16" if dtype == f16 else ""
        run(f"conv_bn_folded{tag}_1x1_256_64_56", "conv/bn-folded", "N=32 C=256 56x56 O=64 k1",
            conv_bn(32, 256, 56, 64, 1, dtype))
        run(f"conv_bn_folded{tag}_3x3_64_56", "conv/bn-folded", "N=32 C=64 56x56 O=64 k3",
            conv_bn(32, 64, 56, 64, 3, dtype))


# ---- indexing, rope, topk, cumsum ----
def indexing():
    def embedding():
        table = rnd(32000, 4096, dtype=f16)
        idx = torch.randint(0, 32000, (8192,), device=dev, generator=g)
        return (lambda: F.embedding(idx, table)), [table], None

    run("embedding_f16", "index/embedding", "table 32000x4096, 8192 tokens", embedding)

    def gather():
        x = rnd(8192, 4096)
        idx = torch.randint(0, 4096, (8192, 1024), device=dev, generator=g)
        out = torch.empty(8192, 1024, device=dev)
        return (lambda: torch.gather(x, 1, idx, out=out)), [x, idx], None

    run("gather_last_f32", "index/gather", "8192x4096 by 8192x1024", gather)

    def rope(dtype):
        def make():
            B, S, H, D = 8, 2048, 32, 128
            x = rnd(B, S, H, D, dtype=dtype)
            inv = 10000.0 ** (-torch.arange(0, D, 2, device=dev, dtype=f32) / D)
            ang = torch.arange(S, device=dev, dtype=f32)[:, None] * inv[None, :]
            ang = torch.cat([ang, ang], dim=-1)[:, None, :]  # (S, 1, D), Hugging Face's layout
            cos, sin = ang.cos().to(dtype), ang.sin().to(dtype)

            def fn():
                x1, x2 = x[..., : D // 2], x[..., D // 2:]
                return x * cos + torch.cat((-x2, x1), dim=-1) * sin

            return fn, [x], "eager rotate_half (Hugging Face)"
        return make

    run("rope_f16", "rope/half-split", "8x2048x32x128 (B,S,H,D)", rope(f16))
    run("rope_f32", "rope/half-split", "8x2048x32x128 (B,S,H,D)", rope(f32))

    def topk(k):
        def make():
            x = rnd(32, 128256)
            return (lambda: torch.topk(x, k)), [x], None

        return make

    run("topk50_vocab_f32", "topk/vocab", "32x128256 k=50", topk(50))
    run("topk256_vocab_f32", "topk/vocab", "32x128256 k=256", topk(256))

    def cumsum():
        x = rnd(1024, 32000)
        out = torch.empty_like(x)
        return (lambda: torch.cumsum(x, -1, out=out)), [x], None

    run("cumsum_rows32k_f32", "scan/rows", "1024x32000", cumsum)


# ---- per-op latency ----
def latency():
    if want("small_ops_1000", "latency/chain"):
        x = rnd(1 << 20)
        y = torch.empty_like(x)

        def chain():
            for _ in range(500):
                torch.add(x, 1.0, out=y)
                torch.mul(y, 0.5, out=x)

        emit("small_ops_1000", "1000 x 2^20", median_ms(chain, 0, 5) / 1000.0)

    if want("chain2000_4096", "latency/chain"):
        size = "2000 ops (mul, tanh, mean, sub) x 4096"
        x, w = rnd(4096), rnd(4096)
        y, z, m = torch.empty_like(x), torch.empty_like(x), torch.empty((), device=dev)

        def chain2():
            for _ in range(500):
                torch.mul(x, w, out=y)
                torch.tanh(y, out=z)
                torch.mean(z, dim=0, out=m)
                torch.sub(z, m, out=x)

        emit("chain2000_4096", size, median_ms(chain2, 0, 5) / 2000.0)
        walls = []
        for _ in range(5):
            t0 = time.perf_counter()
            chain2()
            torch.cuda.synchronize()
            walls.append((time.perf_counter() - t0) * 1e3 / 2000.0)
        emit("chain2000_4096_wall", size, sorted(walls)[2])

    if want("roundtrip_4k_wall", "latency/roundtrip"):
        host = torch.rand(1024)
        d, y = torch.empty(1024, device=dev), torch.empty(1024, device=dev)

        def trip():
            d.copy_(host)
            torch.mul(d, 2.0, out=y)
            return y.cpu()

        for _ in range(60):
            trip()
        walls = []
        for _ in range(300):
            t0 = time.perf_counter()
            trip()
            walls.append((time.perf_counter() - t0) * 1e3)
        emit("roundtrip_4k_wall", "write 4 KiB, x * 2, read 4 KiB", sorted(walls)[150], "pageable host tensor")

    if want("roundtrip_alloc_4k_wall", "latency/roundtrip"):
        host = torch.rand(1024)

        def trip_alloc():
            return (host.cuda() * 2).cpu()

        if not torch.equal(trip_alloc(), host * 2):
            raise SystemExit("roundtrip_alloc_4k_wall: wrong result")
        for _ in range(60):
            trip_alloc()
        walls = []
        for _ in range(300):
            t0 = time.perf_counter()
            trip_alloc()
            walls.append((time.perf_counter() - t0) * 1e3)
        emit("roundtrip_alloc_4k_wall", "new buffers: write 4 KiB, x * 2, read 4 KiB", sorted(walls)[150],
             "(x.cuda() * 2).cpu(), pageable host tensor")

    for alloc in (False, True):
        name = "record_alloc_host_4096" if alloc else "record_host_4096"
        if not want(name, "latency/host"):
            continue
        x = rnd(4096)
        x0, y = x.clone(), torch.empty_like(x)

        def record():
            nonlocal x
            t0 = time.perf_counter()
            if alloc:
                for i in range(2000):
                    x = x * (0.5 if i % 2 else 2.0)
            else:
                for _ in range(1000):
                    torch.mul(x, 2.0, out=y)
                    torch.mul(y, 0.5, out=x)
            return (time.perf_counter() - t0) * 1e3 / 2000.0

        record()
        torch.cuda.synchronize()
        if not torch.equal(x, x0):
            raise SystemExit(f"{name}: wrong result")
        hosts = []
        for _ in range(11):
            hosts.append(record())
            torch.cuda.synchronize()
        size = "2000 x * 2 and * 0.5 into " + ("new buffers" if alloc else "existing buffers") + ", host time per op"
        emit(name, size, sorted(hosts)[5])

    if want("write_4k_wall", "latency/roundtrip") or want("read_4k_wall", "latency/roundtrip"):
        host = torch.rand(1024)
        d = torch.empty(1024, device=dev)

        def write():
            d.copy_(host)
            torch.cuda.synchronize()

        for name, size, fn in (("write_4k_wall", "write 4 KiB, synchronize", write),
                               ("read_4k_wall", "read 4 KiB, nothing pending", d.cpu)):
            if not want(name, "latency/roundtrip"):
                continue
            for _ in range(60):
                fn()
            walls = []
            for _ in range(300):
                t0 = time.perf_counter()
                fn()
                walls.append((time.perf_counter() - t0) * 1e3)
            emit(name, size, sorted(walls)[150], "pageable host tensor")

    if want("submit_floor_wall", "latency/roundtrip"):
        x1, y1 = torch.rand(1, device=dev), torch.empty(1, device=dev)

        def floor():
            torch.mul(x1, 2.0, out=y1)
            torch.cuda.synchronize()

        for _ in range(60):
            floor()
        walls = []
        for _ in range(300):
            t0 = time.perf_counter()
            floor()
            walls.append((time.perf_counter() - t0) * 1e3)
        emit("submit_floor_wall", "x * 2 on 1 element, synchronize", sorted(walls)[150])

    # wgc_bench's first_call cases (a fresh device each, with or without
    # --autotune); PyTorch has no fresh device: the first call at the shape
    # in this process, then the second.
    first = (
        ("first_call_sum_rows_wall", "4096x4096", lambda x, w: torch.sum(x, 1), (4096, 4096), None),
        ("first_call_gemv_wall", "8x4096 @ 4096x14336", torch.matmul, (8, 4096), (4096, 14336)),
        ("first_call_softmax_long_wall", "32x128256", lambda x, w: torch.softmax(x, 1), (32, 128256), None),
    )
    for name, size, op, a_shape, b_shape in first:
        if not want(name, "latency/first_call"):
            continue
        x, w = rnd(*a_shape), rnd(*b_shape) if b_shape else None
        for label in (name, name + "_again"):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            op(x, w)
            torch.cuda.synchronize()
            emit(label, size, (time.perf_counter() - t0) * 1e3, "first call in a warm process")


def graphs():
    # wgc_bench's graph_chain2000_4096: the 2000-op chain eagerly and as a
    # CUDA graph replay; host ms per op (launching, no wait), wall with the
    # wait, and GPU time per replayed op, each checked against float64 first.
    if not want("graph_chain2000_4096", "latency/graph"):
        return
    size = "2000 ops (mul, tanh, mean, sub) x 4096, replayed"
    x, w = rnd(4096), rnd(4096)
    y, z, m = torch.empty_like(x), torch.empty_like(x), torch.empty((), device=dev)
    start = x.clone()

    def chain():
        for _ in range(500):
            torch.mul(x, w, out=y)
            torch.tanh(y, out=z)
            torch.mean(z, dim=0, out=m)
            torch.sub(z, m, out=x)

    def reference():
        xr, wr = start.double().cpu(), w.double().cpu()
        for _ in range(500):
            zr = torch.tanh((xr.float() * wr.float()).double()).float().double()
            xr = (zr.float() - zr.mean().float()).double()
        return xr

    def ok():
        return bool(torch.allclose(x.double().cpu(), reference(), atol=1e-4, rtol=0))

    def host_and_wall(fn, reps):
        hosts, walls = [], []
        for _ in range(reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn()
            hosts.append((time.perf_counter() - t0) * 1e3)
            torch.cuda.synchronize()
            walls.append((time.perf_counter() - t0) * 1e3)
        return sorted(hosts)[reps // 2], sorted(walls)[reps // 2]

    chain()
    torch.cuda.synchronize()
    good = ok()
    host, wall = host_and_wall(chain, 7)
    note = None if good else "reference check failed"
    emit("graph_chain2000_eager_host", size, host / 2000.0, note)
    emit("graph_chain2000_eager_wall", size, wall / 2000.0, note)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        chain()  # warm-up before capture, as torch.cuda.graphs asks
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        chain()
    x.copy_(start)
    graph.replay()
    torch.cuda.synchronize()
    good = ok()
    note = None if good else "reference check failed"
    host, wall = host_and_wall(graph.replay, 15)
    emit("graph_chain2000_replay_host", size, host / 2000.0, note)
    emit("graph_chain2000_replay_wall", size, wall / 2000.0, note)
    emit("graph_chain2000_replay_gpu", size, median_ms(graph.replay, 0, 5) / 2000.0, note)


def main(args):
    global LIST, g
    for a in args:
        if a == "--list":
            LIST = True
        elif a.startswith("-"):
            sys.exit(f"usage: {sys.argv[0]} [--list] [FILTER ...]")
        else:
            FILTERS.append(a)
    if not LIST:
        g = torch.Generator(device=dev).manual_seed(0)
        # The memory ceiling: a large device-to-device copy (bytes read + written).
        src = torch.rand(1 << 29, device=dev, generator=g)
        dst = torch.empty_like(src)
        ms = median_ms(lambda: dst.copy_(src), 2 * GIB)
        print(json.dumps({"case": "hbm_copy", "size": "2 GiB", "ms": ms, "gbps": 2 * src.numel() * 4 / ms / 1e6,
                          "gpu": torch.cuda.get_device_name()}), flush=True)
        del src, dst
    t0 = time.perf_counter()
    for family in (elementwise, reductions, rows, gemms, convs, batch_norms, indexing, latency, graphs):
        family()
        if not LIST:
            torch.cuda.empty_cache()
    if not LIST:
        print(f"torch_bench: {time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
