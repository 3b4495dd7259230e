#!/usr/bin/env python3
"""Render the cells of scripts/images_table.sh (lines "command<TAB>json") as the Markdown table of
docs/images.md and as a CSV for `holdctl plot nfe --metric kid` (one line per SDE and sampler; the
floor row named floor-mean). Standard library only.
    python3 scripts/images_table.py CELLS.tsv [OUT.csv]
"""
import json
import re
import sys

rows, floor = [], None
for line in open(sys.argv[1]):
    cmd, js = line.rstrip("\n").split("\t", 1)
    r = json.loads(js)
    m = re.search(r"--samples (\S+)", cmd)
    r["cmd"], r["samples"] = cmd, m.group(1) if m else "?"
    if r.get("sampling") is None:
        floor = r
    else:
        rows.append(r)

def fmt(r, sde, sampler, grid, nfe, extra):
    kid = f"{r['kid']:.1f} ± {r['kid_se']:.1f}"  # the classifier's cubic-kernel KID: O(1,000) for noise
    return f"| {sde} | {sampler} | {grid} | {nfe} | {r['fid']:.2f} | {kid} | {r['n']} | {extra} |"

SDES = ["hold3", "cld", "vp"]

def key(r):
    sde = r["samples"].rstrip("/").split("/")[-1].split("-")[-1]
    s = r["sampling"]
    return (SDES.index(sde) if sde in SDES else len(SDES), sde, s["sampler"].startswith("a-"), s["sampler"], s["nfe"])

rows.sort(key=key)

print("| SDE | sampler | grid | NFE | FID | KID ± s.e. | n | diverged · max \\|pixel\\| · wall s |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    s = r["sampling"]
    sde = r["samples"].rstrip("/").split("/")[-1].split("-")[-1]
    extra = f"{s['diverged']} · {s['max_abs']:.2f} · {s['seconds']:.0f}"
    print(fmt(r, sde, s["sampler"], s["grid"], s["nfe"], extra))
if floor:
    print(fmt(floor, "floor", "training images", "—", "—", "—"))
print()
print("Commands:")
print()
for r in rows + ([floor] if floor else []):
    print(f"    {r['cmd']}")

if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write("sampler,grid,nfe,kid,fid\n")
        for r in rows:
            s = r["sampling"]
            sde = r["samples"].rstrip("/").split("/")[-1].split("-")[-1]
            f.write(f"{sde}-{s['sampler']},{s['grid']},{s['nfe']},{r['kid']},{r['fid']}\n")
        if floor:
            f.write(f"floor-mean,,0,{floor['kid']},{floor['fid']}\n")
