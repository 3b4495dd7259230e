// adam.cu: the optimizer's element-wise updates over the flat parameter buffer.
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
//   hg_adam  PyTorch Adam, as optim.Adam.Update (float32 arithmetic, same order):
//            m = b1·m + (1−b1)·g;  v = b2·v + (1−b2)·g²;
//            p −= step·m / (√v / sqrtBC2 + eps),   step = lr / (1 − b1^t), sqrtBC2 = √(1 − b2^t)
//   hg_ema   shadow −= k·(shadow − p),   k = 1 − decay (as optim.EMA.Update)
#include "common.cuh"

HG_KERNEL(hg_adam)(int n, float b1, float b2, float eps, float step, float sqrtBC2, float* __restrict__ p,
                   const float* __restrict__ g, float* __restrict__ m, float* __restrict__ v) {
	HG_FOR(i, n) {
		float gi = g[i];
		float mi = b1 * m[i] + (1.0f - b1) * gi;
		float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
		m[i] = mi;
		v[i] = vi;
		float denom = sqrtf(vi) / sqrtBC2 + eps;
		p[i] -= step * mi / denom;
	}
}
HG_REGISTER(hg_adam);

HG_KERNEL(hg_ema)(int n, float k, float* __restrict__ shadow, const float* __restrict__ p) {
	HG_FOR(i, n) shadow[i] -= k * (shadow[i] - p[i]);
}
HG_REGISTER(hg_ema);
