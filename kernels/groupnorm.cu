// groupnorm.cu: group normalisation forward and backward, one block per (sample, group).
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
// x is (N, C, S) with S the spatial size; group g holds channels [g·C/G, (g+1)·C/G). The statistics
// of a group are its mean and biased variance over C/G·S values, computed in ONE read of x: each
// thread runs Welford's update over its strided elements, and the block merges the threads'
// (count, mean, M2) triples pairwise (Chan et al.: δ = m_b − m_a, m = m_a + δ·n_b/n,
// M2 = M2_a + M2_b + δ²·n_a·n_b/n), which stays accurate when the mean is far from 0.
//
// Where a group fits in dynamic shared memory (the launcher's `cache` and its shared bytes,
// cuda/groupnorm.go), the Welford pass also stores it there and the later passes read it from
// shared memory: x (and dy) are then read from global memory once.
//   hg_group_norm            y = (x − mean)·rstd·gamma[c] + beta[c]; saves mean and rstd (N·G)
//   hg_group_norm_silu       y = silu(z), z = x̂·gamma[c] + beta[c]: group norm and SiLU fused, z
//                            never stored (ResnetBlockBigGANpp's act(GroupNorm(·)))
//   hg_group_norm_backward   the whole backward pass of either in one kernel: dz = dy (or
//                            dy·silu'(z), z recomputed), the (sample, channel) partials
//                            Σ_s dz·x̂ and Σ_s dz into a scratch (2, N, C), and
//                            dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) (+ keep·dx), g = dz·gamma,
//                            the group's means formed from the partials
//   hg_group_norm_param_sum  dgamma[c] += Σ_n partial[0][n][c], dbeta[c] += Σ_n partial[1][n][c]:
//                            the batch sum of those partials, n in order (no atomics: the same
//                            bits on every run)
//   hg_group_norm_silu_dropout           hg_group_norm_silu's y times the dropout mask of element
//                            first + i of the Philox stream (key, step, id) as it is written:
//                            y·(1/(1−p)) where the uniform ≥ p, else 0 (philox.cuh, hg_dropout's
//                            mask, bit for bit); ResnetBlockBigGANpp's act(GroupNorm_1(·)) and
//                            dropout in one pass
//   hg_group_norm_silu_dropout_backward  hg_group_norm_backward of the SiLU with dy·mask formed as
//                            dy is loaded (the forward's mask regenerated from its counters,
//                            never stored): no pass of its own over dy
// The fused kernels are the unfused ones' bodies instantiated with the dropout (DROP = true).
#include "common.cuh"
#include "philox.cuh"

// The dropout of the fused kernels: mask element first + i (i the element's index in x) of the
// stream (key, step, id) with probability p; kept elements are scaled by scale = 1/(1−p) (hg_dropout's
// keep).
struct hg_drop {
	unsigned long long first, key;
	unsigned int step, id;
	float p, scale;
};

// v·mask of element i: hg_dropout's y[j] for x[j] = v.
static __device__ __forceinline__ float hg_drop_apply(const hg_drop& d, long long i, float v) {
	return hg_dropout_kept(d.first + (unsigned long long)i, d.key, d.step, d.id, d.p) ? v * d.scale : 0.0f;
}

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

// hg_block_reduce of two sums in one tree (buf: 2·HG_BLOCK floats); every thread gets both.
static __device__ __forceinline__ void hg_block_sum2(float& a, float& b, float* buf) {
	int t = threadIdx.x;
	buf[t] = a;
	buf[HG_BLOCK + t] = b;
	__syncthreads();
	for (int s = HG_BLOCK / 2; s > 0; s >>= 1) {
		if (t < s) {
			buf[t] += buf[t + s];
			buf[HG_BLOCK + t] += buf[HG_BLOCK + t + s];
		}
		__syncthreads();
	}
	a = buf[0];
	b = buf[HG_BLOCK];
	__syncthreads(); // buf may be reused right after
}

// Mean and 1/√(var + eps) of the size values at x[0:size]; with cache non-null the values are
// also stored there, visible to the whole block on return.
static __device__ __forceinline__ void hg_group_moments(const float* __restrict__ x, long long size, float eps,
                                                        float* cache, float& mean, float& rstd) {
	__shared__ float bc[HG_BLOCK], bm[HG_BLOCK], bq[HG_BLOCK];
	float cnt = 0.0f, m = 0.0f, m2 = 0.0f;
	for (long long j = threadIdx.x; j < size; j += blockDim.x) {
		float v = x[j];
		if (cache) cache[j] = v;
		cnt += 1.0f;
		float d = v - m;
		m += d / cnt;
		m2 += d * (v - m);
	}
	hg_block_welford(cnt, m, m2, bc, bm, bq);
	mean = m;
	rstd = 1.0f / sqrtf(m2 / (float)size + eps);
}

// dy·silu'(z) in double, as hg_binary_op's HG_SILU_GRAD: σ(1 + z(1−σ)) cancels near its root
// z ≈ −1.28.
static __device__ __forceinline__ float hg_silu_dz(double z, float dy) {
	double sg = 1.0 / (1.0 + exp(-z));
	return (float)((double)dy * sg * (1.0 + z * (1.0 - sg)));
}

// cache = 1: the group's x (C/G·S floats) is kept in dynamic shared memory.
HG_KERNEL_SHARED(hg_group_norm)(int N, int C, int S, int G, float eps, int cache, const float* __restrict__ x,
                                const float* __restrict__ gamma, const float* __restrict__ beta,
                                float* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out) {
	HG_DYNAMIC_SHARED(float, xcache);
	int cpg = C / G;
	long long size = (long long)cpg * S;
	for (int ng = blockIdx.x; ng < N * G; ng += gridDim.x) {
		int n = ng / G, g = ng % G;
		long long base = ((long long)n * C + (long long)g * cpg) * S;
		float mean, rstd;
		hg_group_moments(x + base, size, eps, cache ? xcache : nullptr, mean, rstd);
		const float* xs = cache ? xcache : x + base;
		for (long long j = threadIdx.x; j < size; j += blockDim.x) {
			int c = g * cpg + (int)(j / S);
			y[base + j] = (xs[j] - mean) * rstd * gamma[c] + beta[c];
		}
		if (threadIdx.x == 0) {
			mean_out[ng] = mean;
			rstd_out[ng] = rstd;
		}
		__syncthreads(); // the next group overwrites the cache
	}
}
HG_REGISTER(hg_group_norm);

// hg_group_norm_silu (DROP = false) and hg_group_norm_silu_dropout. cache = 1: the group's x is
// kept in xcache, the kernel's dynamic shared memory.
template <bool DROP>
static __device__ __forceinline__ void hg_group_norm_silu_body(int N, int C, int S, int G, float eps, int cache,
                                                               const float* __restrict__ x,
                                                               const float* __restrict__ gamma,
                                                               const float* __restrict__ beta, float* __restrict__ y,
                                                               float* xcache, hg_drop drop) {
	int cpg = C / G;
	long long size = (long long)cpg * S;
	for (int ng = blockIdx.x; ng < N * G; ng += gridDim.x) {
		int n = ng / G, g = ng % G;
		long long base = ((long long)n * C + (long long)g * cpg) * S;
		float mean, rstd;
		hg_group_moments(x + base, size, eps, cache ? xcache : nullptr, mean, rstd);
		const float* xs = cache ? xcache : x + base;
		for (long long j = threadIdx.x; j < size; j += blockDim.x) {
			int c = g * cpg + (int)(j / S);
			float z = (xs[j] - mean) * rstd * gamma[c] + beta[c];
			float v = z / (1.0f + expf(-z));
			if (DROP) v = hg_drop_apply(drop, base + j, v);
			y[base + j] = v;
		}
		__syncthreads(); // the next group overwrites the cache
	}
}

HG_KERNEL_SHARED(hg_group_norm_silu)(int N, int C, int S, int G, float eps, int cache, const float* __restrict__ x,
                                     const float* __restrict__ gamma, const float* __restrict__ beta,
                                     float* __restrict__ y) {
	HG_DYNAMIC_SHARED(float, xcache);
	hg_group_norm_silu_body<false>(N, C, S, G, eps, cache, x, gamma, beta, y, xcache, hg_drop{});
}
HG_REGISTER(hg_group_norm_silu);

HG_KERNEL_SHARED(hg_group_norm_silu_dropout)(int N, int C, int S, int G, float eps, int cache,
                                             unsigned long long first, unsigned long long key, unsigned int step,
                                             unsigned int id, float p, float scale, const float* __restrict__ x,
                                             const float* __restrict__ gamma, const float* __restrict__ beta,
                                             float* __restrict__ y) {
	HG_DYNAMIC_SHARED(float, xcache);
	hg_group_norm_silu_body<true>(N, C, S, G, eps, cache, x, gamma, beta, y, xcache,
	                              hg_drop{first, key, step, id, p, scale});
}
HG_REGISTER(hg_group_norm_silu_dropout);

// The backward pass of hg_group_norm (silu = 0; beta unused) or hg_group_norm_silu (silu = 1), one
// block per (sample, group), in three passes over the group:
//   1. the Welford statistics (the forward's, recomputed from x);
//   2. per channel c: dz = dy, or dy·silu'(z) with z = x̂·gamma[c] + beta[c], and the block sums
//      Σ_s dz·x̂ and Σ_s dz, written to partial[0][n][c] and partial[1][n][c] (dγ and dβ of the
//      sample) and accumulated, times gamma[c], into the group's Σ g·x̂ and Σ g;
//   3. dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) + keep·dx (dx not read when keep = 0).
// cache = 0: every pass reads x and dy from global memory (x three times, dy twice); 1: pass 1
// stores x in dynamic shared memory (C/G·S floats), dy is read twice; 2: dy is stored next to it
// (2·C/G·S floats) and pass 2 replaces it with dz, so x and dy are read once.
// smem is the kernel's dynamic shared memory. DROP (hg_group_norm_silu_dropout_backward): every
// load of dy from global memory is dy·mask (hg_drop_apply), so what the passes see is the unfused
// dropout backward's output.
template <bool DROP>
static __device__ __forceinline__ void hg_group_norm_backward_body(int N, int C, int S, int G, float eps, int silu,
                                                                   float keep, int cache, const float* __restrict__ x,
                                                                   const float* __restrict__ gamma,
                                                                   const float* __restrict__ beta,
                                                                   const float* __restrict__ dy,
                                                                   float* __restrict__ dx,
                                                                   float* __restrict__ partial, float* smem,
                                                                   hg_drop drop) {
	__shared__ float buf[2 * HG_BLOCK];
	int cpg = C / G;
	long long size = (long long)cpg * S;
	float* xcache = cache >= 1 ? smem : nullptr;
	float* dzcache = cache >= 2 ? smem + size : nullptr;
	for (int ng = blockIdx.x; ng < N * G; ng += gridDim.x) {
		int n = ng / G, g = ng % G;
		long long base = ((long long)n * C + (long long)g * cpg) * S;
		const float* dyg = dy + base;
		if (dzcache) {
			for (long long j = threadIdx.x; j < size; j += blockDim.x) {
				float d = dyg[j];
				if (DROP) d = hg_drop_apply(drop, base + j, d);
				dzcache[j] = d;
			}
		}
		float mean, rstd;
		hg_group_moments(x + base, size, eps, xcache, mean, rstd); // its barriers publish both caches
		const float* xs = xcache ? xcache : x + base;
		const float* ds = dzcache ? dzcache : dyg;
		float sg = 0.0f, sgx = 0.0f; // Σ g and Σ g·x̂ over the group
		for (int k = 0; k < cpg; k++) {
			int c = g * cpg + k;
			float gc = gamma[c];
			float dg = 0.0f, db = 0.0f;
			for (int s = threadIdx.x; s < S; s += blockDim.x) {
				long long j = (long long)k * S + s;
				float xh = (xs[j] - mean) * rstd;
				float d = ds[j];
				if (DROP && !dzcache) d = hg_drop_apply(drop, base + j, d);
				if (silu) {
					d = hg_silu_dz(xh * gc + beta[c], d);
					if (dzcache) dzcache[j] = d;
				}
				dg += d * xh;
				db += d;
			}
			hg_block_sum2(dg, db, buf); // its barriers also publish the dz written above
			if (threadIdx.x == 0) {
				partial[(long long)n * C + c] = dg;
				partial[((long long)N + n) * C + c] = db;
			}
			sg += gc * db;
			sgx += gc * dg;
		}
		float mg = sg / (float)size, mgx = sgx / (float)size;
		for (long long j = threadIdx.x; j < size; j += blockDim.x) {
			int c = g * cpg + (int)(j / S);
			float gc = gamma[c];
			float xh = (xs[j] - mean) * rstd;
			float d = ds[j];
			if (DROP && !dzcache) d = hg_drop_apply(drop, base + j, d);
			if (silu && !dzcache) d = hg_silu_dz(xh * gc + beta[c], d);
			float v = rstd * (gc * d - mg - xh * mgx);
			if (keep != 0.0f) v += keep * dx[base + j];
			dx[base + j] = v;
		}
		__syncthreads(); // the next group overwrites the caches
	}
}

HG_KERNEL_SHARED(hg_group_norm_backward)(int N, int C, int S, int G, float eps, int silu, float keep, int cache,
                                         const float* __restrict__ x, const float* __restrict__ gamma,
                                         const float* __restrict__ beta, const float* __restrict__ dy,
                                         float* __restrict__ dx, float* __restrict__ partial) {
	HG_DYNAMIC_SHARED(float, smem);
	hg_group_norm_backward_body<false>(N, C, S, G, eps, silu, keep, cache, x, gamma, beta, dy, dx, partial, smem, hg_drop{});
}
HG_REGISTER(hg_group_norm_backward);

// hg_group_norm_backward of the SiLU (silu = 1) with dy·mask: keep and cache as there.
HG_KERNEL_SHARED(hg_group_norm_silu_dropout_backward)(int N, int C, int S, int G, float eps, float keep, int cache,
                                                      unsigned long long first, unsigned long long key,
                                                      unsigned int step, unsigned int id, float p, float scale,
                                                      const float* __restrict__ x, const float* __restrict__ gamma,
                                                      const float* __restrict__ beta, const float* __restrict__ dy,
                                                      float* __restrict__ dx, float* __restrict__ partial) {
	HG_DYNAMIC_SHARED(float, smem);
	hg_group_norm_backward_body<true>(N, C, S, G, eps, 1, keep, cache, x, gamma, beta, dy, dx, partial, smem,
	                                  hg_drop{first, key, step, id, p, scale});
}
HG_REGISTER(hg_group_norm_silu_dropout_backward);

// The batch sums of hg_group_norm_backward's partials (2, N, C) into dgamma and dbeta (C), one
// thread per channel, n in order, in double.
HG_KERNEL(hg_group_norm_param_sum)(int N, int C, const float* __restrict__ partial, float* __restrict__ dgamma,
                                   float* __restrict__ dbeta) {
	HG_FOR(c, C) {
		double dg = 0.0, db = 0.0;
		for (int n = 0; n < N; n++) {
			dg += partial[(long long)n * C + c];
			db += partial[((long long)N + n) * C + c];
		}
		dgamma[c] = (float)(dgamma[c] + dg);
		dbeta[c] = (float)(dbeta[c] + db);
	}
}
HG_REGISTER(hg_group_norm_param_sum);
