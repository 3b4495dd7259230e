// Package bench holds the harnesses of holdctl bench: SGEMM, memory bandwidth, the toy MLP's training
// step, the backend op table, NCSN++ against PyTorch and training steps on a device. Each returns what
// it measured; the command prints it.
package bench

import (
	"holdgo/internal/hugepage"
	"slices"
	"time"

	"holdgo/internal/gemm"
	"holdgo/internal/isa"
	"holdgo/internal/parallel"
	"holdgo/rng"
	"holdgo/tensor"
	"holdgo/tensor/optest"
	"holdgo/train"
)

// WarmUp is how long Median runs f before it starts timing: long enough for
// the OS to spread a fresh process's threads over the cores (measured: for
// the first ~5–10 ms both of a 2-thread GEMM's threads can share one core,
// and a 150 µs product then takes twice as long) and for caches and pooled
// buffers to settle.
const WarmUp = 200 * time.Millisecond

// Median times f over repeats runs, after warming up for WarmUp (at least
// one run).
func Median(repeats int, f func()) time.Duration {
	for start := time.Now(); ; {
		f()
		if time.Since(start) >= WarmUp {
			break
		}
	}
	ts := make([]time.Duration, repeats)
	for i := range ts {
		start := time.Now()
		f()
		ts[i] = time.Since(start)
	}
	slices.Sort(ts)
	return ts[len(ts)/2]
}

// GemmConfig is one SGEMM C = A·B (row-major, float32) to time.
type GemmConfig struct {
	M, K, N        int
	TransA, TransB bool   // A stored k×m, B stored n×k
	ISA            string // force avx512, avx2 or generic ("": the best available)
	Repeats        int
}

// GemmResult is what Gemm measured.
type GemmResult struct {
	GFLOPS     float64
	Time       time.Duration // the median
	ISA        string        // the kernel's instruction set
	PeakGFLOPS float64       // the FMA peak of ISA on the worker pool's threads (PeakGFLOPS)
	PeakPct    float64       // GFLOPS as a percentage of PeakGFLOPS
}

// Gemm times the SGEMM of cfg on normal draws (the median of cfg.Repeats, on the worker pool's
// threads) and compares the rate with the FMA peak. An unknown or unsupported cfg.ISA is an error.
func Gemm(cfg GemmConfig) (GemmResult, error) {
	m, k, n := cfg.M, cfg.K, cfg.N
	var err error
	if cfg.ISA != "" {
		var prev string
		if prev, err = gemm.SetISA(cfg.ISA); err != nil {
			return GemmResult{}, err
		}
		defer gemm.SetISA(prev)
	}
	r := rng.New(1)
	// Allocated as the engine's host tensors are (and as numpy's arrays, the
	// peer's inputs in scripts/peer_bench.py): huge pages from 4 MiB.
	a, b, out := hugepage.Make(m*k), hugepage.Make(k*n), hugepage.Make(m*n)
	r.FillNormal(a, 0, 1)
	r.FillNormal(b, 0, 1)
	ta, tb := cfg.TransA, cfg.TransB
	lda, ldb := k, n
	if ta {
		lda = m
	}
	if tb {
		ldb = k
	}
	d := Median(cfg.Repeats, func() { gemm.Sgemm(ta, tb, m, n, k, 1, a, lda, b, ldb, 0, out, n) })
	res := GemmResult{GFLOPS: 2 * float64(m) * float64(n) * float64(k) / d.Seconds() / 1e9, Time: d, ISA: gemm.ISA()}
	res.PeakGFLOPS, res.PeakPct, err = ofPeak(res.GFLOPS, res.ISA)
	return res, err
}

// Triad is the memory bandwidth in GB/s of a = b + s·c on three arrays of n float32 (the median of
// repeats, on the worker pool's threads).
func Triad(n, repeats int) float64 {
	a, b, x := make([]float32, n), make([]float32, n), make([]float32, n)
	rng.New(2).FillNormal(b, 0, 1)
	copy(x, b)
	const s = 1.5
	d := Median(repeats, func() {
		parallel.For(n, 1<<16, func(lo, hi int) {
			aa, bb, xx := a[lo:hi], b[lo:hi], x[lo:hi]
			for i := range aa {
				aa[i] = bb[i] + s*xx[i]
			}
		})
	})
	return 12 * float64(n) / d.Seconds() / 1e9
}

// MLPResult is what MLP measured.
type MLPResult struct {
	Time       time.Duration // the median
	FLOPs      int64         // of one step, counted by the op list (CountFLOPs; Adam and EMA are outside it)
	GFLOPS     float64       // FLOPs over Time
	ISA        string        // the kernels' instruction set
	PeakGFLOPS float64       // the FMA peak of ISA on the worker pool's threads (PeakGFLOPS)
	PeakPct    float64       // GFLOPS as a percentage of PeakGFLOPS
}

// MLP times one training step of the toy score MLP (train.ToyStep: forward, loss, backward, clip,
// Adam, EMA) at batch and hidden width: the median of repeats, after one step that counts its FLOPs.
func MLP(batch, hidden, repeats int) (MLPResult, error) {
	step, _, err := train.ToyStep(batch, hidden, 1)
	if err != nil {
		return MLPResult{}, err
	}
	res := MLPResult{FLOPs: CountFLOPs(step), ISA: isa.Level()}
	res.Time = Median(repeats, step)
	res.GFLOPS = GFLOPS(res.FLOPs, res.Time)
	res.PeakGFLOPS, res.PeakPct, err = ofPeak(res.GFLOPS, res.ISA)
	return res, err
}

// OpsRow is one op's line of the supported-ops matrix.
type OpsRow = optest.Support

// Ops runs the backend test table (tensor/optest) on dev against the Reference device with largest
// normalised MSE tol, and returns the supported-ops matrix and how many ops fail or are unsupported
// (ggml's test-backend-ops).
func Ops(dev tensor.Device, tol float64) (rows []OpsRow, failed int) {
	rows = optest.Matrix(dev, tol)
	for _, r := range rows {
		if r.Passed != r.Cases {
			failed++
		}
	}
	return rows, failed
}

// WriteOps prints the supported-ops matrix of device as Markdown.
var WriteOps = optest.WriteMatrix

// OpsPerf times every case of the op table whose name contains filter on dev (optest's performance
// mode: one dispatch's median time, GFLOP/s and GB/s); failed counts the cases that could not run.
func OpsPerf(dev tensor.Device, filter string, minTime time.Duration) (rows []optest.PerfResult, failed int) {
	rows = optest.PerfTable(dev, filter, minTime)
	for _, r := range rows {
		if r.Err != nil {
			failed++
		}
	}
	return rows, failed
}

// WriteOpsPerf prints OpsPerf's rows as Markdown.
var WriteOpsPerf = optest.WritePerf
