#!/usr/bin/env python3
"""The PyTorch peer of `holdctl bench train`: training steps of the same NCSN++ (golden_ncsnpp.py, the
re-implementation of score_sde's network that the Go golden tests check against) on the same device.

    python3 peer_train.py --model ncsnpp-cifar10 --batch 128 --steps 20 [--device cuda] [--modes all] [--json] [--profile]
    python3 peer_train.py --check [MODELS] [--device cuda]

One step: forward on a random batch, the mean squared error to a random target, backward, Adam. The
perturbation and the loss of holdgo's step are a few element-wise kernels and are left out.

The network (--net fair, the default) is golden_ncsnpp's NCSNpp with exactly three functions replaced,
in a second copy of that module (fair_ncsnpp below; golden_ncsnpp.py itself, whose numerics the
committed golden files depend on, is not touched and --net golden still times it):
  upsample_2d          upfirdn2d_native(up=2, pad 2/1) → F.conv_transpose2d(x, taps, stride=2,
                       padding=1, groups=C)
  downsample_2d        upfirdn2d_native(down=2, pad 1/1) → F.conv2d(x, taps, stride=2, padding=1, groups=C)
  conv_downsample_2d   upfirdn2d_native(pad 2/2) → F.conv2d(x, taps, padding=2, groups=C), then the same
                       stride-2 3×3 convolution
The golden versions build the 4×4 FIR taps with numpy and `torch.tensor(k, device=x.device)` on every
call (a pageable host→device copy and a stream synchronisation on a GPU: 10 per forward on
ncsnpp-small, 15 on ncsnpp-cifar10) and filter by reshaping to one channel (N·C, 1, H, W), zero
padding and a 1-channel convolution with permutes around it. The fair ones take (C, 1, 4, 4) taps made
once per (kind, channels, device, dtype, layout) and kept on the device (_TAPS), and filter with one
depthwise convolution (groups = C) in the input's memory format. Same arithmetic up to summation
order; --check proves it.

Rows (--mode / --modes, comma list or "all"; --tf32 1|0 without --modes means tf32 / fp32):
  fp32     eager, TF32 off (torch.backends.cuda.matmul and cudnn allow_tf32 False), NCHW
  tf32     eager, TF32 on, NCHW
  tf32-cl  TF32 on, channels_last model and inputs
  bf16-cl  torch.autocast(bfloat16), channels_last, TF32 on for what stays FP32; FP32 master weights,
           gradients and Adam
Every row: its own copy of the same initial weights, cudnn.benchmark on, Adam(lr 2e-4) fused where
this torch has it on the device (--adam), --warmup steps (cuDNN autotuning) on a mode's first round
and one on later rounds, then --steps timed steps per round; --rounds R interleaves the modes
(fp32 tf32 … fp32 tf32 …). Timing: on CUDA an event at every step boundary (no synchronisation
between steps) and the wall time of the round with one synchronisation at its end; on the CPU
perf_counter. Per row: the median step, min, max and spread (max−min)/median, images/s = batch /
median, and the wall time per step. JSON (--json): one line, the rows and "best" (the fastest row of
each precision fp32 / tf32 / bf16), with the torch, CUDA and cuDNN versions and the device name.

--profile: after the rounds, one more step of the first mode under torch.profiler (CPU and, on CUDA, CUDA
activities); after the rows (or the JSON line) it prints a "profiled step:" line (the CUDA events' self
time summed, as the table's footer does; on the CPU the operators' self CPU time) and the key averages'
table, the top 25 by total CUDA time (on the CPU: total CPU time). The JSON line carries the same sums
under "profile".

--check: on the same weights (golden_ncsnpp.randomise) and inputs, the fair network's output, loss and
every parameter gradient against the unmodified golden network's, NCHW and channels_last (largest
|a−b| / max|b| per tensor ≤ --tol; TF32 off), the taps made once (the cache does not grow on a second
step), the bf16-cl loss within --bf16-tol of fp32; on CUDA also the host synchronisations of a forward
and backward (torch.cuda.set_sync_debug_mode; the fair network must have none); and, where the
repository's testdata/golden/ncsnpp_fir.safetensors is found, the fair network against that file.
Exit status 1 on any mismatch.
"""
import argparse
import collections
import contextlib
import copy
import importlib.util
import json
import os
import statistics
import struct
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
# In the GPU bundle golden_ncsnpp.py sits next to this file; in the repository it is scripts/.
GOLDEN_PATH = next((p for p in (os.path.join(HERE, "golden_ncsnpp.py"),
                                os.path.join(HERE, "..", "scripts", "golden_ncsnpp.py")) if os.path.exists(p)), None)
if GOLDEN_PATH is None:
    sys.exit("peer_train: golden_ncsnpp.py not found next to peer_train.py or in ../scripts")


def load_module(name):
    spec = importlib.util.spec_from_file_location(name, GOLDEN_PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


golden = load_module("golden_ncsnpp")

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


# ---- the fair FIR: device-resident taps, depthwise convolutions -----------------------------------

_TAPS = {}  # (kind, channels, device, dtype, channels_last) → (C, 1, 4, 4) taps on the device


def _taps(kind, x):
    """The depthwise taps for x, made once (the only host→device copy) and cached."""
    C = x.shape[1]
    cl = x.dim() == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last)
    key = (kind, C, x.device, x.dtype, cl)
    w = _TAPS.get(key)
    if w is None:
        k = golden.setup_kernel(golden.FIR_KERNEL)  # golden's float32 taps, normalised to sum 1
        if kind == "up":
            k = k * 4  # gain · factor²
        else:
            k = np.flip(k, (0, 1))  # F.conv2d correlates; upfirdn2d_native convolves (the taps are symmetric anyway)
        # conv_transpose2d correlates the zero-stuffed input with the flipped weight: the taps go in unflipped.
        w = torch.from_numpy(np.ascontiguousarray(k)).to(device=x.device, dtype=x.dtype)
        w = w.reshape(1, 1, 4, 4).repeat(C, 1, 1, 1)
        if cl:
            w = w.contiguous(memory_format=torch.channels_last)
        _TAPS[key] = w
    return w


def fir_upsample_2d(x, k=None, factor=2, gain=1):
    """golden upsample_2d with its defaults: zero-stuff ×2, pad 2/1, 4×4 FIR × 4 = a transposed depthwise conv."""
    assert k is None and factor == 2 and gain == 1, "the network calls upsample_2d with its defaults only"
    return F.conv_transpose2d(x, _taps("up", x), stride=2, padding=1, groups=x.shape[1])


def fir_downsample_2d(x, k=None, factor=2, gain=1):
    """golden downsample_2d with its defaults: pad 1/1, 4×4 FIR, keep every second sample."""
    assert k is None and factor == 2 and gain == 1, "the network calls downsample_2d with its defaults only"
    return F.conv2d(x, _taps("down", x), stride=2, padding=1, groups=x.shape[1])


def fir_conv_downsample_2d(x, w, k=None, factor=2, gain=1):
    """golden conv_downsample_2d with its defaults: pad 2/2, 4×4 FIR, then the 3×3 convolution at stride 2."""
    assert k is None and factor == 2 and gain == 1 and w.shape[-1] == 3
    x = F.conv2d(x, _taps("down", x), padding=2, groups=x.shape[1])
    return F.conv2d(x, w, stride=factor, padding=0)


# The fair network: a second copy of golden_ncsnpp whose classes look these three names up at call time.
fair = load_module("fair_ncsnpp")
fair.upsample_2d = fir_upsample_2d
fair.downsample_2d = fir_downsample_2d
fair.conv_downsample_2d = fir_conv_downsample_2d
NETS = {"fair": fair, "golden": golden}


# ---- modes ----------------------------------------------------------------------------------------

Mode = collections.namedtuple("Mode", "name precision tf32 channels_last autocast")
MODES = collections.OrderedDict((m.name, m) for m in [
    Mode("fp32", "fp32", False, False, None),
    Mode("tf32", "tf32", True, False, None),
    Mode("tf32-cl", "tf32", True, True, None),
    Mode("bf16-cl", "bf16", True, True, torch.bfloat16),
])


def set_tf32(dev, on):
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on


def autocast(dev, dtype):
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=dev.type, dtype=dtype)


def _cpu_group_norm_casts(dtype):
    """Whether this torch's CPU autocast runs group_norm on a dtype input (torch 1.13's has no rule for it)."""
    x = torch.zeros(1, 2, 2, 2, dtype=dtype)
    try:
        with torch.autocast(device_type="cpu", dtype=dtype):
            torch.nn.functional.group_norm(x, 1, torch.ones(2), torch.zeros(2))
        return True
    except RuntimeError:
        return False


def fix_cpu_autocast(net, dev, dtype):
    """On the CPU only, where autocast has no group_norm rule: give it CUDA autocast's (group_norm in FP32) by a
    forward pre-hook on every GroupNorm that casts its input to float32. Nothing changes on a GPU."""
    if dev.type == "cpu" and dtype is not None and not _cpu_group_norm_casts(dtype):
        for m in net.modules():
            if isinstance(m, torch.nn.GroupNorm):
                m.register_forward_pre_hook(lambda mod, inp: (inp[0].float(),) + tuple(inp[1:]))
    return net


def make_adam(params, dev, kind):
    """Adam(lr 2e-4): fused (one kernel family for all parameters) where this torch has it on dev."""
    params = list(params)
    if kind in ("auto", "fused") and dev.type == "cuda":
        try:
            return torch.optim.Adam(params, lr=2e-4, fused=True), "fused"
        except (TypeError, RuntimeError) as e:
            if kind == "fused":
                sys.exit("peer_train: fused Adam unavailable: %s" % e)
    if kind in ("auto", "foreach") and dev.type == "cuda":
        try:
            return torch.optim.Adam(params, lr=2e-4, foreach=True), "foreach"
        except TypeError:
            pass
    return torch.optim.Adam(params, lr=2e-4), "default"


class Runner:
    """One row: its own copy of the network and Adam, its inputs in its memory format."""

    def __init__(self, mode, base, dev, x, t, target, adam):
        self.mode, self.dev, self.t = mode, dev, t
        self.net = copy.deepcopy(base).to(dev)
        self.x, self.target = x, target
        fix_cpu_autocast(self.net, dev, mode.autocast)
        if mode.channels_last:
            self.net = self.net.to(memory_format=torch.channels_last)
            self.x = x.contiguous(memory_format=torch.channels_last)
            self.target = target.contiguous(memory_format=torch.channels_last)
        self.opt, self.adam = make_adam(self.net.parameters(), dev, adam)
        self.times, self.walls, self.rounds = [], [], 0

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        with autocast(self.dev, self.mode.autocast):
            out = self.net(self.x, self.t)
        loss = ((out.float() - self.target) ** 2).mean()
        loss.backward()
        self.opt.step()
        return loss

    def run_round(self, steps, warmup):
        set_tf32(self.dev, self.mode.tf32)
        cuda = self.dev.type == "cuda"
        sync = torch.cuda.synchronize if cuda else (lambda: None)
        for _ in range(warmup):
            self.step()
        sync()
        if cuda:
            events = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
        stamps = []
        w0 = time.perf_counter()
        for i in range(steps):
            if cuda:
                events[i].record()
            else:
                stamps.append(time.perf_counter())
            self.step()
        if cuda:
            events[steps].record()
        sync()
        w1 = time.perf_counter()
        if cuda:
            self.times += [events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(steps)]
        else:
            stamps.append(w1)
            self.times += [stamps[i + 1] - stamps[i] for i in range(steps)]
        self.walls.append((w1 - w0) / steps)
        self.rounds += 1

    def row(self, batch):
        ts = sorted(self.times)
        med = statistics.median(ts)
        wall = statistics.median(self.walls)
        m = self.mode
        return dict(mode=m.name, precision=m.precision, tf32=m.tf32,
                    layout="channels_last" if m.channels_last else "nchw",
                    autocast=str(m.autocast).replace("torch.", "") if m.autocast else None, adam=self.adam,
                    steps=len(ts), step_ms=1e3 * med, min_ms=1e3 * ts[0], max_ms=1e3 * ts[-1],
                    spread_pct=100 * (ts[-1] - ts[0]) / med, images_per_s=batch / med,
                    wall_step_ms=1e3 * wall, wall_images_per_s=batch / wall)


PROFILE_ROWS = 25


def _time_attr(avgs, kind):
    """The name of a key-averages time attribute: torch ≥ 2.4 says "device" where earlier ones say "cuda"."""
    if kind == "cuda" and avgs and hasattr(avgs[0], "device_time_total"):
        return "device_time_total"
    return kind + "_time_total"


def profile_step(run):
    """One more step of run's mode under torch.profiler: (summary dict, the key averages' table)."""
    from torch.profiler import ProfilerActivity, profile
    cuda = run.dev.type == "cuda"
    set_tf32(run.dev, run.mode.tf32)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    sync()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        w0 = time.perf_counter()
        run.step()
        sync()
        wall = time.perf_counter() - w0
    avgs = prof.key_averages()
    sort_by = _time_attr(avgs, "cuda" if cuda else "cpu")
    self_attr = "self_" + sort_by
    if cuda:  # as the table's footer: the kernels' own events (Kineto), each kernel counted once
        events = [e for e in avgs if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
    else:
        events = list(avgs)
    busy_us = sum(getattr(e, self_attr) for e in events)
    summary = dict(mode=run.mode.name, device_time_ms=busy_us / 1e3 if cuda else None,
                   cpu_time_ms=None if cuda else busy_us / 1e3, wall_ms=1e3 * wall, sort_by=sort_by,
                   kernels=sum(e.count for e in events) if cuda else None)
    return summary, avgs.table(sort_by=sort_by, row_limit=PROFILE_ROWS)


def profile_line(p):
    if p["device_time_ms"] is not None:
        what = ("%.3f ms of device time in %d CUDA events (kernels, copies, memsets: their self CUDA time summed)"
                % (p["device_time_ms"], p["kernels"]))
    else:
        what = "%.3f ms of CPU time in operators (their self CPU time summed; no CUDA device)" % p["cpu_time_ms"]
    return "profiled step: mode %s, %s, %.3f ms wall under the profiler" % (p["mode"], what, p["wall_ms"])


def parse_modes(text):
    if text == "all":
        return list(MODES.values())
    out = []
    for name in text.split(","):
        if name not in MODES:
            sys.exit("peer_train: unknown mode %r (known: %s, all)" % (name, ", ".join(MODES)))
        out.append(MODES[name])
    return out


def versions(dev):
    v = dict(torch=torch.__version__, cuda=torch.version.cuda,
             cudnn=torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None)
    v["device_name"] = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu (%d threads)" % torch.get_num_threads()
    return v


def open_device(name):
    dev = torch.device(name)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            sys.exit("peer_train: torch.cuda.is_available() is False")
        torch.backends.cudnn.benchmark = True
    return dev


def bench(a):
    dev = open_device(a.device)
    if a.modes is not None:
        modes = parse_modes(a.modes)
    else:
        modes = [MODES["tf32" if a.tf32 is None or a.tf32 else "fp32"]]
    c = PRESETS[a.model]
    torch.manual_seed(a.seed)
    base = NETS[a.net].NCSNpp(c)  # built once on the CPU; every row starts from these weights
    B, S = a.batch, c["image_size"]
    gen = torch.Generator().manual_seed(a.seed + 1)
    x = torch.randn(B, c["in_channels"], S, S, generator=gen).to(dev)
    target = torch.randn(B, c["out_channels"], S, S, generator=gen).to(dev)
    t = (0.01 + 0.99 * torch.rand(B, generator=gen)).to(dev)
    runners = [Runner(m, base, dev, x, t, target, a.adam) for m in modes]
    for r in range(a.rounds):
        for run in runners:
            run.run_round(a.steps, a.warmup if r == 0 else 1)
    rows = [run.row(B) for run in runners]
    prof, prof_table = profile_step(runners[0]) if a.profile else (None, None)
    best = {}
    for row in rows:
        p = row["precision"]
        if p not in best or row["images_per_s"] > best[p]["images_per_s"]:
            best[p] = dict(mode=row["mode"], step_ms=row["step_ms"], images_per_s=row["images_per_s"])
    res = dict(peer="pytorch", **versions(dev), device=str(dev), model=a.model, batch=B, net=a.net,
               params=sum(p.numel() for p in base.parameters()), warmup=a.warmup, rounds=a.rounds, rows=rows, best=best)
    if len(rows) == 1:  # the one-row keys of the earlier peer, for its callers
        res.update(tf32=rows[0]["tf32"], step_ms=rows[0]["step_ms"], images_per_s=rows[0]["images_per_s"])
    if prof is not None:
        res["profile"] = prof
    if a.json:
        print(json.dumps(res))
        print_profile(prof, prof_table)
        return 0
    print("peer_train: torch %s (CUDA %s, cuDNN %s), %s; %s batch %d, %d parameters, net %s, %d round(s) of %d steps after %d warm-up"
          % (res["torch"], res["cuda"], res["cudnn"], res["device_name"], a.model, B, res["params"], a.net,
             a.rounds, a.steps, a.warmup))
    print("%-8s %-9s %-13s %-7s %12s %19s %8s %10s %13s" % ("mode", "precision", "layout", "adam", "median ms", "min–max ms",
                                                           "spread", "images/s", "wall ms/step"))
    for row in rows:
        print("%-8s %-9s %-13s %-7s %12.3f %9.3f–%-9.3f %7.1f%% %10.1f %13.3f"
              % (row["mode"], row["precision"], row["layout"], row["adam"], row["step_ms"], row["min_ms"], row["max_ms"],
                 row["spread_pct"], row["images_per_s"], row["wall_step_ms"]))
    print("best: " + ", ".join("%s %s %.1f images/s" % (p, b["mode"], b["images_per_s"]) for p, b in best.items()))
    print_profile(prof, prof_table)
    return 0


def print_profile(prof, table):
    if prof is not None:
        print(profile_line(prof))
        print("torch.profiler: the top %d operators by %s" % (PROFILE_ROWS, prof["sort_by"]))
        print(table)


# ---- --check: the fair network against the golden one ----------------------------------------------

def rel_err(a, b):
    """max|a − b| / max|b| over one tensor, in float64."""
    a, b = a.detach().double().cpu(), b.detach().double().cpu()
    s = b.abs().max().item()
    d = (a - b).abs().max().item()
    return d / s if s > 0 else d


def forward_backward(net, x, t, eps, dtype=None):
    net.zero_grad(set_to_none=True)
    with autocast(x.device, dtype):
        out = net(x, t)
    loss = ((out.float() + eps) ** 2).sum(dim=(1, 2, 3)).mean()
    loss.backward()
    grads = collections.OrderedDict((n, p.grad.detach().clone()) for n, p in net.named_parameters() if p.requires_grad)
    return out.detach().float(), loss.detach(), grads


def compare(ref, got):
    """(worst error, its tensor's name) over out, loss and every gradient. As in layers/ncsnpp_golden_test.go,
    a gradient's error is relative to max(its largest |value|, 1e-4 × the largest over all gradients); the
    attention key biases (NIN_1.b) have a gradient of 0 in exact arithmetic (the softmax does not see q·b),
    so theirs is relative to the largest over all gradients."""
    (out_r, loss_r, g_r), (out_g, loss_g, g_g) = ref, got
    assert list(g_r) == list(g_g)
    errs = [(rel_err(out_g, out_r), "out"), (rel_err(loss_g, loss_r), "loss")]
    gmax = max(g.abs().max().item() for g in g_r.values())
    for n in g_r:
        a, b = g_g[n].detach().double().cpu(), g_r[n].detach().double().cpu()
        scale = gmax if n.endswith("NIN_1.b") else max(b.abs().max().item(), 1e-4 * gmax)
        errs.append(((a - b).abs().max().item() / scale, "grad." + n))
    return max(errs)


def count_syncs(dev, fn):
    """Host synchronisations fn() makes on a CUDA device (torch.cuda.set_sync_debug_mode "warn")."""
    if dev.type != "cuda" or not hasattr(torch.cuda, "set_sync_debug_mode"):
        return None
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught)


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, h in header.items():
        assert h["dtype"] == "F32", name
        lo, hi = h["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(blob[base + lo:base + hi], dtype="<f4").reshape(h["shape"]).copy())
    return out, meta


class Checker:
    def __init__(self, dev, tol, bf16_tol):
        self.dev, self.tol, self.bf16_tol = dev, tol, bf16_tol
        self.failures = []

    def expect(self, ok, what):
        print("  %s %s" % ("ok  " if ok else "FAIL", what))
        if not ok:
            self.failures.append(what)

    def fair_forms(self, label, fair_net, x, t, eps, ref, ref_name, ref_cl=None):
        """The fair network, NCHW and channels_last, against ref (the reference's out, loss and gradients, NCHW)
        and ref_cl (the golden network in channels_last, where there is one). Same layout: within --tol. Across
        layouts: within 5 × --tol, since another layout is other convolution algorithms (the golden network's
        own NCHW → channels_last change is printed by case)."""
        fwd = forward_backward(fair_net, x, t, eps)
        err, where = compare(ref, fwd)
        self.expect(err <= self.tol, "%s fair NCHW vs %s NCHW: max rel err %.2e (%s)" % (label, ref_name, err, where))
        cl_net = copy.deepcopy(fair_net).to(memory_format=torch.channels_last)
        x_cl = x.contiguous(memory_format=torch.channels_last)
        fwd_cl = forward_backward(cl_net, x_cl, t, eps)
        if ref_cl is not None:
            err, where = compare(ref_cl, fwd_cl)
            self.expect(err <= self.tol, "%s fair channels_last vs %s channels_last: max rel err %.2e (%s)"
                        % (label, ref_name, err, where))
        err, where = compare(ref, fwd_cl)
        self.expect(err <= 5 * self.tol, "%s fair channels_last vs %s NCHW: max rel err %.2e (%s)" % (label, ref_name, err, where))
        n_taps = len(_TAPS)
        forward_backward(cl_net, x_cl, t, eps)
        forward_backward(fair_net, x, t, eps)
        self.expect(len(_TAPS) == n_taps and all(w.device == x.device for w in _TAPS.values()),
                    "%s taps made once on %s: %d cached tensors, none added by a second step of either form"
                    % (label, x.device, len(_TAPS)))
        return cl_net, x_cl

    def case(self, label, c, batch, seed):
        dev = self.dev
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed + 1000)
        gnet = golden.NCSNpp(c)
        golden.randomise(gnet, gen)
        S = c["image_size"]
        x = torch.randn(batch, c["in_channels"], S, S, generator=gen).to(dev)
        t = (0.05 + 0.95 * torch.rand(batch, generator=gen)).to(dev)
        eps = torch.randn(batch, c["out_channels"], S, S, generator=gen).to(dev)
        gnet = gnet.to(dev)
        fnet = fair.NCSNpp(c)
        fnet.load_state_dict(gnet.state_dict())
        fnet = fnet.to(dev)
        print("%s: batch %d, %d parameters, on %s" % (label, batch, sum(p.numel() for p in gnet.parameters()), dev))
        ref = forward_backward(gnet, x, t, eps)
        gnet_cl = copy.deepcopy(gnet).to(memory_format=torch.channels_last)
        ref_cl = forward_backward(gnet_cl, x.contiguous(memory_format=torch.channels_last), t, eps)
        err, where = compare(ref, ref_cl)
        print("  (the layout's own effect: golden channels_last vs golden NCHW, max rel err %.2e (%s))" % (err, where))
        cl_net, x_cl = self.fair_forms(label, fnet, x, t, eps, ref, "golden", ref_cl)
        bf_net = fix_cpu_autocast(copy.deepcopy(cl_net), dev, torch.bfloat16)
        _, loss_bf, g_bf = forward_backward(bf_net, x_cl, t, eps, torch.bfloat16)
        loss_rel = abs(loss_bf.item() - ref[1].item()) / abs(ref[1].item())
        flat_r = torch.cat([g.flatten().double() for g in ref[2].values()])
        flat_b = torch.cat([g.flatten().double() for g in g_bf.values()]).to(flat_r.device)
        cos = (flat_r @ flat_b / (flat_r.norm() * flat_b.norm())).item()
        self.expect(loss_rel <= self.bf16_tol and np.isfinite(loss_bf.item()),
                    "%s bf16-cl (autocast, channels_last) loss %.6g vs fp32 %.6g: rel diff %.2e; gradient cosine %.5f"
                    % (label, loss_bf.item(), ref[1].item(), loss_rel, cos))
        if dev.type == "cuda":
            g_syncs = count_syncs(dev, lambda: forward_backward(gnet, x, t, eps))
            f_syncs = count_syncs(dev, lambda: forward_backward(fnet, x, t, eps))
            c_syncs = count_syncs(dev, lambda: forward_backward(cl_net, x_cl, t, eps))
            if f_syncs is None:
                print("  note: torch.cuda.set_sync_debug_mode missing: host synchronisations not counted")
            else:
                self.expect(f_syncs == 0 and c_syncs == 0,
                            "%s host synchronisations in a forward+backward: golden %d, fair NCHW %d, fair channels_last %d"
                            % (label, g_syncs, f_syncs, c_syncs))

    def golden_file(self, path):
        """The fair network on the committed golden file's weights and inputs against its out and gradients."""
        ts, meta = read_safetensors(path)
        c = json.loads(meta["config"])
        fnet = fair.NCSNpp(c)
        names = [n for n, _ in fnet.named_parameters()]
        fnet.load_state_dict({n: ts[n] for n in names})
        fnet = fnet.to(self.dev)
        x, t, eps = (ts[k].to(self.dev) for k in ("x", "t", "eps"))
        ref = (ts["out"], ts["loss"].reshape(()), collections.OrderedDict(
            (n, ts["grad." + n]) for n, p in fnet.named_parameters() if p.requires_grad))
        label = os.path.relpath(path)
        print("%s: batch %d, written by torch %s" % (label, x.shape[0], meta.get("torch", "?")))
        self.fair_forms(label, fnet, x, t, eps, ref, "the committed file")


def check(a):
    dev = open_device(a.device)
    torch.backends.cudnn.benchmark = False
    set_tf32(dev, False)
    tol = a.tol if a.tol is not None else (1e-5 if dev.type == "cpu" else 1e-4)
    ck = Checker(dev, tol, a.bf16_tol)
    v = versions(dev)
    print("peer_train --check: torch %s (CUDA %s, cuDNN %s), %s; fp32 tolerance %.0e (TF32 off), bf16 loss tolerance %.0e"
          % (v["torch"], v["cuda"], v["cudnn"], v["device_name"], tol, a.bf16_tol))
    for i, model in enumerate(a.check.split(",")):
        if model not in PRESETS:
            sys.exit("peer_train: unknown model %r" % model)
        ck.case(model, PRESETS[model], a.check_batch, a.seed + i)
    path = os.path.join(HERE, "..", "testdata", "golden", "ncsnpp_fir.safetensors")
    if os.path.exists(path):
        ck.golden_file(path)
    else:
        print("(testdata/golden/ncsnpp_fir.safetensors not here: the committed-file comparison is left out)")
    if ck.failures:
        print("peer_train --check: FAILED (%d): %s" % (len(ck.failures), "; ".join(ck.failures)))
        return 1
    print("peer_train --check: ok")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="ncsnpp-cifar10", choices=sorted(PRESETS))
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=20, help="timed steps per mode and round")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps on a mode's first round (one on later rounds)")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds over the modes")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--modes", "--mode", dest="modes", help="comma list of %s, or all" % ", ".join(MODES))
    ap.add_argument("--tf32", type=int, default=None, help="without --modes: 1 = mode tf32 (the default), 0 = fp32")
    ap.add_argument("--net", default="fair", choices=sorted(NETS),
                    help="fair: device-resident taps, depthwise FIR; golden: score_sde's upfirdn2d_native path as is")
    ap.add_argument("--adam", default="auto", choices=["auto", "fused", "foreach", "default"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--profile", action="store_true",
                    help="after the rounds, one more step of the first mode under torch.profiler: its top %d operators" % PROFILE_ROWS)
    ap.add_argument("--check", nargs="?", const="ncsnpp-tiny,ncsnpp-small", metavar="MODELS",
                    help="compare the fair network with the golden one (default models: ncsnpp-tiny,ncsnpp-small)")
    ap.add_argument("--check-batch", type=int, default=2)
    ap.add_argument("--tol", type=float, default=None, help="--check fp32 tolerance (default 1e-5 on cpu, 1e-4 on cuda)")
    ap.add_argument("--bf16-tol", type=float, default=0.05, help="--check: bf16 loss relative to fp32's")
    a = ap.parse_args()
    if a.modes is not None and a.tf32 is not None:
        sys.exit("peer_train: --tf32 chooses the mode when --modes is not given; give one of them")
    if a.steps < 1 or a.rounds < 1 or a.warmup < 0:
        sys.exit("peer_train: --steps and --rounds at least 1, --warmup at least 0")
    return check(a) if a.check else bench(a)


if __name__ == "__main__":
    sys.exit(main())
