// elementwise.cu: fill, unary maps, same-shape binary maps and broadcasting binary maps.
//
// Build: make -C kernels ptx (nvcc -ptx, sm_80 and sm_90); host shim: see common.cuh.
// One thread per element in a grid-stride loop; math in float32 with the accurate (not the __fast)
// intrinsics, so results stay within a few ulp of the Go reference (float64, rounded); the
// activation gradients, which cancel, in double.
//
//   hg_fill        y = v
//   hg_unary       y = f(x) for the HG_UNARY_* op codes (s is the scalar of AddScalar/MulScalar)
//   hg_binary      y = g(a, b) for the HG_BINARY_* op codes, same shape
//   hg_binary_bcast y = g(a[off_a(i)], b[off_b(i)]): out index i decomposed over shape d0..d5,
//                  per-operand strides (0 on a broadcast dimension)
//   hg_add_scaled  y = (a + b)·s, the sum rounded to float32 first (tensor.AddScaled: a residual
//                  join and its scale in one pass)
#include "common.cuh"

// The op codes (HG_UNARY_*, HG_BINARY_*) are generated from the op table, tensor/optable.go
// (go generate ./tensor). An unknown code yields NaN, which the backend table reports.
#include "ops_gen.h"

static __device__ __forceinline__ float hg_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

static __device__ __forceinline__ float hg_unary_op(int op, float s, float x) {
	switch (op) {
	case HG_UNARY_Neg: return -x;
	case HG_UNARY_Exp: return expf(x);
	case HG_UNARY_Log: return logf(x);
	case HG_UNARY_Sqrt: return sqrtf(x);
	case HG_UNARY_Square: return x * x;
	case HG_UNARY_Tanh: return tanhf(x);
	case HG_UNARY_Sigmoid: return hg_sigmoid(x);
	case HG_UNARY_SiLU: return x / (1.0f + expf(-x));
	case HG_UNARY_AddScalar: return x + s;
	case HG_UNARY_MulScalar: return x * s;
	case HG_UNARY_Sin: return sinf(x); // accurate sinf: full argument reduction (Fourier features reach |x| ~ 10²)
	case HG_UNARY_Softplus: return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x)));
	default: return nanf("");
	}
}

static __device__ __forceinline__ float hg_binary_op(int op, float a, float b) {
	switch (op) {
	case HG_BINARY_Add: return a + b;
	case HG_BINARY_Sub: return a - b;
	case HG_BINARY_Mul: return a * b;
	case HG_BINARY_Div: return a / b;
	case HG_BINARY_Eq: return a == b ? 1.0f : 0.0f;
	// The activation gradients run in double: silu'(x) = σ(1 + x(1−σ)) cancels near its root
	// x ≈ −1.28 and 1 − y² near |y| = 1, where float32 loses most digits.
	case HG_BINARY_SiLUGrad: {
		double x = a, sg = 1.0 / (1.0 + exp(-x));
		return (float)((double)b * sg * (1.0 + x * (1.0 - sg)));
	}
	case HG_BINARY_TanhGrad: return (float)((double)b * (1.0 - (double)a * a));
	case HG_BINARY_SigmoidGrad: return (float)((double)b * a * (1.0 - (double)a));
	default: return nanf("");
	}
}

HG_KERNEL(hg_fill)(int n, float v, float* __restrict__ y) {
	HG_FOR(i, n) y[i] = v;
}
HG_REGISTER(hg_fill);

// No __restrict__: hg_unary runs in place (x == y; cuda/conv.go scales a gradient by β), which a
// restrict-qualified pair would make undefined (the compiler may read x through the non-coherent
// cache or reorder the loads and stores). Each thread reads x[i] before it writes y[i].
HG_KERNEL(hg_unary)(int n, int op, float s, const float* x, float* y) {
	HG_FOR(i, n) y[i] = hg_unary_op(op, s, x[i]);
}
HG_REGISTER(hg_unary);

// a, b and y may alias each other (in-place updates): no __restrict__ here.
HG_KERNEL(hg_binary)(int n, int op, const float* a, const float* b, float* y) {
	HG_FOR(i, n) y[i] = hg_binary_op(op, a[i], b[i]);
}
HG_REGISTER(hg_binary);

HG_KERNEL(hg_binary_bcast)(int n, int op, int d0, int d1, int d2, int d3, int d4, int d5,
                           int a0, int a1, int a2, int a3, int a4, int a5,
                           int b0, int b1, int b2, int b3, int b4, int b5,
                           const float* a, const float* b, float* y,
                           int m0, int m1, int m2, int m3, int m4, int m5, int r0, int r1, int r2, int r3, int r4, int r5) {
	const int d[HG_MAX_RANK] = {d0, d1, d2, d3, d4, d5};
	const int sa[HG_MAX_RANK] = {a0, a1, a2, a3, a4, a5};
	const int sb[HG_MAX_RANK] = {b0, b1, b2, b3, b4, b5};
	const unsigned mul[HG_MAX_RANK] = {(unsigned)m0, (unsigned)m1, (unsigned)m2, (unsigned)m3, (unsigned)m4, (unsigned)m5};
	const int shr[HG_MAX_RANK] = {r0, r1, r2, r3, r4, r5};
	HG_FOR(i, n) {
		unsigned rest = (unsigned)i; // n < 2³¹
		long long oa = 0, ob = 0;
		HG_UNROLL
		for (int k = HG_MAX_RANK - 1; k >= 0; k--) { // the index digits by fast division (hg_fastdiv)
			const unsigned q = hg_fastdiv(rest, mul[k], shr[k]);
			const unsigned c = rest - q * (unsigned)d[k];
			rest = q;
			oa += (long long)c * sa[k];
			ob += (long long)c * sb[k];
		}
		y[i] = hg_binary_op(op, a[oa], b[ob]);
	}
}
HG_REGISTER(hg_binary_bcast);

// a, b and y may alias each other: no __restrict__ here. (a + b) is rounded before the product: the
// explicit float temporary, and no FMA contraction is possible for a sum times a scalar.
HG_KERNEL(hg_add_scaled)(int n, float s, const float* a, const float* b, float* y) {
	HG_FOR(i, n) {
		const float t = a[i] + b[i];
		y[i] = t * s;
	}
}
HG_REGISTER(hg_add_scaled);
