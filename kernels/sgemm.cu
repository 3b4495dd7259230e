// sgemm.cu: tiled single-precision GEMM, row-major, batched through gridDim.z.
//
// Build: make -C kernels ptx; host shim: see common.cuh.
//
//   hg_sgemm  C = alpha·op(A)·op(B) + beta·C for every batch z (operand z at A + z·sA, …; a stride
//             of 0 broadcasts an operand). op(A) is M×K, op(B) is K×N; A is stored M×K (lda ≥ K)
//             or, with transA, K×M (lda ≥ M); likewise B. beta = 0 never reads C.
// A 64×64 output tile per block of 256 threads, each thread a 4×4 register micro-tile (rows ty+16i,
// columns tx+16j, so shared-memory reads are conflict-free); K advances 16 at a time through
// shared memory, loaded with coalesced reads for either storage order. This is the portable
// fallback and the host-shim-tested kernel; on a GPU, MatMul uses cuBLAS (cuda/driver_cuda.go).
#include "common.cuh"

#define HG_GEMM_BM 64
#define HG_GEMM_BN 64
#define HG_GEMM_BK 16

HG_KERNEL(hg_sgemm)(int M, int N, int K, int transA, int transB, float alpha, const float* __restrict__ A, int lda,
                    long long sA, const float* __restrict__ B, int ldb, long long sB, float beta, float* __restrict__ C,
                    int ldc, long long sC) {
	__shared__ float As[HG_GEMM_BK][HG_GEMM_BM + 4];
	__shared__ float Bs[HG_GEMM_BK][HG_GEMM_BN + 4];
	A += blockIdx.z * sA;
	B += blockIdx.z * sB;
	C += blockIdx.z * sC;
	const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
	const int m0 = blockIdx.y * HG_GEMM_BM, n0 = blockIdx.x * HG_GEMM_BN;
	float acc[4][4];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;

	for (int k0 = 0; k0 < K; k0 += HG_GEMM_BK) {
		for (int l = tid; l < HG_GEMM_BM * HG_GEMM_BK; l += HG_BLOCK) {
			int mm, kk;
			if (transA) { mm = l % HG_GEMM_BM; kk = l / HG_GEMM_BM; }
			else { kk = l % HG_GEMM_BK; mm = l / HG_GEMM_BK; }
			int gm = m0 + mm, gk = k0 + kk;
			float v = 0.0f;
			if (gm < M && gk < K) v = transA ? A[(long long)gk * lda + gm] : A[(long long)gm * lda + gk];
			As[kk][mm] = v;
		}
		for (int l = tid; l < HG_GEMM_BN * HG_GEMM_BK; l += HG_BLOCK) {
			int nn, kk;
			if (transB) { kk = l % HG_GEMM_BK; nn = l / HG_GEMM_BK; }
			else { nn = l % HG_GEMM_BN; kk = l / HG_GEMM_BN; }
			int gn = n0 + nn, gk = k0 + kk;
			float v = 0.0f;
			if (gn < N && gk < K) v = transB ? B[(long long)gn * ldb + gk] : B[(long long)gk * ldb + gn];
			Bs[kk][nn] = v;
		}
		__syncthreads();
		for (int kk = 0; kk < HG_GEMM_BK; kk++) {
			float a[4], b[4];
			for (int i = 0; i < 4; i++) a[i] = As[kk][ty + 16 * i];
			for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx + 16 * j];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++) {
		int gm = m0 + ty + 16 * i;
		if (gm >= M) continue;
		for (int j = 0; j < 4; j++) {
			int gn = n0 + tx + 16 * j;
			if (gn >= N) continue;
			float* c = C + (long long)gm * ldc + gn;
			float v = alpha * acc[i][j];
			if (beta != 0.0f) v += beta * *c;
			*c = v;
		}
	}
}
HG_REGISTER(hg_sgemm);
