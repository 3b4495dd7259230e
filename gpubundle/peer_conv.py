#!/usr/bin/env python3
"""The PyTorch (cuDNN) side of `holdctl bench conv`: the same convolutions, the same passes, timed the
same way, in the layouts PyTorch offers.

    python3 peer_conv.py SHAPES.json [--reps 5] [--device cuda] [--json]

SHAPES.json is `holdctl bench conv --json`'s output (its cells name every shape; each shape is timed
once here). For each shape (x (N, C, H, W), w (O, C, K, K), stride S, padding P, with a per-channel
bias): the forward pass (F.conv2d with the bias), the input gradient and the weight gradient
(torch.nn.grad.conv2d_input / conv2d_weight: cuDNN's backward-data and backward-filter), each in
four rows — fp32 NCHW (TF32 off), tf32 NCHW, tf32 channels_last (NHWC) and bf16 channels_last
(x, w and dy in bfloat16: what AMP gives a convolution) — with cudnn.benchmark
on (a warm-up run lets it choose its algorithm), CUDA events around each run, the median of --reps.
On the CPU (no GPU: the host-shim bundle's plumbing check) perf_counter and no TF32; bf16 there is
whatever the CPU's bfloat16 convolution is.
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

ROWS = ["fp32", "tf32", "tf32-cl", "bf16-cl"]
PASSES = ["forward", "input grad", "weight grad"]


def timer(device):
    if device == "cuda":
        def run(f):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            f()
            b.record()
            b.synchronize()
            return a.elapsed_time(b) / 1e3
    else:
        def run(f):
            t = time.perf_counter()
            f()
            return time.perf_counter() - t
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shapes", help="holdctl bench conv --json output")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with open(a.shapes) as f:
        doc = json.load(f)
    shapes, counts = [], {}
    for c in doc["cells"]:
        g = c["geom"]
        key = (g["N"], g["C"], g["H"], g["W"], g["O"], g["K"], g["S"], g["P"])
        if key not in counts:
            shapes.append(key)
            counts[key] = c["count"]
    dev = torch.device(a.device)
    torch.backends.cudnn.benchmark = True
    t = timer(a.device)
    torch.manual_seed(0)
    cells = []
    for (n, c, h, w_, o, k, s, p) in shapes:
        x0 = torch.randn(n, c, h, w_, device=dev)
        w0 = torch.randn(o, c, k, k, device=dev)
        b0 = torch.randn(o, device=dev)
        y0 = F.conv2d(x0, w0, b0, stride=s, padding=p)
        dy0 = torch.randn_like(y0)
        flops = 2.0 * n * o * y0.shape[2] * y0.shape[3] * c * k * k
        for row in ROWS:
            tf32 = row != "fp32"
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.allow_tf32 = tf32
            fmt = torch.channels_last if row.endswith("-cl") else torch.contiguous_format
            dt = torch.bfloat16 if row.startswith("bf16") else torch.float32
            x, wt, dy = (v.to(dt).contiguous(memory_format=fmt) for v in (x0, w0, dy0))
            b = b0.to(dt)
            passes = [
                lambda: F.conv2d(x, wt, b, stride=s, padding=p),
                lambda: torch.nn.grad.conv2d_input(x.shape, wt, dy, stride=s, padding=p),
                lambda: torch.nn.grad.conv2d_weight(x, wt.shape, dy, stride=s, padding=p),
            ]
            for name, f in zip(PASSES, passes):
                f()  # warm-up: cuDNN's algorithm search
                times = sorted(t(f) for _ in range(a.reps))
                sec = times[len(times) // 2]
                cells.append({"geom": {"N": n, "C": c, "H": h, "W": w_, "O": o, "K": k, "S": s, "P": p},
                              "count": counts[(n, c, h, w_, o, k, s, p)], "pass": name, "row": row,
                              "seconds": sec, "tflops": flops / sec / 1e12})
    info = {"torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
            "device": torch.cuda.get_device_name() if a.device == "cuda" else "cpu"}
    if a.json:
        json.dump({"info": info, "cells": cells}, sys.stdout)
        print()
        return
    print(f"peer_conv: {info}, median of {a.reps}")
    print(f"{'convolution':34} {'pass':11} {'count':>5}" + "".join(f" {r + ' µs (TFLOP/s)':>22}" for r in ROWS))
    total = {r: 0.0 for r in ROWS}
    for i in range(0, len(cells), len(ROWS) * len(PASSES)):
        block = cells[i:i + len(ROWS) * len(PASSES)]
        for pi, name in enumerate(PASSES):
            g = block[0]["geom"]
            label = f"{g['N']}×{g['C']}×{g['H']}×{g['W']} →{g['O']} k{g['K']} s{g['S']} p{g['P']}"
            line = f"{label:34} {name:11} {block[0]['count']:5d}"
            for ri, r in enumerate(ROWS):
                cell = block[ri * len(PASSES) + pi]
                line += f" {cell['seconds'] * 1e6:12.1f} ({cell['tflops']:6.1f})"
                total[r] += cell["seconds"] * cell["count"]
            print(line)
    print("per training step (time × count, all three passes): " + ", ".join(f"{r} {total[r] * 1e3:.2f} ms" for r in ROWS))


if __name__ == "__main__":
    main()
