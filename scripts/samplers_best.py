#!/usr/bin/env python3
"""Best-grid table of a sampler study (the CSV of `holdctl experiment samplers --format csv`): per sampler
and NFE, the lowest mean W1 over the grids, as "W1 ± sd (largest |mode width ratio − 1|, grid)", W1 ×10³;
then HOLD's best over VP's best at each NFE. Standard library only.
    python3 scripts/samplers_best.py STUDY.csv
"""
import collections
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
best = collections.defaultdict(dict)
floor = {}
for r in rows:
    s = r["sampler"]
    if s.startswith("floor"):
        floor[s] = 1e3 * float(r["w1"])
        continue
    nfe = int(r["nfe"])
    nfe = {9: 10, 19: 20, 49: 50, 99: 100}.get(nfe, nfe)  # Heun's budget rounds down to whole steps
    w = 1e3 * float(r["w1"])
    cell = (w, 1e3 * float(r["w1_sd"]), float(r["width_dev"]), r["grid"], int(r["nfe"]))
    if nfe not in best[s] or w < best[s][nfe][0]:
        best[s][nfe] = cell
nfes = sorted({n for s in best for n in best[s]})
print("| sampler | " + " | ".join(f"NFE {n}" for n in nfes) + " |")
print("|---|" + "---|" * len(nfes))
for s in best:
    cells = []
    for n in nfes:
        if n not in best[s]:
            cells.append("—")
            continue
        w, sd, dev, grid, real = best[s][n]
        at = f", NFE {real}" if real != n else ""
        cells.append(f"{w:.2f} ± {sd:.2f} ({dev:.2f}, {grid}{at})")
    print(f"| {s} | " + " | ".join(cells) + " |")
print()
if floor:
    print(f"Monte-Carlo floor: W1 = {floor.get('floor-mean', float('nan')):.2f} ± {floor.get('floor-sd', float('nan')):.2f} ×10⁻³.")
    print()
for n in nfes:
    h = min(((best[s][n][0], s) for s in best if s.startswith("hold-") and n in best[s]), default=None)
    v = min(((best[s][n][0], s) for s in best if s.startswith("vp-") and n in best[s]), default=None)
    if h and v:
        print(f"- NFE {n}: HOLD's best {h[1]} {h[0]:.2f}, VP's best {v[1]} {v[0]:.2f}: ratio {h[0] / v[0]:.2f}")
