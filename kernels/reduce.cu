// reduce.cu: sum and max over one axis of a tensor viewed as (outer, r, inner).
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
//   hg_reduce_rows  inner == 1: one block per row, a strided walk then a shared-memory tree
//                   (kind 0 sum, 1 max; NaN propagates through max)
//   hg_reduce_cols  inner > 1: one thread per (outer, inner) output walks r; consecutive threads
//                   read consecutive addresses, so the loads coalesce
#include "common.cuh"

HG_KERNEL(hg_reduce_rows)(int rows, int r, int kind, const float* __restrict__ x, float* __restrict__ y) {
	__shared__ float buf[HG_BLOCK];
	for (int row = blockIdx.x; row < rows; row += gridDim.x) {
		const float* p = x + (long long)row * r;
		float acc = kind == 0 ? 0.0f : -INFINITY;
		for (int j = threadIdx.x; j < r; j += blockDim.x) acc = hg_combine(kind, acc, p[j]);
		acc = hg_block_reduce(kind, acc, buf);
		if (threadIdx.x == 0) y[row] = acc;
	}
}
HG_REGISTER(hg_reduce_rows);

HG_KERNEL(hg_reduce_cols)(int outer, int r, int inner, int kind, const float* __restrict__ x,
                          float* __restrict__ y) {
	HG_FOR(i, (long long)outer * inner) {
		long long o = i / inner, c = i % inner;
		const float* p = x + o * r * inner + c;
		float acc = kind == 0 ? 0.0f : -INFINITY;
		for (int j = 0; j < r; j++) acc = hg_combine(kind, acc, p[(long long)j * inner]);
		y[i] = acc;
	}
}
HG_REGISTER(hg_reduce_cols);
