package bench

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"holdgo/internal/isa"
	"holdgo/internal/parallel"
	"holdgo/internal/peak"
	"holdgo/tensor"
)

// PeakConfig says what MeasurePeak runs.
type PeakConfig struct {
	Threads  int           // the many-thread column, 0: all cores (the one-thread column is always measured)
	Duration time.Duration // per FMA measurement (the best of peak.Windows windows)
	TriadN   int           // elements per triad array: much larger than the caches
	Repeats  int           // timed triad repeats (the median is reported)
}

// PeakLevel is the FMA peak of one instruction-set level, in GFLOP/s.
type PeakLevel struct {
	ISA     string  `json:"isa"`
	One     float64 `json:"gflops_1_thread"`
	Many    float64 `json:"gflops_n_threads"`
	PerCore float64 `json:"gflops_per_thread"` // Many / threads
}

// PeakReport is what holdctl bench peak prints.
type PeakReport struct {
	Threads  int         `json:"threads"`
	Active   string      `json:"active_isa"` // the level the kernels use now
	Levels   []PeakLevel `json:"fma"`        // best level first
	TriadN   int         `json:"triad_n"`
	TriadOne float64     `json:"triad_gbps_1_thread"`
	TriadAll float64     `json:"triad_gbps_n_threads"`
}

// MeasurePeak measures the FMA peak of every level this machine and build
// run (internal/peak: a loop of independent FMA chains in registers) on one
// thread and on cfg.Threads, and the triad bandwidth on both. It leaves the
// worker pool's thread count as it found it; the peaks it measures are also
// remembered for PeakGFLOPS.
func MeasurePeak(cfg PeakConfig) (PeakReport, error) {
	if cfg.Threads == 0 {
		cfg.Threads = runtime.GOMAXPROCS(0)
	}
	r := PeakReport{Threads: cfg.Threads, Active: isa.Level(), TriadN: cfg.TriadN}
	for _, level := range isa.Levels() {
		one, err := peak.FMA(level, 1, cfg.Duration)
		if err != nil {
			return r, err
		}
		many := one
		if cfg.Threads != 1 {
			if many, err = peak.FMA(level, cfg.Threads, cfg.Duration); err != nil {
				return r, err
			}
		}
		remember(level, 1, one)
		remember(level, cfg.Threads, many)
		r.Levels = append(r.Levels, PeakLevel{ISA: level, One: one, Many: many, PerCore: many / float64(cfg.Threads)})
	}
	defer parallel.SetThreads(parallel.SetThreads(1))
	r.TriadOne = Triad(cfg.TriadN, cfg.Repeats)
	r.TriadAll = r.TriadOne
	if cfg.Threads != 1 {
		parallel.SetThreads(cfg.Threads)
		r.TriadAll = Triad(cfg.TriadN, cfg.Repeats)
	}
	return r, nil
}

// PeakWindows is how many windows each FMA measurement is split into; the best is reported.
const PeakWindows = peak.Windows

// PeakProbe is how long PeakGFLOPS measures a peak it has not seen.
const PeakProbe = 150 * time.Millisecond

type peakKey struct {
	level   string
	threads int
}

var (
	peakMu    sync.Mutex
	peakCache = map[peakKey]float64{}
)

func remember(level string, threads int, gflops float64) {
	peakMu.Lock()
	defer peakMu.Unlock()
	peakCache[peakKey{level, threads}] = max(peakCache[peakKey{level, threads}], gflops)
}

// PeakGFLOPS is the FMA peak of level on threads threads, in GFLOP/s:
// measured for PeakProbe the first time a process asks (or by MeasurePeak),
// then remembered, so the % of peak columns of the benchmarks cost one short
// measurement per process.
func PeakGFLOPS(level string, threads int) (float64, error) {
	peakMu.Lock()
	g, ok := peakCache[peakKey{level, threads}]
	peakMu.Unlock()
	if ok {
		return g, nil
	}
	g, err := peak.FMA(level, threads, PeakProbe)
	if err != nil {
		return 0, err
	}
	remember(level, threads, g)
	return g, nil
}

// ofPeak returns the FMA peak of level on the worker pool's threads and
// gflops as a percentage of it.
func ofPeak(gflops float64, level string) (peak, pct float64, err error) {
	peak, err = PeakGFLOPS(level, parallel.Threads())
	return peak, Percent(gflops, peak), err
}

// Percent is 100·part/whole, or 0 where whole is not positive.
func Percent(part, whole float64) float64 {
	if !(whole > 0) {
		return 0
	}
	return 100 * part / whole
}

// CountFLOPs runs f and returns the FLOPs of the ops it dispatched, counted
// by the op list (tensor.FLOPs: convolutions as direct convolutions, so a
// Winograd kernel can show more than 100 % of the FMA peak). Work done outside
// the op list (an optimizer's fused update, the CUDA device's own kernels) is
// not counted. It holds the op observer (tensor.ObserveExec) while f runs.
func CountFLOPs(f func()) int64 {
	var n atomic.Int64
	stop := tensor.ObserveExec(func(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor) {
		n.Add(tensor.FLOPs(op, out, in...))
	})
	defer stop()
	f()
	return n.Load()
}

// GFLOPS is flops over d in GFLOP/s (0 for a zero d).
func GFLOPS(flops int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(flops) / d.Seconds() / 1e9
}
