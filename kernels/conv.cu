// conv.cu: 2-D convolutions as implicit GEMMs: the forward pass, the input gradient and the weight
// gradient, each gathering its operand tiles straight from the NCHW tensors into shared memory (no
// column matrix in device memory), on CUDA cores in FP32 (strict) or on tensor cores in TF32.
//
// Build: make -C kernels ptx; host shim: see common.cuh and warp.cuh.
//
// With x (N, C, H, W), w (O, C, KS, KS), y (N, O, OH, OW), stride S, padding PD, KK = KS², R = C·KK,
// P = OH·OW and HW = H·W, each pass is one GEMM D (M × NC) = A (M × K) · B (K × NC):
//
//	pass   M   NC      K      A(m, k)                      B(k, j)                              D(m, j)
//	fwd    O   N·P     R      w[o, (c,ky,kx)]              x[n, c, oy·S−PD+ky, ox·S−PD+kx]      y[n, o, p] (+bias)
//	dgrad  C   N·HW    O·KK   w[o, c, ky, kx], k=(o,ky,kx)  dy[n, o, (iy+PD−ky)/S, (ix+PD−kx)/S]  dx[n, c, iy, ix]
//	wgrad  O   R       N·P    dy[n, o, p], k = (n, p)      x[n, c, oy·S−PD+ky, ox·S−PD+kx]      dw[o, (c,ky,kx)]
//
// (B is 0 outside the image; in dgrad also where iy+PD−ky or ix+PD−kx is not a multiple of S.)
// D is written with D = acc (+ bias) + beta·D (beta = 0 never reads D). bias: biasMode 0 none,
// 1 per channel bias[o], 2 per sample and channel bias[n·O + o] (the time embedding's), 3 both:
// bias2[n·O + o] + bias[o], added in float32 first (as the op list's Add of the two did). With res
// (not null), the forward pass ends with the residual join y = (res + h)·scale, h the convolution
// with its bias, as tensor.AddScaled(res, h, scale) rounds it (NCSN++'s (x + h)/√2). In the weight
// gradient, biasMode 1 means bias is the per-channel bias's gradient: db[o] += Σ_{n,p} dy[n, o, p],
// summed in float64 from the dy tiles the kernel loads anyway.
//
// Tiles: BM × BN outputs per block of 256 threads, K in steps of 16 staged through shared memory
// (HgConvLoader: which thread gathers which element). The
// index arithmetic is 32-bit and division-free in the main loop: every k a thread loads moves by 16
// per step, so its digits (c, ky, kx) or (n, oy, ox) advance by a fixed step with carries
// (HgRadix). The caller (cuda/conv.go) keeps every tensor under 2³¹ elements.
//   f32   the next step's global loads issued into registers before the current step's products,
//         one shared tile; each thread a (BM/16) × (BN/16) register tile of FFMA products: the
//         strict-FP32 path (hg_conv_f32)
//   tf32  a ring of 4 shared tiles (dynamic shared memory) filled by cp.async 3 steps ahead; 8 warps (2 × 4), each a (BM/2) × (BN/4)
//         tile of m16n8k8 TF32 mma.sync products (warp.cuh), operands rounded to TF32 (cvt.rna)
//         as the fragments are read, FP32 accumulation (hg_conv_mma)
//   bf16  the same with m16n8k16 BF16 products, one per 16-long K step, each fragment register two
//         values of k rounded and packed by cvt.rn.bf16x2 (ties to even); the tensors stay FP32 in
//         device memory
// The weight gradient's K (N·P) is long: gridDim.z splits it into chunks of kchunk (a multiple of
// 16); with more than one split each writes its partial D to out + z·M·NC and hg_conv_splitk sums
// them in split order (deterministic, no atomics).
//   hg_conv_{fwd,dgrad,wgrad}_{f32,tf32,bf16}_{64,128}  BM = BN = 64 or 128
//   hg_conv_splitk                                 out = Σ_z ws[z] + beta·out, z ascending; and with
//                                                  nb > 0, db += Σ_z of the splits' bias sums
#include "common.cuh"
#include "warp.cuh"

#define HG_CONV_THREADS 256
#define HG_CONV_BK 16
#define HG_CONV_SKEW 8 // rows of BM + 8 floats: (BM + 8) mod 32 = 8 makes the fragment loads conflict-free
#define HG_CONV_SKEW_BF16 4 // BF16 reads rows 2q and 2q + 1: (BM + 4) mod 32 = 4 keeps them apart
#define HG_CONV_STAGES 4    // the tensor-core kernels' ring of shared tiles (dynamic shared memory:
                            // 4·16·(2·BM + 16)·4 bytes, 36 KiB at BM = 64, 68 KiB at 128, which the
                            // launcher opts in to: cuda/conv.go)

enum { HG_FWD = 0, HG_DGRAD = 1, HG_WGRAD = 2 };
enum { HG_F32 = 0, HG_TF32 = 1, HG_BF16 = 2 }; // the products' precision


// A mixed-radix counter v = (q·D1 + r1)·D2 + r2, advanced by a fixed step without division.
struct HgRadix {
	int D1, D2;     // the digits' sizes
	int dq, d1, d2; // the step's digits
};
struct HgDigits {
	int q, r1, r2;
};

static __device__ __forceinline__ HgRadix hg_radix(int D1, int D2, int step) {
	HgRadix r;
	r.D1 = D1;
	r.D2 = D2;
	r.d2 = step % D2;
	int t = step / D2;
	r.d1 = t % D1;
	r.dq = t / D1;
	return r;
}

static __device__ __forceinline__ HgDigits hg_digits(const HgRadix& r, int v) {
	HgDigits d;
	d.r2 = v % r.D2;
	int t = v / r.D2;
	d.r1 = t % r.D1;
	d.q = t / r.D1;
	return d;
}

static __device__ __forceinline__ void hg_advance(const HgRadix& r, HgDigits& d) {
	d.r2 += r.d2;
	if (d.r2 >= r.D2) {
		d.r2 -= r.D2;
		d.r1++;
	}
	d.r1 += r.d1;
	if (d.r1 >= r.D1) {
		d.r1 -= r.D1;
		d.q++;
	}
	d.q += r.dq;
}

struct HgConvGeom {
	int N, C, H, W, O, KS, S, PD, OH, OW;
	int P, HW, KK, R;
	int M, NC, K; // the GEMM
};

static __device__ __forceinline__ HgConvGeom hg_conv_geom(int mode, int N, int C, int H, int W, int O, int KS, int S,
                                                          int PD, int OH, int OW) {
	HgConvGeom s;
	s.N = N, s.C = C, s.H = H, s.W = W, s.O = O, s.KS = KS, s.S = S, s.PD = PD, s.OH = OH, s.OW = OW;
	s.P = OH * OW, s.HW = H * W, s.KK = KS * KS, s.R = C * KS * KS;
	if (mode == HG_FWD) s.M = O, s.NC = N * s.P, s.K = s.R;
	else if (mode == HG_DGRAD) s.M = C, s.NC = N * s.HW, s.K = O * s.KK;
	else s.M = O, s.NC = s.R, s.K = N * s.P;
	return s;
}

// t = u·S exactly, 0 ≤ u < n: u, or −1.
static __device__ __forceinline__ int hg_exact_div(int t, int S, int n) {
	if (t < 0) return -1;
	int u = t;
	if (S == 2) {
		if (t & 1) return -1;
		u = t >> 1;
	} else if (S != 1) {
		u = t / S;
		if (u * S != t) return -1;
	}
	return u < n ? u : -1;
}

// HgConvLoader gathers a block's operand tiles of one K step: A (BM × 16) and B (16 × BN), each
// thread a fixed set of elements, as (shared-memory row k, column, source, index, in range). The
// same traversal feeds the register-staged FP32 kernel and the cp.async tensor-core kernels.
//   A: thread tid takes k = tid mod 16 and rows tid/16 + 16i (NA of them);
//   B: fwd and dgrad column-fast, each thread one column and NB values of k; wgrad k-fast, each
//      thread one k (A's, sharing its digits) and NB columns.
template <int MODE, int BM, int BN>
struct HgConvLoader {
	static constexpr int BK = HG_CONV_BK, T = HG_CONV_THREADS;
	static constexpr int NA = BM / 16;            // A elements per thread
	static constexpr int NB = BK * BN / T;        // B elements per thread
	static constexpr bool bKFast = MODE == HG_WGRAD;
	HgConvGeom s;
	int tid, m0, n0, ke, kA, jB;
	HgRadix ra, rb;
	HgDigits da;
	HgDigits db[bKFast ? 1 : NB];
	int bn, by, bx;                                                          // fwd: n, oy·S − PD, ox·S − PD; dgrad: n, iy, ix
	bool jValid;
	int wOff[bKFast ? NB : 1], wKy[bKFast ? NB : 1], wKx[bKFast ? NB : 1]; // wgrad: (c·HW, ky, kx) of each column

	__device__ __forceinline__ HgConvLoader(const HgConvGeom& g, int tid_, int m0_, int n0_, int kb, int ke_)
	    : s(g), tid(tid_), m0(m0_), n0(n0_), ke(ke_), kA(tid_ % 16), bn(0), by(0), bx(0) {
		// A's k digits: fwd none (A is w's row); dgrad k = (o, ky·KS + kx); wgrad k = (n, oy, ox)
		if constexpr (MODE == HG_DGRAD) ra = hg_radix(1, s.KK, BK);
		else if constexpr (MODE == HG_WGRAD) ra = hg_radix(s.OH, s.OW, BK);
		else ra = hg_radix(1, 1, BK);
		da = hg_digits(ra, kb + kA);
		jB = n0 + (bKFast ? tid / 16 : tid % BN);
		jValid = jB < s.NC;
		rb = hg_radix(s.KS, s.KS, BK);
		if (MODE == HG_FWD) {
			int p = jB % s.P, n = jB / s.P;
			bn = n, by = (p / s.OW) * s.S - s.PD, bx = (p % s.OW) * s.S - s.PD;
		} else if (MODE == HG_DGRAD) {
			int hw = jB % s.HW;
			bn = jB / s.HW, by = hw / s.W, bx = hw % s.W;
		}
		if constexpr (!bKFast) {
			HG_UNROLL
			for (int i = 0; i < NB; i++) db[i] = hg_digits(rb, kb + tid / BN + (T / BN) * i);
		} else {
			HG_UNROLL
			for (int i = 0; i < NB; i++) {
				int j = jB + 16 * i;
				if (j >= s.NC) j = 0; // columns outside D load zeros
				int c = j / s.KK, rr = j % s.KK;
				wOff[i] = c * s.HW, wKy[i] = rr / s.KS - s.PD, wKx[i] = rr % s.KS - s.PD;
			}
		}
	}

	// A's element i of step k0: its row in the tile (the shared-memory column) and whether it lies
	// inside A; idx its offset in wt.
	__device__ __forceinline__ int aRow(int i) const { return tid / 16 + 16 * i; }

	// load calls fa(i, idx, ok) for A's elements and fb(i, k, col, idx, ok) for B's of step k0 (k
	// and col in the tile), idx 0 where !ok (the loads are branchless).
	template <class FA, class FB>
	__device__ __forceinline__ void load(int k0, FA fa, FB fb) const {
		const int k = k0 + kA;
		const bool kOK = k < ke;
		HG_UNROLL
		for (int i = 0; i < NA; i++) {
			const int m = m0 + aRow(i);
			const bool ok = kOK && m < s.M;
			long long idx;
			if constexpr (MODE == HG_FWD) idx = (long long)m * s.R + k;
			else if constexpr (MODE == HG_DGRAD) idx = (long long)(da.q * s.C + m) * s.KK + da.r2;
			else idx = ((long long)da.q * s.O + m) * s.P + da.r1 * s.OW + da.r2;
			fa(i, ok ? idx : 0, ok);
		}
		if constexpr (MODE == HG_WGRAD) {
			const long long xn = (long long)da.q * s.C * s.HW;
			const int iy0 = da.r1 * s.S, ix0 = da.r2 * s.S;
			HG_UNROLL
			for (int i = 0; i < NB; i++) {
				const int iy = iy0 + wKy[i], ix = ix0 + wKx[i];
				const bool ok = kOK && jB + 16 * i < s.NC && iy >= 0 && iy < s.H && ix >= 0 && ix < s.W;
				fb(i, kA, tid / 16 + 16 * i, ok ? xn + wOff[i] + iy * s.W + ix : 0, ok);
			}
		} else {
			HG_UNROLL
			for (int i = 0; i < NB; i++) {
				const HgDigits& d = db[i];
				const int kr = tid / BN + (T / BN) * i;
				bool ok = jValid && k0 + kr < ke;
				long long idx;
				if constexpr (MODE == HG_FWD) {
					const int iy = by + d.r1, ix = bx + d.r2;
					ok = ok && iy >= 0 && iy < s.H && ix >= 0 && ix < s.W;
					idx = ((long long)bn * s.C + d.q) * s.HW + iy * s.W + ix;
				} else {
					const int oy = hg_exact_div(by + s.PD - d.r1, s.S, s.OH);
					const int ox = hg_exact_div(bx + s.PD - d.r2, s.S, s.OW);
					ok = ok && oy >= 0 && ox >= 0;
					idx = (((long long)bn * s.O + d.q) * s.OH + oy) * s.OW + ox;
				}
				fb(i, kr, tid % BN, ok ? idx : 0, ok);
			}
		}
	}

	// advance moves the digits to the next step (k0 + 16).
	__device__ __forceinline__ void advance() {
		if constexpr (MODE != HG_FWD) hg_advance(ra, da);
		if constexpr (!bKFast)
			HG_UNROLL
			for (int i = 0; i < NB; i++) hg_advance(rb, db[i]);
	}
};

// hg_conv_bias_grad ends the weight gradient's per-channel bias sum (biasMode 1, blocks of the first
// column tile): bsum[i] is this thread's float64 sum of A row aRow(i) over its k (tid mod 16); the
// 16 threads of a row add theirs in k order, and one split adds its row total into bias (db), several
// write it after their partial D (hg_conv_splitk adds them up).
template <int NA>
static __device__ __forceinline__ void hg_conv_bias_grad(const HgConvGeom& s, int m0, const double* bsum, float* bias,
                                                         float* out) {
	__shared__ double rowSum[HG_CONV_THREADS];
	const int tid = threadIdx.x;
	HG_UNROLL
	for (int i = 0; i < NA; i++) {
		rowSum[tid] = bsum[i];
		__syncthreads();
		const int m = m0 + tid / 16 + 16 * i;
		if (tid % 16 == 0 && m < s.M) {
			double t = 0.0;
			for (int j = 0; j < 16; j++) t += rowSum[tid + j];
			if (gridDim.z > 1) out[(long long)gridDim.z * s.M * s.NC + (long long)blockIdx.z * s.M + m] = (float)t;
			else bias[m] = (float)((double)bias[m] + t);
		}
		__syncthreads();
	}
}

// hg_conv_store writes output (m, j) of the GEMM: D = v (+ bias) + beta·D, the forward's residual
// join, or a split's partial.
template <int MODE>
static __device__ __forceinline__ void hg_conv_store(const HgConvGeom& s, int m, int j, float v, float beta, int biasMode,
                                                     const float* bias, const float* bias2, const float* res, float scale,
                                                     float* out) {
	if (m >= s.M || j >= s.NC) return;
	long long idx;
	if (MODE == HG_FWD) {
		const int n = j / s.P;
		idx = ((long long)n * s.O + m) * s.P + (j - n * s.P);
		if (biasMode == 1) v += bias[m];
		else if (biasMode == 2) v += bias[n * s.O + m];
		else if (biasMode == 3) v += bias2[n * s.O + m] + bias[m];
		if (res != nullptr) { // the residual join: (r + h)·scale, the sum rounded first
			const float t = res[idx] + v;
			v = t * scale;
		}
	} else if (MODE == HG_DGRAD) {
		const int n = j / s.HW;
		idx = ((long long)n * s.C + m) * s.HW + (j - n * s.HW);
	} else {
		idx = (long long)m * s.NC + j;
		if (gridDim.z > 1) {
			out[(long long)blockIdx.z * s.M * s.NC + idx] = v;
			return;
		}
	}
	if (beta != 0.0f) v += beta * out[idx];
	out[idx] = v;
}

// hg_conv_f32: the strict-FP32 kernel. Each step's elements are loaded into registers while the
// previous step's products run, then stored to the one shared tile; each thread a (BM/16) × (BN/16)
// register tile of FFMA products.
template <int MODE, int BM, int BN>
static __device__ __forceinline__ void hg_conv_f32(const HgConvGeom s, int kchunk, float beta, int biasMode,
                                                   const float* __restrict__ in, const float* __restrict__ wt,
                                                   float* __restrict__ bias, const float* __restrict__ bias2,
                                                   const float* res, float scale, float* __restrict__ out) {
	typedef HgConvLoader<MODE, BM, BN> L;
	constexpr int BK = L::BK, NA = L::NA, NB = L::NB;
	__shared__ float As[BK][BM + HG_CONV_SKEW];
	__shared__ float Bs[BK][BN + HG_CONV_SKEW];
	const int tid = threadIdx.x;
	const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
	const int kb = blockIdx.z * kchunk, ke = s.K - kb < kchunk ? s.K : kb + kchunk;
	L ld(s, tid, m0, n0, kb, ke);

	float ra[NA], rb[NB];
	int rk[NB], rc[NB];
	auto load = [&](int k0) {
		ld.load(
		    k0, [&](int i, long long idx, bool ok) {
			    const float v = wt[idx];
			    ra[i] = ok ? v : 0.0f;
		    },
		    [&](int i, int k, int c, long long idx, bool ok) {
			    const float v = in[idx];
			    rb[i] = ok ? v : 0.0f;
			    rk[i] = k, rc[i] = c;
		    });
	};
	const bool biasSum = MODE == HG_WGRAD && biasMode == 1 && blockIdx.x == 0;
	double bsum[NA];
	HG_UNROLL
	for (int i = 0; i < NA; i++) bsum[i] = 0.0;

	constexpr int TM = BM / 16, TN = BN / 16;
	float acc[TM * TN];
	HG_UNROLL
	for (int i = 0; i < TM * TN; i++) acc[i] = 0.0f;
	const int tx = tid % 16, ty = tid / 16;

	if (kb < ke) load(kb);
	for (int k0 = kb; k0 < ke; k0 += BK) {
		HG_UNROLL
		for (int i = 0; i < NA; i++) {
			if (biasSum) bsum[i] += (double)ra[i];
			As[ld.kA][ld.aRow(i)] = ra[i];
		}
		HG_UNROLL
		for (int i = 0; i < NB; i++) Bs[rk[i]][rc[i]] = rb[i];
		__syncthreads();
		if (k0 + BK < ke) {
			ld.advance();
			load(k0 + BK);
		}
		HG_UNROLL
		for (int kk = 0; kk < BK; kk++) {
			float a[TM], b[TN];
			HG_UNROLL
			for (int i = 0; i < TM; i++) a[i] = As[kk][ty + 16 * i];
			HG_UNROLL
			for (int j = 0; j < TN; j++) b[j] = Bs[kk][tx + 16 * j];
			HG_UNROLL
			for (int i = 0; i < TM; i++)
				HG_UNROLL
				for (int j = 0; j < TN; j++) acc[i * TN + j] += a[i] * b[j];
		}
		__syncthreads();
	}
	if constexpr (MODE == HG_WGRAD)
		if (biasSum) hg_conv_bias_grad<NA>(s, m0, bsum, bias, out);
	HG_UNROLL
	for (int i = 0; i < TM; i++)
		HG_UNROLL
		for (int j = 0; j < TN; j++)
			hg_conv_store<MODE>(s, m0 + ty + 16 * i, n0 + tx + 16 * j, acc[i * TN + j], beta, biasMode, bias, bias2, res, scale,
			                    out);
}

// hg_conv_mma: the tensor-core kernels (PREC TF32 or BF16). A STAGES-deep ring of shared tiles (in
// dynamic shared memory) is filled by cp.async (4-byte copies, zero-filled outside the operands:
// warp.cuh) STAGES − 1 steps ahead of the products, one barrier per step; the operands are rounded to the precision as the
// fragments are read from shared memory (TF32: cvt.rna per value; BF16: cvt.rn.bf16x2 per pair of
// k). 8 warps (2 × 4), each a (BM/2) × (BN/4) tile of m16n8k8 (TF32) or m16n8k16 (BF16) products,
// FP32 accumulation. Shared-memory rows are padded so that the fragment reads are conflict-free:
// TF32 reads rows q and q + 4 (a stride of 8 banks), BF16 rows 2q and 2q + 1 (4 banks).
template <int MODE, int PREC, int BM, int BN>
static __device__ __forceinline__ void hg_conv_mma(const HgConvGeom s, int kchunk, float beta, int biasMode,
                                                   const float* __restrict__ in, const float* __restrict__ wt,
                                                   float* __restrict__ bias, const float* __restrict__ bias2,
                                                   const float* res, float scale, float* __restrict__ out) {
	typedef HgConvLoader<MODE, BM, BN> L;
	constexpr int BK = L::BK, NA = L::NA;
	constexpr int STAGES = HG_CONV_STAGES;
	constexpr int SKEW = PREC == HG_BF16 ? HG_CONV_SKEW_BF16 : HG_CONV_SKEW;
	HG_DYNAMIC_SHARED(float, smem); // STAGES·BK·(BM + SKEW) floats of A, then STAGES·BK·(BN + SKEW) of B
	float(*As)[BK][BM + SKEW] = reinterpret_cast<float(*)[BK][BM + SKEW]>(smem);
	float(*Bs)[BK][BN + SKEW] = reinterpret_cast<float(*)[BK][BN + SKEW]>(smem + STAGES * BK * (BM + SKEW));
	const int tid = threadIdx.x;
	const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
	const int kb = blockIdx.z * kchunk, ke = s.K - kb < kchunk ? s.K : kb + kchunk;
	L ld(s, tid, m0, n0, kb, ke);
	const int steps = kb < ke ? (ke - kb + BK - 1) / BK : 0;

	auto issue = [&](int st, int k0) { // step k0's tiles into stage st
		ld.load(
		    k0, [&](int i, long long idx, bool ok) { hg_cp_async4(&As[st][ld.kA][ld.aRow(i)], wt + idx, ok); },
		    [&](int i, int k, int c, long long idx, bool ok) { hg_cp_async4(&Bs[st][k][c], in + idx, ok); });
	};
	HG_UNROLL
	for (int st = 0; st < STAGES - 1; st++) {
		if (st < steps) {
			if (st > 0) ld.advance();
			issue(st, kb + st * BK);
		}
		hg_cp_async_commit(); // one group per stage, empty or not, so that wait counts stay uniform
	}

	const bool biasSum = MODE == HG_WGRAD && biasMode == 1 && blockIdx.x == 0;
	double bsum[NA];
	HG_UNROLL
	for (int i = 0; i < NA; i++) bsum[i] = 0.0;

	constexpr int WTM = BM / 2, WTN = BN / 4, MT = WTM / 16, NT = WTN / 8;
	float acc[MT * NT * 4];
	HG_UNROLL
	for (int i = 0; i < MT * NT * 4; i++) acc[i] = 0.0f;
	const int lane = tid & 31, warp = tid >> 5, wm = warp / 4, wn = warp % 4, g = lane >> 2, q = lane & 3;

	for (int it = 0; it < steps; it++) {
		hg_cp_async_wait<STAGES - 2>(); // this thread's copies of step it have landed
		__syncthreads();                // everyone's have, and step it − 1's stage is free
		const int next = it + STAGES - 1;
		if (next < steps) {
			ld.advance();
			issue(next % STAGES, kb + next * BK);
		}
		hg_cp_async_commit();
		const int st = it % STAGES;
		if (biasSum) {
			HG_UNROLL
			for (int i = 0; i < NA; i++) bsum[i] += (double)As[st][ld.kA][ld.aRow(i)];
		}
		if constexpr (PREC == HG_BF16) { // one m16n8k16 step: register r packs k rows 2q (+8r') and 2q+1
			unsigned a[MT][4], b[NT][2];
			HG_UNROLL
			for (int mt = 0; mt < MT; mt++) {
				const int r = wm * WTM + mt * 16 + g;
				a[mt][0] = hg_bf16x2(As[st][2 * q][r], As[st][2 * q + 1][r]);
				a[mt][1] = hg_bf16x2(As[st][2 * q][r + 8], As[st][2 * q + 1][r + 8]);
				a[mt][2] = hg_bf16x2(As[st][2 * q + 8][r], As[st][2 * q + 9][r]);
				a[mt][3] = hg_bf16x2(As[st][2 * q + 8][r + 8], As[st][2 * q + 9][r + 8]);
			}
			HG_UNROLL
			for (int nt = 0; nt < NT; nt++) {
				const int c = wn * WTN + nt * 8 + g;
				b[nt][0] = hg_bf16x2(Bs[st][2 * q][c], Bs[st][2 * q + 1][c]);
				b[nt][1] = hg_bf16x2(Bs[st][2 * q + 8][c], Bs[st][2 * q + 9][c]);
			}
			HG_UNROLL
			for (int mt = 0; mt < MT; mt++)
				HG_UNROLL
				for (int nt = 0; nt < NT; nt++) hg_mma_bf16(&acc[(mt * NT + nt) * 4], a[mt], b[nt]);
		} else {
			HG_UNROLL
			for (int k8 = 0; k8 < BK; k8 += 8) {
				float a[MT][4], b[NT][2];
				HG_UNROLL
				for (int mt = 0; mt < MT; mt++) {
					const int r = wm * WTM + mt * 16 + g;
					a[mt][0] = hg_tf32(As[st][k8 + q][r]);
					a[mt][1] = hg_tf32(As[st][k8 + q][r + 8]);
					a[mt][2] = hg_tf32(As[st][k8 + q + 4][r]);
					a[mt][3] = hg_tf32(As[st][k8 + q + 4][r + 8]);
				}
				HG_UNROLL
				for (int nt = 0; nt < NT; nt++) {
					const int c = wn * WTN + nt * 8 + g;
					b[nt][0] = hg_tf32(Bs[st][k8 + q][c]);
					b[nt][1] = hg_tf32(Bs[st][k8 + q + 4][c]);
				}
				HG_UNROLL
				for (int mt = 0; mt < MT; mt++)
					HG_UNROLL
					for (int nt = 0; nt < NT; nt++) hg_mma_tf32(&acc[(mt * NT + nt) * 4], a[mt], b[nt]);
			}
		}
	}
	hg_cp_async_wait<0>(); // no copy may still be in flight when the block exits
	if constexpr (MODE == HG_WGRAD)
		if (biasSum) hg_conv_bias_grad<NA>(s, m0, bsum, bias, out);
	HG_UNROLL
	for (int mt = 0; mt < MT; mt++)
		HG_UNROLL
		for (int nt = 0; nt < NT; nt++)
			HG_UNROLL
			for (int i = 0; i < 4; i++)
				hg_conv_store<MODE>(s, m0 + wm * WTM + mt * 16 + g + 8 * (i >> 1), n0 + wn * WTN + nt * 8 + 2 * q + (i & 1),
				                    acc[(mt * NT + nt) * 4 + i], beta, biasMode, bias, bias2, res, scale, out);
}

// hg_conv dispatches a kernel to its main loop.
template <int MODE, int PREC, int BM, int BN>
static __device__ __forceinline__ void hg_conv(const HgConvGeom s, int kchunk, float beta, int biasMode,
                                               const float* __restrict__ in, const float* __restrict__ wt,
                                               float* __restrict__ bias, const float* __restrict__ bias2,
                                               const float* res, float scale, float* __restrict__ out) {
	if constexpr (PREC == HG_F32) hg_conv_f32<MODE, BM, BN>(s, kchunk, beta, biasMode, in, wt, bias, bias2, res, scale, out);
	else hg_conv_mma<MODE, PREC, BM, BN>(s, kchunk, beta, biasMode, in, wt, bias, bias2, res, scale, out);
}

HG_KERNEL(hg_conv_fwd_f32_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                             float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                             float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                             float* __restrict__ out) {
	hg_conv<HG_FWD, HG_F32, 64, 64>(hg_conv_geom(HG_FWD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_fwd_f32_64);

HG_KERNEL(hg_conv_fwd_f32_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                              float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                              float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                              float* __restrict__ out) {
	hg_conv<HG_FWD, HG_F32, 128, 128>(hg_conv_geom(HG_FWD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_fwd_f32_128);

HG_KERNEL_SHARED(hg_conv_fwd_tf32_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                              float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                              float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                              float* __restrict__ out) {
	hg_conv<HG_FWD, HG_TF32, 64, 64>(hg_conv_geom(HG_FWD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_fwd_tf32_64);

HG_KERNEL_SHARED(hg_conv_fwd_tf32_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                               float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                               float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                               float* __restrict__ out) {
	hg_conv<HG_FWD, HG_TF32, 128, 128>(hg_conv_geom(HG_FWD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_fwd_tf32_128);

HG_KERNEL_SHARED(hg_conv_fwd_bf16_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                               float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                               float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                               float* __restrict__ out) {
	hg_conv<HG_FWD, HG_BF16, 64, 64>(hg_conv_geom(HG_FWD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_fwd_bf16_64);

HG_KERNEL_SHARED(hg_conv_fwd_bf16_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                float* __restrict__ out) {
	hg_conv<HG_FWD, HG_BF16, 128, 128>(hg_conv_geom(HG_FWD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_fwd_bf16_128);

HG_KERNEL(hg_conv_dgrad_f32_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                               float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                               float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                               float* __restrict__ out) {
	hg_conv<HG_DGRAD, HG_F32, 64, 64>(hg_conv_geom(HG_DGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_dgrad_f32_64);

HG_KERNEL(hg_conv_dgrad_f32_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                float* __restrict__ out) {
	hg_conv<HG_DGRAD, HG_F32, 128, 128>(hg_conv_geom(HG_DGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_dgrad_f32_128);

HG_KERNEL_SHARED(hg_conv_dgrad_tf32_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                float* __restrict__ out) {
	hg_conv<HG_DGRAD, HG_TF32, 64, 64>(hg_conv_geom(HG_DGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_dgrad_tf32_64);

HG_KERNEL_SHARED(hg_conv_dgrad_tf32_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                 float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                 float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                 float* __restrict__ out) {
	hg_conv<HG_DGRAD, HG_TF32, 128, 128>(hg_conv_geom(HG_DGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_dgrad_tf32_128);

HG_KERNEL_SHARED(hg_conv_dgrad_bf16_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                 float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                 float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                 float* __restrict__ out) {
	hg_conv<HG_DGRAD, HG_BF16, 64, 64>(hg_conv_geom(HG_DGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_dgrad_bf16_64);

HG_KERNEL_SHARED(hg_conv_dgrad_bf16_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                  float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                  float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                  float* __restrict__ out) {
	hg_conv<HG_DGRAD, HG_BF16, 128, 128>(hg_conv_geom(HG_DGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_dgrad_bf16_128);

HG_KERNEL(hg_conv_wgrad_f32_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                               float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                               float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                               float* __restrict__ out) {
	hg_conv<HG_WGRAD, HG_F32, 64, 64>(hg_conv_geom(HG_WGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_wgrad_f32_64);

HG_KERNEL(hg_conv_wgrad_f32_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                float* __restrict__ out) {
	hg_conv<HG_WGRAD, HG_F32, 128, 128>(hg_conv_geom(HG_WGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_wgrad_f32_128);

HG_KERNEL_SHARED(hg_conv_wgrad_tf32_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                float* __restrict__ out) {
	hg_conv<HG_WGRAD, HG_TF32, 64, 64>(hg_conv_geom(HG_WGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_wgrad_tf32_64);

HG_KERNEL_SHARED(hg_conv_wgrad_tf32_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                 float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                 float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                 float* __restrict__ out) {
	hg_conv<HG_WGRAD, HG_TF32, 128, 128>(hg_conv_geom(HG_WGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_wgrad_tf32_128);

HG_KERNEL_SHARED(hg_conv_wgrad_bf16_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                 float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                 float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                 float* __restrict__ out) {
	hg_conv<HG_WGRAD, HG_BF16, 64, 64>(hg_conv_geom(HG_WGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_wgrad_bf16_64);

HG_KERNEL_SHARED(hg_conv_wgrad_bf16_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                  float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                  float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                  float* __restrict__ out) {
	hg_conv<HG_WGRAD, HG_BF16, 128, 128>(hg_conv_geom(HG_WGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_wgrad_bf16_128);


HG_KERNEL(hg_conv_splitk)(int n, int splits, float beta, const float* __restrict__ ws, float* __restrict__ out, int nb,
                          float* __restrict__ db) {
	HG_FOR(i, n + nb) {
		if (i < n) {
			float s = ws[i];
			for (int z = 1; z < splits; z++) s += ws[(long long)z * n + i];
			out[i] = beta == 0.0f ? s : s + beta * out[i];
		} else { // the bias gradient's split totals, after the splits' partial D
			const float* p = ws + (long long)splits * n + (i - n);
			double t = 0.0;
			for (int z = 0; z < splits; z++) t += (double)p[(long long)z * nb];
			db[i - n] = (float)((double)db[i - n] + t);
		}
	}
}
HG_REGISTER(hg_conv_splitk);

// hg_warp_mma_tf32 runs one hg_mma_tf32 on a block of 32 threads: lane l takes its A fragment from
// a[4l…4l+3], its B fragment from b[2l, 2l+1] and its C fragment from d[4l…4l+3] (each rounded to
// TF32 as the kernels stage them), and writes D back to d. The test of the warp layer: it fills the
// fragments from its own copy of the PTX ISA's layout table (cuda/conv_test.go), and on a GPU the
// same launch checks the shim's emulation against the tensor cores.
HG_KERNEL(hg_warp_mma_tf32)(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ d) {
	const int l = threadIdx.x;
	float fa[4], fb[2], fd[4];
	for (int i = 0; i < 4; i++) fa[i] = hg_tf32(a[4 * l + i]), fd[i] = d[4 * l + i];
	fb[0] = hg_tf32(b[2 * l]), fb[1] = hg_tf32(b[2 * l + 1]);
	hg_mma_tf32(fd, fa, fb);
	for (int i = 0; i < 4; i++) d[4 * l + i] = fd[i];
}
HG_REGISTER(hg_warp_mma_tf32);

// hg_warp_mma_bf16 runs one hg_mma_bf16 on a block of 32 threads: lane l packs its A fragment from
// a[8l…8l+7] (register r from a[8l+2r] in the low half and a[8l+2r+1] in the high half), its B
// fragment from b[4l…4l+3] likewise, each rounded to BF16 as the kernels stage them, takes its C
// fragment from d[4l…4l+3] and writes D back there. The test (cuda/suite_test.go) fills them
// from its own copy of the PTX ISA's m16n8k16 layout table.
HG_KERNEL(hg_warp_mma_bf16)(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ d) {
	const int l = threadIdx.x;
	unsigned fa[4], fb[2];
	float fd[4];
	for (int r = 0; r < 4; r++) fa[r] = hg_bf16x2(a[8 * l + 2 * r], a[8 * l + 2 * r + 1]), fd[r] = d[4 * l + r];
	for (int r = 0; r < 2; r++) fb[r] = hg_bf16x2(b[4 * l + 2 * r], b[4 * l + 2 * r + 1]);
	hg_mma_bf16(fd, fa, fb);
	for (int i = 0; i < 4; i++) d[4 * l + i] = fd[i];
}
HG_REGISTER(hg_warp_mma_bf16);
