#!/usr/bin/env python3
"""Render images round 2 (docs/images.md, "Round 2"): per run, FID and KID at a-sde2 NFE 50 (n = 1,000,
classifier features) as mean ± sd over its scored checkpoints (4,000 … 6,000 steps; scripts/round2_kid.sh
writes KID.tsv, lines "EXPORT<TAB>command<TAB>json" with EXPORT = RUN-stepN), and the per-checkpoint
values. Standard library only.
    python3 scripts/round2_table.py KID.tsv
"""
import json
import re
import statistics
import sys
from collections import defaultdict

runs = defaultdict(dict)
for line in open(sys.argv[1]):
    name, cmd, js = line.rstrip("\n").split("\t", 2)
    m = re.fullmatch(r"(.+)-step(\d+)", name)
    if not m:
        continue
    runs[m.group(1)][int(m.group(2))] = json.loads(js)

SDES = {"hold3": "HOLD-3", "cld": "CLD", "vp": "VP"}
RECIPES = {"mixed": "`--times mixed` (shipped recipe)", "edm": "`--times sigma:edm`",
           "edm-pc": "`--times sigma:edm --precond edm`"}

def label(run):
    sde, _, rest = run.partition("-")
    seed = ""
    m = re.fullmatch(r"(.+)-s(\d+)", rest)
    if m:
        rest, seed = m.group(1), f", seed {m.group(2)}"
    return SDES.get(sde, sde), RECIPES.get(rest, rest) + seed

def order(run):
    sde, recipe = label(run)
    return (list(SDES.values()).index(sde) if sde in SDES.values() else 9, recipe)

print("| SDE | recipe | checkpoints | KID mean ± sd | FID mean ± sd | KID per checkpoint (± s.e.) |")
print("|---|---|---|---|---|---|")
for run in sorted(runs, key=order):
    cps = runs[run]
    steps = sorted(cps)
    kids = [cps[s]["kid"] for s in steps]
    fids = [cps[s]["fid"] for s in steps]
    sd = lambda v: statistics.stdev(v) if len(v) > 1 else float("nan")
    per = ", ".join(f"{s}: {cps[s]['kid']:.0f} ± {cps[s]['kid_se']:.0f}" for s in steps)
    sde, recipe = label(run)
    print(f"| {sde} | {recipe} | {len(steps)} | {statistics.mean(kids):.0f} ± {sd(kids):.0f} | "
          f"{statistics.mean(fids):.0f} ± {sd(fids):.0f} | {per} |")
