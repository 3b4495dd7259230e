// philox.cuh: the Philox4x32-10 block and the dropout mask, shared by the kernel families that draw
// them (philox.cu; groupnorm.cu's fused group norm + SiLU + dropout): the twin of rng/philox.go's
// Philox4x32 and Stream.DropoutFrom, bit for bit.
//
// A stream is (key, step, id); element i reads counter (i_lo, i_hi, id, step).
#pragma once

#include "common.cuh"

#ifdef HG_SHIM
static inline unsigned int hg_umulhi(unsigned int a, unsigned int b) {
	return (unsigned int)(((unsigned long long)a * b) >> 32);
}
#else
#define hg_umulhi __umulhi
#endif

struct hg_u4 {
	unsigned int x, y, z, w;
};

static __device__ __forceinline__ hg_u4 hg_philox(unsigned long long i, unsigned int id, unsigned int step,
                                                  unsigned long long key) {
	unsigned int c0 = (unsigned int)i, c1 = (unsigned int)(i >> 32), c2 = id, c3 = step;
	unsigned int k0 = (unsigned int)key, k1 = (unsigned int)(key >> 32);
	for (int r = 0; r < 10; r++) {
		if (r > 0) {
			k0 += 0x9E3779B9u;
			k1 += 0xBB67AE85u;
		}
		unsigned int lo0 = 0xD2511F53u * c0, hi0 = hg_umulhi(0xD2511F53u, c0);
		unsigned int lo1 = 0xCD9E8D57u * c2, hi1 = hg_umulhi(0xCD9E8D57u, c2);
		unsigned int n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
		c0 = n0;
		c1 = lo1;
		c2 = n2;
		c3 = lo0;
	}
	hg_u4 o = {c0, c1, c2, c3};
	return o;
}

static __device__ __forceinline__ unsigned int hg_word(hg_u4 w, int k) {
	return k == 0 ? w.x : k == 1 ? w.y : k == 2 ? w.z : w.w;
}

// Whether dropout keeps mask element e of the stream: its uniform, (word e mod 4 of counter e/4 >> 8)·2⁻²⁴
// (rng.Stream.FillUniform's element e), is ≥ p (rng.Stream.DropoutFrom).
static __device__ __forceinline__ bool hg_dropout_kept(unsigned long long e, unsigned long long key, unsigned int step,
                                                       unsigned int id, float p) {
	hg_u4 w = hg_philox(e / 4, id, step, key);
	float u = (float)(hg_word(w, (int)(e % 4)) >> 8) * 0x1p-24f;
	return u >= p;
}
