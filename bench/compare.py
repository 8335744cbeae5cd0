#!/usr/bin/env python3
"""Tables from the benchmark outputs (JSON lines of wgc_bench and torch_bench.py).

    compare.py WGC.jsonl TORCH.jsonl
        one row per case: class, dtype, size, our time, PyTorch's, ratio
        (PyTorch time / ours: above 1 means faster than PyTorch), fraction of
        the limit (memory-bound: bytes moved over the copy bandwidth measured
        in the same run; GEMM/conv: FLOPs over the datasheet rate; latency
        cases: microseconds per operator), check; then the geometric mean and
        the minimum ratio per class, over memory-bound cases, and overall.
    compare.py --builds OLD.jsonl NEW.jsonl
        the same binary against two library builds: per case old and new time
        and the change; cases more than 3% slower are flagged.
"""
import json
import math
import sys
from collections import defaultdict

# Dense datasheet rates of the SXM parts (H100 and H200 share them), FLOP/s.
PEAK = {"fp32": 67e12, "fp16": 989e12}
SLOWER = 0.03

# Outputs older than the class/limit fields: the original cases' limits.
LEGACY = {
    "add_f32": ("elementwise/contiguous", "bytes", 3 * 4 * (1 << 28)),
    "sum_f32": ("reduce/all", "bytes", 4 * (1 << 28)),
    "softmax_f32": ("softmax/rows", "bytes", 2 * 4 * 65536 * 4096),
    "layer_norm_f32": ("norm/long-rows", "bytes", 2 * 4 * 65536 * 4096),
    "bmm_f32": ("gemm/batched", "fp32", 2 * 512 * 128**3),
    "conv_3x3_64_56": ("conv/3x3", "fp32", 2 * 32 * 64 * 56 * 56 * 64 * 9),
    "conv_1x1_256_512_s2": ("conv/1x1", "fp32", 2 * 32 * 512 * 28 * 28 * 256),
    "conv_7x7_3_64_s2": ("conv/stem", "fp32", 2 * 32 * 64 * 112 * 112 * 3 * 49),
    "small_ops_1000": ("latency/chain", "latency", 0),
    "small_ops_1000_wall": ("latency/chain", "latency", 0),
}


def load(path):
    """Rows keyed by (case, size), in file order, and the hbm_copy line."""
    rows, copy = {}, {}
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r["case"] == "hbm_copy":
            copy = r
            continue
        if "class" not in r:
            cls, limit, amount = LEGACY.get(r["case"], ("?", "", 0))
            if r["case"] in ("sgemm_f32", "gemm_f16_f32acc"):
                n = int(r["size"].split("^")[0])
                cls, limit, amount = "gemm/square", "fp16" if "f16" in r["case"] else "fp32", 2 * n**3
            r.update({"class": cls, "limit": limit, "amount": amount, "dtype": ""})
        rows[(r["case"], r["size"])] = r
    return rows, copy


def find(theirs, case, size):
    """PyTorch's row for a case: same name and size, else the only row of that name."""
    if case.endswith("_wall") and (case, size) not in theirs and (case[:-5], size) in theirs:
        case = case[:-5]  # PyTorch's eager time per op is both its span and its wall time
    if (case, size) in theirs:
        return theirs[(case, size)]
    named = [r for (c, _), r in theirs.items() if c == case]
    return named[0] if len(named) == 1 else None


def fraction(r, bw):
    ms = r["ms"]
    if ms <= 0:
        return ""
    sec = ms / 1e3
    if r["limit"] == "bytes" and bw:
        return f"{r['amount'] / sec / bw:.0%} of {bw / 1e12:.2f} TB/s"
    if r["limit"] in PEAK:
        rate = r["amount"] / sec
        return f"{rate / PEAK[r['limit']]:.0%} of {PEAK[r['limit']] / 1e12:.0f} TFLOP/s ({rate / 1e12:.1f})"
    if r["limit"] == "latency":
        return f"{ms * 1000:.1f} us" + ("" if r["case"].startswith("roundtrip") else "/op")
    return ""


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def summary(title, groups):
    print(f"\n| {title} | cases | geometric mean | minimum (case) |")
    print("| --- | ---: | ---: | --- |")
    for name, items in groups:
        if not items:
            continue
        worst = min(items)
        print(f"| {name} | {len(items)} | {geomean([x for x, _ in items]):.2f} | {worst[0]:.2f} ({worst[1]}) |")


def versus_torch(ours_path, torch_path):
    ours, _ = load(ours_path)
    theirs, copy = load(torch_path)
    bw = copy.get("gbps", 0) * 1e9
    if not bw:  # no PyTorch copy: our own copy case
        r = next((r for (c, _), r in ours.items() if c == "copy_f32" and r["ms"] > 0), None)
        bw = r["amount"] / (r["ms"] / 1e3) if r else 0
    print(f"GPU: {copy.get('gpu', '?')}; measured copy bandwidth {bw / 1e12:.2f} TB/s (read + write)\n")
    print("| case | class | dtype | size | wgcompute ms | PyTorch ms | ratio | fraction of limit | check |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |")
    by_class, memory, compute, everything = defaultdict(list), [], [], []
    for (case, size), r in ours.items():
        t = find(theirs, case, size)
        ok = r["ms"] > 0 and r["check"] == "ok"
        # First calls on a fresh device have no like-for-like PyTorch time
        # (its side times a first call in a running process): no ratio.
        comparable = r["class"] != "latency/first_call"
        ratio = t["ms"] / r["ms"] if t and ok and comparable else None
        ms = f"{r['ms']:.4f}" if r["ms"] > 0 else "-"
        tms = f"{t['ms']:.4f}" if t else "-"
        note = f" ({t['note']})" if t and t.get("note") else ""
        shown = f"{ratio:.2f}" if ratio else "-"
        if ratio is not None and ratio < 0.9:
            shown = f"**{shown}**"
        print(f"| {case} | {r['class']} | {r['dtype']} | {size} | {ms} | {tms}{note} | {shown} | {fraction(r, bw)} "
              f"| {r['check']} |")
        if ratio:
            item = (ratio, case)
            by_class[r["class"]].append(item)
            everything.append(item)
            (memory if r["limit"] == "bytes" else compute if r["limit"] in PEAK else []).append(item)
    summary("class", sorted(by_class.items()))
    summary("group", [("memory-bound", memory), ("GEMM and convolution", compute), ("all cases", everything)])


def builds(old_path, new_path):
    old, _ = load(old_path)
    new, _ = load(new_path)
    print("| case | size | old ms | new ms | change | |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    ratios, slower = [], []
    for key, r in new.items():
        o = old.get(key)
        if not o or o["ms"] <= 0 or r["ms"] <= 0:
            state = "unsupported in old" if o and o["ms"] <= 0 else "unsupported in new" if r["ms"] <= 0 else "new case"
            print(f"| {key[0]} | {key[1]} | {o['ms'] if o else '-'} | {r['ms']} | - | {state} |")
            continue
        change = r["ms"] / o["ms"] - 1
        flag = "**slower**" if change > SLOWER else ""
        if flag:
            slower.append(key[0])
        ratios.append(o["ms"] / r["ms"])
        print(f"| {key[0]} | {key[1]} | {o['ms']:.4f} | {r['ms']:.4f} | {change:+.1%} | {flag} |")
    print(f"\n{len(ratios)} cases in both; geometric mean speed-up (old / new) {geomean(ratios):.3f}; "
          f"more than {SLOWER:.0%} slower: {', '.join(slower) or 'none'}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--builds":
        builds(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3:
        versus_torch(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
