"""One row per product from khr_wide_bench and torch_gemm_shapes JSON lines
(stdin or files): TFLOP/s of the library's route, of each tile, of
torch.matmul, and each tile's ratio to the library and to PyTorch."""
import fileinput
import json

rows, routes = {}, []
for line in fileinput.input():
    line = line.strip()
    if not line.startswith("{") or '"route"' not in line:
        continue
    r = json.loads(line)
    key = (r["shape"], r["b"], r["out"])
    rows.setdefault(key, {})[r["route"]] = r
    if r["route"] not in routes:
        routes.append(r["route"])
tiles = [t for t in routes if t not in ("library", "torch")]
# The best of the block tiles only (not the library's other routes).
wide = [t for t in tiles if not t.startswith("lib_")]
print("| product | B | C | library | torch | " + " | ".join(tiles) + " | best tile: x library, x torch |")
print("|---" * (6 + len(tiles)) + "|")
for (shape, b, out), by in rows.items():
    def cell(route):
        r = by.get(route)
        if not r:
            return "-"
        return f"{r['tflops']:.0f}" + ("" if r["check"] in ("ok", "diag") else " " + r["check"])
    best = max((t for t in wide if t in by and by[t]["check"] == "ok"), key=lambda t: by[t]["tflops"], default=None)
    ratio = "-"
    if best:
        lib = by.get("library", {}).get("tflops")
        tor = by.get("torch", {}).get("tflops")
        x = by[best]["tflops"]
        ratio = f"{best}: {x / lib:.2f}" if lib else best
        ratio += f", {x / tor:.2f}" if tor else ""
    print(f"| {shape} | {b} | {out} | {cell('library')} | {cell('torch')} | "
          + " | ".join(cell(t) for t in tiles) + f" | {ratio} |")
