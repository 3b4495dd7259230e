// common.cuh: what every kernel family shares.
//
// The same sources build two ways:
//   - nvcc -ptx (make -C kernels ptx): real CUDA, one PTX module per family and architecture;
//   - g++ -x c++ -include shim/cuda_shim.h (HG_SHIM defined): the host shim, which runs each
//     block's threads as fibers on the CPU so that tests compare every kernel with the Go reference.
//
// A kernel is declared with HG_KERNEL(name)(params) { body } and followed by HG_REGISTER(name);
// which is empty under nvcc and registers the kernel by name in the shim. Kernel parameters are
// pointers, int, float or double only (one 8-byte slot each in the Go launcher), never structs.
#pragma once

#ifndef HG_SHIM
#define HG_UNROLL _Pragma("unroll")
#define HG_KERNEL(name) extern "C" __global__ void name
#define HG_REGISTER(name)
#define HG_DYNAMIC_SHARED(type, var) extern __shared__ type var[]
#endif

// HG_UNROLL before a loop with a compile-time trip count asks nvcc to unroll it (register arrays
// indexed by the loop variable then stay in registers); the shim ignores it.
#ifdef HG_SHIM
#define HG_UNROLL
#endif

// Threads per block of the 1-D kernels. The Go launcher uses the same numbers (cuda/kernels.go).
#define HG_BLOCK 256

// Grid-stride loop over [0, n).
#define HG_FOR(i, n) \
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)(n); \
	     i += (long long)blockDim.x * gridDim.x)

// Maximum rank of the strided kernels (the launcher coalesces dimensions first).
#define HG_MAX_RANK 6

// hg_fastdiv is n / d for 0 ≤ n < 2³¹ and 1 ≤ d < 2³¹, from the divisor's magic pair (mul, shr) that
// the launcher computes (cuda/ops.go, fastDivisor; CUTLASS's FastDivmod): d = 1 has mul = 0 and gives
// n; otherwise, with l = ⌈log₂ d⌉, mul = ⌈2^(31+l) / d⌉ < 2³² and shr = l − 1, and
// n / d = ⌊n·mul / 2^(32+shr)⌋ exactly for every n < 2³¹. One multiply-high and a shift instead of a
// 64-bit division's ~70 instructions.
static __device__ __forceinline__ unsigned hg_fastdiv(unsigned n, unsigned mul, int shr) {
	return mul == 0 ? n : __umulhi(n, mul) >> shr;
}

// Block-wide reduction of v over HG_BLOCK threads through shared memory `buf` (HG_BLOCK floats).
// Every thread of the block must call it; every thread gets the result. kind 0 = sum, 1 = max
// (NaN wins, as in the Go reference).
static __device__ __forceinline__ float hg_combine(int kind, float a, float b) {
	if (kind == 0) return a + b;
	return (b > a || b != b) ? b : a;
}

static __device__ __forceinline__ float hg_block_reduce(int kind, float v, float* buf) {
	int t = threadIdx.x;
	buf[t] = v;
	__syncthreads();
	for (int s = HG_BLOCK / 2; s > 0; s >>= 1) {
		if (t < s) buf[t] = hg_combine(kind, buf[t], buf[t + s]);
		__syncthreads();
	}
	float r = buf[0];
	__syncthreads(); // buf may be reused right after
	return r;
}

// A kernel that uses dynamic shared memory (HG_DYNAMIC_SHARED) is declared with HG_KERNEL_SHARED:
// the same kernel, whose generated Go launcher takes the bytes to give it (internal/opgen).
#define HG_KERNEL_SHARED(name) HG_KERNEL(name)
