#!/usr/bin/env python3
"""The attention cases of wgc_bench and bench/torch_attention.py side by side:
TFLOP/s for prefill, KV-cache bytes read per second for decode (also as a
fraction of the copy bandwidth, when given in GB/s read + write), and the
ratio to PyTorch SDPA (PyTorch time / ours: above 1 is faster).

    attention_table.py WGC.jsonl TORCH.jsonl [COPY_GBPS]
"""
import json
import sys


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                rows[r["case"]] = r
    return rows


def main(argv):
    ours, torch = load(argv[1]), load(argv[2])
    copy = float(argv[3]) if len(argv) > 3 and argv[3] else 0.0
    print(f"| case | size | ours ms | SDPA ms | ours | SDPA | ratio | check |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, r in ours.items():
        if not name.startswith("attn_"):
            continue
        t = torch.get(name, {})
        ms, tms = r.get("ms"), t.get("ms")
        if r.get("limit") == "bytes":
            rate = r["amount"] / ms / 1e6 if ms else 0
            frac = f" ({rate / copy:.2f} of copy)" if copy else ""
            mine, theirs = f"{rate:.1f} GB/s{frac}", f"{t['gbps']:.0f} GB/s" if "gbps" in t else "-"
        else:
            mine = f"{r['amount'] / ms / 1e9:.1f} TFLOP/s" if ms else "-"
            theirs = f"{t['tflops']:.1f} TFLOP/s" if "tflops" in t else "-"
        ratio = f"{tms / ms:.2f}" if ms and tms else "-"
        print(f"| {name} | {r.get('size', '')} | {ms or 0:.3f} | {tms or 0:.3f} | {mine} | {theirs} | {ratio} | {r.get('check', '')} |")


if __name__ == "__main__":
    main(sys.argv)
