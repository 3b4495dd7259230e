#!/usr/bin/python3
"""Generate the PyTorch golden files for holdgo's NCSN++ (layers/ncsnpp_golden_test.go).

Interpreter: Debian's /usr/bin/python3 with python3-torch and python3-numpy:

    /usr/bin/python3 scripts/golden_ncsnpp.py

The network below is a self-contained PyTorch re-implementation of score_sde's
NCSN++ blocks (models/layerspp.py: GaussianFourierProjection, ResnetBlockBigGANpp,
AttnBlockpp, NIN, Downsample(with_conv, fir); models/up_or_down_sampling.py:
upsample_2d, downsample_2d, conv_downsample_2d, naive_*; op/upfirdn2d.py:
upfirdn2d_native; models/layers.py: get_timestep_embedding; models/ncsnpp.py:
NCSNpp with resblock_type biggan, progressive none, progressive_input residual
or none, combine sum, skip_rescale, conditional), as reference-spec §1 describes
them. It shares no code with the Go implementation.

Output (relative to the repository root): testdata/golden/ncsnpp_<case>.safetensors
for every case in CASES. Each file holds, all F32:
  * every parameter under its state_dict name (all_modules.<i>.<sub>), drawn at
    random (every layer, including the init_scale-0 ones, at scale 1, GroupNorm
    affine around 1 and 0, biases non-zero) so that every path is exercised;
  * x (B, C_in, H, W), t (B), eps (B, C_out, H, W);
  * out = net(x, t) (dropout off);
  * loss = ((out + eps)**2).sum(dim=(1,2,3)).mean() as a [1] tensor;
  * grad.<name> = d loss / d <name> for every trainable parameter.
Metadata: the configuration as JSON (key "config").
"""

import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(REPO_ROOT, "testdata", "golden")

CASES = {
    # FIR resampling, Fourier embedding of log t, residual input pyramid (the CIFAR-10 family).
    "fir": dict(image_size=8, in_channels=9, out_channels=3, nf=8, ch_mult=[1, 2], num_res_blocks=1,
                attn_resolutions=[4], embedding="fourier", fourier_scale=16.0, fir=True,
                progressive_input="residual", batch=2, seed=7),
    # Naive resampling, positional embedding of raw t, no pyramid (the CelebA-HQ family).
    "naive": dict(image_size=8, in_channels=6, out_channels=2, nf=8, ch_mult=[1, 1], num_res_blocks=2,
                  attn_resolutions=[4], embedding="positional", fourier_scale=16.0, fir=False,
                  progressive_input="none", batch=3, seed=11),
}


# ---- up_or_down_sampling / upfirdn2d ------------------------------------------------------------

def upfirdn2d_native(x, kernel, up, down, pad0, pad1):
    _, channel, in_h, in_w = x.shape
    x = x.reshape(-1, in_h, in_w, 1)
    _, in_h, in_w, minor = x.shape
    kernel_h, kernel_w = kernel.shape
    out = x.view(-1, in_h, 1, in_w, 1, minor)
    out = F.pad(out, [0, 0, 0, up - 1, 0, 0, 0, up - 1])
    out = out.view(-1, in_h * up, in_w * up, minor)
    out = F.pad(out, [0, 0, pad0, pad1, pad0, pad1])
    out = out.permute(0, 3, 1, 2)
    out = out.reshape([-1, 1, in_h * up + pad0 + pad1, in_w * up + pad0 + pad1])
    w = torch.flip(kernel, [0, 1]).view(1, 1, kernel_h, kernel_w)
    out = F.conv2d(out, w)
    out = out.reshape(-1, minor, in_h * up + pad0 + pad1 - kernel_h + 1, in_w * up + pad0 + pad1 - kernel_w + 1)
    out = out.permute(0, 2, 3, 1)
    out = out[:, ::down, ::down, :]
    out_h = (in_h * up + pad0 + pad1 - kernel_h) // down + 1
    out_w = (in_w * up + pad0 + pad1 - kernel_w) // down + 1
    return out.reshape(-1, channel, out_h, out_w)


def setup_kernel(k):
    k = np.asarray(k, dtype=np.float32)
    k = np.outer(k, k)
    k /= np.sum(k)
    return k


FIR_KERNEL = [1, 3, 3, 1]


def upsample_2d(x, k=FIR_KERNEL, factor=2, gain=1):
    k = setup_kernel(k) * (gain * (factor ** 2))
    p = k.shape[0] - factor
    return upfirdn2d_native(x, torch.tensor(k, dtype=x.dtype, device=x.device), factor, 1, (p + 1) // 2 + factor - 1, p // 2)


def downsample_2d(x, k=FIR_KERNEL, factor=2, gain=1):
    k = setup_kernel(k) * gain
    p = k.shape[0] - factor
    return upfirdn2d_native(x, torch.tensor(k, dtype=x.dtype, device=x.device), 1, factor, (p + 1) // 2, p // 2)


def conv_downsample_2d(x, w, k=FIR_KERNEL, factor=2, gain=1):
    _out_c, _in_c, _conv_h, conv_w = w.shape
    k = setup_kernel(k) * gain
    p = (k.shape[0] - factor) + (conv_w - 1)
    x = upfirdn2d_native(x, torch.tensor(k, dtype=x.dtype, device=x.device), 1, 1, (p + 1) // 2, p // 2)
    return F.conv2d(x, w, stride=factor, padding=0)


def naive_upsample_2d(x, factor=2):
    _N, C, H, W = x.shape
    x = torch.reshape(x, (-1, C, H, 1, W, 1))
    x = x.repeat(1, 1, 1, factor, 1, factor)
    return torch.reshape(x, (-1, C, H * factor, W * factor))


def naive_downsample_2d(x, factor=2):
    _N, C, H, W = x.shape
    x = torch.reshape(x, (-1, C, H // factor, factor, W // factor, factor))
    return torch.mean(x, dim=(3, 5))


# ---- layers -------------------------------------------------------------------------------------

def conv3x3(cin, cout):
    return nn.Conv2d(cin, cout, 3, stride=1, padding=1, bias=True)


def conv1x1(cin, cout):
    return nn.Conv2d(cin, cout, 1, stride=1, padding=0, bias=True)


class GaussianFourierProjection(nn.Module):
    def __init__(self, embedding_size, scale):
        super().__init__()
        self.W = nn.Parameter(torch.randn(embedding_size) * scale, requires_grad=False)

    def forward(self, x):
        x_proj = x[:, None] * self.W[None, :] * 2 * np.pi
        return torch.cat([torch.sin(x_proj), torch.cos(x_proj)], dim=-1)


def get_timestep_embedding(timesteps, embedding_dim, max_positions=10000):
    half_dim = embedding_dim // 2
    emb = math.log(max_positions) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=torch.float32, device=timesteps.device) * -emb)
    emb = timesteps.float()[:, None] * emb[None, :]
    return torch.cat([torch.sin(emb), torch.cos(emb)], dim=1)


class NIN(nn.Module):
    def __init__(self, in_dim, num_units):
        super().__init__()
        self.W = nn.Parameter(torch.zeros(in_dim, num_units))
        self.b = nn.Parameter(torch.zeros(num_units))

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        y = torch.einsum("abcd,de->abce", x, self.W) + self.b
        return y.permute(0, 3, 1, 2)


class AttnBlockpp(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.GroupNorm_0 = nn.GroupNorm(num_groups=min(channels // 4, 32), num_channels=channels, eps=1e-6)
        self.NIN_0 = NIN(channels, channels)
        self.NIN_1 = NIN(channels, channels)
        self.NIN_2 = NIN(channels, channels)
        self.NIN_3 = NIN(channels, channels)

    def forward(self, x):
        B, C, H, W = x.shape
        h = self.GroupNorm_0(x)
        q = self.NIN_0(h)
        k = self.NIN_1(h)
        v = self.NIN_2(h)
        w = torch.einsum("bchw,bcij->bhwij", q, k) * (int(C) ** (-0.5))
        w = torch.reshape(w, (B, H, W, H * W))
        w = F.softmax(w, dim=-1)
        w = torch.reshape(w, (B, H, W, H, W))
        h = torch.einsum("bhwij,bcij->bchw", w, v)
        h = self.NIN_3(h)
        return (x + h) / np.sqrt(2.0)


class ResnetBlockBigGANpp(nn.Module):
    def __init__(self, in_ch, out_ch, temb_dim, up=False, down=False, fir=True):
        super().__init__()
        self.GroupNorm_0 = nn.GroupNorm(num_groups=min(in_ch // 4, 32), num_channels=in_ch, eps=1e-6)
        self.up, self.down, self.fir = up, down, fir
        self.Conv_0 = conv3x3(in_ch, out_ch)
        self.Dense_0 = nn.Linear(temb_dim, out_ch)
        self.GroupNorm_1 = nn.GroupNorm(num_groups=min(out_ch // 4, 32), num_channels=out_ch, eps=1e-6)
        self.Dropout_0 = nn.Dropout(0.0)
        self.Conv_1 = conv3x3(out_ch, out_ch)
        if in_ch != out_ch or up or down:
            self.Conv_2 = conv1x1(in_ch, out_ch)
        self.in_ch, self.out_ch = in_ch, out_ch

    def forward(self, x, temb):
        act = F.silu
        h = act(self.GroupNorm_0(x))
        if self.up:
            if self.fir:
                h, x = upsample_2d(h), upsample_2d(x)
            else:
                h, x = naive_upsample_2d(h), naive_upsample_2d(x)
        elif self.down:
            if self.fir:
                h, x = downsample_2d(h), downsample_2d(x)
            else:
                h, x = naive_downsample_2d(h), naive_downsample_2d(x)
        h = self.Conv_0(h)
        h = h + self.Dense_0(act(temb))[:, :, None, None]
        h = act(self.GroupNorm_1(h))
        h = self.Dropout_0(h)
        h = self.Conv_1(h)
        if self.in_ch != self.out_ch or self.up or self.down:
            x = self.Conv_2(x)
        return (x + h) / np.sqrt(2.0)


class PyramidDownsample(nn.Module):
    """layerspp.Downsample(with_conv=True, fir=True): up_or_down_sampling.Conv2d(down=True)."""

    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.Conv2d_0 = nn.Module()
        self.Conv2d_0.weight = nn.Parameter(torch.zeros(out_ch, in_ch, 3, 3))
        self.Conv2d_0.bias = nn.Parameter(torch.zeros(out_ch))

    def forward(self, x):
        x = conv_downsample_2d(x, self.Conv2d_0.weight)
        return x + self.Conv2d_0.bias.reshape(1, -1, 1, 1)


class NCSNpp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        nf, ch_mult, nrb = c["nf"], c["ch_mult"], c["num_res_blocks"]
        self.num_resolutions = len(ch_mult)
        self.all_resolutions = [c["image_size"] // (2 ** i) for i in range(self.num_resolutions)]
        modules = []
        if c["embedding"] == "fourier":
            modules.append(GaussianFourierProjection(nf, c["fourier_scale"]))
            embed_dim = 2 * nf
        else:
            embed_dim = nf
        modules.append(nn.Linear(embed_dim, nf * 4))
        modules.append(nn.Linear(nf * 4, nf * 4))
        temb_dim = 4 * nf
        RB = lambda **kw: ResnetBlockBigGANpp(temb_dim=temb_dim, fir=c["fir"], **kw)
        residual = c["progressive_input"] == "residual"
        input_pyramid_ch = c["in_channels"]
        modules.append(conv3x3(c["in_channels"], nf))
        hs_c = [nf]
        in_ch = nf
        for i_level in range(self.num_resolutions):
            for _ in range(nrb):
                out_ch = nf * ch_mult[i_level]
                modules.append(RB(in_ch=in_ch, out_ch=out_ch))
                in_ch = out_ch
                if self.all_resolutions[i_level] in c["attn_resolutions"]:
                    modules.append(AttnBlockpp(in_ch))
                hs_c.append(in_ch)
            if i_level != self.num_resolutions - 1:
                modules.append(RB(in_ch=in_ch, out_ch=in_ch, down=True))
                if residual:
                    modules.append(PyramidDownsample(input_pyramid_ch, in_ch))
                    input_pyramid_ch = in_ch
                hs_c.append(in_ch)
        in_ch = hs_c[-1]
        modules.append(RB(in_ch=in_ch, out_ch=in_ch))
        modules.append(AttnBlockpp(in_ch))
        modules.append(RB(in_ch=in_ch, out_ch=in_ch))
        for i_level in reversed(range(self.num_resolutions)):
            for _ in range(nrb + 1):
                out_ch = nf * ch_mult[i_level]
                modules.append(RB(in_ch=in_ch + hs_c.pop(), out_ch=out_ch))
                in_ch = out_ch
            if self.all_resolutions[i_level] in c["attn_resolutions"]:
                modules.append(AttnBlockpp(in_ch))
            if i_level != 0:
                modules.append(RB(in_ch=in_ch, out_ch=in_ch, up=True))
        assert not hs_c
        modules.append(nn.GroupNorm(num_groups=min(in_ch // 4, 32), num_channels=in_ch, eps=1e-6))
        modules.append(conv3x3(in_ch, c["out_channels"]))
        self.all_modules = nn.ModuleList(modules)

    def forward(self, x, time_cond):
        c = self.c
        modules = self.all_modules
        m_idx = 0
        if c["embedding"] == "fourier":
            temb = modules[m_idx](torch.log(time_cond))
            m_idx += 1
        else:
            temb = get_timestep_embedding(time_cond, c["nf"])
        temb = modules[m_idx](temb)
        m_idx += 1
        temb = modules[m_idx](F.silu(temb))
        m_idx += 1
        residual = c["progressive_input"] == "residual"
        input_pyramid = x if residual else None
        hs = [modules[m_idx](x)]
        m_idx += 1
        for i_level in range(self.num_resolutions):
            for _ in range(c["num_res_blocks"]):
                h = modules[m_idx](hs[-1], temb)
                m_idx += 1
                if h.shape[-1] in c["attn_resolutions"]:
                    h = modules[m_idx](h)
                    m_idx += 1
                hs.append(h)
            if i_level != self.num_resolutions - 1:
                h = modules[m_idx](hs[-1], temb)
                m_idx += 1
                if residual:
                    input_pyramid = modules[m_idx](input_pyramid)
                    m_idx += 1
                    input_pyramid = (input_pyramid + h) / np.sqrt(2.0)
                    h = input_pyramid
                hs.append(h)
        h = hs[-1]
        h = modules[m_idx](h, temb)
        m_idx += 1
        h = modules[m_idx](h)
        m_idx += 1
        h = modules[m_idx](h, temb)
        m_idx += 1
        for i_level in reversed(range(self.num_resolutions)):
            for _ in range(c["num_res_blocks"] + 1):
                h = modules[m_idx](torch.cat([h, hs.pop()], dim=1), temb)
                m_idx += 1
            if h.shape[-1] in c["attn_resolutions"]:
                h = modules[m_idx](h)
                m_idx += 1
            if i_level != 0:
                h = modules[m_idx](h, temb)
                m_idx += 1
        assert not hs
        h = F.silu(modules[m_idx](h))
        m_idx += 1
        h = modules[m_idx](h)
        m_idx += 1
        assert m_idx == len(modules)
        return h


# ---- safetensors ---------------------------------------------------------------------------------

def encode_safetensors(tensors, metadata):
    header, chunks, offset = {}, [], 0
    for name, t in tensors:
        assert name not in header, name
        b = np.ascontiguousarray(t.detach().cpu().numpy(), dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        chunks.append(b)
        offset += len(b)
    header["__metadata__"] = dict(metadata)
    hjson = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    hjson += b" " * ((-len(hjson)) % 8)
    return struct.pack("<Q", len(hjson)) + hjson + b"".join(chunks)


def randomise(net, gen):
    """Every parameter at a scale that exercises it (see the module docstring)."""
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name.endswith(".W") and p.dim() == 1:  # Fourier weights keep N(0, scale²)
                continue
            leaf = name.rsplit(".", 1)[-1]
            is_norm = "GroupNorm" in name or (p.dim() == 1 and name.count(".") == 2 and not leaf == "b"
                                                and isinstance(dict(net.named_modules())[name.rsplit(".", 1)[0]], nn.GroupNorm))
            if is_norm and leaf == "weight":
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=gen))
            elif p.dim() == 1:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            else:
                shape = p.shape
                if leaf == "W":  # NIN (in, out)
                    fan = (shape[0] + shape[1]) / 2
                else:
                    rf = int(np.prod(shape[2:])) if len(shape) > 2 else 1
                    fan = (shape[0] + shape[1]) * rf / 2
                a = math.sqrt(3.0 / fan)
                p.copy_((torch.rand(shape, generator=gen) * 2 - 1) * a)


def make_case(name, c):
    torch.manual_seed(c["seed"])
    gen = torch.Generator().manual_seed(c["seed"] + 1000)
    net = NCSNpp(c)
    randomise(net, gen)
    B, S = c["batch"], c["image_size"]
    x = torch.randn(B, c["in_channels"], S, S, generator=gen)
    t = 0.05 + 0.95 * torch.rand(B, generator=gen)
    eps = torch.randn(B, c["out_channels"], S, S, generator=gen)
    out = net(x, t)
    loss = ((out + eps) ** 2).sum(dim=(1, 2, 3)).mean()
    net.zero_grad()
    loss.backward()
    tensors = [(n, p) for n, p in net.named_parameters()]
    tensors += [("x", x), ("t", t), ("eps", eps), ("out", out), ("loss", loss.reshape(1))]
    tensors += [("grad." + n, p.grad) for n, p in net.named_parameters() if p.requires_grad]
    meta = {"config": json.dumps(c, sort_keys=True), "generator": "scripts/golden_ncsnpp.py", "torch": torch.__version__}
    blob = encode_safetensors(tensors, meta)
    path = os.path.join(OUT_DIR, "ncsnpp_%s.safetensors" % name)
    with open(path, "wb") as f:
        f.write(blob)
    n_train = sum(p.numel() for p in net.parameters() if p.requires_grad)
    print("%s: %d trainable parameters, %d bytes, out std %.4g, loss %.6g" % (path, n_train, len(blob), out.std().item(), loss.item()))


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, c in CASES.items():
        make_case(name, c)
    return 0


if __name__ == "__main__":
    sys.exit(main())
