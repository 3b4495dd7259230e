// philox.cu: counter-based random numbers (Philox4x32-10) and the fused dropout, the CUDA twin of
// rng/philox.go: every function below performs the same IEEE operations in the same order as its
// Go counterpart (products and sums through __dmul_rn/__dadd_rn so nvcc never fuses them into an
// FMA), so a stream is bit-identical on the GPU, the host shim and the Go generator.
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
// A stream is (key, step, id); element i reads counter (i_lo, i_hi, id, step).
//   hg_philox_normal   dst[j] = normal draw e = first+j: of the Box–Muller pair of counter e/2's two
//                      53-bit uniforms, r·cos for even e, r·sin for odd; first places the tensor
//                      in a longer one (a data-parallel rank's noise of the global batch)
//   hg_philox_uniform  dst[j] = (word j mod 4 of counter j/4 >> 8)·2⁻²⁴
//   hg_dropout         y[j] = x[j]·keep where uniform first+j ≥ p, else 0: the mask is regenerated
//                      from its counters, never stored or uploaded; first places the tensor in a
//                      longer one (a data-parallel rank's samples of the global batch); the
//                      backward pass is the same kernel on dy (autograd.Tape.DropoutFrom)
// The generator and the mask are philox.cuh's, which groupnorm.cu's fused group norm + SiLU +
// dropout shares.
#include "common.cuh"
#include "philox.cuh"

#ifdef HG_SHIM
#include <cmath>
#include <cstring>
static inline double hg_dmul(double a, double b) { return a * b; } // x86-64 SSE2: no contraction
static inline double hg_dadd(double a, double b) { return a + b; }
static inline double hg_ddiv(double a, double b) { return a / b; }
static inline double hg_dsqrt(double a) { return std::sqrt(a); }
static inline unsigned long long hg_dbits(double x) {
	unsigned long long b;
	std::memcpy(&b, &x, 8);
	return b;
}
static inline double hg_bitsd(unsigned long long b) {
	double x;
	std::memcpy(&x, &b, 8);
	return x;
}
#else
#define hg_dmul __dmul_rn
#define hg_dadd __dadd_rn
#define hg_ddiv __ddiv_rn
#define hg_dsqrt __dsqrt_rn
#define hg_dbits(x) ((unsigned long long)__double_as_longlong(x))
#define hg_bitsd(b) __longlong_as_double((long long)(b))
#endif

static __device__ __forceinline__ double hg_uniform53(unsigned int hi, unsigned int lo) {
	return (double)(((unsigned long long)hi << 21) | (unsigned long long)(lo >> 11)) * 0x1p-53;
}

// ln x for x in (0, 1]: rng.logUnit.
static __device__ __forceinline__ double hg_log_unit(double x) {
	unsigned long long bits = hg_dbits(x);
	int e = (int)((bits >> 52) & 0x7ff) - 1023;
	double m = hg_bitsd((bits & ~(0x7ffull << 52)) | (1023ull << 52));
	if (m > 1.41421356237309514547) { // math.Sqrt2 as a float64
		m = hg_dmul(m, 0.5);
		e++;
	}
	double s = hg_ddiv(hg_dadd(m, -1.0), hg_dadd(m, 1.0));
	double s2 = hg_dmul(s, s);
	double p = hg_ddiv(1.0, 23.0);
	for (int k = 10; k >= 0; k--) p = hg_dadd(hg_dmul(p, s2), hg_ddiv(1.0, (double)(2 * k + 1)));
	double lnm = hg_dmul(hg_dmul(2.0, s), p);
	double fe = (double)e;
	return hg_dadd(hg_dmul(fe, 6.93147180369123816490e-01), hg_dadd(lnm, hg_dmul(fe, 1.90821492927058770002e-10)));
}

// sin 2πu, cos 2πu for u in [0, 1): rng.sinCos2Pi.
static __device__ __forceinline__ void hg_sincos_2pi(double u, double* sn, double* cs) {
	double v = hg_dmul(u, 4.0);
	int q = (int)v;
	double f = hg_dadd(v, -(double)q);
	double phi = hg_dmul(f, 1.57079632679489655800); // math.Pi / 2 as a float64
	double p2 = hg_dmul(phi, phi);
	double sp = 1.0, cp = 1.0;
	for (int k = 10; k >= 1; k--) {
		sp = hg_dadd(1.0, -hg_ddiv(hg_dmul(p2, sp), (double)((2 * k) * (2 * k + 1))));
		cp = hg_dadd(1.0, -hg_ddiv(hg_dmul(p2, cp), (double)((2 * k - 1) * (2 * k))));
	}
	double s = hg_dmul(phi, sp), c = cp;
	switch (q & 3) {
	case 1: { double t = s; s = c; c = -t; break; }
	case 2: s = -s; c = -c; break;
	case 3: { double t = s; s = -c; c = t; break; }
	}
	*sn = s;
	*cs = c;
}

HG_KERNEL(hg_philox_normal)(long long n, unsigned long long first, unsigned long long key, unsigned int step,
                            unsigned int id, float* __restrict__ dst) {
	HG_FOR(j, n) {
		unsigned long long e = first + (unsigned long long)j; // normal draw e: rng.Stream.FillNormalFrom
		hg_u4 w = hg_philox(e / 2, id, step, key);
		double u1 = hg_uniform53(w.x, w.y), u2 = hg_uniform53(w.z, w.w);
		double r = hg_dsqrt(hg_dmul(-2.0, hg_log_unit(hg_dadd(1.0, -u1))));
		double s, c;
		hg_sincos_2pi(u2, &s, &c);
		dst[j] = (float)hg_dmul(r, (e & 1) ? s : c);
	}
}
HG_REGISTER(hg_philox_normal);

HG_KERNEL(hg_philox_uniform)(long long n, unsigned long long key, unsigned int step, unsigned int id,
                             float* __restrict__ dst) {
	HG_FOR(j, n) {
		hg_u4 w = hg_philox((unsigned long long)(j / 4), id, step, key);
		dst[j] = (float)(hg_word(w, (int)(j % 4)) >> 8) * 0x1p-24f;
	}
}
HG_REGISTER(hg_philox_uniform);

HG_KERNEL(hg_dropout)(long long n, unsigned long long first, unsigned long long key, unsigned int step,
                      unsigned int id, float p, float keep, const float* __restrict__ x, float* __restrict__ y) {
	HG_FOR(j, n) {
		// mask element first + j: rng.Stream.DropoutFrom
		y[j] = hg_dropout_kept(first + (unsigned long long)j, key, step, id, p) ? x[j] * keep : 0.0f;
	}
}
HG_REGISTER(hg_dropout);
