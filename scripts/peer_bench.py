#!/usr/bin/python3
"""Side-by-side CPU benchmark: holdgo against numpy/OpenBLAS and PyTorch, in one run.

Usage (from the repository root, after `make build`):
    /usr/bin/python3 scripts/peer_bench.py [--threads 1,2] [--repeats 15] [--holdctl bin/holdctl]

Needs Debian's python3-numpy, python3-torch and an OpenBLAS (libopenblas0-pthread). It unsets
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for the peers (set on this workplace's machines, they select
OpenBLAS's AVX2 kernels) and prints which BLAS numpy uses. Every figure is the median of --repeats
timed runs after a warm-up; holdgo is run through `holdctl bench ... --json` with the same shapes and
thread counts, interleaved with the peers so that all see the same machine load.

Shapes (issue 6): square 256/512/1024; MLP forward (M=512, K=128, N=128) and its two backward
products; im2col convolution shapes (M=32768, K=576, N=64) and (M=8192, K=1152, N=128); and the toy
MLP training step (batch 512, Adam).
"""
import argparse, json, os, subprocess, sys, time

for v in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(v, None)

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


def median(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2]


def holdctl(args, exe):
    out = subprocess.run([exe] + args + ["--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--holdctl", default="bin/holdctl")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child is None:
        # One child process per thread count: OpenBLAS reads OPENBLAS_NUM_THREADS (and OpenMP
        # OMP_NUM_THREADS) once, when the library loads, so the limit must be in the environment
        # before numpy and torch are imported.
        for threads in [int(t) for t in a.threads.split(",")]:
            env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
                       MKL_NUM_THREADS=str(threads))
            subprocess.run([sys.executable, __file__, "--child", str(threads), "--repeats", str(a.repeats),
                            "--holdctl", a.holdctl], env=env, check=True)
        return 0
    threads = a.child
    import numpy as np
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(threads)
    np.show_config() if os.environ.get("SHOW_BLAS") else None
    print(f"numpy {np.__version__}, torch {torch.__version__}, torch threads {torch.get_num_threads()}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    if True:
        print(f"\n## {threads} thread(s)\n")
        print("| shape | holdgo GFLOP/s | numpy/OpenBLAS | PyTorch | holdgo/OpenBLAS | holdgo/PyTorch |")
        print("|---|---|---|---|---|---|")
        for name, m, k, n, ta, tb in SHAPES:
            A = np.random.randn(*( (k, m) if ta else (m, k))).astype(np.float32)
            B = np.random.randn(*( (n, k) if tb else (k, n))).astype(np.float32)
            opA = (lambda: A.T) if ta else (lambda: A)
            opB = (lambda: B.T) if tb else (lambda: B)
            flops = 2.0 * m * n * k
            t_np = median(lambda: opA() @ opB(), a.repeats)
            TA, TB = torch.from_numpy(A), torch.from_numpy(B)
            t_pt = median(lambda: (TA.t() if ta else TA) @ (TB.t() if tb else TB), a.repeats)
            args = ["bench", "gemm", "--m", str(m), "--k", str(k), "--n", str(n), "--threads", str(threads),
                    "--repeats", str(a.repeats)] + (["--trans-a"] if ta else []) + (["--trans-b"] if tb else [])
            g = holdctl(args, a.holdctl)["gflops"]
            npg, ptg = flops / t_np / 1e9, flops / t_pt / 1e9
            print(f"| {name} | {g:.1f} | {npg:.1f} | {ptg:.1f} | {g / npg:.2f} | {g / ptg:.2f} |")
        # Toy MLP training step.
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
        t_pt = median(step, max(a.repeats, 50))
        hg = holdctl(["bench", "mlp", "--threads", str(threads), "--repeats", str(max(a.repeats, 50))], a.holdctl)["ms"]
        print(f"\ntoy MLP train step (batch 512, Adam): holdgo {hg:.3f} ms, PyTorch {t_pt * 1e3:.3f} ms, "
              f"ratio holdgo/PyTorch {hg / (t_pt * 1e3):.2f} (holdgo also updates an EMA)")


if __name__ == "__main__":
    sys.exit(main())
