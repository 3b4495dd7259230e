// groupnorm.cu: group normalisation forward, one block per (sample, group).
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
//   hg_group_norm  x is (N, C, S) with S the spatial size; group g holds channels
//                  [g·C/G, (g+1)·C/G). mean and variance (biased, two passes for accuracy) over the
//                  group's C/G·S values; y = (x − mean)·rstd·gamma[c] + beta[c]; mean and rstd
//                  (N·G each) are saved for the backward pass.
#include "common.cuh"

HG_KERNEL(hg_group_norm)(int N, int C, int S, int G, float eps, const float* __restrict__ x,
                         const float* __restrict__ gamma, const float* __restrict__ beta,
                         float* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ rstd_out) {
	__shared__ float buf[HG_BLOCK];
	int cpg = C / G;
	long long size = (long long)cpg * S;
	for (int ng = blockIdx.x; ng < N * G; ng += gridDim.x) {
		int n = ng / G, g = ng % G;
		long long base = ((long long)n * C + (long long)g * cpg) * S;
		float s = 0.0f;
		for (long long j = threadIdx.x; j < size; j += blockDim.x) s += x[base + j];
		float mean = hg_block_reduce(0, s, buf) / (float)size;
		float v = 0.0f;
		for (long long j = threadIdx.x; j < size; j += blockDim.x) {
			float dlt = x[base + j] - mean;
			v += dlt * dlt;
		}
		float rstd = 1.0f / sqrtf(hg_block_reduce(0, v, buf) / (float)size + eps);
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
