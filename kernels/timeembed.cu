// timeembed.cu: NCSN++'s time embeddings on the device (the twins of layers.FourierEmbedding and
// layers.PositionalEmbedding), so that the times of a step never return to the host.
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
// out is (B, 2·half), one thread per (b, k):
//   mode 0, Fourier:     p = (float)ln t_b · w_k · (float)2π (float32 products, PyTorch's order);
//                        out[b, k] = sin p, out[b, half + k] = cos p (evaluated in float64)
//   mode 1, positional:  f = (float)exp(−k·scale), a = t_b·f (float32);
//                        out[b, k] = sin a, out[b, half + k] = cos a (float64), scale = ln 10⁴/(half − 1)
#include "common.cuh"

#ifdef HG_SHIM
#include <cmath>
#endif

HG_KERNEL(hg_time_embed)(int B, int half, int mode, double scale, const float* __restrict__ t,
                         const float* __restrict__ w, float* __restrict__ out) {
	HG_FOR(i, (long long)B * half) {
		long long b = i / half;
		int k = (int)(i % half);
		double a;
		if (mode == 0) {
			float lt = (float)log((double)t[b]);
			float p = lt * w[k];
			p = p * 6.28318548202514648438f; // float32(2π)
			a = (double)p;
		} else {
			float f = (float)exp((double)k * -scale);
			a = (double)(t[b] * f);
		}
		out[b * 2 * half + k] = (float)sin(a);
		out[b * 2 * half + half + k] = (float)cos(a);
	}
}
HG_REGISTER(hg_time_embed);
