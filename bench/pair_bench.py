"""Pair wgc_bench and torch_bench.py JSON lines by case: each build's ms
and GB/s (the case's bytes over its time) and PyTorch's ms over each
build's (above 1: the build is faster).

    python3 pair_bench.py new=wgc_new.jsonl old=wgc_old.jsonl torch=torch.jsonl
"""
import json
import sys


def main(args):
    rows, order = {}, []
    tags = [a.split("=", 1)[0] for a in args]
    for tag, path in (a.split("=", 1) for a in args):
        for line in open(path):
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "case" not in r or "ms" not in r:
                continue
            if r["case"] not in rows:
                rows[r["case"]] = {}
                order.append(r["case"])
            rows[r["case"]][tag] = r
    builds = [t for t in tags if t != "torch"]
    print("| case | " + " | ".join(f"{t} ms" for t in tags) + " | " + " | ".join(f"{t} GB/s" for t in builds)
          + " | " + " | ".join(f"{t} x torch" for t in builds) + " |")
    print("|" + " --- |" * (1 + len(tags) + 2 * len(builds)))
    for c in order:
        r = rows[c]
        ms = [f"{r[t]['ms']:.4f}" if t in r else "-" for t in tags]
        amount = next((r[t].get("amount") for t in builds if t in r and r[t].get("amount")), None)
        gbs = [f"{amount / r[t]['ms'] / 1e6:.0f}" if t in r and amount else "-" for t in builds]
        ratio = [f"{r['torch']['ms'] / r[t]['ms']:.2f}" if t in r and "torch" in r else "-" for t in builds]
        print(f"| {c} | " + " | ".join(ms + gbs + ratio) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
