// layout.cu: data movement: strided copy (permute, slice, concat, slice-add) and row gather/scatter.
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
//   hg_strided_copy  dst[off_d(i)] (+)= src[off_s(i)] for every index i of shape d0..d5; one thread
//                    per element, so each destination element has exactly one writer (no atomics);
//                    the index digits by 32-bit fast division (m0..m5, r0..r5: hg_fastdiv)
//   hg_gather_rows   y[r, c] = x[idx[r], c]
//   hg_scatter_rows  y[idx[r], c] += x[r, c]: one thread per column walks the rows in order, so
//                    repeated indices accumulate deterministically, in the Go reference's order
#include "common.cuh"

HG_KERNEL(hg_strided_copy)(int n, int accumulate, int d0, int d1, int d2, int d3, int d4, int d5,
                           int s0, int s1, int s2, int s3, int s4, int s5,
                           int t0, int t1, int t2, int t3, int t4, int t5,
                           const float* __restrict__ src, float* __restrict__ dst,
                           int m0, int m1, int m2, int m3, int m4, int m5, int r0, int r1, int r2, int r3, int r4, int r5) {
	const int d[HG_MAX_RANK] = {d0, d1, d2, d3, d4, d5};
	const int ss[HG_MAX_RANK] = {s0, s1, s2, s3, s4, s5};
	const int ts[HG_MAX_RANK] = {t0, t1, t2, t3, t4, t5};
	const unsigned mul[HG_MAX_RANK] = {(unsigned)m0, (unsigned)m1, (unsigned)m2, (unsigned)m3, (unsigned)m4, (unsigned)m5};
	const int shr[HG_MAX_RANK] = {r0, r1, r2, r3, r4, r5};
	HG_FOR(i, n) {
		unsigned rest = (unsigned)i; // n < 2³¹
		long long os = 0, od = 0;
		HG_UNROLL
		for (int k = HG_MAX_RANK - 1; k >= 0; k--) {
			const unsigned q = hg_fastdiv(rest, mul[k], shr[k]);
			const unsigned c = rest - q * (unsigned)d[k];
			rest = q;
			os += (long long)c * ss[k];
			od += (long long)c * ts[k];
		}
		if (accumulate) dst[od] += src[os];
		else dst[od] = src[os];
	}
}
HG_REGISTER(hg_strided_copy);

HG_KERNEL(hg_gather_rows)(int rows, int cols, const int* __restrict__ idx, const float* __restrict__ x,
                          float* __restrict__ y) {
	HG_FOR(i, (long long)rows * cols) {
		long long r = i / cols, c = i % cols;
		y[i] = x[(long long)idx[r] * cols + c];
	}
}
HG_REGISTER(hg_gather_rows);

HG_KERNEL(hg_scatter_rows)(int rows, int cols, const int* __restrict__ idx, const float* __restrict__ x,
                           float* __restrict__ y) {
	HG_FOR(c, cols) {
		for (int r = 0; r < rows; r++) y[(long long)idx[r] * cols + c] += x[(long long)r * cols + c];
	}
}
HG_REGISTER(hg_scatter_rows);
