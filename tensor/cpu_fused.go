package tensor

import (
	"fmt"
	"math"

	"holdgo/internal/parallel"
	"holdgo/internal/vec"
)

// The CPU device's fused families. Adam, EMA, SumSq and Perturb run the SIMD kernels of
// internal/vec over the worker pool: Adam and EMA with the Reference's float32 operations in its
// order (bit for bit: TestCPUFusedMatchesReference), Perturb in hold.SDE.Perturb's
// (TestCPUPerturbMatchesHold); a training step on the CPU is what it was when optim applied the
// updates (the golden tests of train and the checkpoints in models/ pin them). The other fused ops, ScoreLoss's sequential float64 sum included (that of
// hold.ShardLoss), run the plain loops of fused.go, which are also the Reference device's: the
// backend table (tensor/optest) checks these kernels against those loops.

func cpuFused(op Op, o []float32, out *Tensor, in []*Tensor, in32 [][]float32) {
	switch op.Kind {
	case OpAdam:
		cpuAdam(op.Coef, o, in32[0], in32[1], in32[2], in32[3])
	case OpEMA:
		if finiteStep(in32[1]) {
			k, p := float32(1-op.Coef[0]), in32[0]
			parallel.For(len(o), grain, func(lo, hi int) { vec.EMA(o[lo:hi], p[lo:hi], k) })
		}
	case OpAddScaled: // vec.Add then vec.Scale per chunk: the bits of Add then MulScalar
		a, b, s := in32[0], in32[1], op.Scalar
		parallel.For(len(o), grain, func(lo, hi int) {
			vec.Add(o[lo:hi], a[lo:hi], b[lo:hi])
			vec.Scale(o[lo:hi], o[lo:hi], s)
		})
	case OpSumSq:
		putFloat64(o, statsSumSq, vec.SumSquares(in32[0]))
	case OpGroupNormSiLUDropout, OpGroupNormSiLUDropoutBackward:
		cpuGroupNorm(op, out, in) // cpu_norm.go
	case OpPerturb:
		var aux []float32
		if len(in32) > 4 {
			aux = in32[4]
		}
		cpuPerturb(op.Blocks, in[1].Dim(0), in[1].Dim(1), o, in32[3], in32[0], in32[1], in32[2], aux)
	default:
		fusedExec(op, o, out, in, in32)
	}
}

// cpuAdam is adam with optim's kernels: clipping scales the gradients in place (vec.Scale, as
// torch.nn.utils.clip_grad_norm_), then vec.Adam updates the moments and parameters.
func cpuAdam(c []float64, p, g, m, v, stats []float32) {
	if !finiteStep(stats) {
		putFloat64(stats, statsSkipped, Float64At(stats, statsSkipped)+1)
		return
	}
	if scale := c[5] / (math.Sqrt(Float64At(stats, statsSumSq)) + 1e-6); c[5] > 0 && scale < 1 {
		s := float32(scale)
		parallel.For(len(g), grain, func(lo, hi int) { vec.Scale(g[lo:hi], g[lo:hi], s) })
	}
	b1, b2, eps, step, sqrtBC2 := float32(c[0]), float32(c[1]), float32(c[2]), float32(c[3]), float32(c[4])
	parallel.For(len(p), grain, func(lo, hi int) {
		vec.Adam(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], b1, b2, step, sqrtBC2, eps)
	})
}

// cpuPerturb is perturb as hold.SDE.Perturb computes it: per sample one vec.Mix of the rows
// x[r] = Σ_j M[r][j]·x0[j] + Σ_{j≤r} C[r][j]·ε[j] (inputs q0, aux's blocks, ε; float64 fused
// multiply-adds, rounded once), samples split over the worker pool.
func cpuPerturb(n, batch, d int, x, target, coef, q0, eps, aux []float32) {
	parallel.For(batch, max(1, 4096/(n*n*d+64)), func(lo, hi int) {
		var cf [vec.MaxMixRows * vec.MaxMixInputs]float64
		var ins [vec.MaxMixInputs][]float32
		var outs [vec.MaxMixRows][]float32
		for b := lo; b < hi; b++ {
			nin := 0
			ins[nin], nin = q0[b*d:(b+1)*d], nin+1
			if aux != nil {
				for j := 1; j < n; j++ {
					ins[nin], nin = aux[(b*(n-1)+j-1)*d:(b*(n-1)+j)*d], nin+1
				}
			}
			noise := eps[b*n*d : (b+1)*n*d]
			for j := range n {
				ins[nin], nin = noise[j*d:(j+1)*d], nin+1
			}
			for r := range n {
				row := cf[r*nin : (r+1)*nin]
				row[0] = Float64At(coef, 32*b+4*r)
				k := 1
				if aux != nil {
					for j := 1; j < n; j++ {
						row[k], k = Float64At(coef, 32*b+4*r+j), k+1
					}
				}
				for j := range n {
					row[k+j] = 0
					if j <= r {
						row[k+j] = Float64At(coef, 32*b+16+4*r+j)
					}
				}
				outs[r] = x[(b*n+r)*d : (b*n+r+1)*d]
			}
			vec.Mix(outs[:n], cf[:n*nin], ins[:nin])
			vec.Scale(target[b*d:(b+1)*d], noise[(n-1)*d:], -1)
		}
	})
}

// cpuBuffer is host memory behind the Buffer interface: CPU.Alloc's, and what Tensor.Buffer returns
// for a host tensor. Read and Write copy nothing when the host slice is the buffer's own memory, so a
// caller that stages into the memory it got from HostMemory writes to the CPU without a copy.
type cpuBuffer struct{ data []float32 }

func (b *cpuBuffer) Device() Device { return CPU }
func (b *cpuBuffer) Len() int       { return len(b.data) }

func (b *cpuBuffer) Read(dst []float32) error {
	if len(dst) != len(b.data) {
		return errLen("read", len(dst), len(b.data))
	}
	if !sameMemory(dst, b.data) {
		copy(dst, b.data)
	}
	return nil
}

func (b *cpuBuffer) Write(src []float32) error {
	if len(src) != len(b.data) {
		return errLen("write", len(src), len(b.data))
	}
	if !sameMemory(src, b.data) {
		copy(b.data, src)
	}
	return nil
}

func (b *cpuBuffer) Slice(offset, n int) (Buffer, error) {
	if offset < 0 || n < 0 || offset+n > len(b.data) {
		return nil, errLen("slice", offset+n, len(b.data))
	}
	return &cpuBuffer{b.data[offset : offset+n : offset+n]}, nil
}

func sameMemory(a, b []float32) bool { return len(a) == 0 || &a[0] == &b[0] }

// HostMemory returns the host memory that holds t where its device keeps it there (the CPU's
// tensors), else nil. A caller stages a device's inputs in it when it is not nil, so that the
// Buffer's Write that follows copies nothing (train's staged batch).
func HostMemory(t *Tensor) []float32 {
	if t.buf != nil || t.err != nil {
		return nil
	}
	return t.data
}

func errLen(what string, n, have int) error {
	return fmt.Errorf("%s %d elements of a buffer of %d", what, n, have)
}
