#!/usr/bin/env python3
"""Golden values for restore's baselines (restore/baseline.go), computed independently in numpy.

Fashion-MNIST in [-1, 1] (k/127.5 - 1). Prior: mean and unbiased covariance (+1e-6 I) of the first
NTRAIN training images. For the first NTEST test images and the noiseless tasks inpaint-box (the
centred 14x14 box missing) and sr4 (4x4 average pooling): PSNR (peak-to-peak 2) of
  mean fill  A^+ y + (I - A^+ A) mu,
  LMMSE      mu + C A^T (A C A^T + s^2 I)^-1 (y - A mu),  s = 1e-3 (the jitter of a noiseless y).
Writes restore/testdata/baselines_fmnist.json; restore's TestBaselinesMatchNumpy compares to 1e-9.
Usage: /usr/bin/python3 scripts/restore_baselines.py [FASHION-MNIST-DIR]
"""
import gzip
import json
import sys

import numpy as np

NTRAIN, NTEST, JITTER, RIDGE = 2000, 16, 1e-3, 1e-6
D = (sys.argv[1] if len(sys.argv) > 1 else "/usr/share/datasets/fashion-mnist") + "/"


def load(name, n):
    with gzip.open(D + name) as fh:
        b = fh.read()
    return np.frombuffer(b, np.uint8, offset=16)[: n * 784].reshape(n, 784).astype(np.float64) / 127.5 - 1


def operator(task):
    if task == "inpaint-box":
        keep = np.ones((28, 28))
        keep[7:21, 7:21] = 0
        return np.eye(784)[np.flatnonzero(keep.ravel())]
    if task == "sr4":
        p = np.zeros((7, 28))
        for i in range(7):
            p[i, 4 * i: 4 * i + 4] = 0.25
        return np.kron(p, p)
    raise ValueError(task)


def psnr(x, ref):
    return 10 * np.log10(4.0 / ((x - ref) ** 2).mean(1))


def main():
    xtr, xte = load("train-images-idx3-ubyte.gz", NTRAIN), load("t10k-images-idx3-ubyte.gz", NTEST)
    mu = xtr.mean(0)
    cov = np.cov(xtr.T) + RIDGE * np.eye(784)
    out = {"ntrain": NTRAIN, "ntest": NTEST, "jitter": JITTER, "ridge": RIDGE, "tasks": {}}
    for task in ["inpaint-box", "sr4"]:
        a = operator(task)
        y = xte @ a.T
        ap = np.linalg.pinv(a)
        fill = y @ ap.T + (mu - (mu @ a.T) @ ap.T)
        v = a @ cov @ a.T + JITTER ** 2 * np.eye(a.shape[0])
        lmmse = mu + (y - mu @ a.T) @ np.linalg.solve(v, a @ cov)
        out["tasks"][task] = {"mean_fill_psnr": psnr(fill, xte).tolist(), "lmmse_psnr": psnr(lmmse, xte).tolist()}
    with open("restore/testdata/baselines_fmnist.json", "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
