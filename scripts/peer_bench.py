#!/usr/bin/python3
"""Side-by-side CPU benchmark: holdgo against numpy/OpenBLAS and PyTorch, in one run.

Usage (from the repository root, after `make build`):
    /usr/bin/python3 scripts/peer_bench.py [--threads 1,2] [--repeats 11] [--rounds 3] [--holdctl bin/holdctl] [--isa avx2]

Needs Debian's python3-numpy, python3-torch and an OpenBLAS (libopenblas0-pthread). It unsets
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for the peers (set on this workplace's machines, they select
OpenBLAS's AVX2 kernels). Shapes (issue 6): square 256/512/1024; MLP forward (M=512, K=128, N=128)
and its two backward products; im2col convolution shapes (M=32768, K=576, N=64) and
(M=8192, K=1152, N=128); and the toy MLP training step (batch 512, Adam, clipping).

How it measures. Each peer runs in a process of its own, started with the thread limits in its
environment (OpenBLAS and OpenMP read them once, when they load): numpy alone (OPENBLAS_NUM_THREADS=T),
PyTorch alone, and holdgo through `holdctl bench ... --json --threads T`. Every figure is the median of
--repeats timed calls after a warm-up; the three are measured --rounds times, one after another, and
the table shows the median over rounds, so that a slow spell of the machine hits all of them. A pause
before each process lets the previous one's spinning BLAS/OpenMP threads go idle.

PyTorch's CPU step has two thread pools here (OpenMP for its own kernels, OpenBLAS's pthreads for
GEMM); with T threads the script times every split (OMP × OpenBLAS threads with product ≤ T, plus
T × T, the default when both are told T) and compares holdgo with the fastest.
"""
import argparse, json, os, subprocess, sys, time

for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(v, None)
# --isa avx2 (issue 30): both sides on their AVX2 kernels on any machine, holdgo through HOLDGO_ISA and
# OpenBLAS through OPENBLAS_CORETYPE (Haswell: its AVX2/FMA kernels, which it also runs on Zen).
# The children (this script again, with --child) inherit the choice through HOLDGO_PEER_ISA.
if "--isa" in sys.argv and sys.argv[sys.argv.index("--isa") + 1] == "avx2":
    os.environ["HOLDGO_PEER_ISA"] = "avx2"
if os.environ.get("HOLDGO_PEER_ISA") == "avx2":
    os.environ["HOLDGO_ISA"] = "avx2"
    os.environ["OPENBLAS_CORETYPE"] = "Haswell"

SHAPES = [  # name, m, k, n, transA, transB
    ("square256", 256, 256, 256, False, False),
    ("square512", 512, 512, 512, False, False),
    ("square1024", 1024, 1024, 1024, False, False),
    ("mlp_fwd x·Wᵀ", 512, 128, 128, False, True),
    ("mlp_dW dYᵀ·x", 128, 512, 128, True, False),
    ("mlp_dX dY·W", 512, 128, 128, False, False),
    ("conv 32768x576x64", 32768, 576, 64, False, False),
    ("conv 8192x1152x128", 8192, 1152, 128, False, False),
]


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def timed(f, reps):
    # Warm up for 0.2 s, as holdctl bench does: a fresh process's threads may share a core for the
    # first few milliseconds, until the OS spreads them.
    start = time.perf_counter()
    while True:
        f()
        if time.perf_counter() - start >= 0.2:
            break
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return median(ts)


def child_numpy(reps):
    import numpy as np
    rng = np.random.default_rng(0)
    out = {}
    for name, m, k, n, ta, tb in SHAPES:
        A = rng.standard_normal((k, m) if ta else (m, k), dtype=np.float32)
        B = rng.standard_normal((n, k) if tb else (k, n), dtype=np.float32)
        a, b = (A.T if ta else A), (B.T if tb else B)
        out[name] = 2.0 * m * n * k / timed(lambda: a @ b, reps) / 1e9
    return out


def child_torch(reps, gemm, omp):
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(omp)
    out = {}
    if gemm:
        for name, m, k, n, ta, tb in SHAPES:
            A = torch.randn(*((k, m) if ta else (m, k)))
            B = torch.randn(*((n, k) if tb else (k, n)))
            a, b = (A.t() if ta else A), (B.t() if tb else B)
            out[name] = 2.0 * m * n * k / timed(lambda: a @ b, reps) / 1e9
    layers = [torch.nn.Linear(7, 128), torch.nn.SiLU()]
    for _ in range(3):
        layers += [torch.nn.Linear(128, 128), torch.nn.SiLU()]
    net = torch.nn.Sequential(*layers, torch.nn.Linear(128, 2))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x, eps = torch.randn(512, 7), torch.randn(512, 2)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = ((net(x) + eps) ** 2).sum(1).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
    out["mlp_ms"] = timed(step, max(reps, 50)) * 1e3
    return out


def run_child(kind, reps, env_threads, extra=()):
    time.sleep(0.3)  # let the previous process's spinning threads go idle
    omp, blas = env_threads
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas), OMP_NUM_THREADS=str(omp), MKL_NUM_THREADS=str(blas))
    out = subprocess.run([sys.executable, __file__, "--child", kind, "--repeats", str(reps),
                          "--omp", str(omp)] + list(extra), env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def holdctl(args, exe):
    time.sleep(0.3)
    out = subprocess.run([exe] + args + ["--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def holdgo(exe, threads, reps):
    out = {}
    for name, m, k, n, ta, tb in SHAPES:
        args = ["bench", "gemm", "--m", str(m), "--k", str(k), "--n", str(n), "--threads", str(threads),
                "--repeats", str(reps)] + (["--trans-a"] if ta else []) + (["--trans-b"] if tb else [])
        out[name] = holdctl(args, exe)["gflops"]
    out["mlp_ms"] = holdctl(["bench", "mlp", "--threads", str(threads), "--repeats", str(max(reps, 50))], exe)["ms"]
    return out


def splits(t):
    """(OpenMP, OpenBLAS) thread splits PyTorch's step is timed with."""
    s = {(t, t)}
    for omp in range(1, t + 1):
        for blas in range(1, t + 1):
            if omp * blas <= t and (omp == t or blas == t):
                s.add((omp, blas))
    return sorted(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--holdctl", default="bin/holdctl")
    ap.add_argument("--isa", default="best", choices=["best", "avx2"],
                    help="avx2: holdgo (HOLDGO_ISA) and OpenBLAS (OPENBLAS_CORETYPE=Haswell) on their AVX2 kernels")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--omp", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--no-gemm", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child == "numpy":
        print(json.dumps(child_numpy(a.repeats)))
        return 0
    if a.child == "torch":
        print(json.dumps(child_torch(a.repeats, not a.no_gemm, a.omp)))
        return 0

    import numpy, torch
    print(f"numpy {numpy.__version__}, torch {torch.__version__}; {a.rounds} rounds × median of {a.repeats}; "
          f"kernels: {'AVX2 forced on both sides' if a.isa == 'avx2' else 'each at its best'}")
    for threads in [int(t) for t in a.threads.split(",")]:
        rounds = []
        for _ in range(a.rounds):
            r = {"numpy": run_child("numpy", a.repeats, (1, threads)),
                 "torch": run_child("torch", a.repeats, (threads, threads)),
                 "holdgo": holdgo(a.holdctl, threads, a.repeats)}
            for omp, blas in splits(threads):
                r[f"torch_step {omp}x{blas}"] = run_child("torch", a.repeats, (omp, blas), ["--no-gemm"])["mlp_ms"]
            rounds.append(r)
        cell = lambda who, key: median([r[who][key] for r in rounds])
        print(f"\n## {threads} thread(s)\n")
        print("| shape | holdgo GFLOP/s | numpy/OpenBLAS | PyTorch | holdgo/OpenBLAS | holdgo/PyTorch |")
        print("|---|---|---|---|---|---|")
        for name, *_ in SHAPES:
            g, npg, ptg = cell("holdgo", name), cell("numpy", name), cell("torch", name)
            print(f"| {name} | {g:.1f} | {npg:.1f} | {ptg:.1f} | {g / npg:.2f} | {g / ptg:.2f} |")
        hg = cell("holdgo", "mlp_ms")
        steps = {k: median([r[k] for r in rounds]) for k in rounds[0] if k.startswith("torch_step")}
        best = min(steps, key=steps.get)
        print(f"\ntoy MLP train step (batch 512, Adam, clip): holdgo {hg:.3f} ms (also updates an EMA); PyTorch "
              + ", ".join(f"{k.split()[1]} (OpenMP×OpenBLAS threads) {v:.3f} ms" for k, v in steps.items()))
        print(f"ratio holdgo / fastest PyTorch ({best.split()[1]}): {hg / steps[best]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
