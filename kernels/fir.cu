// fir.cu: FIR resampling of images, upfirdn2d (StyleGAN2's reference semantics).
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
// x is (NC, H, W); each plane is upsampled by `up` (zeros inserted after every sample), padded by
// pad0 before and pad1 after on both axes, convolved with the 4×4 filter k (true convolution:
// the filter is flipped) and downsampled by keeping every `down`-th sample:
//   y[oy, ox] = Σ_{jy, jx} k[KH−1−jy, KW−1−jx] · p[oy·down + jy, ox·down + jx],
//   p[u, v] = x[(u−pad0)/up, (v−pad0)/up] when both are multiples of up inside the image, else 0,
//   OH = (H·up + pad0 + pad1 − KH)/down + 1 (likewise OW).
// FIR upsampling is up = 2, down = 1; FIR downsampling is up = 1, down = 2.
//   hg_upfirdn2d_sep  one thread per output element, the separable 4×4 filter K[a][b] = t[a]·t[b]·gain
//                     passed as kernel parameters (the tensor op list's OpUpFIRDn2d): no filter upload
#include "common.cuh"

// The filter as four taps and a gain.
struct hg_fir_sep {
	float t0, t1, t2, t3, gain;
	__device__ float tap(int a) const { return a == 0 ? t0 : a == 1 ? t1 : a == 2 ? t2 : t3; }
	__device__ float operator()(int a, int b) const { return tap(a) * tap(b) * gain; }
};

template <class Filter>
static __device__ __forceinline__ void hg_upfirdn2d_body(int NC, int H, int W, int up, int down, int pad0, int KH,
                                                         int KW, int OH, int OW, Filter k, const float* __restrict__ x,
                                                         float* __restrict__ y) {
	long long total = (long long)NC * OH * OW;
	HG_FOR(i, total) {
		long long t = i;
		int ox = t % OW; t /= OW;
		int oy = t % OH;
		long long plane = t / OH;
		const float* xp = x + plane * H * W;
		float s = 0.0f;
		for (int jy = 0; jy < KH; jy++) {
			int u = oy * down + jy - pad0;
			if (u < 0 || u % up != 0 || u / up >= H) continue;
			for (int jx = 0; jx < KW; jx++) {
				int v = ox * down + jx - pad0;
				if (v < 0 || v % up != 0 || v / up >= W) continue;
				s += k(KH - 1 - jy, KW - 1 - jx) * xp[(long long)(u / up) * W + v / up];
			}
		}
		y[i] = s;
	}
}

HG_KERNEL(hg_upfirdn2d_sep)(int NC, int H, int W, int up, int down, int pad0, int OH, int OW, float t0, float t1,
                            float t2, float t3, float gain, const float* __restrict__ x, float* __restrict__ y) {
	hg_upfirdn2d_body(NC, H, W, up, down, pad0, 4, 4, OH, OW, hg_fir_sep{t0, t1, t2, t3, gain}, x, y);
}
HG_REGISTER(hg_upfirdn2d_sep);
