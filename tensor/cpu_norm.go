package tensor

import (
	"math"

	"holdgo/internal/parallel"
	"holdgo/internal/vec"
)

// CPU kernels of group normalisation and softmax: one (sample, group) or one
// row per task, float64 statistics.

// cpuGroupStats computes the mean and 1/√(var+eps) of every (sample, group)
// with two SIMD passes over the group (vec.Sum64, vec.SumSqDev: float64
// accumulation, the variance centred on the float64 mean).
func cpuGroupStats(x []float32, ng, size int, eps float64) (mean, rstd []float32, mean64 []float64) {
	mean, rstd, mean64 = make([]float32, ng), make([]float32, ng), make([]float64, ng)
	parallel.For(ng, max(1, grain/max(size, 1)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			seg := x[i*size : (i+1)*size]
			m := vec.Sum64(seg) / float64(size)
			sq := vec.SumSqDev(seg, m)
			mean[i], rstd[i], mean64[i] = float32(m), float32(1/math.Sqrt(sq/float64(size)+eps)), m
		}
	})
	return mean, rstd, mean64
}

func cpuGroupNorm(op Op, out *Tensor, in []*Tensor) {
	x, o := in[0].data, out.data
	n, c := in[0].shape[0], in[0].shape[1]
	if n*c == 0 || len(x) == 0 {
		return
	}
	s := len(x) / (n * c)
	cpg := c / op.Groups
	size := cpg * s
	mean, rstd, mean64 := cpuGroupStats(x, n*op.Groups, size, float64(op.Scalar))
	switch op.Kind {
	case OpGroupNorm, OpGroupNormSiLU, OpGroupNormSiLUDropout:
		// One (sample, channel) row at a time: z = (x − μ)·rstd·γ + β into the
		// destination row, then for the fused ops SiLU over it while it is in
		// cache, and the dropout mask (rng.Stream.DropoutFrom, OpDropout's loop:
		// the same float32 products) of the row's elements.
		// The affine map is vec.Affine64, z = a·x + (β − μ·a) by one float64
		// fused multiply-add per element, rounded to float32 (μ·a and β − μ·a
		// in float64 lose nothing that matters before that rounding). Its
		// earlier form, a vec.Mix of the row and a row of ones, read two rows
		// and converted both: 166 against 86 ns for a row of 784 floats in L1
		// on AVX-512, 224 against 104 on AVX2.
		gamma, beta := in[1].data, in[2].data
		parallel.For(n*c, max(1, grain/s), func(lo, hi int) {
			for nc := lo; nc < hi; nc++ {
				ch := nc % c
				ng := nc/c*op.Groups + ch/cpg
				a := float64(rstd[ng] * gamma[ch])
				src, dst := x[nc*s:(nc+1)*s], o[nc*s:(nc+1)*s]
				vec.Affine64(dst, src, a, float64(beta[ch])-mean64[ng]*a)
				if op.Kind != OpGroupNorm {
					vec.SiLU(dst, dst)
				}
				if op.Kind == OpGroupNormSiLUDropout {
					op.Stream.DropoutFrom(dst, dst, op.Coef[0], op.First+uint64(nc*s))
				}
			}
		})
	case OpGroupNormBackward, OpGroupNormSiLUBackward, OpGroupNormSiLUDropoutBackward:
		cpuGroupNormBackward(op, out, in, mean, rstd, mean64, s)
	}
}

// cpuGroupNormBackward runs OpGroupNormBackward, OpGroupNormSiLUBackward and
// OpGroupNormSiLUDropoutBackward with one (sample, group) per task: for the
// SiLU ops, dz = dy·silu'(z) into a row buffer (the forward's affine map, then
// vec.SiLUGrad), the dropout's dy first masked into a row of its own (OpDropout's
// loop on dy, whose output the unfused backward stored), else dz = dy; the
// per-channel sums Σdz and Σdz·(x − μ) (vec.SumDotDev) give the (sample,
// channel) partials of dβ and dγ and the group's mean(g) and mean(g·x̂),
// g = dz·γ; then dx by one vec.Mix per row. Last, dγ and dβ get the partials
// summed over the samples in order (deterministic whatever the scheduling).
func cpuGroupNormBackward(op Op, out *Tensor, in []*Tensor, mean, rstd []float32, mean64 []float64, s int) {
	x, o := in[0].data, out.data
	n, c := in[0].shape[0], in[0].shape[1]
	cpg := c / op.Groups
	size := cpg * s
	gamma, dy, grads := in[1].data, in[2].data, in[3:]
	silu := op.Kind != OpGroupNormBackward
	drop := op.Kind == OpGroupNormSiLUDropoutBackward
	var shift []float32
	if silu {
		shift, dy, grads = in[2].data, in[3].data, in[4:]
	}
	part := make([]float64, 2*n*c) // dγ partials (sample, channel), then dβ's
	beta := float64(op.Beta)
	parallel.For(n*op.Groups, max(1, grain/size), func(lo, hi int) {
		ones := make([]float32, s)
		for i := range ones {
			ones[i] = 1
		}
		var dz, masked []float32
		if silu {
			dz = make([]float32, size)
		}
		if drop {
			masked = make([]float32, s)
		}
		var coef [4]float64
		outs, ins := make([][]float32, 1), make([][]float32, 4)
		for ng := lo; ng < hi; ng++ {
			b, g0 := ng/op.Groups, ng%op.Groups*cpg
			m, r := mean[ng], rstd[ng]
			src := dy[ng*size : (ng+1)*size]
			if silu {
				for j := range cpg {
					ch, off := g0+j, ng*size+j*s
					a := float64(r * gamma[ch])
					row, dyRow := dz[j*s:(j+1)*s], src[j*s:(j+1)*s]
					if drop {
						op.Stream.DropoutFrom(masked, dyRow, op.Coef[0], op.First+uint64(off))
						dyRow = masked
					}
					vec.Affine64(row, x[off:off+s], a, float64(shift[ch])-mean64[ng]*a)
					vec.SiLUGrad(row, row, dyRow)
				}
				src = dz
			}
			var mg, mgx float64
			for j := range cpg {
				ch, off := g0+j, ng*size+j*s
				sb, sg := vec.SumDotDev(src[j*s:(j+1)*s], x[off:off+s], float64(m))
				part[b*c+ch], part[(n+b)*c+ch] = sg*float64(r), sb
				mg += sb * float64(gamma[ch]) // a group of one element gets exactly 0 in mgx
				mgx += sg * float64(gamma[ch])
			}
			mg /= float64(size)
			mgx *= float64(r) / float64(size)
			// dx = r·(γ·dz − mg − (x − μ)·r·mgx) (+ β·dx) as one vec.Mix of dz,
			// x, a row of ones (and dx), in float64, rounded once.
			r64, m64 := float64(r), float64(m)
			for j := range cpg {
				ch, off := g0+j, ng*size+j*s
				coef[0], coef[1], coef[2] = r64*float64(gamma[ch]), -r64*r64*mgx, r64*(m64*r64*mgx-mg)
				outs[0], ins[0], ins[1], ins[2] = o[off:off+s], src[j*s:(j+1)*s], x[off:off+s], ones
				k := 3
				if beta != 0 {
					coef[3], ins[3], k = beta, o[off:off+s], 4
				}
				vec.Mix(outs, coef[:k], ins[:k])
			}
		}
	})
	dgamma, dbeta := grads[0].data, grads[1].data
	for ch := range c {
		var dg, db float64
		for b := range n {
			dg += part[b*c+ch]
			db += part[(n+b)*c+ch]
		}
		dgamma[ch] = float32(float64(dgamma[ch]) + dg)
		dbeta[ch] = float32(float64(dbeta[ch]) + db)
	}
}

func cpuSoftmax(op Op, out *Tensor, in []*Tensor) {
	o, a := out.data, in[0].data
	k := out.shape[len(out.shape)-1]
	if k == 0 || len(o) == 0 {
		return
	}
	rows := len(o) / k
	s := op.Scalar
	parallel.For(rows, max(1, grain/k), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row, dst := a[r*k:(r+1)*k], o[r*k:(r+1)*k]
			// SIMD passes (vec) over the row: the scalar loops, expf
			// above all, were 5 % of an ncsnpp-small training step.
			if op.Kind == OpSoftmaxGrad { // s·y·(dy − Σ y·dy)
				dy := in[1].data[r*k : (r+1)*k]
				_, dot := vec.SumDotDev(dy, row, 0)
				vec.AddScalar(dst, dy, -float32(dot))
				vec.Mul(dst, dst, row)
				vec.Scale(dst, dst, s)
				continue
			}
			m := scaledMax(row, s)
			vec.Scale(dst, row, s)
			vec.AddScalar(dst, dst, -m)
			vec.Exp(dst, dst)
			vec.Scale(dst, dst, 1/vec.Sum(dst))
		}
	})
}

// scaledMax returns max_i s·row[i] for a non-empty row, as s·max(row) for s ≥ 0 and s·min(row) for
// s < 0 (rounding s·v is monotone in v, so this is the same float32), with four independent
// comparisons per step instead of the builtin max's NaN-propagating sequence: a NaN in the row is
// skipped here, and the softmax of that row comes out NaN all the same (through its exp and sum).
func scaledMax(row []float32, s float32) float32 {
	hi := [4]float32{row[0], row[0], row[0], row[0]}
	lo := hi
	i := 0
	for ; i+4 <= len(row); i += 4 {
		for j := range 4 {
			v := row[i+j]
			if v > hi[j] {
				hi[j] = v
			}
			if v < lo[j] {
				lo[j] = v
			}
		}
	}
	for ; i < len(row); i++ {
		hi[0], lo[0] = max(hi[0], row[i]), min(lo[0], row[i])
	}
	if s < 0 {
		return s * min(lo[0], lo[1], lo[2], lo[3])
	}
	return s * max(hi[0], hi[1], hi[2], hi[3])
}
