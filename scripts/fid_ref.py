#!/usr/bin/python3
"""Reference values for holdgo's Fréchet distance and KID (package fid).

Writes testdata/golden/fid_ref.json and two pytorch-fid style statistics files
(testdata/golden/stats_a.npz, written with numpy.savez like pytorch-fid's
--save-stats, and stats_b.npz with numpy.savez_compressed).

Feature sets are not stored: both this script and fid/frechet_test.go build
them from the same counter-based generator (splitmix64), so the golden file
stays small. FD is pytorch-fid's calculate_frechet_distance (scipy.linalg.sqrtm
of sigma1·sigma2, real part); KID is clean-fid's kernel_distance for sets of
n ≤ 1000 points, where every subset is the whole set (a permutation), so its
value is the full-set unbiased MMD² and needs no random numbers.

Run from the repository root: /usr/bin/python3 scripts/fid_ref.py
"""
import json

import numpy as np
from scipy import linalg

MASK = (1 << 64) - 1


def splitmix64(seed, count):
    """splitmix64 outputs for counters 1..count of the stream seeded with seed."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def features(n, d, which):
    """n×d float32 features: uniform base plus a neighbour mix and a set-dependent shift."""
    u = (splitmix64(1000 * which + d, n * d) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    u = (2 * u - 1).reshape(n, d)
    j = np.arange(d)
    x = u + 0.5 * (j % 7) / 7 * np.roll(u, -1, axis=1) + 0.1 * which * np.sin(j)
    return x.astype(np.float32)


def frechet(mu1, sigma1, mu2, sigma2):
    # pytorch-fid 0.3.0 calculate_frechet_distance
    diff = mu1 - mu2
    covmean, _ = linalg.sqrtm(sigma1.dot(sigma2), disp=False)
    if not np.isfinite(covmean).all():
        offset = np.eye(sigma1.shape[0]) * 1e-6
        covmean = linalg.sqrtm((sigma1 + offset).dot(sigma2 + offset))
    if np.iscomplexobj(covmean):
        covmean = covmean.real
    return float(diff.dot(diff) + np.trace(sigma1) + np.trace(sigma2) - 2 * np.trace(covmean))


def kid_full(f1, f2):
    # clean-fid kernel_distance with m = n (one subset; all subsets are equal)
    n = f1.shape[1]
    m = min(f1.shape[0], f2.shape[0])
    x, y = f2, f1
    a = (x @ x.T / n + 1) ** 3 + (y @ y.T / n + 1) ** 3
    b = (x @ y.T / n + 1) ** 3
    t = (a.sum() - np.diag(a).sum()) / (m - 1) - b.sum() * 2 / m
    return float(t / m)


def main():
    cases = []
    for d in (64, 2048):
        n = 500
        f1 = features(n, d, 0).astype(np.float64)
        f2 = features(n, d, 1).astype(np.float64)
        mu1, s1 = f1.mean(0), np.cov(f1, rowvar=False)
        mu2, s2 = f2.mean(0), np.cov(f2, rowvar=False)
        cases.append({
            "n": n, "d": d,
            "fd": frechet(mu1, s1, mu2, s2),
            "kid": kid_full(f1, f2),
            "first_feature": float(f1[0, 0]), "last_feature_b": float(f2[-1, -1]),
            "mu_a_0": float(mu1[0]), "sigma_a_01": float(s1[0, 1]),
        })
        print(d, cases[-1]["fd"], cases[-1]["kid"])
    # Two statistics files as pytorch-fid writes them (mu, sigma; float64).
    rng = np.random.default_rng(14)
    d = 16
    stats = []
    for name, save in (("stats_a.npz", np.savez), ("stats_b.npz", np.savez_compressed)):
        f = rng.standard_normal((200, d)) @ rng.standard_normal((d, d)) * 0.3 + rng.standard_normal(d)
        mu, sigma = f.mean(0), np.cov(f, rowvar=False)
        save("testdata/golden/" + name, mu=mu, sigma=sigma)
        stats.append((mu, sigma))
    out = {
        "source": "scripts/fid_ref.py (numpy %s, scipy)" % np.__version__,
        "cases": cases,
        "stats_fd": frechet(stats[0][0], stats[0][1], stats[1][0], stats[1][1]),
        "stats_dim": d,
    }
    with open("testdata/golden/fid_ref.json", "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
