// softmax.cu: softmax over the last axis, forward and backward, one block per row.
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
//   hg_softmax_fwd  y = exp(s·x − max s·x) / Σ exp(s·x − max s·x)     (rows × cols; s the scale,
//                   1 for a plain softmax, 1/√C in attention)
//   hg_softmax_bwd  dx = s·y ⊙ (dy − Σ dy ⊙ y)                        (rows × cols)
// Three (forward) or two (backward) passes over the row, each a strided walk plus a block tree.
#include "common.cuh"

HG_KERNEL(hg_softmax_fwd)(int rows, int cols, float scale, const float* __restrict__ x, float* __restrict__ y) {
	__shared__ float buf[HG_BLOCK];
	for (int row = blockIdx.x; row < rows; row += gridDim.x) {
		const float* xr = x + (long long)row * cols;
		float* yr = y + (long long)row * cols;
		float m = -INFINITY;
		for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, scale * xr[j]);
		m = hg_block_reduce(1, m, buf);
		float s = 0.0f;
		for (int j = threadIdx.x; j < cols; j += blockDim.x) s += expf(scale * xr[j] - m);
		s = hg_block_reduce(0, s, buf);
		float inv = 1.0f / s;
		for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = expf(scale * xr[j] - m) * inv;
	}
}
HG_REGISTER(hg_softmax_fwd);

HG_KERNEL(hg_softmax_bwd)(int rows, int cols, float scale, const float* __restrict__ y, const float* __restrict__ dy,
                          float* __restrict__ dx) {
	__shared__ float buf[HG_BLOCK];
	for (int row = blockIdx.x; row < rows; row += gridDim.x) {
		long long base = (long long)row * cols;
		float dot = 0.0f;
		for (int j = threadIdx.x; j < cols; j += blockDim.x) dot += dy[base + j] * y[base + j];
		dot = hg_block_reduce(0, dot, buf);
		for (int j = threadIdx.x; j < cols; j += blockDim.x) dx[base + j] = scale * y[base + j] * (dy[base + j] - dot);
	}
}
HG_REGISTER(hg_softmax_bwd);
