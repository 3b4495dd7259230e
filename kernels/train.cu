// train.cu: the training step's reductions and guarded optimizer updates, so that a step runs
// without a host synchronisation: the loss and the gradient norm stay in device memory (stats)
// and the updates read them there.
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
// stats (double[3]): [0] the last loss, [1] the last squared gradient norm, [2] the number of
// non-finite steps since the host last cleared it. Reductions are two-pass with a fixed grid, so
// the summation order, and the result, do not depend on timing:
//   hg_score_loss  grad[i] = 2·(out[i] − target[i])/B (float64, rounded once), partial[block] =
//                  Σ (out − target)² over the block's grid-stride elements (float64)   (hold.Loss)
//   hg_sumsq       partial[block] = Σ x² over the block's elements (float64)
//   hg_finish      stats[slot] = scale·Σ_k partial[k] (one block)
//   hg_clip_adam   tensor.Adam: clipping as torch.nn.utils.clip_grad_norm_, then PyTorch's Adam in float32
//                  arithmetic in the Reference's order: with norm = √stats[1] and c = maxNorm/(norm + 1e−6),
//                  g ← g·c when maxNorm > 0 and c < 1; m = b1·m + (1−b1)·g; v = b2·v + (1−b2)·g²;
//                  p −= step·m / (√v / sqrtBC2 + eps), step = lr / (1 − b1^t), sqrtBC2 = √(1 − b2^t).
//                  If the loss or the norm is not finite the parameters and moments are left as they
//                  are and block 0 counts the step in stats[2].
//   hg_ema_guard   tensor.EMA: shadow −= k·(shadow − p), k = 1 − decay, skipped likewise (not counted
//                  again).
#include "common.cuh"

static __device__ __forceinline__ double hg_block_sum_d(double v, double* buf) {
	int t = threadIdx.x;
	buf[t] = v;
	__syncthreads();
	for (int s = HG_BLOCK / 2; s > 0; s >>= 1) {
		if (t < s) buf[t] += buf[t + s];
		__syncthreads();
	}
	double r = buf[0];
	__syncthreads();
	return r;
}

HG_KERNEL(hg_score_loss)(int n, int batch, const float* __restrict__ out, const float* __restrict__ target,
                         float* __restrict__ grad, double* __restrict__ partial) {
	__shared__ double buf[HG_BLOCK];
	double inv = 1.0 / (double)batch, acc = 0.0;
	HG_FOR(i, n) {
		double diff = (double)out[i] - (double)target[i];
		acc += diff * diff;
		grad[i] = (float)(2.0 * diff * inv);
	}
	double s = hg_block_sum_d(acc, buf);
	if (threadIdx.x == 0) partial[blockIdx.x] = s;
}
HG_REGISTER(hg_score_loss);

HG_KERNEL(hg_sumsq)(int n, const float* __restrict__ x, double* __restrict__ partial) {
	__shared__ double buf[HG_BLOCK];
	double acc = 0.0;
	HG_FOR(i, n) {
		double v = (double)x[i];
		acc += v * v;
	}
	double s = hg_block_sum_d(acc, buf);
	if (threadIdx.x == 0) partial[blockIdx.x] = s;
}
HG_REGISTER(hg_sumsq);

HG_KERNEL(hg_finish)(int parts, const double* __restrict__ partial, double scale, double* __restrict__ stats,
                     int slot) {
	__shared__ double buf[HG_BLOCK];
	double acc = 0.0;
	for (int i = threadIdx.x; i < parts; i += HG_BLOCK) acc += partial[i];
	double s = hg_block_sum_d(acc, buf);
	if (threadIdx.x == 0) stats[slot] = scale * s;
}
HG_REGISTER(hg_finish);

static __device__ __forceinline__ bool hg_finite(double x) { return x - x == 0.0; }

HG_KERNEL(hg_clip_adam)(int n, float b1, float b2, float eps, float step, float sqrtBC2, double maxNorm,
                        double* __restrict__ stats, float* __restrict__ p, const float* __restrict__ g,
                        float* __restrict__ m, float* __restrict__ v) {
	double norm = sqrt(stats[1]);
	if (!hg_finite(stats[0]) || !hg_finite(norm)) {
		if (blockIdx.x == 0 && threadIdx.x == 0) stats[2] += 1.0;
		return;
	}
	double c = maxNorm / (norm + 1e-6);
	bool clip = maxNorm > 0.0 && c < 1.0;
	float cf = (float)c;
	HG_FOR(i, n) {
		float gi = g[i];
		if (clip) gi = gi * cf;
		float mi = b1 * m[i] + (1.0f - b1) * gi;
		float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
		m[i] = mi;
		v[i] = vi;
		float denom = sqrtf(vi) / sqrtBC2 + eps;
		p[i] -= step * mi / denom;
	}
}
HG_REGISTER(hg_clip_adam);

HG_KERNEL(hg_ema_guard)(int n, float k, const double* __restrict__ stats, float* __restrict__ shadow,
                        const float* __restrict__ p) {
	if (!hg_finite(stats[0]) || !hg_finite(sqrt(stats[1]))) return;
	HG_FOR(i, n) shadow[i] -= k * (shadow[i] - p[i]);
}
HG_REGISTER(hg_ema_guard);
