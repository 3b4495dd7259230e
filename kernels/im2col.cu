// im2col.cu: im2col and col2im for 2-D convolutions (Caffe layout), and the channel bias.
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
// x is (N, C, H, W); row r = (c, ky, kx) and column p = (oy, ox) of sample n's unfolded image hold
// x[n, c, oy·SH − PH + ky·DH, ox·SW − PW + kx·DW] (0 outside the image). The caller chooses where
// (n, r, p) lands: col[n·sn + r·sr + p], so one kernel writes both the per-sample layout
// (N, C·KH·KW, OH·OW) (sn = rows·P, sr = P) and the batch-in-columns layout (C·KH·KW, N·OH·OW)
// (sn = P, sr = N·P) that turns the weight gradient's sum over samples into one GEMM.
//   hg_im2col     one thread per col element
//   hg_col2im     one thread per image element sums every col entry that reads it: the adjoint of
//                 im2col without atomics, deterministic; x = Σ + beta·x (beta = 0 never reads x)
//   hg_conv_bias  y[n, o, p] += bias[o] for y (N, O, P)
#include "common.cuh"

HG_KERNEL(hg_im2col)(int N, int C, int H, int W, int KH, int KW, int PH, int PW, int SH, int SW, int DH, int DW,
                     int OH, int OW, long long sn, long long sr, const float* __restrict__ x,
                     float* __restrict__ col) {
	long long total = (long long)N * C * KH * KW * OH * OW;
	HG_FOR(i, total) {
		long long t = i;
		int ox = t % OW; t /= OW;
		int oy = t % OH; t /= OH;
		int kx = t % KW; t /= KW;
		int ky = t % KH; t /= KH;
		int c = t % C;
		int n = (int)(t / C);
		int iy = oy * SH - PH + ky * DH, ix = ox * SW - PW + kx * DW;
		float v = 0.0f;
		if (iy >= 0 && iy < H && ix >= 0 && ix < W) v = x[(((long long)n * C + c) * H + iy) * W + ix];
		long long row = ((long long)c * KH + ky) * KW + kx;
		col[n * sn + row * sr + (long long)oy * OW + ox] = v;
	}
}
HG_REGISTER(hg_im2col);

HG_KERNEL(hg_col2im)(int N, int C, int H, int W, int KH, int KW, int PH, int PW, int SH, int SW, int DH, int DW,
                     int OH, int OW, float beta, const float* __restrict__ col, float* __restrict__ x) {
	long long total = (long long)N * C * H * W;
	HG_FOR(i, total) {
		long long t = i;
		int ix = t % W; t /= W;
		int iy = t % H; t /= H;
		int c = t % C;
		int n = (int)(t / C);
		float s = 0.0f;
		for (int ky = 0; ky < KH; ky++) {
			int ty = iy + PH - ky * DH; // = oy·SH
			if (ty < 0 || ty % SH != 0 || ty / SH >= OH) continue;
			int oy = ty / SH;
			for (int kx = 0; kx < KW; kx++) {
				int tx = ix + PW - kx * DW;
				if (tx < 0 || tx % SW != 0 || tx / SW >= OW) continue;
				int ox = tx / SW;
				long long row = ((long long)c * KH + ky) * KW + kx;
				s += col[(((long long)n * C * KH * KW + row) * OH + oy) * OW + ox];
			}
		}
		x[i] = beta == 0.0f ? s : s + beta * x[i];
	}
}
HG_REGISTER(hg_col2im);

HG_KERNEL(hg_conv_bias)(int N, int O, int P, const float* __restrict__ bias, float* __restrict__ y) {
	HG_FOR(i, (long long)N * O * P) y[i] += bias[(i / P) % O];
}
HG_REGISTER(hg_conv_bias);
