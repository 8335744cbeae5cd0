"""One row per product from gemm_wide_bench.c's and torch_gemm_shapes.py's
JSON lines, one column per label (the wide block shapes, `off` and
`torch`, in the order first seen), each the best TFLOP/s of its runs, then
the best shape and its ratio to the default block (`128`) and to torch.
    python3 compare_gemm_wide_shapes.py results.jsonl"""
import json
import sys


def main(path):
    best, order, labels, wrong = {}, [], [], []
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        key = (r.get("in", "f16"), r["shape"], r["b"], r["out"])
        if key not in best:
            best[key] = {}
            order.append(key)
        if r["route"] not in labels:
            labels.append(r["route"])
        if r["check"] != "ok":
            wrong.append((r["route"],) + key)
            continue
        best[key][r["route"]] = max(best[key].get(r["route"], 0.0), r["tflops"])
    print("| A, B | product | B | C | " + " | ".join(labels) + " | best shape | best/128 | best/torch |")
    print("|---" * (len(labels) + 7) + "|")
    for key in order:
        tf = best[key]
        shapes = {k: v for k, v in tf.items() if k not in ("off", "torch")}
        top = max(shapes, key=shapes.get) if shapes else None
        ratio = lambda x, y: "-" if not x or not y else f"{x / y:.2f}"
        cells = " | ".join("-" if tf.get(label) is None else f"{tf[label]:.0f}" for label in labels)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {cells} | {top} | "
              f"{ratio(tf.get(top), tf.get('128'))} | {ratio(tf.get(top), tf.get('torch'))} |")
    for w in wrong:
        print("WRONG:", *w)


if __name__ == "__main__":
    main(sys.argv[1])
