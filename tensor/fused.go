package tensor

import (
	"fmt"
	"math"

	"holdgo/rng"
)

// The fused families of the op list: the work of a training step and of a device-resident sampler
// that is not a network layer. Every device implements them like any other op (the Reference with
// the plain loops of this file, the CPU with internal/vec's kernels where optim and hold have them
// (cpu_fused.go) and these loops elsewhere, cuda with its fused kernels), so train, sample, layers and
// autograd issue them through Device alone. Ops that update several tensors name the first as
// out and update the others in place; those are documented at the op.
//
// Coefficients that the device must apply in float64 (the optimizer's and HOLD's) travel in
// Op.Coef, or for per-sample coefficients in a tensor of float32 slots holding float64 bit
// patterns (PutFloat64s), so that they go up in the same copy as the data they belong to.

// Step statistics: a tensor of StatsLen float32 slots holding three float64 values, the loss
// (OpScoreLoss), the squared gradient norm (OpSumSq) and the count of non-finite steps (OpAdam).
// They stay on the device until the caller reads them at a step boundary (ReadStats).
const (
	StatsLen     = 6
	statsLoss    = 0
	statsSumSq   = 1
	statsSkipped = 2
)

// PerturbCoefLen is the float32 slots of one sample's OpPerturb coefficients (32 float64).
const PerturbCoefLen = 64

// PutFloat64s stores v in dst (2·len(v) slots) as float64 bit patterns, little-endian halves.
func PutFloat64s(dst []float32, v []float64) {
	for i, x := range v {
		b := math.Float64bits(x)
		dst[2*i] = math.Float32frombits(uint32(b))
		dst[2*i+1] = math.Float32frombits(uint32(b >> 32))
	}
}

// Float64At returns the float64 stored at slots 2i, 2i+1 of src (PutFloat64s).
func Float64At(src []float32, i int) float64 {
	return math.Float64frombits(uint64(math.Float32bits(src[2*i])) | uint64(math.Float32bits(src[2*i+1]))<<32)
}

func putFloat64(dst []float32, i int, v float64) { PutFloat64s(dst[2*i:2*i+2], []float64{v}) }

// ReadStats copies step statistics to the host (one device-to-host copy, the step's only wait):
// the loss, the gradient norm and the non-finite steps counted since the count was last cleared.
func ReadStats(stats *Tensor) (loss, norm float64, skipped int, err error) {
	h, err := stats.ToHost()
	if err != nil {
		return 0, 0, 0, err
	}
	d := h.Data()
	return Float64At(d, statsLoss), math.Sqrt(Float64At(d, statsSumSq)), int(Float64At(d, statsSkipped)), nil
}

// StatsLoss is the loss held in host statistics (ReadStats reads the others).
func StatsLoss(host []float32) float64 { return Float64At(host, statsLoss) }

// SetStatsLoss replaces the loss in host statistics.
func SetStatsLoss(host []float32, v float64) { putFloat64(host, statsLoss, v) }

// WriteStatsLoss stores the loss v in stats (on its device): a loss computed elsewhere than by
// ScoreLoss.
func WriteStatsLoss(stats *Tensor, v float64) error {
	checkStats("WriteStatsLoss", stats)
	lv, err := View(stats, 2*statsLoss, 2)
	if err != nil {
		return err
	}
	var h [2]float32
	putFloat64(h[:], 0, v)
	return lv.Buffer().Write(h[:])
}

// ClearSkipped sets the non-finite count of stats to zero (on its device).
func ClearSkipped(stats *Tensor) error {
	v, err := View(stats, 2*statsSkipped, 2)
	if err != nil {
		return err
	}
	return Err(Fill(v, 0))
}

func checkStats(op string, stats *Tensor) {
	if stats.Len() != StatsLen {
		panic(fmt.Sprintf("tensor: %s: statistics of %d slots, want %d", op, stats.Len(), StatsLen))
	}
}

func sameLens(op string, ts ...*Tensor) {
	for _, t := range ts[1:] {
		if t.Len() != ts[0].Len() {
			panic(fmt.Sprintf("tensor: %s: operands of %d and %d elements", op, ts[0].Len(), t.Len()))
		}
	}
}

// FillNormal sets out to the first out.Len() standard normal draws of the counter-based stream s
// (rng.Stream.FillNormal) and returns out.
func FillNormal(out *Tensor, s rng.Stream) *Tensor { return FillNormalFrom(out, s, 0) }

// FillNormalFrom sets out to the normal draws first, first+1, … of s (rng.Stream.FillNormalFrom):
// out is the part of a longer tensor that starts at element first (a data-parallel rank's noise of
// the global batch), whatever the parity of first.
func FillNormalFrom(out *Tensor, s rng.Stream, first uint64) *Tensor {
	exec(Op{Kind: OpFillNormal, Stream: s, First: first}, out)
	return out
}

// Dropout sets out = x·mask with mask_j = 1/(1−p) where the uniform draw first+j of s is ≥ p,
// else 0 (rng.Stream.DropoutFrom): x is the part of a longer tensor that starts at element first.
// out may be x.
func Dropout(out, x *Tensor, s rng.Stream, p float64, first uint64) *Tensor {
	dropCheck("Dropout", p)
	out = dest(out, x.shape, x, "Dropout")
	exec(Op{Kind: OpDropout, Stream: s, First: first, Coef: []float64{p}}, out, x)
	return out
}

// dropCheck panics unless p is a dropout probability, in [0, 1).
func dropCheck(op string, p float64) {
	if !(p >= 0 && p < 1) {
		panic(fmt.Sprintf("tensor: %s: probability %g outside [0, 1)", op, p))
	}
}

// FourierEmbedding returns (B, 2·len(w)): sin and cos of log(t)·w·2π of the times t (B), in
// float32 arithmetic in PyTorch's order (GaussianFourierProjection).
func FourierEmbedding(out, t, w *Tensor) *Tensor {
	out = dest(out, []int{t.Len(), 2 * w.Len()}, t, "FourierEmbedding")
	exec(Op{Kind: OpFourierEmbedding}, out, t, w)
	return out
}

// PositionalEmbedding returns (B, dim): the transformer sinusoidal embedding of the times t (B)
// with max_positions 10000 (dim even).
func PositionalEmbedding(out, t *Tensor, dim int) *Tensor {
	out = dest(out, []int{t.Len(), dim}, t, "PositionalEmbedding")
	exec(Op{Kind: OpPositionalEmbedding}, out, t)
	return out
}

// AdamStep is one clipped Adam step's settings (OpAdam).
type AdamStep struct {
	Beta1, Beta2, Eps, LR float64
	Step                  int     // counted from 1
	MaxNorm               float64 // clip the gradient to this global norm (0: no clipping)
}

// Adam is torch.nn.utils.clip_grad_norm_ followed by PyTorch's Adam (no weight decay, no amsgrad)
// on flat buffers: with the gradient norm √stats[1] (SumSq), grads are scaled by
// maxNorm/(norm + 1e-6) when that is below 1, then m, v and params are updated in place in float32
// (m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g²; p −= lr/bc1·m/(√v/√bc2 + ε)). A step whose loss (stats[0]) or norm is not
// finite changes nothing and is counted in stats[2]. When it clips, a device may leave grads
// scaled (the CPU scales them in place); they are not read after.
func Adam(params, grads, m, v, stats *Tensor, a AdamStep) *Tensor {
	sameLens("Adam", params, grads, m, v)
	checkStats("Adam", stats)
	bc1 := 1 - math.Pow(a.Beta1, float64(a.Step))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.Step))
	exec(Op{Kind: OpAdam, Coef: []float64{a.Beta1, a.Beta2, a.Eps, a.LR / bc1, math.Sqrt(bc2), a.MaxNorm}}, params, grads, m, v, stats)
	return params
}

// EMA moves shadow towards params, shadow −= (1 − decay)·(shadow − params) in float32, unless the
// step in stats is not finite.
func EMA(shadow, params, stats *Tensor, decay float64) *Tensor {
	sameLens("EMA", shadow, params)
	checkStats("EMA", stats)
	exec(Op{Kind: OpEMA, Coef: []float64{decay}}, shadow, params, stats)
	return shadow
}

// AddScaled sets out = (a + b)·s for a and b of one shape, the sum rounded to float32 before the
// product, as Add then MulScalar give it: a residual join and its scale (NCSN++'s 1/√2) in one
// pass. out may be a or b.
func AddScaled(out, a, b *Tensor, s float32) *Tensor {
	if !SameShape(a, b) {
		panic(fmt.Sprintf("tensor: AddScaled: shapes %s and %s", fmtShape(a.shape), fmtShape(b.shape)))
	}
	out = dest(out, a.shape, a, "AddScaled")
	exec(Op{Kind: OpAddScaled, Scalar: s}, out, a, b)
	return out
}

// SumSq sets stats[1] to Σ g² (float64): the squared gradient norm Adam clips with.
func SumSq(stats, g *Tensor) *Tensor {
	checkStats("SumSq", stats)
	exec(Op{Kind: OpSumSq}, stats, g)
	return stats
}

// ScoreLoss is hold.ShardLoss on a device: out and target hold a shard of a batch of batch
// samples; grad = 2·(out − target)/batch and stats[0] = Σ (out − target)²/batch (float64).
func ScoreLoss(grad, out, target, stats *Tensor, batch int) *Tensor {
	grad = dest(grad, out.shape, out, "ScoreLoss")
	sameLens("ScoreLoss", grad, out, target)
	checkStats("ScoreLoss", stats)
	if batch <= 0 {
		panic(fmt.Sprintf("tensor: ScoreLoss: batch %d", batch))
	}
	exec(Op{Kind: OpScoreLoss, Coef: []float64{float64(batch)}}, grad, out, target, stats)
	return grad
}

// Perturb is the HOLD reparameterisation (hold.SDE.Perturb) of B samples of d values with n
// blocks: x (B, n·d) = M_b·x0 + C_b·ε and target (B, d) = −ε_last, in float64, with the per-sample
// coefficients coef (B·PerturbCoefLen slots: M then the lower Cholesky factor C, both 4×4
// row-major float64, hold.SDE.PerturbMaps), data q0 (B, d), noise eps (B, n·d) and, for DSM, the
// auxiliary noise aux (B, (n−1)·d; nil otherwise) as x0's blocks 1… . target is updated in place.
func Perturb(x, target, coef, q0, eps, aux *Tensor, n int) *Tensor {
	if n < 1 || n > MaxBlocks || q0.Rank() != 2 {
		panic(fmt.Sprintf("tensor: Perturb: %d blocks, data %v", n, q0.shape))
	}
	b, d := q0.Dim(0), q0.Dim(1)
	checkShapes("Perturb", []*Tensor{x, target, eps, coef}, [][]int{{b, n * d}, {b, d}, {b, n * d}, {b * PerturbCoefLen}})
	in := []*Tensor{coef, q0, eps, target}
	if aux != nil {
		checkShapes("Perturb", []*Tensor{aux}, [][]int{{b, (n - 1) * d}})
		in = append(in, aux)
	}
	exec(Op{Kind: OpPerturb, Blocks: n}, x, in...)
	return x
}

func checkShapes(op string, ts []*Tensor, shapes [][]int) {
	for i, t := range ts {
		if t.Len() != numel(shapes[i]) || (len(shapes[i]) > 1 && !shapeEq(t.shape, shapes[i])) {
			panic(fmt.Sprintf("tensor: %s: operand %d of shape %s, want %s", op, i, fmtShape(t.shape), fmtShape(shapes[i])))
		}
	}
}

// MaxBlocks is the most HOLD blocks the block-affine ops take.
const MaxBlocks = 4

// BlockMap is one linear step x ← Exp·x + Chol·z of the n blocks of a (sample, dimension) (the
// leading n×n of each; Chol lower triangular).
type BlockMap struct{ Exp, Chol [MaxBlocks][MaxBlocks]float64 }

// BlockAffine is one OpBlockAffine: on the state x (B, n·d), first (when a score is given) the B
// update of the last block x_n ← BScale·x_n + BScore·score, then Halves (0, 1 or 2) linear steps
// A[k] with the noises z_k (B, n·d), in float64 per (sample, dimension) and rounded once. It
// covers the HOLD samplers' device steps, with coefficients computed by package hold: the
// Lie–Trotter A and B steps and the fused B + closing A-half + next opening A-half, the prior's
// scaling, and the Euler–Maruyama step (hold.SDE.EMStep as an A-step, then a B-step).
type BlockAffine struct {
	Blocks         int
	A              [2]BlockMap
	Halves         int
	BScale, BScore float64
}

// Coef lays a out as OpBlockAffine's Op.Coef: A[0].Exp at 0, A[0].Chol at 16, A[1].Exp at 32,
// A[1].Chol at 48 (4×4 row-major), BScale at 64, BScore at 65.
func (a BlockAffine) Coef() []float64 {
	c := make([]float64, 66)
	for k := range 2 {
		for r := range MaxBlocks {
			for j := range MaxBlocks {
				c[32*k+4*r+j], c[32*k+16+4*r+j] = a.A[k].Exp[r][j], a.A[k].Chol[r][j]
			}
		}
	}
	c[64], c[65] = a.BScale, a.BScore
	return c
}

// BlockStep applies a to x in place: score (B, d) or nil for no B update, z[k] (B, n·d) the
// noise of A-half k (len(z) = a.Halves).
func BlockStep(x, score *Tensor, z []*Tensor, a BlockAffine) *Tensor {
	n := a.Blocks
	if n < 1 || n > MaxBlocks || a.Halves < 0 || a.Halves > 2 || len(z) != a.Halves || x.Rank() != 2 || x.Dim(1)%n != 0 {
		panic(fmt.Sprintf("tensor: BlockStep: state %v, %d blocks, %d halves, %d noises", x.shape, n, a.Halves, len(z)))
	}
	var in []*Tensor
	if score != nil {
		checkShapes("BlockStep", []*Tensor{score}, [][]int{{x.Dim(0), x.Dim(1) / n}})
		in = append(in, score)
	}
	for _, t := range z {
		checkShapes("BlockStep", []*Tensor{t}, [][]int{x.shape})
	}
	in = append(in, z...)
	exec(Op{Kind: OpBlockAffine, Blocks: n, Halves: a.Halves, Coef: a.Coef()}, x, in...)
	return x
}

// View returns a tensor of the given shape that aliases t's storage from element offset on (a
// parameter inside a model's flat buffer, a data-parallel rank's rows, a part of a staged
// upload), on t's device.
func View(t *Tensor, offset int, shape ...int) (*Tensor, error) {
	n := numel(shape)
	if offset < 0 || offset+n > t.Len() {
		return nil, fmt.Errorf("tensor: view of %d elements at %d in a tensor of %d", n, offset, t.Len())
	}
	if t.err != nil {
		return nil, t.err
	}
	if t.buf == nil {
		return FromSlice(t.data[offset:offset+n:offset+n], shape...), nil
	}
	b, err := t.buf.Slice(offset, n)
	if err != nil {
		return nil, fmt.Errorf("tensor: view on %s: %w", t.buf.Device().Name(), err)
	}
	return &Tensor{shape: append([]int(nil), shape...), buf: b}, nil
}

// The plain implementations: the Reference device's, and the CPU's for the ops cpu_fused.go does not
// take. o is out's storage, in the inputs'.

func fusedExec(op Op, o []float32, out *Tensor, in []*Tensor, in32 [][]float32) {
	switch op.Kind {
	case OpFillNormal:
		op.Stream.FillNormalFrom(o, op.First)
	case OpDropout:
		op.Stream.DropoutFrom(o, in32[0], op.Coef[0], op.First)
	case OpFourierEmbedding:
		fourierEmbedding(o, in32[0], in32[1])
	case OpPositionalEmbedding:
		positionalEmbedding(o, in32[0], out.Dim(1))
	case OpAdam:
		adam(op.Coef, o, in32[0], in32[1], in32[2], in32[3])
	case OpEMA:
		if finiteStep(in32[1]) {
			k := float32(1 - op.Coef[0])
			p := in32[0]
			for i := range o {
				o[i] -= k * (o[i] - p[i])
			}
		}
	case OpAddScaled:
		a, b, s := in32[0], in32[1], op.Scalar
		for i := range o {
			o[i] = (a[i] + b[i]) * s
		}
	case OpSumSq:
		var s float64
		for _, v := range in32[0] {
			s += float64(v) * float64(v)
		}
		putFloat64(o, statsSumSq, s)
	case OpScoreLoss:
		inv, s := 1/op.Coef[0], 0.0
		for i, v := range in32[0] {
			diff := float64(v) - float64(in32[1][i])
			s += diff * diff
			o[i] = float32(2 * diff * inv)
		}
		putFloat64(in32[2], statsLoss, inv*s)
	case OpPerturb:
		var aux []float32
		if len(in32) > 4 {
			aux = in32[4]
		}
		perturb(op.Blocks, in[1].Dim(1), o, in32[3], in32[0], in32[1], in32[2], aux)
	case OpBlockAffine:
		blockAffine(op, o, out.Dim(1)/op.Blocks, in32)
	}
}

func finiteStep(stats []float32) bool {
	l, sq := Float64At(stats, statsLoss), math.Sqrt(Float64At(stats, statsSumSq))
	return l-l == 0 && sq-sq == 0
}

func fourierEmbedding(o, t, w []float32) {
	twoPi := float32(2 * math.Pi)
	for b, tb := range t {
		lt := float32(math.Log(float64(tb)))
		row := o[b*2*len(w) : (b+1)*2*len(w)]
		for i, wi := range w {
			p := lt * wi * twoPi
			row[i] = float32(math.Sin(float64(p)))
			row[len(w)+i] = float32(math.Cos(float64(p)))
		}
	}
}

func positionalEmbedding(o, t []float32, dim int) {
	half := dim / 2
	scale := math.Log(10000) / float64(max(half-1, 1))
	for b, tb := range t {
		for k := range half {
			f := float32(math.Exp(float64(k) * -scale))
			a := float64(tb * f)
			o[b*dim+k] = float32(math.Sin(a))
			o[b*dim+half+k] = float32(math.Cos(a))
		}
	}
}

// adam is hg_clip_adam: c = [β1, β2, ε, lr/bc1, √bc2, maxNorm].
func adam(c []float64, p, g, m, v, stats []float32) {
	if !finiteStep(stats) {
		putFloat64(stats, statsSkipped, Float64At(stats, statsSkipped)+1)
		return
	}
	norm := math.Sqrt(Float64At(stats, statsSumSq))
	scale := c[5] / (norm + 1e-6)
	clip, cf := c[5] > 0 && scale < 1, float32(scale)
	b1, b2, eps, step, sqrtBC2 := float32(c[0]), float32(c[1]), float32(c[2]), float32(c[3]), float32(c[4])
	for i := range p {
		gi := g[i]
		if clip {
			gi *= cf
		}
		mi := b1*m[i] + (1-b1)*gi
		vi := b2*v[i] + (1-b2)*gi*gi
		m[i], v[i] = mi, vi
		denom := float32(math.Sqrt(float64(vi)))/sqrtBC2 + eps
		p[i] -= step * mi / denom
	}
}

// perturb is hg_hold_perturb.
func perturb(n, d int, x, target, coef, q0, eps, aux []float32) {
	batch := len(target) / max(d, 1)
	for b := range batch {
		var m, l [16]float64
		for k := range 16 {
			m[k], l[k] = Float64At(coef, 32*b+k), Float64At(coef, 32*b+16+k)
		}
		for c := range d {
			x0 := [MaxBlocks]float64{float64(q0[b*d+c])}
			var e [MaxBlocks]float64
			for j := range n {
				e[j] = float64(eps[(b*n+j)*d+c])
			}
			if aux != nil {
				for j := 1; j < n; j++ {
					x0[j] = float64(aux[(b*(n-1)+j-1)*d+c])
				}
			}
			for r := range n {
				var v float64
				for j := range n {
					v += m[4*r+j] * x0[j]
				}
				for j := 0; j <= r; j++ {
					v += l[4*r+j] * e[j]
				}
				x[(b*n+r)*d+c] = float32(v)
			}
			target[b*d+c] = -eps[(b*n+n-1)*d+c]
		}
	}
}

// blockAffine is hg_lt_step, hg_lt_b and hg_lt_a: in32 is the score (if len(in32) > Halves), then
// the noises.
func blockAffine(op Op, x []float32, d int, in32 [][]float32) {
	n, c := op.Blocks, op.Coef
	var score []float32
	if len(in32) > op.Halves {
		score, in32 = in32[0], in32[1:]
	}
	batch := len(x) / max(n*d, 1)
	for b := range batch {
		for i := range d {
			base := b*n*d + i
			var v, w [MaxBlocks]float64
			for r := range n {
				v[r] = float64(x[base+r*d])
			}
			if score != nil {
				v[n-1] = c[64]*v[n-1] + c[65]*float64(score[b*d+i])
			}
			for k := range op.Halves {
				e, ch, z := c[32*k:], c[32*k+16:], in32[k]
				for r := range n {
					var s float64
					for j := range n {
						s += e[4*r+j] * v[j]
					}
					for j := 0; j <= r; j++ {
						s += ch[4*r+j] * float64(z[base+j*d])
					}
					w[r] = s
				}
				v = w
			}
			for r := range n {
				x[base+r*d] = float32(v[r])
			}
		}
	}
}
