#!/usr/bin/env python3
"""Render images round 2 (docs/images.md, "Round 2"): per run, FID and KID at a-sde2 NFE 50 (n = 1,000,
classifier features) as mean ± sd over its scored checkpoints (4,000 … 6,000 steps; scripts/round2_kid.sh
writes KID.tsv, lines "EXPORT<TAB>command<TAB>json" with EXPORT = RUN-stepN), the per-checkpoint values,
and, given NLL.tsv (scripts/round2_nll.sh: "EXPORT<TAB>command<TAB>holdctl nll's result line"), the
bits/dim of each run's last checkpoint. Standard library only.
    python3 scripts/round2_table.py KID.tsv [NLL.tsv]            the round-2 table
    python3 scripts/round2_table.py --table1 KID.tsv NLL.tsv     Table 1 (docs/images.md, README)
"""
import json
import re
import statistics
import sys
from collections import defaultdict

args = sys.argv[1:]
table1 = "--table1" in args
args = [a for a in args if a != "--table1"]

runs = defaultdict(dict)
for line in open(args[0]):
    name, cmd, js = line.rstrip("\n").split("\t", 2)
    m = re.fullmatch(r"(.+)-step(\d+)", name)
    if not m:
        continue
    runs[m.group(1)][int(m.group(2))] = json.loads(js)

# bits/dim per run: the last checkpoint scored; "X ± s bits/dim (aux-corrected Y ± t)" → (Y, t, X, s, step)
nll = {}
if len(args) > 1:
    num = r"([0-9.]+) ± ([0-9.]+)"
    for line in open(args[1]):
        name, cmd, res = line.rstrip("\n").split("\t", 2)
        m = re.fullmatch(r"(.+)-step(\d+)", name)
        r = re.search(num + r" bits/dim \(aux-corrected " + num + r"\)", res)
        if not m or not r:
            continue
        run, step = m.group(1), int(m.group(2))
        if run not in nll or step > nll[run][4]:
            nll[run] = (float(r.group(3)), float(r.group(4)), float(r.group(1)), float(r.group(2)), step)

SDES = {"hold3": "HOLD-3", "cld": "CLD", "vp": "VP"}
RECIPES = {"mixed": "`--times mixed` (shipped recipe)", "edm": "`--times sigma:edm`",
           "edm-pc": "`--times sigma:edm --precond edm`"}
SHORT = {"mixed": "`mixed`", "edm": "`sigma:edm`", "edm-pc": "`sigma:edm` + `--precond edm`"}

def parts(run):
    sde, _, rest = run.partition("-")
    seed = ""
    m = re.fullmatch(r"(.+)-s(\d+)", rest)
    if m:
        rest, seed = m.group(1), f", seed {m.group(2)}"
    return sde, rest, seed

def label(run, names=RECIPES):
    sde, rest, seed = parts(run)
    return SDES.get(sde, sde), names.get(rest, rest) + seed

def order(run):
    sde, rest, seed = parts(run)
    return (list(SDES).index(sde) if sde in SDES else 9, list(RECIPES).index(rest) if rest in RECIPES else 9, seed)

sd = lambda v: statistics.stdev(v) if len(v) > 1 else float("nan")

def bpd(run):
    if run not in nll:
        return "—"
    y, t, _, _, step = nll[run]
    return f"{y:.2f} ± {t:.2f}" + ("" if step == 6000 else f" (step {step})")

if table1:
    print("| SDE | training recipe | KID (mean ± sd over 5 checkpoints) | FID (mean ± sd) | bits/dim (6,000 steps) |")
    print("|---|---|---|---|---|")
    for run in sorted(runs, key=order):
        cps = runs[run]
        kids = [cps[s]["kid"] for s in sorted(cps)]
        fids = [cps[s]["fid"] for s in sorted(cps)]
        sde, recipe = label(run, SHORT)
        note = "" if len(cps) == 5 else f" ({len(cps)} checkpoints)"
        print(f"| {sde} | {recipe} | {statistics.mean(kids):.0f} ± {sd(kids):.0f}{note} | "
              f"{statistics.mean(fids):.0f} ± {sd(fids):.0f} | {bpd(run)} |")
    sys.exit(0)

head = "| SDE | recipe | checkpoints | KID mean ± sd | FID mean ± sd | KID per checkpoint (± s.e.) |"
rule = "|---|---|---|---|---|---|"
if nll:
    head, rule = head + " bits/dim, last checkpoint (drawn aux density) |", rule + "---|"
print(head)
print(rule)
for run in sorted(runs, key=order):
    cps = runs[run]
    steps = sorted(cps)
    kids = [cps[s]["kid"] for s in steps]
    fids = [cps[s]["fid"] for s in steps]
    per = ", ".join(f"{s}: {cps[s]['kid']:.0f} ± {cps[s]['kid_se']:.0f}" for s in steps)
    sde, recipe = label(run)
    row = (f"| {sde} | {recipe} | {len(steps)} | {statistics.mean(kids):.0f} ± {sd(kids):.0f} | "
           f"{statistics.mean(fids):.0f} ± {sd(fids):.0f} | {per} |")
    if nll:
        cell = "—"
        if run in nll:
            y, t, x, s, step = nll[run]
            cell = f"{y:.3f} ± {t:.3f} ({x:.3f} ± {s:.3f}), step {step}"
        row += f" {cell} |"
    print(row)
