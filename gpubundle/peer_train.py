#!/usr/bin/env python3
"""The PyTorch peer of `holdctl bench train`: training steps of the same NCSN++ (golden_ncsnpp.py, the
re-implementation of score_sde's network that the Go golden tests check against) on the same device.

    python3 peer_train.py --model ncsnpp-cifar10 --batch 128 --steps 20 [--device cuda] [--tf32 1|0] [--json]

One step: forward on a random batch, the mean squared error to a random target, backward, Adam. The
perturbation and the loss of holdgo's step are a few element-wise kernels and are left out. Prints
the median time per step and images/s (JSON with --json). TF32: torch.backends.cuda.matmul and
cudnn allow_tf32 set to --tf32.
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_ncsnpp import NCSNpp  # noqa: E402

PRESETS = {  # holdgo's presets (layers/ncsnpp.go); ncsnpp-tiny is the 8×8 test network
    "ncsnpp-tiny": dict(image_size=8, in_channels=3, out_channels=1, nf=8, ch_mult=[1, 2], num_res_blocks=1,
                        attn_resolutions=[4], embedding="fourier", fourier_scale=16.0, fir=True,
                        progressive_input="residual"),
    "ncsnpp-small": dict(image_size=28, in_channels=3, out_channels=1, nf=32, ch_mult=[1, 2, 2], num_res_blocks=1,
                         attn_resolutions=[14], embedding="fourier", fourier_scale=16.0, fir=True,
                         progressive_input="residual"),
    "ncsnpp-cifar10": dict(image_size=32, in_channels=9, out_channels=3, nf=128, ch_mult=[1, 2, 2, 2], num_res_blocks=8,
                           attn_resolutions=[16], embedding="fourier", fourier_scale=16.0, fir=True,
                           progressive_input="residual"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="ncsnpp-cifar10", choices=sorted(PRESETS))
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tf32", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    dev = torch.device(a.device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            sys.exit("peer_train: torch.cuda.is_available() is False")
        torch.backends.cuda.matmul.allow_tf32 = bool(a.tf32)
        torch.backends.cudnn.allow_tf32 = bool(a.tf32)
        torch.backends.cudnn.benchmark = True
    c = PRESETS[a.model]
    net = NCSNpp(c).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=2e-4)
    B, S = a.batch, c["image_size"]
    x = torch.randn(B, c["in_channels"], S, S, device=dev)
    target = torch.randn(B, c["out_channels"], S, S, device=dev)
    t = 0.01 + 0.99 * torch.rand(B, device=dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    times = []
    for i in range(a.steps + 2):  # two warm-up steps (cuDNN autotuning)
        sync()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = ((net(x, t) - target) ** 2).mean()
        loss.backward()
        opt.step()
        sync()
        if i >= 2:
            times.append(time.perf_counter() - t0)
    times.sort()
    step = times[len(times) // 2]
    res = dict(peer="pytorch", torch=torch.__version__, model=a.model, batch=B, device=str(dev),
               device_name=torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
               tf32=bool(a.tf32), params=sum(p.numel() for p in net.parameters()),
               step_ms=1e3 * step, images_per_s=B / step)
    if a.json:
        print(json.dumps(res))
    else:
        print("%s %s batch %d tf32=%s: %.3f ms/step, %.1f images/s" % (res["device_name"], a.model, B, a.tf32, res["step_ms"], res["images_per_s"]))


if __name__ == "__main__":
    main()
