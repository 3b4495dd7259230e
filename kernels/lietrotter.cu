// lietrotter.cu: the Lie–Trotter/Strang sampler step, fused and unfused.
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
// A Strang step of the reverse SDE is A(h/2)·B(h)·A(h/2) (hold-math §4): A is the exact linear
// step x ← E·x + K·z (E = exp of the A drift, K its Cholesky noise factor, z ~ N(0, I)), B updates
// the last block with the network output S_θ: s ← bs·s + be·S_θ (Euler: bs = 1 + cΛ, be = cℓ;
// exact: c = expm1(qΛΔτ)/Λ, hold.SDE.BStep/BStepExact). Consecutive steps meet as
// … A(h_k/2) | score | B(h_k) A(h_k/2) A(h_{k+1}/2) | score | …, so between two score evaluations
// the sampler runs B, the closing half of step k and the opening half of step k+1. The fused
// kernel does those three updates per (sample, dimension) in registers: it reads the state, the
// score and the two noises once and writes the state once.
//
// coef (doubles, uploaded per step): E1 at 0, K1 at 16, E2 at 32, K2 at 48 (4×4 row-major, only
// the leading n×n used), bs at 64, be at 65. halves = 1 skips the second A (the last step).
// State layout: (B, n·d) as hold.cu; score is (B, d); z1, z2 are (B, n·d).
//
//   hg_lt_step  fused B, A1 (and A2)
//   hg_lt_b     unfused: B alone, in place on the last block
//   hg_lt_a     unfused: one A half, in place (reads E, K at coef + 16·2·which)
#include "common.cuh"

static __device__ __forceinline__ void hg_lt_apply_a(int n, const double* E, const double* K, double* v,
                                                     const float* z, long long d) {
	double w[4], e[4];
	for (int r = 0; r < n; r++) e[r] = (double)z[(long long)r * d];
	for (int r = 0; r < n; r++) {
		double s = 0.0;
		for (int j = 0; j < n; j++) s += E[r * 4 + j] * v[j];
		for (int j = 0; j <= r; j++) s += K[r * 4 + j] * e[j];
		w[r] = s;
	}
	for (int r = 0; r < n; r++) v[r] = w[r];
}

HG_KERNEL(hg_lt_step)(int B, int n, int d, int halves, const double* __restrict__ coef, const float* __restrict__ score,
                      const float* __restrict__ z1, const float* __restrict__ z2, float* __restrict__ x) {
	HG_FOR(i, (long long)B * d) {
		long long b = i / d, c = i % d;
		long long base = b * n * d + c;
		double v[4] = {0.0, 0.0, 0.0, 0.0};
		for (int r = 0; r < n; r++) v[r] = (double)x[base + (long long)r * d];
		v[n - 1] = coef[64] * v[n - 1] + coef[65] * (double)score[i];
		hg_lt_apply_a(n, coef, coef + 16, v, z1 + base, d);
		if (halves == 2) hg_lt_apply_a(n, coef + 32, coef + 48, v, z2 + base, d);
		for (int r = 0; r < n; r++) x[base + (long long)r * d] = (float)v[r];
	}
}
HG_REGISTER(hg_lt_step);

HG_KERNEL(hg_lt_b)(int B, int n, int d, const double* __restrict__ coef, const float* __restrict__ score,
                   float* __restrict__ x) {
	HG_FOR(i, (long long)B * d) {
		long long b = i / d, c = i % d;
		float* s = x + b * n * d + (long long)(n - 1) * d + c;
		*s = (float)(coef[64] * (double)*s + coef[65] * (double)score[i]);
	}
}
HG_REGISTER(hg_lt_b);

HG_KERNEL(hg_lt_a)(int B, int n, int d, int which, const double* __restrict__ coef, const float* __restrict__ z,
                   float* __restrict__ x) {
	const double* E = coef + 32 * which;
	HG_FOR(i, (long long)B * d) {
		long long b = i / d, c = i % d;
		long long base = b * n * d + c;
		double v[4] = {0.0, 0.0, 0.0, 0.0};
		for (int r = 0; r < n; r++) v[r] = (double)x[base + (long long)r * d];
		hg_lt_apply_a(n, E, E + 16, v, z + base, d);
		for (int r = 0; r < n; r++) x[base + (long long)r * d] = (float)v[r];
	}
}
HG_REGISTER(hg_lt_a);
