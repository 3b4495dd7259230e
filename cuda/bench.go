package cuda

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"holdgo/rng"
	"holdgo/tensor"
)

// BenchResult is the timing of one kernel workload.
type BenchResult struct {
	Name    string
	Size    string
	Seconds float64 // median device time of one run
	Bytes   float64 // minimum DRAM traffic of one run (each input read once, each output written once)
	Flops   float64 // floating-point operations of one run (GEMM), else 0
}

// GBs is the achieved bandwidth in GB/s.
func (r BenchResult) GBs() float64 { return r.Bytes / r.Seconds / 1e9 }

// GFLOPs is the achieved GFLOP/s (0 for memory-bound workloads).
func (r BenchResult) GFLOPs() float64 { return r.Flops / r.Seconds / 1e9 }

// BenchOptions sizes a benchmark run.
type BenchOptions struct {
	Elements int // elements of the streaming workloads (default 1<<24)
	GemmSize int // M = N = K of the GEMM workloads (default 4096)
	Reps     int // timed repetitions per workload; the median is reported (default 20)
}

func (o BenchOptions) withDefaults() BenchOptions {
	if o.Elements <= 0 {
		o.Elements = 1 << 24
	}
	if o.GemmSize <= 0 {
		o.GemmSize = 4096
	}
	if o.Reps <= 0 {
		o.Reps = 20
	}
	return o
}

// ErrNoTimer is returned by BenchKernels on a backend that cannot time device work.
var ErrNoTimer = errors.New("cuda: this backend has no device timer")

type workload struct {
	name, size   string
	bytes, flops float64
	run          func() error
}

// BenchKernels times every kernel family on dev: CUDA events around each run, the L2 cache flushed
// before each repetition, the median of opts.Reps runs. The fused Lie–Trotter step is timed next
// to the unfused B, A, A sequence.
func BenchKernels(dev *Device, opts BenchOptions) ([]BenchResult, error) {
	timer, ok := dev.be.(Timer)
	if !ok {
		return nil, ErrNoTimer
	}
	opts = opts.withDefaults()
	loads, err := benchWorkloads(dev, opts)
	if err != nil {
		return nil, err
	}
	var out []BenchResult
	for _, w := range loads {
		if err := w.run(); err != nil { // warm-up (and JIT)
			return nil, fmt.Errorf("bench %s: %w", w.name, err)
		}
		times := make([]float64, opts.Reps)
		for i := range times {
			if err := timer.FlushL2(); err != nil {
				return nil, fmt.Errorf("bench: flush L2: %w", err)
			}
			if times[i], err = timer.Time(w.run); err != nil {
				return nil, fmt.Errorf("bench %s: %w", w.name, err)
			}
		}
		slices.Sort(times)
		out = append(out, BenchResult{Name: w.name, Size: w.size, Seconds: times[len(times)/2], Bytes: w.bytes, Flops: w.flops})
	}
	return out, nil
}

// WriteBenchTable prints results with their fraction of the device's peak bandwidth.
func WriteBenchTable(w io.Writer, dev *Device, res []BenchResult) {
	peak := 0.0
	if t, ok := dev.be.(Timer); ok {
		peak = t.PeakBandwidth()
	}
	fmt.Fprintf(w, "%-22s %-22s %10s %10s %8s %10s\n", "kernel", "size", "time µs", "GB/s", "% peak", "GFLOP/s")
	for _, r := range res {
		frac := "-"
		if peak > 0 {
			frac = fmt.Sprintf("%.1f", 100*r.Bytes/r.Seconds/peak)
		}
		gf := "-"
		if r.Flops > 0 {
			gf = fmt.Sprintf("%.0f", r.GFLOPs())
		}
		fmt.Fprintf(w, "%-22s %-22s %10.1f %10.1f %8s %10s\n", r.Name, r.Size, r.Seconds*1e6, r.GBs(), frac, gf)
	}
	var fused, unfused float64
	for _, r := range res {
		switch r.Name {
		case "lt_step fused":
			fused = r.Seconds
		case "lt_step unfused":
			unfused = r.Seconds
		}
	}
	if fused > 0 && unfused > 0 {
		fmt.Fprintf(w, "fused Lie–Trotter step: %.2f× faster than the unfused B, A, A sequence\n", unfused/fused)
	}
	if peak > 0 {
		fmt.Fprintf(w, "peak DRAM bandwidth: %.0f GB/s\n", peak/1e9)
	}
}

// benchSize is the shapes of the benchmark's workloads, chosen from the options.
type benchSize struct {
	rows, cols, n int // streaming workloads: rows × cols = n elements
	sq            int // transpose: sq × sq
	gnS           int // group norm: (16, 64, gnS)
	side          int // convolution: (8, 64, side, side)
	planes        int // FIR: (planes, 2·side, 2·side)
	batch, dim    int // HOLD-3: (batch, 3·dim)
	k             int // GEMM: M = N = K
}

func benchSizes(o BenchOptions) benchSize {
	var s benchSize
	s.cols = min(1024, o.Elements)
	s.rows = o.Elements / s.cols
	s.n = s.rows * s.cols
	s.sq = 1
	for s.sq*s.sq*4 <= s.n {
		s.sq *= 2
	}
	s.gnS = max(s.n/1024, 1) // (N, C, S) = (16, 64, n/1024)
	s.side = 8               // (N, 64, H, H) with a 3×3 kernel, padding 1; H from the element budget
	for 64*(s.side*2)*(s.side*2)*8 <= s.n {
		s.side *= 2
	}
	s.planes = max(s.n/(4*s.side*s.side), 1) // ×2 up and down over planes of side²·4
	s.batch = 256                            // HOLD-3's shapes: B = 256 samples of n/(256·3) dimensions
	s.dim = max(s.n/(s.batch*3), 1)
	s.k = o.GemmSize
	return s
}

// shapes lists the shape of every tensor benchWorkloads uploads, in its order (TestBenchMemory
// checks the two against each other through the pool's counters).
func (s benchSize) shapes() [][]int {
	return [][]int{
		{s.rows, s.cols}, {s.rows, s.cols}, {s.rows, s.cols}, {s.cols}, // x, y, z, bias
		{s.sq, s.sq}, {s.sq, s.sq}, {1, s.cols}, {s.rows, 1}, // xs, xt, colSum, rowSum
		{16, 64, s.gnS}, {16, 64, s.gnS}, {64}, {64}, // gx, gy, gamma, beta
		{64, 64, 3, 3}, {64}, {8, 64, s.side, s.side}, {8, 64, s.side, s.side}, // cw, cb, cx, cy
		{8, 64, s.side, s.side}, {64, 64, 3, 3}, // cdx, cdw
		{16, 64, s.gnS}, {16, 64, s.gnS}, {64}, {64}, // gdy, gdx, gdgamma, gdbeta
		{1, s.planes, 2 * s.side, 2 * s.side}, {1, s.planes, 4 * s.side, 4 * s.side}, {1, s.planes, s.side, s.side}, // fx, fup, fdown
		{s.n}, {s.n}, {s.n}, {s.n}, {tensor.StatsLen}, // p, g, m, v, stats
		{s.batch * tensor.PerturbCoefLen}, {s.batch, s.dim}, {s.batch, 3 * s.dim}, // coef, q0, eps
		{s.batch, 3 * s.dim}, {s.batch, s.dim}, {s.batch, s.dim}, {s.batch, 3 * s.dim}, {s.batch, 3 * s.dim}, // state, target, score, z1, z2
		{s.k, s.k}, {s.k, s.k}, {s.k, s.k}, // ga, gb, gc
	}
}

// BenchMemory is what a kernel benchmark of some options allocates, in bytes.
type BenchMemory struct {
	Device int64 // the workloads' tensors and scratch, in the device pool's size classes
	Host   int64 // the host buffer the random inputs are drawn into: at most twice the largest tensor as it grows
}

// benchScratch bounds what the workloads allocate on the device while they run, beyond their
// tensors: a convolution's im2col chunk (DefaultConvChunkBytes) is the largest.
const benchScratch = 2 * DefaultConvChunkBytes

// BenchMemoryOf returns what BenchKernels allocates for opts (after their defaults), so that a
// caller can check it against a memory budget before anything is allocated: on the host shim the
// device memory is host memory too. Sizes of up to 2^40 elements and GEMMs of up to 2^20 do not
// overflow.
func BenchMemoryOf(opts BenchOptions) BenchMemory {
	var m BenchMemory
	for _, shape := range benchSizes(opts.withDefaults()).shapes() {
		n := int64(1)
		for _, d := range shape {
			n *= int64(d)
		}
		m.Device += int64(sizeClass(int(4 * n)))
		m.Host = max(m.Host, 2*4*n)
	}
	m.Device += benchScratch
	return m
}

func benchWorkloads(dev *Device, o BenchOptions) ([]workload, error) {
	rng := rng.New(1)
	var err error
	// Zeros are allocated on the device (zeroed there); random inputs are drawn into one host buffer,
	// reused by every upload, so that the Go heap never holds more than the largest of them (host
	// tensors made per upload left hundreds of MiB of garbage: BenchMemoryOf counts the buffer).
	var stage []float32
	upload := func(fill func([]float32), shape ...int) *tensor.Tensor {
		if err != nil {
			return nil
		}
		t := tensor.New(dev, shape...)
		if err = tensor.Err(t); err != nil || fill == nil {
			return t
		}
		if cap(stage) < t.Len() {
			stage = nil // the old buffer is garbage before the new one is made
			stage = make([]float32, t.Len())
		}
		fill(stage[:t.Len()])
		err = t.Buffer().Write(stage[:t.Len()])
		return t
	}
	zeros := func(shape ...int) *tensor.Tensor { return upload(nil, shape...) }
	randn := func(shape ...int) *tensor.Tensor {
		return upload(func(dst []float32) { rng.FillNormal(dst, 0, 1) }, shape...)
	}
	s := benchSizes(o)
	rows, cols, n := s.rows, s.cols, s.n
	f := 4.0 // bytes per float32
	x, y, z := randn(rows, cols), randn(rows, cols), zeros(rows, cols)
	bias := randn(cols)
	sq := s.sq
	xs, xt := randn(sq, sq), zeros(sq, sq)
	colSum := zeros(1, cols)
	rowSum := zeros(rows, 1)
	gnS := s.gnS
	gx, gy := randn(16, 64, gnS), zeros(16, 64, gnS)
	gamma, beta := randn(64), randn(64)
	side := s.side
	// Convolution through the op list: x (8, 64, side, side), w (64, 64, 3, 3), padding 1.
	cw, cb := randn(64, 64, 3, 3), randn(64)
	cx, cy := randn(8, 64, side, side), zeros(8, 64, side, side)
	cdx, cdw := zeros(8, 64, side, side), zeros(64, 64, 3, 3)
	convFlops := 2 * float64(8*64*side*side) * float64(64*9)
	convOp := func(kind tensor.OpKind) tensor.Op { return tensor.Op{Kind: kind, Stride: 1, Pad: 1} }
	// Group-norm gradients on the group-norm workload's shape.
	gdy, gdx, gdgamma, gdbeta := randn(16, 64, gnS), zeros(16, 64, gnS), zeros(64), zeros(64)
	// FIR: NCSN++'s ×2 up and down (the 4×4 filter [1,3,3,1]ᵀ[1,3,3,1]) over planes of side²·4.
	planes := s.planes
	fx := randn(1, planes, 2*side, 2*side)
	up := tensor.Op{Kind: tensor.OpUpFIRDn2d, Up: 2, Down: 1, Pad: 2, Pad1: 1, Scalar: 4}
	down := tensor.Op{Kind: tensor.OpUpFIRDn2d, Up: 1, Down: 2, Pad: 1, Pad1: 1, Scalar: 1}
	fup, fdown := zeros(1, planes, 4*side, 4*side), zeros(1, planes, side, side)
	// Adam (clipping) and EMA over n parameters, with the step statistics of a finite step.
	p, g, m, v, stats := randn(n), randn(n), zeros(n), zeros(n), zeros(tensor.StatsLen)
	adam := tensor.AdamStep{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, LR: 1e-4, Step: 10, MaxNorm: 1}
	// HOLD-3's shapes: B = 256 samples of n/(256·3) dimensions, with coefficients of HOLD's form
	// (the kernels' cost does not depend on their values; package hold computes the real ones).
	batch, dim := s.batch, s.dim
	coefHost := make([]float32, batch*tensor.PerturbCoefLen)
	var lt tensor.BlockAffine
	lt.Blocks, lt.Halves, lt.BScale, lt.BScore = 3, 2, 1.01, 0.02
	for b := range batch {
		c := make([]float64, 32)
		for r := range 3 {
			for j := 0; j <= r; j++ {
				c[4*r+j], c[16+4*r+j] = 0.5*rng.Float64(), 0.1*rng.Float64()
				lt.A[0].Exp[r][j], lt.A[0].Chol[r][j] = c[4*r+j], c[16+4*r+j]
			}
		}
		tensor.PutFloat64s(coefHost[b*tensor.PerturbCoefLen:], c)
	}
	lt.A[1] = lt.A[0]
	coef := upload(func(dst []float32) { copy(dst, coefHost) }, len(coefHost))
	q0, eps := randn(batch, dim), randn(batch, 3*dim)
	state, target := zeros(batch, 3*dim), zeros(batch, dim)
	score, z1, z2 := randn(batch, dim), randn(batch, 3*dim), randn(batch, 3*dim)
	// GEMM.
	k := s.k
	ga, gb, gc := randn(k, k), randn(k, k), zeros(k, k)
	if err != nil {
		return nil, fmt.Errorf("bench: upload inputs: %w", err)
	}
	gemm := func(cublas bool) func() error {
		return func() error {
			pa, _ := dev.ptrOf(ga)
			pb, _ := dev.ptrOf(gb)
			pc, _ := dev.ptrOf(gc)
			gm := Gemm{M: k, N: k, K: k, Alpha: 1, A: pa, B: pb, C: pc, Lda: k, Ldb: k, Ldc: k, Batch: 1}
			if cublas {
				return dev.sgemm(gm)
			}
			return dev.kernelSgemm(gm)
		}
	}
	exec := func(op tensor.Op, out *tensor.Tensor, in ...*tensor.Tensor) func() error {
		return func() error { return dev.Exec(op, out, in...) }
	}
	sz := func(dims ...int) string { return fmt.Sprint(dims) }
	hb := float64(batch * dim)
	loads := []workload{
		{"exp", sz(rows, cols), 2 * f * float64(n), 0, exec(tensor.Op{Kind: tensor.OpExp}, z, x)},
		{"add", sz(rows, cols), 3 * f * float64(n), 0, exec(tensor.Op{Kind: tensor.OpAdd}, z, x, y)},
		{"add broadcast", sz(rows, cols) + "+" + sz(cols), 2 * f * float64(n), 0, exec(tensor.Op{Kind: tensor.OpAdd}, z, x, bias)},
		{"transpose", sz(sq, sq), 2 * f * float64(sq*sq), 0, exec(tensor.Op{Kind: tensor.OpPermute, Axes: []int{1, 0}}, xt, xs)},
		{"sum rows", sz(rows, cols) + " axis 1", f * float64(n), 0, exec(tensor.Op{Kind: tensor.OpSum, Axes: []int{1}}, rowSum, x)},
		{"sum cols", sz(rows, cols) + " axis 0", f * float64(n), 0, exec(tensor.Op{Kind: tensor.OpSum, Axes: []int{0}}, colSum, x)},
		{"softmax", sz(rows, cols), 2 * f * float64(n), 0, exec(tensor.Op{Kind: tensor.OpSoftmax, Scalar: 1}, z, x)},
		{"group norm", sz(16, 64, gnS), 2 * f * float64(gx.Len()), 0, exec(tensor.Op{Kind: tensor.OpGroupNorm, Groups: 16, Scalar: 1e-5}, gy, gx, gamma, beta)},
		{"conv2d 3×3", sz(8, 64, side, side), f * float64(cx.Len()+cw.Len()+cy.Len()), convFlops, exec(convOp(tensor.OpConv2d), cy, cx, cw, cb)},
		{"conv2d grad input", sz(8, 64, side, side), f * float64(cy.Len()+cw.Len()+cdx.Len()), convFlops, exec(convOp(tensor.OpConv2dGradInput), cdx, cy, cw)},
		{"conv2d grad weight", sz(8, 64, side, side), f * float64(cx.Len()+cy.Len()+cdw.Len()), convFlops, exec(convOp(tensor.OpConv2dGradWeight), cdw, cx, cy)},
		{"group norm backward", sz(16, 64, gnS), 3 * f * float64(gx.Len()), 0, exec(tensor.Op{Kind: tensor.OpGroupNormBackward, Groups: 16, Scalar: 1e-5}, gdx, gx, gamma, gdy, gdgamma, gdbeta)},
		{"gn+silu backward", sz(16, 64, gnS), 3 * f * float64(gx.Len()), 0, exec(tensor.Op{Kind: tensor.OpGroupNormSiLUBackward, Groups: 16, Scalar: 1e-5}, gdx, gx, gamma, beta, gdy, gdgamma, gdbeta)},
		{"fir up ×2", sz(planes, 2*side, 2*side), f * float64(fx.Len()+fup.Len()), 0, exec(up, fup, fx)},
		{"fir down ×2", sz(planes, 2*side, 2*side), f * float64(fx.Len()+fdown.Len()), 0, exec(down, fdown, fx)},
		{"adam", sz(n), 7 * f * float64(n), 0, func() error { return tensor.Err(tensor.Adam(p, g, m, v, stats, adam)) }},
		{"ema", sz(n), 3 * f * float64(n), 0, func() error { return tensor.Err(tensor.EMA(m, p, stats, 0.999)) }},
		{"hold perturb", sz(batch, 3*dim), 8 * f * hb, 0, func() error { return tensor.Err(tensor.Perturb(state, target, coef, q0, eps, nil, 3)) }},
		{"lt_step fused", sz(batch, 3*dim), 13 * f * hb, 0, func() error { return tensor.Err(tensor.BlockStep(state, score, []*tensor.Tensor{z1, z2}, lt)) }},
		{"lt_step unfused", sz(batch, 3*dim), 13 * f * hb, 0, func() error { return dev.LieTrotterUnfused(state, score, []*tensor.Tensor{z1, z2}, lt) }},
		{"sgemm kernel", sz(k, k, k), 3 * f * float64(k*k), 2 * float64(k) * float64(k) * float64(k), gemm(false)},
	}
	if dev.gemm != nil {
		in := func(p string) func() error { // cuBLAS in arithmetic p (Device.SetPrecision)
			return func() error {
				defer dev.SetPrecision(dev.Precision())
				dev.SetPrecision(p)
				return gemm(true)()
			}
		}
		gf := 2 * float64(k) * float64(k) * float64(k)
		loads = append(loads, workload{"sgemm cuBLAS TF32", sz(k, k, k), 3 * f * float64(k*k), gf, in("tf32")},
			workload{"sgemm cuBLAS BF16", sz(k, k, k), 3 * f * float64(k*k), gf, in("bf16")},
			workload{"sgemm cuBLAS FP32", sz(k, k, k), 3 * f * float64(k*k), gf, in("strict")})
	}
	return loads, nil
}
