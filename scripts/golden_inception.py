#!/usr/bin/python3
"""Golden files for holdgo's FID Inception-v3 (layers/inception.go, torchfile).

Builds pytorch-fid's Inception-v3 (FIDInceptionA/C/E_1/E_2 blocks, BatchNorm
eps 1e-3, bilinear resize to 299×299 with align_corners=False, scaling to
[−1, 1], 2048-d pool3 output) by hand — the same module names as
torchvision's Inception3, so the state-dict keys are those of
pt_inception-2015-12-05-6726825d.pth — with every channel count divided by
WIDTH_DIVISOR (16: a full-width random network would be a 95 MB file; the
topology, kernel shapes, paddings, strides and pooling are unchanged and the
Go network accepts the same divisor). Weights are seeded random; the batch-norm
statistics are calibrated by one forward pass in training mode (cumulative
averages), so activations stay O(1) instead of growing to ~1e10.

Writes, relative to the repository root:
  testdata/golden/inception_w16.pth         state dict, torch.save zip format (PyTorch ≥ 1.6)
  testdata/golden/inception_w16_legacy.pth  the same, legacy format (_use_new_zipfile_serialization=False)
  testdata/golden/inception_images.npy      inputs in [0, 1], one row per image (shapes in the JSON)
  testdata/golden/inception_features.npy    pool3 features (n, 2048/16) of the network run in float64
  testdata/golden/inception.json            image shapes, divisor, torch version
  testdata/golden/torchfile_mixed.pth       strided, offset, float64, float16, integer and non-tensor entries

Run: /usr/bin/python3 scripts/golden_inception.py   (torch 1.13, CPU, a few seconds)
"""
import copy
import json
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

WIDTH_DIVISOR = 16
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO_ROOT, "testdata", "golden")


def w(c):
    assert c % WIDTH_DIVISOR == 0
    return c // WIDTH_DIVISOR


class BasicConv2d(nn.Module):
    def __init__(self, cin, cout, **kw):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, bias=False, **kw)
        self.bn = nn.BatchNorm2d(cout, eps=0.001, momentum=None)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)), inplace=True)


class FIDInceptionA(nn.Module):
    def __init__(self, cin, pool):
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, w(64), kernel_size=1)
        self.branch5x5_1 = BasicConv2d(cin, w(48), kernel_size=1)
        self.branch5x5_2 = BasicConv2d(w(48), w(64), kernel_size=5, padding=2)
        self.branch3x3dbl_1 = BasicConv2d(cin, w(64), kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(w(64), w(96), kernel_size=3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(w(96), w(96), kernel_size=3, padding=1)
        self.branch_pool = BasicConv2d(cin, pool, kernel_size=1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        bp = self.branch_pool(F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False))
        return torch.cat([b1, b5, b3, bp], 1)


class InceptionB(nn.Module):
    def __init__(self, cin):
        super().__init__()
        self.branch3x3 = BasicConv2d(cin, w(384), kernel_size=3, stride=2)
        self.branch3x3dbl_1 = BasicConv2d(cin, w(64), kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(w(64), w(96), kernel_size=3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(w(96), w(96), kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3(x)
        bd = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return torch.cat([b3, bd, F.max_pool2d(x, 3, stride=2)], 1)


class FIDInceptionC(nn.Module):
    def __init__(self, cin, c7):
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, w(192), kernel_size=1)
        self.branch7x7_1 = BasicConv2d(cin, c7, kernel_size=1)
        self.branch7x7_2 = BasicConv2d(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7_3 = BasicConv2d(c7, w(192), kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = BasicConv2d(cin, c7, kernel_size=1)
        self.branch7x7dbl_2 = BasicConv2d(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = BasicConv2d(c7, c7, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = BasicConv2d(c7, c7, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = BasicConv2d(c7, w(192), kernel_size=(1, 7), padding=(0, 3))
        self.branch_pool = BasicConv2d(cin, w(192), kernel_size=1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        bd = x
        for m in (self.branch7x7dbl_1, self.branch7x7dbl_2, self.branch7x7dbl_3, self.branch7x7dbl_4, self.branch7x7dbl_5):
            bd = m(bd)
        bp = self.branch_pool(F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False))
        return torch.cat([b1, b7, bd, bp], 1)


class InceptionD(nn.Module):
    def __init__(self, cin):
        super().__init__()
        self.branch3x3_1 = BasicConv2d(cin, w(192), kernel_size=1)
        self.branch3x3_2 = BasicConv2d(w(192), w(320), kernel_size=3, stride=2)
        self.branch7x7x3_1 = BasicConv2d(cin, w(192), kernel_size=1)
        self.branch7x7x3_2 = BasicConv2d(w(192), w(192), kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7x3_3 = BasicConv2d(w(192), w(192), kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7x3_4 = BasicConv2d(w(192), w(192), kernel_size=3, stride=2)

    def forward(self, x):
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        b7 = self.branch7x7x3_4(self.branch7x7x3_3(self.branch7x7x3_2(self.branch7x7x3_1(x))))
        return torch.cat([b3, b7, F.max_pool2d(x, 3, stride=2)], 1)


class FIDInceptionE(nn.Module):
    def __init__(self, cin, max_pool):
        super().__init__()
        self.max_pool = max_pool  # FIDInceptionE_2 max-pools in its pool branch, E_1 average-pools
        self.branch1x1 = BasicConv2d(cin, w(320), kernel_size=1)
        self.branch3x3_1 = BasicConv2d(cin, w(384), kernel_size=1)
        self.branch3x3_2a = BasicConv2d(w(384), w(384), kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3_2b = BasicConv2d(w(384), w(384), kernel_size=(3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = BasicConv2d(cin, w(448), kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(w(448), w(384), kernel_size=3, padding=1)
        self.branch3x3dbl_3a = BasicConv2d(w(384), w(384), kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = BasicConv2d(w(384), w(384), kernel_size=(3, 1), padding=(1, 0))
        self.branch_pool = BasicConv2d(cin, w(192), kernel_size=1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b3 = self.branch3x3_1(x)
        b3 = torch.cat([self.branch3x3_2a(b3), self.branch3x3_2b(b3)], 1)
        bd = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        bd = torch.cat([self.branch3x3dbl_3a(bd), self.branch3x3dbl_3b(bd)], 1)
        if self.max_pool:
            bp = F.max_pool2d(x, 3, stride=1, padding=1)
        else:
            bp = F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)
        return torch.cat([b1, b3, bd, self.branch_pool(bp)], 1)


class FIDInception(nn.Module):
    def __init__(self):
        super().__init__()
        self.Conv2d_1a_3x3 = BasicConv2d(3, w(32), kernel_size=3, stride=2)
        self.Conv2d_2a_3x3 = BasicConv2d(w(32), w(32), kernel_size=3)
        self.Conv2d_2b_3x3 = BasicConv2d(w(32), w(64), kernel_size=3, padding=1)
        self.Conv2d_3b_1x1 = BasicConv2d(w(64), w(80), kernel_size=1)
        self.Conv2d_4a_3x3 = BasicConv2d(w(80), w(192), kernel_size=3)
        self.Mixed_5b = FIDInceptionA(w(192), w(32))
        self.Mixed_5c = FIDInceptionA(w(256), w(64))
        self.Mixed_5d = FIDInceptionA(w(288), w(64))
        self.Mixed_6a = InceptionB(w(288))
        self.Mixed_6b = FIDInceptionC(w(768), w(128))
        self.Mixed_6c = FIDInceptionC(w(768), w(160))
        self.Mixed_6d = FIDInceptionC(w(768), w(160))
        self.Mixed_6e = FIDInceptionC(w(768), w(192))
        self.Mixed_7a = InceptionD(w(768))
        self.Mixed_7b = FIDInceptionE(w(1280), max_pool=False)
        self.Mixed_7c = FIDInceptionE(w(2048), max_pool=True)

    def forward(self, x):
        # pytorch-fid InceptionV3(resize_input=True, normalize_input=True), output block 3
        x = F.interpolate(x, size=(299, 299), mode="bilinear", align_corners=False)
        x = 2 * x - 1
        x = self.Conv2d_2b_3x3(self.Conv2d_2a_3x3(self.Conv2d_1a_3x3(x)))
        x = F.max_pool2d(x, kernel_size=3, stride=2)
        x = self.Conv2d_4a_3x3(self.Conv2d_3b_1x1(x))
        x = F.max_pool2d(x, kernel_size=3, stride=2)
        for name in ("5b", "5c", "5d", "6a", "6b", "6c", "6d", "6e", "7a", "7b", "7c"):
            x = getattr(self, "Mixed_" + name)(x)
        return F.adaptive_avg_pool2d(x, (1, 1)).flatten(1)


def main():
    torch.manual_seed(2015)
    net = FIDInception()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.Conv2d):
                fan_in = m.weight[0].numel()
                m.weight.normal_(0, (2.0 / fan_in) ** 0.5)
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
        # Calibrate the batch-norm statistics: one pass in training mode with
        # cumulative averages (momentum None) on random images.
        net.train()
        net(torch.rand(6, 3, 40, 40))
        net.eval()
        # Keep only a fifth of each mean in running_mean and move the rest into
        # running_var (same second moment about the kept mean): a random network
        # whose batch norm subtracts a mean much larger than the spread cancels
        # digits at every layer, and float32 PyTorch itself then differs from
        # float64 by ~1e-4 on smooth (upsampled) images. With this, float32 and
        # float64 agree to ~1e-5 (recorded in the JSON) and the golden test can
        # hold the Go network to 1e-4.
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                mu = m.running_mean.clone()
                m.running_var.add_(0.64 * mu * mu)
                m.running_mean.mul_(0.2)
        images = [torch.rand(3, 32, 32), torch.rand(3, 32, 32), torch.rand(3, 24, 40), torch.rand(3, 61, 53), torch.rand(3, 80, 96)]
        exact = copy.deepcopy(net).double()
        feats = [exact(im.unsqueeze(0).double())[0].numpy() for im in images]  # float64: the reference
        f32 = [net(im.unsqueeze(0))[0].numpy() for im in images]
        f32_err = max(float(np.abs(a - b).max() / np.abs(b).max()) for a, b in zip(f32, feats))
    sd = net.state_dict()
    torch.save(sd, os.path.join(OUT, "inception_w16.pth"))
    torch.save(sd, os.path.join(OUT, "inception_w16_legacy.pth"), _use_new_zipfile_serialization=False)
    flat = max(im.numel() for im in images)
    rows = np.zeros((len(images), flat), dtype=np.float32)
    for i, im in enumerate(images):
        rows[i, : im.numel()] = im.numpy().ravel()
    np.save(os.path.join(OUT, "inception_images.npy"), rows)
    np.save(os.path.join(OUT, "inception_features.npy"), np.stack(feats))
    meta = {
        "source": "scripts/golden_inception.py (torch %s)" % torch.__version__,
        "width_divisor": WIDTH_DIVISOR,
        "shapes": [list(im.shape) for im in images],
        "feature_abs_max": float(np.abs(np.stack(feats)).max()),
        "feature_mean": float(np.stack(feats).mean()),
        "torch_float32_rel_error": f32_err,
    }
    with open(os.path.join(OUT, "inception.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
        fh.write("\n")
    print(meta)
    # A small state dict of the layouts torchfile must handle: a transposed
    # (strided) view, a view with a storage offset, float64, float16, an
    # integer tensor (left out) and a non-tensor entry (left out).
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 8
    mixed = {
        "transposed": base.t(),
        "offset": base.view(-1)[5:9],
        "double": torch.linspace(-1, 1, 5, dtype=torch.float64),
        "half": torch.tensor([0.5, -2.0, 1024.0], dtype=torch.float16),
        "steps": torch.tensor(7),
        "note": "not a tensor",
    }
    torch.save(mixed, os.path.join(OUT, "torchfile_mixed.pth"))


if __name__ == "__main__":
    main()
