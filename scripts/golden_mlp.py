#!/usr/bin/python3
"""Generate the PyTorch golden file for holdgo's MLP / autograd / Adam test.

Interpreter: Debian's /usr/bin/python3 with the Debian packages
python3-torch and python3-numpy (apt-get install -y python3-torch python3-numpy).
A pyenv `python3` earlier on PATH usually has no torch; call it explicitly:

    /usr/bin/python3 scripts/golden_mlp.py

Output: testdata/golden/mlp.safetensors (relative to the repository root,
regardless of the current directory). The safetensors format is written by
hand (no dependency on the `safetensors` package), and the file is re-read and
checked against the in-memory values before the script exits.

Specification (the Go test is written against exactly this):
  * torch.manual_seed(1234), float32, CPU, 1 thread, deterministic algorithms.
  * RNG draw order after seeding: the 5 Linear layers' default init (in layer
    order), then x ~ N(0,1) [16,6], then t ~ U[1e-5, 7) [16], then
    eps ~ N(0,1) [16,2].
  * MLP: Linear 7->32, SiLU, Linear 32->32, SiLU, Linear 32->32, SiLU,
    Linear 32->32, SiLU, Linear 32->2 (no activation after the last).
    Parameters are named mlp.<i>.weight ([out,in]) and mlp.<i>.bias ([out]),
    i = 0..4 (i counts Linear layers, not nn.Sequential slots).
  * input = cat([x, t[:, None]], dim=1)  (raw t as the LAST column)
  * out = mlp(input) [16,2];  loss = ((out + eps)**2).sum(dim=1).mean()  [1]
  * grad.<name>: gradient of loss w.r.t. each parameter (one backward).
  * Adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
      step 1 with the gradients above -> adam1.<name>;
      steps 2 and 3 on the same batch (zero_grad, loss, backward, step);
      loss3 = loss at the start of step 3 (params after step 2);
      params after step 3 -> adam3.<name>.
  * <name> (plain) holds the initial parameters, before any step.

Tensors in the file, in data order: the 10 initial parameters, x, t, eps, out,
loss, grad.*, adam1.*, loss3, adam3.*. All F32, little-endian.
"""

import hashlib
import json
import os
import struct
import sys

import numpy as np
import torch

SEED = 1234
BATCH = 16
LAYERS = [7, 32, 32, 32, 32, 2]
LR = 1e-3
T_MIN, T_MAX = 1e-5, 7.0

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_PATH = os.path.join(REPO_ROOT, "testdata", "golden", "mlp.safetensors")


class MLP(torch.nn.Module):
    def __init__(self, sizes):
        super().__init__()
        # ModuleList so that parameter names are mlp.<layer>.weight/bias.
        self.mlp = torch.nn.ModuleList(
            torch.nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])
        )

    def forward(self, h):
        n = len(self.mlp)
        for i, lin in enumerate(self.mlp):
            h = lin(h)
            if i < n - 1:
                h = torch.nn.functional.silu(h)
        return h


def snapshot(model, prefix=""):
    return [(prefix + name, p.detach().clone()) for name, p in model.named_parameters()]


def to_le_f32_bytes(t):
    a = t.detach().cpu().contiguous().numpy()
    assert a.dtype == np.float32, a.dtype
    return np.ascontiguousarray(a, dtype="<f4").tobytes()


def encode_safetensors(tensors, metadata):
    """tensors: list of (name, float32 tensor) in data order."""
    header = {}
    chunks = []
    offset = 0
    for name, t in tensors:
        if name in header:
            raise ValueError("duplicate tensor name %r" % name)
        b = to_le_f32_bytes(t)
        header[name] = {
            "dtype": "F32",
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(b)],
        }
        chunks.append(b)
        offset += len(b)
    header["__metadata__"] = dict(metadata)
    hjson = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    hjson += b" " * ((-len(hjson)) % 8)
    return struct.pack("<Q", len(hjson)) + hjson + b"".join(chunks)


def decode_safetensors(blob):
    """Minimal reader used for the self-check. Returns (dict name->ndarray, metadata)."""
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n].decode("utf-8"))
    data = blob[8 + n :]
    meta = header.pop("__metadata__", {})
    out = {}
    end_max = 0
    for name, info in header.items():
        assert info["dtype"] == "F32", (name, info)
        b, e = info["data_offsets"]
        shape = tuple(info["shape"])
        assert e - b == 4 * int(np.prod(shape, dtype=np.int64)), (name, info)
        out[name] = np.frombuffer(data[b:e], dtype="<f4").reshape(shape)
        end_max = max(end_max, e)
    assert end_max == len(data), (end_max, len(data))
    return out, meta


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.set_default_dtype(torch.float32)
    torch.manual_seed(SEED)

    model = MLP(LAYERS)
    assert all(p.dtype == torch.float32 for p in model.parameters())

    x = torch.randn(BATCH, LAYERS[0] - 1)
    t = torch.rand(BATCH) * (T_MAX - T_MIN) + T_MIN
    eps = torch.randn(BATCH, LAYERS[-1])

    def compute_loss():
        out = model(torch.cat([x, t[:, None]], dim=1))
        return out, ((out + eps) ** 2).sum(dim=1).mean()

    tensors = snapshot(model)
    tensors += [("x", x), ("t", t), ("eps", eps)]

    opt = torch.optim.Adam(
        model.parameters(), lr=LR, betas=(0.9, 0.999), eps=1e-8, weight_decay=0
    )

    # Step 1.
    opt.zero_grad()
    out, loss = compute_loss()
    loss.backward()
    tensors += [("out", out.detach().clone()), ("loss", loss.detach().reshape(1).clone())]
    tensors += [("grad." + n, p.grad.detach().clone()) for n, p in model.named_parameters()]
    opt.step()
    tensors += snapshot(model, "adam1.")

    # Steps 2 and 3 on the same batch.
    losses = [loss.item()]
    loss3 = None
    for step in (2, 3):
        opt.zero_grad()
        _, loss = compute_loss()
        losses.append(loss.item())
        if step == 3:
            loss3 = loss.detach().reshape(1).clone()
        loss.backward()
        opt.step()
    tensors += [("loss3", loss3)]
    tensors += snapshot(model, "adam3.")

    metadata = {
        "generator": "scripts/golden_mlp.py",
        "torch_version": torch.__version__,
        "lr": "0.001",
        "batch": str(BATCH),
        "layers": ",".join(str(s) for s in LAYERS),
        "activation": "silu",
    }
    blob = encode_safetensors(tensors, metadata)

    # Self-check: parse the encoded bytes and compare bit-for-bit.
    decoded, meta = decode_safetensors(blob)
    assert meta == metadata, meta
    assert list(decoded) == [n for n, _ in tensors]
    for name, ref in tensors:
        got = decoded[name]
        want = ref.detach().cpu().numpy()
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), name
    assert np.isfinite(np.concatenate([v.ravel() for v in decoded.values()])).all()

    os.makedirs(os.path.dirname(OUT_PATH), exist_ok=True)
    tmp = OUT_PATH + ".tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, OUT_PATH)

    # Re-read from disk as well.
    with open(OUT_PATH, "rb") as f:
        assert f.read() == blob

    print("torch %s, python %s" % (torch.__version__, sys.executable))
    print("loss (step 1) = %r" % losses[0])
    print("loss (step 2) = %r" % losses[1])
    print("loss3         = %r" % losses[2])
    print("tensors: %d" % len(tensors))
    print("wrote %s (%d bytes, sha256 %s)"
          % (os.path.relpath(OUT_PATH, REPO_ROOT), len(blob), hashlib.sha256(blob).hexdigest()))


if __name__ == "__main__":
    main()
