"""Batch norm against the copy of the same bytes, timed in the same run:
for each batch_norm case of wgc_bench (and torch_bench.py) JSON lines, each
side's batch norm ms, its copy_<case> ms, and the batch norm's share of the
copy bandwidth (copy ms / batch norm ms, in percent); then PyTorch's batch
norm ms over each build's (above 1: the build is faster).

    python3 bn_copy_table.py new=wgc_new.jsonl old=wgc_old.jsonl torch=torch.jsonl
"""
import json
import sys


def load(path):
    rows = {}
    for line in open(path):
        if line.startswith("{"):
            r = json.loads(line)
            if "case" in r and "ms" in r and r.get("check", "ok") == "ok":
                rows[r["case"]] = r
    return rows


def main(args):
    sides = [(a.split("=", 1)[0], load(a.split("=", 1)[1])) for a in args]
    builds = [t for t, _ in sides if t != "torch"]
    by_tag = dict(sides)
    cases = []
    for _, rows in sides:
        cases += [c for c in rows if c.startswith("batch_norm") and c not in cases]
    head = ["case"]
    for t, _ in sides:
        head += [f"{t} ms", f"{t} copy ms", f"{t} % of copy"]
    head += [f"{t} x torch" for t in builds if "torch" in by_tag]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for c in cases:
        cells = [c]
        for t, rows in sides:
            bn, cp = rows.get(c), rows.get("copy_" + c)
            cells.append(f"{bn['ms']:.4f}" if bn else "-")
            cells.append(f"{cp['ms']:.4f}" if cp else "-")
            cells.append(f"{100 * cp['ms'] / bn['ms']:.0f}%" if bn and cp else "-")
        if "torch" in by_tag:
            tr = by_tag["torch"].get(c)
            for t in builds:
                r = by_tag[t].get(c)
                cells.append(f"{tr['ms'] / r['ms']:.2f}" if tr and r else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
