#!/usr/bin/env python3
"""Dense reference scans of the linear block SDE kernels, at 160 digits (mpmath).

Writes dense_vectors.json next to this script. Re-run with:  python3 gen_dense.py
(needs only mpmath; takes about a minute).

For each chain (n = 2, 3, 4; the drift matrices of shared/math/hold-math.md section 8):
  forward: L = 2, alpha in {0, 0.02}, t on a log grid over [1e-5, 12]:
           expF = exp(tF), Sigma = Sigma_t, chol = lower Cholesky factor, ell = 1/chol[n-1][n-1]
  A_step:  L = 2, h on a log grid over [1e-4, 0.5]:
           expMA = exp(h F^T), chol_C_A = Cholesky factor of C_A(h) = (I - e^{hF^T} e^{hF}) / L
Sigma_t uses the stationary identity Sigma_t = I/L + e^{tF} (Sigma_0 - I/L) e^{tF^T}, exact because
F + F^T = -2 xi e_n e_n^T; at 160 digits the cancellation for small t (down to ~1e-45 relative) is harmless.
The script first checks itself against shared/math/hold_vectors.json (an independent Van Loan computation).
"""
import json
import os

import mpmath as mp

mp.mp.dps = 160
HERE = os.path.dirname(os.path.abspath(__file__))


def chain(n):
    s = mp.sqrt
    if n == 2:
        g, xi = [mp.mpf(1)], mp.mpf(2)
    elif n == 3:
        g, xi = [mp.mpf(1), s(10)], mp.mpf(6)
    else:
        g, xi = [mp.mpf(1), s(21) / 2, 5 * s(6) / 2], 5 * s(5)
    F = mp.zeros(n, n)
    for i, gi in enumerate(g):
        F[i, i + 1] = gi
        F[i + 1, i] = -gi
    F[n - 1, n - 1] = -xi
    return F


def chol(S):
    n = S.rows
    C = mp.zeros(n, n)
    for j in range(n):
        d = S[j, j] - sum(C[j, k] ** 2 for k in range(j))
        C[j, j] = mp.sqrt(d)
        for i in range(j + 1, n):
            C[i, j] = (S[i, j] - sum(C[i, k] * C[j, k] for k in range(j))) / C[j, j]
    return C


def forward(F, L, alpha, t):
    n = F.rows
    E = mp.expm(t * F)
    S0 = mp.diag([0] + [alpha / L] * (n - 1))
    I = mp.eye(n) / L
    Sig = I + E * (S0 - I) * E.T
    C = chol(Sig)
    return E, Sig, C, 1 / C[n - 1, n - 1]


def astep(F, L, h):
    n = F.rows
    EA = mp.expm(h * F.T)
    CA = (mp.eye(n) - EA * EA.T) / L
    return EA, chol(CA)


def s(x):
    return mp.nstr(x, 25, min_fixed=1, max_fixed=0)


def mat(M):
    return [[s(M[i, j]) for j in range(M.cols)] for i in range(M.rows)]


def selfcheck():
    V = json.load(open(os.path.join(HERE, 'hold_vectors.json')))
    worst = mp.mpf(0)
    for n in (2, 3, 4):
        F = chain(n)
        for r in V['hold%d' % n]['forward']:
            E, Sig, C, ell = forward(F, mp.mpf(r['L']), mp.mpf(r['alpha']), mp.mpf(r['t']))
            for M, key in ((E, 'expF'), (Sig, 'Sigma'), (C, 'chol')):
                for i in range(n):
                    for j in range(n):
                        ref = mp.mpf(r[key][i][j])
                        if ref != 0:
                            worst = max(worst, abs(M[i, j] / ref - 1))
            worst = max(worst, abs(ell / mp.mpf(r['ell']) - 1))
        for r in V['hold%d' % n]['A_step']:
            EA, CA = astep(F, mp.mpf(r['L']), mp.mpf(r['h']))
            for M, key in ((EA, 'expMA'), (CA, 'chol_C_A')):
                for i in range(n):
                    for j in range(n):
                        ref = mp.mpf(r[key][i][j])
                        if ref != 0:
                            worst = max(worst, abs(M[i, j] / ref - 1))
    print('self-check against hold_vectors.json: max rel dev', mp.nstr(worst, 3))
    assert worst < 1e-25


def main():
    selfcheck()
    # grid points are float64 numbers, so that the Go side evaluates at exactly the same t
    ts = [mp.mpf(float(10 ** (k / 4 - 5))) for k in range(21)]  # 1e-5 .. 1
    ts += [mp.mpf(x) for x in ('1.5', '2', '3', '4', '5', '6', '7', '8', '10', '12')]
    hs = [mp.mpf(float(10 ** (k / 4 - 4))) for k in range(15)]  # 1e-4 .. 5.6e-1
    hs = [h for h in hs if h <= mp.mpf('0.5')] + [mp.mpf('0.5')]
    out = {'doc': __doc__.strip()}
    L = mp.mpf(2)
    for n in (2, 3, 4):
        F = chain(n)
        fw = []
        for alpha in (mp.mpf(0), mp.mpf('0.02')):
            for t in ts:
                E, Sig, C, ell = forward(F, L, alpha, t)
                fw.append({'L': s(L), 'alpha': s(alpha), 't': s(t), 'expF': mat(E), 'Sigma': mat(Sig),
                           'chol': mat(C), 'ell': s(ell)})
        ast = []
        for h in hs:
            EA, CA = astep(F, L, h)
            ast.append({'L': s(L), 'h': s(h), 'expMA': mat(EA), 'chol_C_A': mat(CA)})
        out['hold%d' % n] = {'forward': fw, 'A_step': ast}
    with open(os.path.join(HERE, 'dense_vectors.json'), 'w') as f:
        json.dump(out, f, indent=0)


if __name__ == '__main__':
    main()
