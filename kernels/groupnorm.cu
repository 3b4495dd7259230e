// groupnorm.cu: group normalisation forward and backward, one block per (sample, group) or per
// channel.
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
// x is (N, C, S) with S the spatial size; group g holds channels [g·C/G, (g+1)·C/G). The statistics
// of a group are its mean and biased variance over C/G·S values, computed in ONE read of x: each
// thread runs Welford's update over its strided elements, and the block merges the threads'
// (count, mean, M2) triples pairwise (Chan et al.: δ = m_b − m_a, m = m_a + δ·n_b/n,
// M2 = M2_a + M2_b + δ²·n_a·n_b/n), which stays accurate when the mean is far from 0.
//   hg_group_norm             y = (x − mean)·rstd·gamma[c] + beta[c]; saves mean and rstd (N·G);
//                             reads x twice (statistics, output)
//   hg_group_stats            mean and rstd only (for hg_group_norm_param_grad)
//   hg_group_norm_bwd         dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) over the group, g = dy·gamma,
//                             x̂ = (x − mean)·rstd (statistics recomputed in one Welford pass)
//   hg_group_norm_param_grad  one block per channel c: dgamma[c] = Σ_{n,s} dy·x̂ (row 0 of out),
//                             dbeta[c] = Σ_{n,s} dy (row 1), from the saved mean and rstd
//   hg_group_norm_silu        y = silu(z), z = x̂·gamma[c] + beta[c]: group norm and SiLU fused, z
//                             never stored (ResnetBlockBigGANpp's act(GroupNorm(·)))
//   hg_group_norm_silu_dz     dz = dy·silu'(z), z recomputed from x: the gradient at the group
//                             norm's output, which hg_group_norm_bwd and _param_grad then take
#include "common.cuh"

// Block-wide Welford merge: every thread passes its (count, mean, M2) and gets the block's.
static __device__ __forceinline__ void hg_block_welford(float& cnt, float& mean, float& m2, float* bc, float* bm,
                                                        float* bq) {
	int t = threadIdx.x;
	bc[t] = cnt;
	bm[t] = mean;
	bq[t] = m2;
	__syncthreads();
	for (int s = HG_BLOCK / 2; s > 0; s >>= 1) {
		if (t < s) {
			float na = bc[t], nb = bc[t + s], n = na + nb;
			if (nb > 0.0f) {
				float d = bm[t + s] - bm[t];
				bm[t] += d * (nb / n);
				bq[t] += bq[t + s] + d * d * (na * nb / n);
				bc[t] = n;
			}
		}
		__syncthreads();
	}
	cnt = bc[0];
	mean = bm[0];
	m2 = bq[0];
	__syncthreads(); // the buffers may be reused right after
}

// Mean and 1/√(var + eps) of the size values at x[0:size].
static __device__ __forceinline__ void hg_group_moments(const float* __restrict__ x, long long size, float eps,
                                                        float& mean, float& rstd) {
	__shared__ float bc[HG_BLOCK], bm[HG_BLOCK], bq[HG_BLOCK];
	float cnt = 0.0f, m = 0.0f, m2 = 0.0f;
	for (long long j = threadIdx.x; j < size; j += blockDim.x) {
		float v = x[j];
		cnt += 1.0f;
		float d = v - m;
		m += d / cnt;
		m2 += d * (v - m);
	}
	hg_block_welford(cnt, m, m2, bc, bm, bq);
	mean = m;
	rstd = 1.0f / sqrtf(m2 / (float)size + eps);
}

HG_KERNEL(hg_group_norm)(int N, int C, int S, int G, float eps, const float* __restrict__ x,
                         const float* __restrict__ gamma, const float* __restrict__ beta,
                         float* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out) {
	int cpg = C / G;
	long long size = (long long)cpg * S;
	for (int ng = blockIdx.x; ng < N * G; ng += gridDim.x) {
		int n = ng / G, g = ng % G;
		long long base = ((long long)n * C + (long long)g * cpg) * S;
		float mean, rstd;
		hg_group_moments(x + base, size, eps, mean, rstd);
		for (long long j = threadIdx.x; j < size; j += blockDim.x) {
			int c = g * cpg + (int)(j / S);
			y[base + j] = (x[base + j] - mean) * rstd * gamma[c] + beta[c];
		}
		if (threadIdx.x == 0) {
			mean_out[ng] = mean;
			rstd_out[ng] = rstd;
		}
	}
}
HG_REGISTER(hg_group_norm);

HG_KERNEL(hg_group_stats)(int N, int C, int S, int G, float eps, const float* __restrict__ x,
                          float* __restrict__ mean_out, float* __restrict__ rstd_out) {
	int cpg = C / G;
	long long size = (long long)cpg * S;
	for (int ng = blockIdx.x; ng < N * G; ng += gridDim.x) {
		long long base = ((long long)(ng / G) * C + (long long)(ng % G) * cpg) * S;
		float mean, rstd;
		hg_group_moments(x + base, size, eps, mean, rstd);
		if (threadIdx.x == 0) {
			mean_out[ng] = mean;
			rstd_out[ng] = rstd;
		}
	}
}
HG_REGISTER(hg_group_stats);

HG_KERNEL(hg_group_norm_bwd)(int N, int C, int S, int G, float eps, const float* __restrict__ x,
                             const float* __restrict__ gamma, const float* __restrict__ dy,
                             float* __restrict__ dx) {
	__shared__ float buf[HG_BLOCK];
	int cpg = C / G;
	long long size = (long long)cpg * S;
	for (int ng = blockIdx.x; ng < N * G; ng += gridDim.x) {
		int n = ng / G, g = ng % G;
		long long base = ((long long)n * C + (long long)g * cpg) * S;
		float mean, rstd;
		hg_group_moments(x + base, size, eps, mean, rstd);
		float sg = 0.0f, sgx = 0.0f;
		for (long long j = threadIdx.x; j < size; j += blockDim.x) {
			float gv = dy[base + j] * gamma[g * cpg + (int)(j / S)];
			sg += gv;
			sgx += gv * (x[base + j] - mean) * rstd;
		}
		float mg = hg_block_reduce(0, sg, buf) / (float)size;
		float mgx = hg_block_reduce(0, sgx, buf) / (float)size;
		for (long long j = threadIdx.x; j < size; j += blockDim.x) {
			float gv = dy[base + j] * gamma[g * cpg + (int)(j / S)];
			float xh = (x[base + j] - mean) * rstd;
			dx[base + j] = rstd * (gv - mg - xh * mgx);
		}
	}
}
HG_REGISTER(hg_group_norm_bwd);

HG_KERNEL(hg_group_norm_param_grad)(int N, int C, int S, int G, const float* __restrict__ mean,
                                    const float* __restrict__ rstd, const float* __restrict__ x,
                                    const float* __restrict__ dy, float* __restrict__ out) {
	__shared__ float buf[HG_BLOCK];
	int cpg = C / G;
	for (int c = blockIdx.x; c < C; c += gridDim.x) {
		float dg = 0.0f, db = 0.0f;
		for (int n = 0; n < N; n++) {
			int ng = n * G + c / cpg;
			float m = mean[ng], r = rstd[ng];
			long long base = ((long long)n * C + c) * S;
			for (int s = threadIdx.x; s < S; s += blockDim.x) {
				float d = dy[base + s];
				dg += d * (x[base + s] - m) * r;
				db += d;
			}
		}
		dg = hg_block_reduce(0, dg, buf);
		db = hg_block_reduce(0, db, buf);
		if (threadIdx.x == 0) {
			out[c] = dg;
			out[C + c] = db;
		}
	}
}
HG_REGISTER(hg_group_norm_param_grad);

HG_KERNEL(hg_group_norm_silu)(int N, int C, int S, int G, float eps, const float* __restrict__ x,
                              const float* __restrict__ gamma, const float* __restrict__ beta,
                              float* __restrict__ y) {
	int cpg = C / G;
	long long size = (long long)cpg * S;
	for (int ng = blockIdx.x; ng < N * G; ng += gridDim.x) {
		int n = ng / G, g = ng % G;
		long long base = ((long long)n * C + (long long)g * cpg) * S;
		float mean, rstd;
		hg_group_moments(x + base, size, eps, mean, rstd);
		for (long long j = threadIdx.x; j < size; j += blockDim.x) {
			int c = g * cpg + (int)(j / S);
			float z = (x[base + j] - mean) * rstd * gamma[c] + beta[c];
			y[base + j] = z / (1.0f + expf(-z));
		}
	}
}
HG_REGISTER(hg_group_norm_silu);

// silu'(z) in double, as hg_binary_op's HG_SILU_GRAD: σ(1 + z(1−σ)) cancels near its root z ≈ −1.28.
HG_KERNEL(hg_group_norm_silu_dz)(int N, int C, int S, int G, float eps, const float* __restrict__ x,
                                 const float* __restrict__ gamma, const float* __restrict__ beta,
                                 const float* __restrict__ dy, float* __restrict__ dz) {
	int cpg = C / G;
	long long size = (long long)cpg * S;
	for (int ng = blockIdx.x; ng < N * G; ng += gridDim.x) {
		int n = ng / G, g = ng % G;
		long long base = ((long long)n * C + (long long)g * cpg) * S;
		float mean, rstd;
		hg_group_moments(x + base, size, eps, mean, rstd);
		for (long long j = threadIdx.x; j < size; j += blockDim.x) {
			int c = g * cpg + (int)(j / S);
			double z = (x[base + j] - mean) * rstd * gamma[c] + beta[c];
			double sg = 1.0 / (1.0 + exp(-z));
			dz[base + j] = (float)((double)dy[base + j] * sg * (1.0 + z * (1.0 - sg)));
		}
	}
}
HG_REGISTER(hg_group_norm_silu_dz);
