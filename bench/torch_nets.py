#!/usr/bin/env python3
"""The PyTorch side of wgc_nets: ResNet-50 and MobileNetV2 built the same
way (torchvision's layouts; Conv2d without bias + BatchNorm2d in eval mode
+ ReLU / ReLU6, residual adds, global average pool, the final linear).

    torch_nets.py --check FILE [FILE ...]
        Each FILE is written by `wgc_nets --check FILE`: the network's
        weights, the input and the library's output. The network is rebuilt
        with those weights and run in float64 as the reference; prints the
        library's largest difference over max|ref| (and PyTorch's own in
        the file's dtype, for scale) and fails above 1e-3 (f32) or 3e-2
        (f16), the limits wgc_nets --ref uses.

    torch_nets.py --time --net resnet50,mobilenetv2 --batch 1,32 [--size 224]
                  [--iters 20] [--compile-batch 32] [--budget 60] [--wgc FILE]
        Times eager f32 (NCHW), eager f16 (channels_last: PyTorch's best
        eager setting), and torch.compile (f16 channels_last, at the
        --compile-batch sizes, while the --budget seconds last; with
        --only-compile, nothing else and no budget): wall time
        per forward over --iters runs after a 0.5 s warm-up, as wgc_nets
        does. TF32 off, cudnn.benchmark on. With --wgc (wgc_nets' JSON
        lines), prints the ratios: PyTorch's time over the library's
        (above 1: the library is faster).

    torch_nets.py --ratios TORCH_JSONL WGC_JSONL
        The ratios from saved outputs of --time and wgc_nets.
"""
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
dev = "cuda" if torch.cuda.is_available() else "cpu"
BN_EPS = 1e-5


class ConvBN(nn.Module):
    def __init__(self, cin, cout, k, stride=1, groups=1, act=None):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=BN_EPS)
        self.act = act

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.act == "relu":
            return F.relu(x)
        if self.act == "relu6":
            return F.relu6(x)
        return x


class Net(nn.Module):
    """Layers kept by their wgc_nets names ('.' is '_' in the ModuleDict)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleDict()

    def add(self, name, module):
        self.layers[name.replace(".", "_")] = module
        return name

    def __getitem__(self, name):
        return self.layers[name.replace(".", "_")]

    def has(self, name):
        return name.replace(".", "_") in self.layers


class ResNet50(Net):
    BLOCKS = (3, 4, 6, 3)

    def __init__(self):
        super().__init__()
        self.add("conv1", ConvBN(3, 64, 7, 2, act="relu"))
        cin = 64
        for stage, n in enumerate(self.BLOCKS):
            width = 64 << stage
            for i in range(n):
                p, stride = f"layer{stage + 1}.{i}", 2 if i == 0 and stage > 0 else 1
                self.add(p + ".conv1", ConvBN(cin, width, 1, act="relu"))
                self.add(p + ".conv2", ConvBN(width, width, 3, stride, act="relu"))
                self.add(p + ".conv3", ConvBN(width, width * 4, 1))
                if stride != 1 or cin != width * 4:
                    self.add(p + ".downsample", ConvBN(cin, width * 4, 1, stride))
                cin = width * 4
        self.add("fc", nn.Linear(2048, 1000))

    def forward(self, x):
        x = F.max_pool2d(self["conv1"](x), 3, 2, 1)
        for stage, n in enumerate(self.BLOCKS):
            for i in range(n):
                p = f"layer{stage + 1}.{i}"
                h = self[p + ".conv3"](self[p + ".conv2"](self[p + ".conv1"](x)))
                shortcut = self[p + ".downsample"](x) if self.has(p + ".downsample") else x
                x = F.relu(h + shortcut)
        return self["fc"](torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class MobileNetV2(Net):
    SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))

    def __init__(self):
        super().__init__()
        self.add("features.0", ConvBN(3, 32, 3, 2, act="relu6"))
        self.blocks = []  # (index, has expand, residual)
        cin, index = 32, 1
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                stride, hidden, p = s if i == 0 else 1, cin * t, f"features.{index}"
                if t != 1:
                    self.add(p + ".expand", ConvBN(cin, hidden, 1, act="relu6"))
                self.add(p + ".dw", ConvBN(hidden, hidden, 3, stride, groups=hidden, act="relu6"))
                self.add(p + ".project", ConvBN(hidden, c, 1))
                self.blocks.append((p, t != 1, stride == 1 and cin == c))
                cin, index = c, index + 1
        self.add("features.18", ConvBN(320, 1280, 1, act="relu6"))
        self.add("classifier", nn.Linear(1280, 1000))

    def forward(self, x):
        x = self["features.0"](x)
        for p, expand, residual in self.blocks:
            h = self[p + ".expand"](x) if expand else x
            h = self[p + ".project"](self[p + ".dw"](h))
            x = x + h if residual else h
        x = self["features.18"](x)
        return self["classifier"](torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


ARCHS = {"resnet50": ResNet50, "mobilenetv2": MobileNetV2}


def read_dump(path):
    """The header line, then {name: tensor} in file order."""
    tensors = {}
    with open(path, "rb") as f:
        head = f.readline().decode().split()
        while True:
            line = f.readline()
            if not line:
                break
            parts = line.decode().split()
            shape = [int(d) for d in parts[1:]]
            count = 1
            for d in shape:
                count *= d
            data = bytearray(f.read(4 * count))
            tensors[parts[0]] = torch.frombuffer(data, dtype=torch.float32).reshape(shape).clone()
    return head, tensors


def load(model, tensors):
    used = {"input", "output"}
    for name, m in model.layers.items():
        name = next(k.rsplit(".", 1)[0] for k in tensors if k.rsplit(".", 1)[0].replace(".", "_") == name)
        if isinstance(m, ConvBN):
            parts = {"weight": m.conv.weight, "running_mean": m.bn.running_mean, "running_var": m.bn.running_var,
                     "bn_weight": m.bn.weight, "bn_bias": m.bn.bias}
        else:
            parts = {"weight": m.weight, "bias": m.bias}
        for part, p in parts.items():
            t = tensors[f"{name}.{part}"]
            assert t.shape == p.shape, (name, part, t.shape, p.shape)
            p.data.copy_(t)
            used.add(f"{name}.{part}")
    assert used == set(tensors), set(tensors) - used


def check(path):
    head, tensors = read_dump(path)
    _, arch, dtype = head[0], head[1], head[2]
    model = ARCHS[arch]()
    load(model, tensors)
    model.eval()
    x, got = tensors["input"], tensors["output"].double()
    with torch.inference_mode():
        ref = model.to(dev, torch.float64)(x.to(dev, torch.float64)).cpu()
        own_dt = torch.float16 if dtype == "f16" else torch.float32
        m = model.to(dev, own_dt)
        xs = x.to(dev, own_dt)
        if dtype == "f16":
            m, xs = m.to(memory_format=torch.channels_last), xs.contiguous(memory_format=torch.channels_last)
        own = m(xs).double().cpu() if dev == "cuda" or dtype == "f32" else None
    scale = ref.abs().max().item()
    err = (got - ref).abs().max().item() / scale
    own_err = (own - ref).abs().max().item() / scale if own is not None else float("nan")
    limit = 3e-2 if dtype == "f16" else 1e-3
    ok = bool(torch.isfinite(got).all()) and err <= limit
    print(json.dumps({"check": path, "net": arch, "dtype": dtype, "batch": int(head[3]), "size": int(head[5]),
                      "max_ref": scale, "wgc_err": err, "torch_err": own_err, "limit": limit,
                      "result": "ok" if ok else "WRONG"}), flush=True)
    return ok


def sync():
    if dev == "cuda":
        torch.cuda.synchronize()


def wall_ms(fn, iters):
    start = time.perf_counter()
    while time.perf_counter() - start < 0.5:
        fn()
        sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - t0) * 1e3 / iters


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def timing():
    nets, batches = arg("--net", "resnet50,mobilenetv2").split(","), [int(b) for b in arg("--batch", "1,32").split(",")]
    size, iters = int(arg("--size", "224")), int(arg("--iters", "20"))
    compile_batches = [int(b) for b in arg("--compile-batch", "32").split(",") if b]
    budget, started = float(arg("--budget", "60")), time.perf_counter()
    only_compile = "--only-compile" in sys.argv
    rows = []
    for net in nets:
        for batch in batches:
            configs = [("torch_eager_f32", torch.float32, False, False), ("torch_eager_f16_cl", torch.float16, True, False)]
            if only_compile:
                configs = []
            if batch in compile_batches:
                configs.append(("torch_compile_f16_cl", torch.float16, True, True))
            for impl, dt, cl, comp in configs:
                if comp and not only_compile and time.perf_counter() - started > budget:
                    print(json.dumps({"net": net, "batch": batch, "impl": impl, "skipped": "time budget"}), flush=True)
                    continue
                fmt = torch.channels_last if cl else torch.contiguous_format
                try:
                    model = ARCHS[net]().eval().to(dev, dt).to(memory_format=fmt)
                    x = torch.randn(batch, 3, size, size, device=dev).to(dt).contiguous(memory_format=fmt)
                    fn = torch.compile(model) if comp else model
                    with torch.inference_mode():
                        t0 = time.perf_counter()
                        fn(x)
                        sync()
                        first_s = time.perf_counter() - t0
                        ms = wall_ms(lambda: fn(x), iters)
                    row = {"net": net, "batch": batch, "impl": impl, "ms": round(ms, 4),
                           "img_per_s": round(batch * 1e3 / ms, 1), "first_run_s": round(first_s, 2)}
                except Exception as e:  # noqa: BLE001 (an out-of-memory batch is reported, not fatal)
                    row = {"net": net, "batch": batch, "impl": impl, "skipped": f"{type(e).__name__}: {e}"[:200]}
                print(json.dumps(row), flush=True)
                rows.append(row)
                fn = model = x = None
                if dev == "cuda":
                    torch.cuda.empty_cache()
    wgc = arg("--wgc", None)
    if wgc:
        ratios(rows, wgc)


def ratios(rows, path):
    ours = []
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                r = json.loads(line)
                if r.get("ms", -1) > 0:
                    ours.append(r)
    print("\nratio = PyTorch ms / wgcompute ms (above 1: wgcompute faster)")
    print(f"{'net':12} {'batch':>5} {'wgc config':16} {'wgc ms':>9} | " +
          " | ".join(f"{k:>22}" for k in ("eager_f32", "eager_f16_cl", "compile_f16_cl")))
    for o in ours:
        cells = []
        for impl in ("torch_eager_f32", "torch_eager_f16_cl", "torch_compile_f16_cl"):
            t = next((r for r in rows if r["net"] == o["net"] and r["batch"] == o["batch"] and r["impl"] == impl
                      and "ms" in r), None)
            cells.append(f"{t['ms']:9.3f} ms {t['ms'] / o['ms']:6.2f}x" if t else f"{'-':>22}")
        cfg = f"{o['dtype']} {o['layout']}"
        print(f"{o['net']:12} {o['batch']:>5} {cfg:16} {o['ms']:9.3f} | " + " | ".join(f"{c:>22}" for c in cells))


def read_rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def main():
    if "--ratios" in sys.argv:
        i = sys.argv.index("--ratios")
        ratios(read_rows(sys.argv[i + 1]), sys.argv[i + 2])
        return
    if "--check" in sys.argv:
        files = [a for a in sys.argv[sys.argv.index("--check") + 1:] if not a.startswith("--")]
        ok = all([check(f) for f in files])
        sys.exit(0 if ok else 1)
    if "--time" in sys.argv:
        timing()
        return
    print(__doc__)
    sys.exit(2)


if __name__ == "__main__":
    main()
