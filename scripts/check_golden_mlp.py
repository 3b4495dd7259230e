#!/usr/bin/python3
"""Independent check of testdata/golden/mlp.safetensors using numpy only.

Parses the safetensors file by hand, then recomputes, in float64 and without
torch, the forward pass, the loss, the gradients (manual backprop) and three
Adam steps from the stored initial parameters and batch, and compares them to
the stored values. Needs only numpy (Debian: python3-numpy):

    /usr/bin/python3 scripts/check_golden_mlp.py
"""

import json
import os
import struct

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = os.path.join(REPO_ROOT, "testdata", "golden", "mlp.safetensors")
NL = 5


def load(path):
    blob = open(path, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    assert n % 8 == 0
    header = json.loads(blob[8 : 8 + n])
    data = blob[8 + n :]
    meta = header.pop("__metadata__")
    out = {}
    for k, v in header.items():
        b, e = v["data_offsets"]
        out[k] = np.frombuffer(data[b:e], dtype="<f4").reshape(v["shape"]).astype(np.float64)
    return out, meta, header


def silu(z):
    return z / (1.0 + np.exp(-z))


def dsilu(z):
    s = 1.0 / (1.0 + np.exp(-z))
    return s * (1.0 + z * (1.0 - s))


def loss_and_grads(P, inp, eps):
    hs, zs = [inp], []
    h = inp
    for i in range(NL):
        z = h @ P["mlp.%d.weight" % i].T + P["mlp.%d.bias" % i]
        zs.append(z)
        h = silu(z) if i < NL - 1 else z
        hs.append(h)
    out = h
    B = out.shape[0]
    loss = ((out + eps) ** 2).sum(axis=1).mean()
    g = 2.0 * (out + eps) / B
    G = {}
    for i in reversed(range(NL)):
        if i < NL - 1:
            g = g * dsilu(zs[i])
        G["mlp.%d.weight" % i] = g.T @ hs[i]
        G["mlp.%d.bias" % i] = g.sum(axis=0)
        g = g @ P["mlp.%d.weight" % i]
    return out, loss, G


def check(name, got, want, rtol=1e-4, atol=1e-6):
    err = np.max(np.abs(got - want) / (atol + rtol * np.abs(want)))
    assert err <= 1.0, "%s: mismatch (scaled err %.3g)" % (name, err)
    return np.max(np.abs(got - want))


def main():
    T, meta, header = load(PATH)
    print("metadata:", meta)
    names = ["mlp.%d.%s" % (i, s) for i in range(NL) for s in ("weight", "bias")]
    inp = np.concatenate([T["x"], T["t"][:, None]], axis=1)
    assert T["t"].min() >= 1e-5 - 1e-12 and T["t"].max() <= 7.0

    P = {n: T[n].copy() for n in names}
    out, loss, G = loss_and_grads(P, inp, T["eps"])
    worst = [check("out", out, T["out"]), check("loss", loss, T["loss"][0])]
    worst += [check("grad." + n, G[n], T["grad." + n], atol=1e-7) for n in names]

    lr, b1, b2, e = 1e-3, 0.9, 0.999, 1e-8
    m = {n: np.zeros_like(P[n]) for n in names}
    v = {n: np.zeros_like(P[n]) for n in names}
    for step in (1, 2, 3):
        if step > 1:
            _, loss, G = loss_and_grads(P, inp, T["eps"])
            if step == 3:
                worst.append(check("loss3", loss, T["loss3"][0]))
        for n in names:
            m[n] = b1 * m[n] + (1 - b1) * G[n]
            v[n] = b2 * v[n] + (1 - b2) * G[n] ** 2
            mhat = m[n] / (1 - b1 ** step)
            vhat = v[n] / (1 - b2 ** step)
            P[n] = P[n] - lr * mhat / (np.sqrt(vhat) + e)
        if step in (1, 3):
            # Adam amplifies tiny gradient differences for near-zero grads
            # (update ~ lr*sign(g)), so compare parameters with an absolute
            # tolerance well below lr.
            worst += [check("adam%d.%s" % (step, n), P[n], T["adam%d.%s" % (step, n)],
                            rtol=1e-5, atol=1e-5) for n in names]
    print("all %d tensors consistent (max abs diff %.3g)" % (len(header), max(worst)))


if __name__ == "__main__":
    main()
