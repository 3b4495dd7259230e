// hold.cu: fused HOLD reparameterisation (the CUDA twin of hold.SDE.Perturb).
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
// State layout: row-major (B, n·d), block k of sample b in columns [k·d, (k+1)·d). Per sample b the
// host evaluates the objective's kernel at t_b in float64 and passes 32 doubles at coef + 32·b:
//   M[r][j] at coef[r·4 + j]        mean map, column j ≥ 1 already multiplied by the initial
//                                   auxiliary standard deviation (DSM; unused for BCSM)
//   C[r][j] at coef[16 + r·4 + j]   lower Cholesky factor of Σ_t
// One thread per (b, i) reads q0[b, i], ε[b, ·, i] (and aux[b, ·, i] for DSM: aux != NULL) and writes
//   x[b, r·d + i] = Σ_j M[r][j]·x0_j + Σ_{j≤r} C[r][j]·ε_j      (float64 arithmetic)
//   target[b, i]  = −ε[b, (n−1)·d + i]
// so a training step reads q0 and ε once and writes x_t and the target once.
#include "common.cuh"

HG_KERNEL(hg_hold_perturb)(int B, int n, int d, const double* __restrict__ coef, const float* __restrict__ q0,
                           const float* __restrict__ eps, const float* __restrict__ aux, float* __restrict__ x,
                           float* __restrict__ target) {
	HG_FOR(i, (long long)B * d) {
		long long b = i / d, c = i % d;
		const double* M = coef + 32 * b;
		const double* L = M + 16;
		double x0[4] = {(double)q0[i], 0.0, 0.0, 0.0};
		double e[4] = {0.0, 0.0, 0.0, 0.0};
		const float* eb = eps + b * n * d + c;
		for (int j = 0; j < n; j++) e[j] = (double)eb[(long long)j * d];
		if (aux != 0) {
			const float* ab = aux + b * (n - 1) * d + c;
			for (int j = 1; j < n; j++) x0[j] = (double)ab[(long long)(j - 1) * d];
		}
		float* xb = x + b * n * d + c;
		for (int r = 0; r < n; r++) {
			double v = 0.0;
			for (int j = 0; j < n; j++) v += M[r * 4 + j] * x0[j];
			for (int j = 0; j <= r; j++) v += L[r * 4 + j] * e[j];
			xb[(long long)r * d] = (float)v;
		}
		target[i] = -eb[(long long)(n - 1) * d];
	}
}
HG_REGISTER(hg_hold_perturb);
