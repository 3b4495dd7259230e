#!/usr/bin/python3
"""Reference values for holdgo's improved precision and recall (metrics.PrecisionRecall).

Kynkäänniemi et al. 2019: a set's manifold is the union of balls around its points with radius the
distance to the point's k-th nearest neighbour in the set (itself excluded); precision is the
fraction of generated points inside the real manifold, recall the fraction of real points inside
the generated manifold; "inside" is distance <= radius, as in NVlabs' reference code.

This is an independent brute-force evaluation with scipy.spatial.distance.cdist in float64. The
points (rounded to float32, as the Go code reads them) are stored with the results in
testdata/golden/pr_ref.json. Cases: a 2-D mixture against a broadened, shifted one with outliers;
8-D Gaussians of different scales at k = 3 and k = 5; an integer grid where distances tie exactly
with radii (so <= and < differ).

Run from the repository root: /usr/bin/python3 scripts/pr_ref.py
"""
import json

import numpy as np
from scipy.spatial.distance import cdist


def radii(x, k):
    d = cdist(x, x)
    np.fill_diagonal(d, np.inf)
    return np.sort(d, axis=1)[:, k - 1]


def pr(real, gen, k):
    rr, gr = radii(real, k), radii(gen, k)
    gen_in = (cdist(gen, real) <= rr[None, :]).any(axis=1)
    real_in = (cdist(real, gen) <= gr[None, :]).any(axis=1)
    return gen_in, real_in


def short(x):
    """The float32 values of x as the shortest decimals that read back as the same float32."""
    return [float(np.format_float_positional(np.float32(v), unique=True, trim="-")) for v in x.ravel()]


def case(name, real, gen, k):
    real = real.astype(np.float32).astype(np.float64)
    gen = gen.astype(np.float32).astype(np.float64)
    gen_in, real_in = pr(real, gen, k)
    return {
        "name": name, "k": k, "dim": real.shape[1],
        "real": short(real), "gen": short(gen),
        "precision": float(gen_in.mean()), "recall": float(real_in.mean()),
        "gen_in": "".join("1" if b else "0" for b in gen_in),
        "real_in": "".join("1" if b else "0" for b in real_in),
    }


def main():
    rs = np.random.RandomState(20261124)
    cases = []
    centres = np.array([[0.0, 0.0], [3.0, 1.0]])
    real = centres[rs.randint(2, size=500)] + 0.5 * rs.randn(500, 2)
    gen = centres[rs.randint(2, size=400)] + [0.3, -0.2] + 0.8 * rs.randn(400, 2)
    gen[:20] = 6 * rs.randn(20, 2)  # outliers
    cases.append(case("mixture-2d", real, gen, 3))
    real, gen = rs.randn(300, 8), 1.3 * rs.randn(350, 8)
    cases.append(case("gauss-8d-k3", real, gen, 3))
    cases.append(case("gauss-8d-k5", real, gen, 5))
    g = np.array([[i, j] for i in range(10) for j in range(10)], dtype=np.float64)
    gen = g[rs.permutation(100)[:60]] + np.array([[0.0, 1.0]] * 30 + [[1.5, 0.0]] * 30)
    cases.append(case("grid-ties", g, gen, 3))
    with open("testdata/golden/pr_ref.json", "w") as f:
        json.dump({"source": "scripts/pr_ref.py (numpy %s)" % np.__version__, "cases": cases}, f)
        f.write("\n")
    for c in cases:
        print(c["name"], "precision", c["precision"], "recall", c["recall"])


if __name__ == "__main__":
    main()
