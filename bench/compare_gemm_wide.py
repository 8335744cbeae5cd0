"""One row per product from gemm_wide_bench.c's and torch_gemm_shapes.py's
JSON lines: TFLOP/s of the builds labelled `old` (before the change),
`off` (this build with WGC_GEMM_WIDE=0: the route before it) and `new`
(this build), and `torch`; each the best of its runs (they alternate);
then new / old, new / off and new / torch, and the kernels `new` ran.
    python3 compare_gemm_wide.py results.jsonl"""
import json
import sys

LABELS = ("old", "off", "new", "torch")


def main(path):
    best, order, kernels, wrong = {}, [], {}, []
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        key = (r.get("in", "f16"), r["shape"], r["b"], r["out"])
        if key not in best:
            best[key] = {}
            order.append(key)
        if r["check"] != "ok":
            wrong.append((r["route"],) + key)
            continue
        label = r["route"]
        best[key][label] = max(best[key].get(label, 0.0), r["tflops"])
        if label == "new":
            kernels[key] = r.get("kernels", "")
    print("| A, B | product | B | C | " + " | ".join(LABELS) + " | new/old | new/off | new/torch | new kernels |")
    print("|---" * (len(LABELS) + 8) + "|")
    for key in order:
        tf = best[key]
        fmt = lambda v: "-" if v is None else f"{v:.0f}"
        ratio = lambda x, y: "-" if not x or not y else f"{x / y:.2f}"
        k = kernels.get(key, "-").replace("elementwise.wgsl:", "")
        cells = " | ".join(fmt(tf.get(label)) for label in LABELS)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {cells} | {ratio(tf.get('new'), tf.get('old'))} | "
              f"{ratio(tf.get('new'), tf.get('off'))} | {ratio(tf.get('new'), tf.get('torch'))} | {k[:70]} |")
    for w in wrong:
        print("WRONG:", *w)


if __name__ == "__main__":
    main(sys.argv[1])
