#!/usr/bin/env python3
"""The model blocks' table: wgc_blocks' JSON lines against torch_blocks.py's.

    compare_blocks.py WGC.jsonl[,PY.jsonl] TORCH.jsonl [--profiles]

One row per block: size, our GPU and wall milliseconds, PyTorch eager's and
torch.compile's, and the ratios theirs / ours (above 1: we are faster), for
GPU time and for wall time; then the geometric means of each ratio column.
Rows of bench/py_blocks.py (py_<case>, a comma after WGC.jsonl) are put
against the PyTorch twin of <case>.
--profiles also prints the profiler tables wgc_blocks wrote (its '#' lines)."""
import json
import math
import sys


def rows(path):
    out = {}
    for line in open(path):
        if line.startswith("{"):
            r = json.loads(line)
            out[r["case"]] = r
    return out


def fmt(v, digits=3):
    return "-" if v is None or v < 0 else f"{v:.{digits}f}"


def ratio(theirs, ours):
    if theirs is None or ours is None or theirs <= 0 or ours <= 0:
        return None
    return theirs / ours


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    ours, theirs = {}, rows(args[1])
    for path in args[0].split(","):
        ours.update(rows(path))
    cols = ["eager GPU", "compile GPU", "eager wall", "compile wall"]
    print("| block | size | dtype | check | ours GPU ms | ours wall ms | eager GPU ms | eager wall ms | compile GPU ms "
          "| compile wall ms | " + " | ".join(f"{c} / ours" for c in cols) + " |")
    print("|" + " --- |" * 4 + " ---: |" * (6 + len(cols)))
    logs = {c: [] for c in cols}
    for name, r in ours.items():
        # py_<case> (bench/py_blocks.py) is the same block from Python.
        t = theirs.get(name) or theirs.get(name[3:] if name.startswith("py_") else name, {})
        gpu, wall = r.get("ms"), r.get("wall_ms")
        rs = [ratio(t.get("eager_ms"), gpu), ratio(t.get("compile_ms"), gpu), ratio(t.get("eager_wall_ms"), wall),
              ratio(t.get("compile_wall_ms"), wall)]
        for c, v in zip(cols, rs):
            if v:
                logs[c].append(math.log(v))
        check = r.get("check", "?") + ("" if t.get("check", "ok") == "ok" else f" (torch: {t.get('check')})")
        print(f"| {name} | {r.get('size', '')} | {r.get('dtype', '')} | {check} | {fmt(gpu)} | {fmt(wall)} "
              f"| {fmt(t.get('eager_ms'))} | {fmt(t.get('eager_wall_ms'))} | {fmt(t.get('compile_ms'))} "
              f"| {fmt(t.get('compile_wall_ms'))} | " + " | ".join(fmt(v, 2) for v in rs) + " |")
    means = [fmt(math.exp(sum(v) / len(v)), 2) if v else "-" for v in logs.values()]
    print("| geometric mean |" + " |" * 9 + " " + " | ".join(means) + " |")
    if "--profiles" in sys.argv:
        print()
        for path in args[0].split(","):
            for line in open(path):
                if line.startswith("#"):
                    print(line.rstrip())


if __name__ == "__main__":
    main()
