#!/usr/bin/python3
"""Time the NCSN++ forward and forward+backward per image in PyTorch CPU, for
comparison with holdgo's BenchmarkNCSNpp / `holdctl bench ncsnpp`.

    /usr/bin/python3 scripts/bench_ncsnpp.py [--threads N] [--json]

The network is golden_ncsnpp.py's re-implementation of score_sde's NCSN++
(same blocks, FIR resampling through upfirdn2d_native, dropout off), on the
same presets and batches as the Go benchmark: ncsnpp-small (28×28, 3 → 1,
batch 32) and ncsnpp-cifar10 (32×32, 9 → 3, batch 4). Median of repeats.
"""

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_ncsnpp import NCSNpp  # noqa: E402

PRESETS = {
    "ncsnpp-small": dict(image_size=28, in_channels=3, out_channels=1, nf=32, ch_mult=[1, 2, 2], num_res_blocks=1,
                         attn_resolutions=[14], embedding="fourier", fourier_scale=16.0, fir=True,
                         progressive_input="residual", batch=32),
    "ncsnpp-cifar10": dict(image_size=32, in_channels=9, out_channels=3, nf=128, ch_mult=[1, 2, 2, 2], num_res_blocks=8,
                           attn_resolutions=[16], embedding="fourier", fourier_scale=16.0, fir=True,
                           progressive_input="residual", batch=4),
}


def bench(c, backward, repeats):
    net = NCSNpp(c)
    B, S = c["batch"], c["image_size"]
    x = torch.randn(B, c["in_channels"], S, S)
    t = 0.01 + 0.99 * torch.rand(B)
    times, cpu = [], []
    for i in range(repeats + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        if backward:
            net.zero_grad()
            out = net(x, t)
            (out ** 2).mean().backward()
        else:
            with torch.no_grad():
                net(x, t)
        if i > 0:  # the first call warms up
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)  # user + system CPU time of the process
    times.sort()
    cpu.sort()
    return times[len(times) // 2] / B * 1e3, cpu[len(cpu) // 2] / B * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--models", default="ncsnpp-small,ncsnpp-cifar10")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    rows = []
    for name in a.models.split(","):
        c = PRESETS[name]
        for backward in (False, True):
            ms, cpu_ms = bench(c, backward, a.repeats)
            rows.append(dict(model=name, batch=c["batch"], backward=backward, ms_per_image=ms, cpu_ms_per_image=cpu_ms,
                             threads=torch.get_num_threads(), torch=torch.__version__))
    if a.json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print("pytorch %-15s batch %3d  %-16s %8.2f ms/image  (%d threads, torch %s)" % (
                r["model"], r["batch"], "forward+backward" if r["backward"] else "forward", r["ms_per_image"], r["threads"], r["torch"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
