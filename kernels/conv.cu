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
// Tiles: BM × BN outputs per block of 256 threads, K in steps of 16 staged through shared memory,
// the next step's global loads issued into registers before the current step's products. The
// index arithmetic is 32-bit and division-free in the main loop: every k a thread loads moves by 16
// per step, so its digits (c, ky, kx) or (n, oy, ox) advance by a fixed step with carries
// (HgRadix). The caller (cuda/conv.go) keeps every tensor under 2³¹ elements.
//   f32   each thread a (BM/16) × (BN/16) register tile of FFMA products: the strict-FP32 path
//   tf32  8 warps (2 × 4), each a (BM/2) × (BN/4) tile of m16n8k8 TF32 mma.sync products
//         (warp.cuh); operands rounded to TF32 as they are staged, FP32 accumulation
//   bf16  the same warp tiling with m16n8k16 BF16 mma.sync products, one per 16-long K step;
//         operands rounded to BF16 (to nearest, ties to even) as they are staged and kept in
//         shared memory as pairs of k in one 32-bit word (k even in the low half), which is the
//         register layout of the A and B fragments: each fragment register is one 32-bit load;
//         FP32 accumulation. The tensors stay FP32 in device memory.
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

enum { HG_FWD = 0, HG_DGRAD = 1, HG_WGRAD = 2 };
enum { HG_F32 = 0, HG_TF32 = 1, HG_BF16 = 2 }; // the products' precision

// The shared-memory element of a precision: a float, or (BF16) a 32-bit word holding two k.
template <int PREC> struct HgConvElem {
	typedef float T;
};
template <> struct HgConvElem<HG_BF16> {
	typedef unsigned T;
};

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

template <int MODE, int PREC, int BM, int BN>
static __device__ __forceinline__ void hg_conv(const HgConvGeom s, int kchunk, float beta, int biasMode,
                                               const float* __restrict__ in, const float* __restrict__ wt,
                                               float* __restrict__ bias, const float* __restrict__ bias2,
                                               const float* res, float scale, float* __restrict__ out) {
	constexpr int BK = HG_CONV_BK, T = HG_CONV_THREADS;
	constexpr int NA = BM / 16;                                // A elements per thread: rows tid/16 + 16i, k tid%16
	constexpr int NB = BK * BN / T;                            // B elements per thread
	constexpr bool bKFast = MODE == HG_WGRAD;                  // B loaded k-fast (else column-fast)
	constexpr bool TC = PREC != HG_F32;                        // tensor cores
	constexpr int SK = PREC == HG_BF16 ? BK / 2 : BK;          // rows of k in shared memory
	typedef typename HgConvElem<PREC>::T Elem;
	__shared__ Elem As[SK][BM + HG_CONV_SKEW];
	__shared__ Elem Bs[SK][BN + HG_CONV_SKEW];

	const int tid = threadIdx.x;
	const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
	const int kb = blockIdx.z * kchunk, ke = s.K - kb < kchunk ? s.K : kb + kchunk;

	// A: this thread's k (tid % 16) and rows.
	const int kA = tid % 16;
	HgRadix ra; // fwd: none (A is w's row); dgrad: k = (o, ky·KS + kx); wgrad: k = (n, oy, ox)
	if constexpr (MODE == HG_DGRAD) ra = hg_radix(1, s.KK, BK);
	else if constexpr (MODE == HG_WGRAD) ra = hg_radix(s.OH, s.OW, BK);
	else ra = hg_radix(1, 1, BK);
	HgDigits da = hg_digits(ra, kb + kA);

	// B: fwd and dgrad load column-fast, each thread one column j and NB values of k; wgrad loads
	// k-fast, each thread one k (kA, sharing A's digits) and NB columns.
	const int jB = n0 + (bKFast ? tid / 16 : tid % BN);
	int bn = 0, by = 0, bx = 0; // fwd: n, oy·S − PD, ox·S − PD; dgrad: n, iy, ix
	bool jValid = jB < s.NC;
	HgRadix rb = hg_radix(s.KS, s.KS, BK);
	HgDigits db[bKFast ? 1 : NB];
	int wOff[bKFast ? NB : 1], wKy[bKFast ? NB : 1], wKx[bKFast ? NB : 1]; // wgrad: (c·HW, ky, kx) of each column
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
			if (j >= s.NC) j = 0; // columns outside D load zeros below
			int c = j / s.KK, rr = j % s.KK;
			wOff[i] = c * s.HW, wKy[i] = rr / s.KS - s.PD, wKx[i] = rr % s.KS - s.PD;
		}
	}

	float ra_[NA], rb_[NB];
	auto load = [&](int k0) {
		const int k = k0 + kA;
		const bool kOK = k < ke;
		HG_UNROLL
		for (int i = 0; i < NA; i++) {
			const int m = m0 + tid / 16 + 16 * i;
			const bool ok = kOK && m < s.M;
			long long idx;
			if constexpr (MODE == HG_FWD) idx = (long long)m * s.R + k;
			else if constexpr (MODE == HG_DGRAD) idx = (long long)(da.q * s.C + m) * s.KK + da.r2;
			else idx = ((long long)da.q * s.O + m) * s.P + da.r1 * s.OW + da.r2;
			const float v = wt[ok ? idx : 0]; // loads without branches: element 0 where out of range
			ra_[i] = ok ? v : 0.0f;
		}
		if constexpr (MODE == HG_WGRAD) {
			const long long xn = (long long)da.q * s.C * s.HW;
			const int iy0 = da.r1 * s.S, ix0 = da.r2 * s.S;
			HG_UNROLL
			for (int i = 0; i < NB; i++) {
				const int iy = iy0 + wKy[i], ix = ix0 + wKx[i];
				const bool ok = kOK && jB + 16 * i < s.NC && iy >= 0 && iy < s.H && ix >= 0 && ix < s.W;
				const float v = in[ok ? xn + wOff[i] + iy * s.W + ix : 0];
				rb_[i] = ok ? v : 0.0f;
			}
		} else {
			HG_UNROLL
			for (int i = 0; i < NB; i++) {
				const HgDigits& d = db[i];
				bool ok = jValid && k0 + tid / BN + (T / BN) * i < ke;
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
				const float v = in[ok ? idx : 0];
				rb_[i] = ok ? v : 0.0f;
			}
		}
	};
	auto advance = [&]() {
		if constexpr (MODE != HG_FWD) hg_advance(ra, da);
		if constexpr (!bKFast)
			HG_UNROLL
			for (int i = 0; i < NB; i++) hg_advance(rb, db[i]);
	};
	// The weight gradient with biasMode 1 also sums its A operand, dy, along k: the per-channel bias
	// gradient, in float64, by the blocks of the first column tile.
	const bool biasSum = MODE == HG_WGRAD && biasMode == 1 && blockIdx.x == 0;
	double bsum[NA];
	HG_UNROLL
	for (int i = 0; i < NA; i++) bsum[i] = 0.0;
	// put stores operand value v of step row k, column c of a tile in the precision's form.
	auto put = [&](auto& tile, int k, int c, float v) {
		if constexpr (PREC == HG_BF16) hg_half_store(&tile[k >> 1][c], k & 1, hg_bf16(v));
		else tile[k][c] = PREC == HG_TF32 ? hg_tf32(v) : v;
	};
	auto stage = [&]() {
		if (biasSum) {
			HG_UNROLL
			for (int i = 0; i < NA; i++) bsum[i] += (double)ra_[i];
		}
		HG_UNROLL
		for (int i = 0; i < NA; i++) put(As, kA, tid / 16 + 16 * i, ra_[i]);
		HG_UNROLL
		for (int i = 0; i < NB; i++) {
			if constexpr (bKFast) put(Bs, kA, tid / 16 + 16 * i, rb_[i]);
			else put(Bs, tid / BN + (T / BN) * i, tid % BN, rb_[i]);
		}
	};

	// The products: f32 keeps acc[TM][TN] per thread (rows ty + 16i, columns tx + 16j); tf32 keeps
	// acc[MT][NT][4] per thread, its warp's (BM/2) × (BN/4) tile in m16n8 fragments.
	constexpr int TM = BM / 16, TN = BN / 16;
	constexpr int WTM = BM / 2, WTN = BN / 4, MT = WTM / 16, NT = WTN / 8;
	constexpr int ACC = TC ? MT * NT * 4 : TM * TN;
	float acc[ACC];
	HG_UNROLL
	for (int i = 0; i < ACC; i++) acc[i] = 0.0f;
	const int lane = tid & 31, warp = tid >> 5, wm = warp / 4, wn = warp % 4, g = lane >> 2, q = lane & 3;

	if (kb < ke) load(kb);
	for (int k0 = kb; k0 < ke; k0 += BK) {
		stage();
		__syncthreads();
		if (k0 + BK < ke) {
			advance();
			load(k0 + BK);
		}
		if constexpr (PREC == HG_BF16) { // one m16n8k16 step: register r of a fragment is word row q + 4r
			unsigned a[MT][4], b[NT][2];
			HG_UNROLL
			for (int mt = 0; mt < MT; mt++) {
				const int r = wm * WTM + mt * 16 + g;
				a[mt][0] = As[q][r];
				a[mt][1] = As[q][r + 8];
				a[mt][2] = As[q + 4][r];
				a[mt][3] = As[q + 4][r + 8];
			}
			HG_UNROLL
			for (int nt = 0; nt < NT; nt++) {
				const int c = wn * WTN + nt * 8 + g;
				b[nt][0] = Bs[q][c];
				b[nt][1] = Bs[q + 4][c];
			}
			HG_UNROLL
			for (int mt = 0; mt < MT; mt++)
				HG_UNROLL
				for (int nt = 0; nt < NT; nt++) hg_mma_bf16(&acc[(mt * NT + nt) * 4], a[mt], b[nt]);
		} else if constexpr (TC) {
			HG_UNROLL
			for (int k8 = 0; k8 < BK; k8 += 8) {
				float a[MT][4], b[NT][2];
				HG_UNROLL
				for (int mt = 0; mt < MT; mt++) {
					const int r = wm * WTM + mt * 16 + g;
					a[mt][0] = As[k8 + q][r];
					a[mt][1] = As[k8 + q][r + 8];
					a[mt][2] = As[k8 + q + 4][r];
					a[mt][3] = As[k8 + q + 4][r + 8];
				}
				HG_UNROLL
				for (int nt = 0; nt < NT; nt++) {
					const int c = wn * WTN + nt * 8 + g;
					b[nt][0] = Bs[k8 + q][c];
					b[nt][1] = Bs[k8 + q + 4][c];
				}
				HG_UNROLL
				for (int mt = 0; mt < MT; mt++)
					HG_UNROLL
					for (int nt = 0; nt < NT; nt++) hg_mma_tf32(&acc[(mt * NT + nt) * 4], a[mt], b[nt]);
			}
		} else {
			const int tx = tid % 16, ty = tid / 16;
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
		}
		__syncthreads();
	}

	// The bias gradient: the 16 threads of a row (k = tid mod 16) add their sums in k order; one
	// split adds its row total into db, several write it after their partial D (hg_conv_splitk
	// adds them up).
	if constexpr (MODE == HG_WGRAD) {
		if (biasSum) {
			__shared__ double rowSum[HG_CONV_THREADS];
			HG_UNROLL
			for (int i = 0; i < NA; i++) {
				rowSum[tid] = bsum[i];
				__syncthreads();
				const int m = m0 + tid / 16 + 16 * i;
				if (kA == 0 && m < s.M) {
					double t = 0.0;
					for (int j = 0; j < 16; j++) t += rowSum[tid + j];
					if (gridDim.z > 1) out[(long long)gridDim.z * s.M * s.NC + (long long)blockIdx.z * s.M + m] = (float)t;
					else bias[m] = (float)((double)bias[m] + t);
				}
				__syncthreads();
			}
		}
	}

	// The epilogue: D(m, j) = acc (+ bias) + beta·D, or the split's partial.
	auto store = [&](int m, int j, float v) {
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
	};
	if constexpr (TC) {
		HG_UNROLL
		for (int mt = 0; mt < MT; mt++)
			HG_UNROLL
			for (int nt = 0; nt < NT; nt++)
				HG_UNROLL
				for (int i = 0; i < 4; i++)
					store(m0 + wm * WTM + mt * 16 + g + 8 * (i >> 1), n0 + wn * WTN + nt * 8 + 2 * q + (i & 1),
					      acc[(mt * NT + nt) * 4 + i]);
	} else {
		const int tx = tid % 16, ty = tid / 16;
		HG_UNROLL
		for (int i = 0; i < TM; i++)
			HG_UNROLL
			for (int j = 0; j < TN; j++) store(m0 + ty + 16 * i, n0 + tx + 16 * j, acc[i * TN + j]);
	}
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

HG_KERNEL(hg_conv_fwd_tf32_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                              float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                              float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                              float* __restrict__ out) {
	hg_conv<HG_FWD, HG_TF32, 64, 64>(hg_conv_geom(HG_FWD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_fwd_tf32_64);

HG_KERNEL(hg_conv_fwd_tf32_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                               float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                               float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                               float* __restrict__ out) {
	hg_conv<HG_FWD, HG_TF32, 128, 128>(hg_conv_geom(HG_FWD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_fwd_tf32_128);

HG_KERNEL(hg_conv_fwd_bf16_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                               float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                               float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                               float* __restrict__ out) {
	hg_conv<HG_FWD, HG_BF16, 64, 64>(hg_conv_geom(HG_FWD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_fwd_bf16_64);

HG_KERNEL(hg_conv_fwd_bf16_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
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

HG_KERNEL(hg_conv_dgrad_tf32_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                float* __restrict__ out) {
	hg_conv<HG_DGRAD, HG_TF32, 64, 64>(hg_conv_geom(HG_DGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_dgrad_tf32_64);

HG_KERNEL(hg_conv_dgrad_tf32_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                 float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                 float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                 float* __restrict__ out) {
	hg_conv<HG_DGRAD, HG_TF32, 128, 128>(hg_conv_geom(HG_DGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_dgrad_tf32_128);

HG_KERNEL(hg_conv_dgrad_bf16_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                 float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                 float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                 float* __restrict__ out) {
	hg_conv<HG_DGRAD, HG_BF16, 64, 64>(hg_conv_geom(HG_DGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_dgrad_bf16_64);

HG_KERNEL(hg_conv_dgrad_bf16_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
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

HG_KERNEL(hg_conv_wgrad_tf32_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                float* __restrict__ out) {
	hg_conv<HG_WGRAD, HG_TF32, 64, 64>(hg_conv_geom(HG_WGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_wgrad_tf32_64);

HG_KERNEL(hg_conv_wgrad_tf32_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                 float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                 float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                 float* __restrict__ out) {
	hg_conv<HG_WGRAD, HG_TF32, 128, 128>(hg_conv_geom(HG_WGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_wgrad_tf32_128);

HG_KERNEL(hg_conv_wgrad_bf16_64)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
                                 float beta, int biasMode, const float* __restrict__ in, const float* __restrict__ wt,
                                 float* __restrict__ bias, const float* __restrict__ bias2, const float* res, float scale,
                                 float* __restrict__ out) {
	hg_conv<HG_WGRAD, HG_BF16, 64, 64>(hg_conv_geom(HG_WGRAD, N, C, H, W, O, KS, S, PD, OH, OW), kchunk, beta, biasMode, in, wt, bias,
	                         bias2, res, scale, out);
}
HG_REGISTER(hg_conv_wgrad_bf16_64);

HG_KERNEL(hg_conv_wgrad_bf16_128)(int N, int C, int H, int W, int O, int KS, int S, int PD, int OH, int OW, int kchunk,
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
	for (int r = 0; r < 4; r++) {
		hg_half_store(&fa[r], 0, hg_bf16(a[8 * l + 2 * r]));
		hg_half_store(&fa[r], 1, hg_bf16(a[8 * l + 2 * r + 1]));
		fd[r] = d[4 * l + r];
	}
	for (int r = 0; r < 2; r++) {
		hg_half_store(&fb[r], 0, hg_bf16(b[4 * l + 2 * r]));
		hg_half_store(&fb[r], 1, hg_bf16(b[4 * l + 2 * r + 1]));
	}
	hg_mma_bf16(fd, fa, fb);
	for (int i = 0; i < 4; i++) d[4 * l + i] = fd[i];
}
HG_REGISTER(hg_warp_mma_bf16);
