// warp.cuh: the warp-level instructions the tensor-core kernels use, one macro layer with two
// implementations: inline PTX under nvcc, and a block-level emulation under the host shim
// (HG_SHIM) that follows the PTX ISA's fragment layout exactly, so a kernel that loads or stores
// a fragment wrongly gives wrong numbers on the CPU too.
//
//   hg_tf32(x)               x rounded to TF32 (cvt.rna.tf32.f32: 10 mantissa bits kept, to nearest,
//                            ties away from zero), returned as a float whose low 13 bits are 0
//   hg_mma_tf32(d, a, b)     d += A·B for one warp: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
//   hg_bf16x2(lo, hi)        lo and hi rounded to BF16 (cvt.rn.bf16x2.f32: 8 significant bits, to
//                            nearest, ties to even) and packed in one 32-bit register, lo in the low half
//   hg_mma_bf16(d, a, b)     d += A·B for one warp: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
//   hg_cp_async4(dst, src, ok)  cp.async.ca.shared.global of 4 bytes from src to the shared dst, or
//                            4 zero bytes where !ok (src-size 0: src is not read)
//   hg_cp_async_commit()     cp.async.commit_group: the copies issued since the last one form a group
//   hg_cp_async_wait<N>()    cp.async.wait_group N: all but the newest N groups have landed
//                            (a thread's own copies: a barrier must follow before others read them)
//
// Fragment layout of m16n8k8 with TF32 inputs (PTX ISA, "Matrix fragments for mma.m16n8k8"), with
// g = lane >> 2 and q = lane & 3:
//   A (16×8, row-major), 4 registers:  a0 (g, q)   a1 (g+8, q)   a2 (g, q+4)   a3 (g+8, q+4)
//   B (8×8, column-major), 2 registers: b0 (k q, n g)   b1 (k q+4, n g)
//   C, D (16×8), 4 floats:             c0 (g, 2q)  c1 (g, 2q+1)  c2 (g+8, 2q)  c3 (g+8, 2q+1)
// Fragment layout of m16n8k16 with BF16 inputs (PTX ISA, "Matrix fragments for mma.m16n8k16 with
// floating point type"): every 32-bit register holds two BF16 values, the lower-indexed one in its
// low half; element e of a register pair (half h of register r) is e = 2r + h:
//   A (16×16, row-major), 4 registers:  a0 (g, 2q|2q+1)  a1 (g+8, 2q|2q+1)  a2 (g, 2q+8|2q+9)  a3 (g+8, 2q+8|2q+9)
//   B (16×8, column-major), 2 registers: b0 (k 2q|2q+1, n g)   b1 (k 2q+8|2q+9, n g)
//   C, D as for m16n8k8.
// The tensor core reads only a TF32 operand's upper 19 bits; the kernels round with hg_tf32 as
// they read the fragments from shared memory, and the emulation drops the low 13 bits as the hardware does.
//
// The emulation: every thread of the block stores its fragments in a block-wide staging area, all
// meet at a barrier, each thread computes its four outputs from its warp's 32 staged fragments
// (products exact in float64, summed in k order, added to c and rounded once), and all meet again
// before the staging area is reused. So every thread of a block must execute the same sequence of
// hg_mma_tf32 and hg_mma_bf16 calls (true of a GEMM main loop), exactly as mma.sync requires of a
// warp's lanes.
#pragma once

#ifdef HG_SHIM
#include <string.h>

static inline float hg_tf32(float x) {
	uint32_t u;
	memcpy(&u, &x, 4);
	if ((u & 0x7f800000u) != 0x7f800000u) { // finite: add half an ulp of TF32 to the magnitude, truncate
		u += 0x1000u;
		u &= 0xffffe000u;
	}
	float r;
	memcpy(&r, &u, 4);
	return r;
}

static inline double hg_tf32_bits(float x) { // the value the tensor core reads from a register
	uint32_t u;
	memcpy(&u, &x, 4);
	u &= 0xffffe000u;
	float r;
	memcpy(&r, &u, 4);
	return (double)r;
}

#define HG_MMA_MAX_THREADS 1024

// hg_mma_emulate is the emulation both shapes share: every thread stages its 4 A and 2 B registers
// (of type T), all meet, each computes its four D values of m16n8kK as the K products av(A's staged
// registers of the warp, row, k) · bv(B's, col, k), exact in float64, summed in k order, added to c
// and rounded once, and all meet again.
template <typename T, int K, typename FA, typename FB>
static inline void hg_mma_emulate(float d[4], const T a[4], const T b[2], FA av, FB bv) {
	static T sa[HG_MMA_MAX_THREADS][4], sb[HG_MMA_MAX_THREADS][2];
	const int t = (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
	for (int i = 0; i < 4; i++) sa[t][i] = a[i];
	sb[t][0] = b[0];
	sb[t][1] = b[1];
	__syncthreads();
	const int lane = t & 31, w0 = t - lane, g = lane >> 2, q = lane & 3;
	for (int i = 0; i < 4; i++) {
		const int row = g + 8 * (i >> 1), col = 2 * q + (i & 1);
		double s = 0.0;
		for (int k = 0; k < K; k++) s += av(sa + w0, row, k) * bv(sb + w0, col, k);
		d[i] = (float)((double)d[i] + s);
	}
	__syncthreads();
}

static inline void hg_mma_tf32(float d[4], const float a[4], const float b[2]) {
	// A(row, k) is in lane (row mod 8)·4 + k mod 4, register (row ≥ 8) + 2·(k ≥ 4);
	// B(k, col) in lane col·4 + k mod 4, register (k ≥ 4).
	hg_mma_emulate<float, 8>(
	    d, a, b,
	    [](const float (*sa)[4], int row, int k) { return hg_tf32_bits(sa[(row & 7) * 4 + (k & 3)][(row >> 3) + 2 * (k >> 2)]); },
	    [](const float (*sb)[2], int col, int k) { return hg_tf32_bits(sb[col * 4 + (k & 3)][k >> 2]); });
}

static inline unsigned hg_bf16(float x) { // the BF16 bits of x, in the low 16 bits
	uint32_t u;
	memcpy(&u, &x, 4);
	if ((u & 0x7f800000u) != 0x7f800000u) u += 0x7fffu + ((u >> 16) & 1u); // finite: to nearest, ties to even
	else if (u & 0x007fffffu) u |= 0x00400000u;                             // NaN stays NaN (quiet)
	return u >> 16;
}

static inline unsigned hg_bf16x2(float lo, float hi) { return hg_bf16(lo) | hg_bf16(hi) << 16; }

// cp.async on the shim is asynchronous too, so that a missing wait or barrier reads stale shared
// memory as it may on a GPU: each thread's copies wait in its own queue, commit closes a group, and
// wait<N> performs every committed group but the newest N, in order. (A GPU may land a copy any time
// before the wait; the shim lands it as late as allowed, which exposes the same bugs.)
struct HgCpAsync {
	float* dst;
	const float* src;
	bool ok;
};
struct HgCpAsyncQueue {
	std::vector<HgCpAsync> copies; // issued, not yet performed
	std::vector<size_t> groups;     // the end of each committed group in copies
};
static inline HgCpAsyncQueue& hg_cp_async_queue() {
	static HgCpAsyncQueue q[HG_MMA_MAX_THREADS];
	return q[threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)];
}
static inline void hg_cp_async4(float* dst, const float* src, bool ok) { hg_cp_async_queue().copies.push_back({dst, src, ok}); }
static inline void hg_cp_async_commit() {
	HgCpAsyncQueue& q = hg_cp_async_queue();
	q.groups.push_back(q.copies.size());
}
template <int N> static inline void hg_cp_async_wait() {
	HgCpAsyncQueue& q = hg_cp_async_queue();
	if (q.groups.size() <= (size_t)N) return;
	const size_t done = q.groups[q.groups.size() - N - 1]; // copies [0, done) land now
	for (size_t i = 0; i < done; i++) *q.copies[i].dst = q.copies[i].ok ? *q.copies[i].src : 0.0f;
	q.copies.erase(q.copies.begin(), q.copies.begin() + (long)done);
	q.groups.erase(q.groups.begin(), q.groups.end() - N);
	for (size_t& g : q.groups) g -= done;
}

static inline double hg_bf16_value(unsigned w, int h) { // half h of a register as the tensor core reads it
	const uint32_t u = (h ? w >> 16 : w & 0xffffu) << 16;
	float r;
	memcpy(&r, &u, 4);
	return (double)r;
}

static inline void hg_mma_bf16(float d[4], const unsigned a[4], const unsigned b[2]) {
	// A(row, k) is in lane (row mod 8)·4 + (k mod 8)/2, register (row ≥ 8) + 2·(k ≥ 8), half
	// k mod 2; B(k, col) in lane col·4 + (k mod 8)/2, register (k ≥ 8), half k mod 2.
	hg_mma_emulate<unsigned, 16>(
	    d, a, b,
	    [](const unsigned (*sa)[4], int row, int k) {
		    return hg_bf16_value(sa[(row & 7) * 4 + ((k & 7) >> 1)][(row >> 3) + 2 * (k >> 3)], k & 1);
	    },
	    [](const unsigned (*sb)[2], int col, int k) { return hg_bf16_value(sb[col * 4 + ((k & 7) >> 1)][k >> 3], k & 1); });
}

#else

static __device__ __forceinline__ float hg_tf32(float x) {
	unsigned r;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return __uint_as_float(r);
}

static __device__ __forceinline__ void hg_mma_tf32(float d[4], const float a[4], const float b[2]) {
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
	             "{%0,%1,%2,%3};"
	             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	             : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),
	               "r"(__float_as_uint(a[3])), "r"(__float_as_uint(b[0])), "r"(__float_as_uint(b[1])));
}

static __device__ __forceinline__ unsigned hg_bf16x2(float lo, float hi) {
	unsigned r;
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); // the first source goes to the upper half
	return r;
}

static __device__ __forceinline__ void hg_cp_async4(float* dst, const float* src, bool ok) {
	const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(d), "l"(src), "r"(ok ? 4 : 0) : "memory");
}

static __device__ __forceinline__ void hg_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

template <int N> static __device__ __forceinline__ void hg_cp_async_wait() {
	asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

static __device__ __forceinline__ void hg_mma_bf16(float d[4], const unsigned a[4], const unsigned b[2]) {
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
	             "{%0,%1,%2,%3};"
	             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

#endif
