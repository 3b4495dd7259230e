package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"holdgo/autograd"
	"holdgo/internal/isa"
	"holdgo/internal/parallel"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// NCSNppCase is one network of `holdctl bench ncsnpp`; the same presets
// and batches are in scripts/bench_ncsnpp.py.
type NCSNppCase struct {
	Model     string
	In, Batch int // input channels, batch
}

// NCSNppCases are the networks holdctl bench ncsnpp times.
var NCSNppCases = []NCSNppCase{{"ncsnpp-small", 3, 32}, {"ncsnpp-cifar10", 9, 4}}

// NCSNppCasesFor returns the cases of the named presets, in the order given; a name that is not a
// case is an error.
func NCSNppCasesFor(models []string) ([]NCSNppCase, error) {
	var cases []NCSNppCase
	for _, m := range models {
		i := slices.IndexFunc(NCSNppCases, func(bc NCSNppCase) bool { return bc.Model == m })
		if i < 0 {
			return nil, fmt.Errorf("unknown %q (want ncsnpp-small, ncsnpp-cifar10)", m)
		}
		cases = append(cases, NCSNppCases[i])
	}
	return cases, nil
}

// NCSNppAll times every case (NCSNpp, on the worker pool's threads, which each row records) and then,
// unless torch is nil, PyTorch's peer of the same networks on as many threads (Torch). With rounds > 1
// it does both that many times, alternating, and each row reports the median of its rounds and keeps
// their times (RoundMs): on a shared machine a slow spell then lands on one round's pair of runs rather
// than on one side of every ratio, and WriteNCSNpp's speed-up is the median of the rounds' ratios. With
// a profile writer, a pprof CPU profile of the whole is written to it.
func NCSNppAll(cases []NCSNppCase, repeats, rounds int, torch *TorchOptions, profile io.Writer) ([]NCSNppRow, error) {
	if profile != nil {
		if err := pprof.StartCPUProfile(profile); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	var all [][]NCSNppRow
	for range max(1, rounds) {
		rows, err := ncsnppRound(cases, repeats, torch)
		if err != nil {
			return nil, err
		}
		all = append(all, rows)
	}
	return mergeRounds(all), nil
}

// ncsnppRound is one round of NCSNppAll: holdgo's rows for every case, then PyTorch's.
func ncsnppRound(cases []NCSNppCase, repeats int, torch *TorchOptions) ([]NCSNppRow, error) {
	var rows []NCSNppRow
	for _, bc := range cases {
		r, err := NCSNpp(bc, repeats)
		if err != nil {
			return nil, err
		}
		for i := range r {
			r[i].Threads = parallel.Threads()
		}
		rows = append(rows, r...)
	}
	if torch == nil {
		return rows, nil
	}
	opt := *torch
	opt.Threads, opt.Repeats = parallel.Threads(), repeats
	for _, bc := range cases {
		opt.Models = append(opt.Models, bc.Model)
	}
	pt, err := Torch(opt)
	if err != nil {
		return nil, err
	}
	return append(rows, pt...), nil
}

// mergeRounds makes one row per implementation, model and pass from the rounds' rows (in the first
// round's order): its times are the median of the rounds', RoundMs and RoundCPUMs keep each round's
// (only when there are several), and the rates follow the median time. PyTorch's oneDNN ISA is the
// rounds' fastest choices, joined by "/" where they differ.
func mergeRounds(all [][]NCSNppRow) []NCSNppRow {
	if len(all) == 0 {
		return nil
	}
	if len(all) == 1 {
		return all[0]
	}
	var out []NCSNppRow
	for _, first := range all[0] {
		row := first
		row.RoundMs, row.RoundCPUMs = nil, nil
		var isas []string
		for _, rows := range all {
			i := slices.IndexFunc(rows, func(r NCSNppRow) bool {
				return r.Impl == first.Impl && r.Model == first.Model && r.Backward == first.Backward
			})
			if i < 0 { // PyTorch skipped in that round
				continue
			}
			row.RoundMs = append(row.RoundMs, rows[i].MsPerImage)
			row.RoundCPUMs = append(row.RoundCPUMs, rows[i].CPUMsPerImage)
			if v := rows[i].OneDNNISA; v != "" && !slices.Contains(isas, v) {
				isas = append(isas, v)
			}
		}
		row.MsPerImage, row.CPUMsPerImage = median(row.RoundMs), median(row.RoundCPUMs)
		row.OneDNNISA = strings.Join(isas, "/")
		if row.GFLOPPerImage > 0 {
			row.GFLOPS = row.GFLOPPerImage / row.MsPerImage * 1e3
			row.PeakPct = Percent(row.GFLOPS, row.PeakGFLOPS)
		}
		out = append(out, row)
	}
	return out
}

// median is the middle of xs (the mean of the two middle values for an even count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// roundRatio is the speed-up of holdgo against PyTorch (their rounds' times hr and pr, their
// medians hMed and pMed): the median of the rounds' ratios where both have the same rounds (NCSNppAll with rounds > 1), else the ratio of the times.
func roundRatio(pr, hr []float64, pMed, hMed float64) float64 {
	if len(pr) >= 2 && len(pr) == len(hr) {
		q := make([]float64, len(pr))
		for i := range pr {
			q[i] = pr[i] / hr[i]
		}
		return median(q)
	}
	return pMed / hMed
}

// NCSNppRow is one timing: milliseconds per image, median of repeats.
type NCSNppRow struct {
	Impl       string  `json:"impl"` // holdgo or pytorch
	Model      string  `json:"model"`
	Batch      int     `json:"batch"`
	Backward   bool    `json:"backward"`
	MsPerImage float64 `json:"ms_per_image"`
	// CPU time of the process (user + system) per image, median: on a shared machine the
	// wall time of a 1-thread run counts other processes' time slices, this does not.
	CPUMsPerImage float64 `json:"cpu_ms_per_image,omitempty"`
	Threads       int     `json:"threads"`
	// OneDNNISA is the ONEDNN_MAX_CPU_ISA a PyTorch row ran under ("ALL": oneDNN's own choice).
	OneDNNISA string `json:"onednn_isa,omitempty"`
	// Of a holdgo row: the pass's FLOPs per image counted by the op list (CountFLOPs:
	// convolutions as direct convolutions), the rate on the wall time, and that rate as a
	// percentage of the FMA peak of the kernels' instruction-set level on the row's threads
	// (PeakGFLOPS). Winograd's 3×3 convolutions do fewer multiplications than counted.
	GFLOPPerImage float64 `json:"gflop_per_image,omitempty"`
	GFLOPS        float64 `json:"gflops,omitempty"`
	PeakGFLOPS    float64 `json:"peak_gflops,omitempty"`
	PeakPct       float64 `json:"peak_pct,omitempty"`
	ISA           string  `json:"isa,omitempty"`
	// With several rounds (NCSNppAll): each round's median wall and CPU time per image, in the order
	// they ran; MsPerImage and CPUMsPerImage are their medians.
	RoundMs    []float64 `json:"round_ms,omitempty"`
	RoundCPUMs []float64 `json:"round_cpu_ms,omitempty"`
}

// TorchMalloc is the glibc malloc tuning the PyTorch run gets unless the caller's
// environment sets these variables itself: buffers up to 32 MiB from the heap
// (not from a fresh mmap each time) and no trimming, so that PyTorch does not pay
// page faults for every activation of every call (holdgo recycles its buffers).
// Measured on a 2-core AMD EPYC (Zen 5) VM, torch 1.13 / oneDNN 2.6.3, 1 thread,
// 2026-11-27: ncsnpp-small forward 36.3 → 6.9 ms per image, training step 125 →
// 29 ms (1.44 M → 0.22 M minor faults); ncsnpp-cifar10 forward 402 → 280 ms,
// training step 1,441 → 1,099 ms. Without it, oneDNN's blocked-layout reorders of
// 32×32×28×28 tensors took 11–20 ms each.
var TorchMalloc = []string{"MALLOC_MMAP_THRESHOLD_=33554432", "MALLOC_TRIM_THRESHOLD_=68719476736",
	"MALLOC_TOP_PAD_=1073741824"}

// TorchOptions says how Torch runs the PyTorch peer.
type TorchOptions struct {
	Python, Script string    // interpreter with torch and the benchmark script (scripts/bench_ncsnpp.py)
	ISAs           []string  // ONEDNN_MAX_CPU_ISA values, one run each (OneDNNISAs)
	Threads        int       // torch's threads and its BLAS pool's
	Repeats        int       // timed repeats (the script reports the median)
	Models         []string  // presets
	Warn           io.Writer // where a skipped run is reported
}

// Torch runs the script once per ISA value and keeps, for each model and
// pass, PyTorch's fastest row (the peer at its best on this machine). A
// failing interpreter or script skips that run with a message; output that
// does not parse is an error.
func Torch(opt TorchOptions) ([]NCSNppRow, error) {
	py, isas, threads, repeats, models := opt.Python, opt.ISAs, opt.Threads, opt.Repeats, opt.Models
	var best []NCSNppRow
	for _, v := range isas {
		cmd := exec.Command(py, opt.Script, "--json", "--threads", fmt.Sprint(threads),
			"--repeats", fmt.Sprint(repeats), "--models", strings.Join(models, ","))
		// torch.set_num_threads does not reach the BLAS library's own
		// pool (OpenBLAS in Debian's torch): measured, at --threads 1 its
		// threads spun on the second core (CPU time 1.6–1.9× the wall
		// time, the wall time no shorter).
		n := fmt.Sprint(threads)
		cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+n, "OPENBLAS_NUM_THREADS="+n, "MKL_NUM_THREADS="+n,
			"ONEDNN_MAX_CPU_ISA="+v, "DNNL_MAX_CPU_ISA="+v)
		for _, kv := range TorchMalloc {
			if _, set := os.LookupEnv(kv[:strings.IndexByte(kv, '=')]); !set {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.Output()
		if err != nil {
			fmt.Fprintf(opt.Warn, "PyTorch benchmark (ONEDNN_MAX_CPU_ISA=%s) skipped: %s %s: %v\n", v, py, opt.Script, err)
			continue
		}
		var pt []NCSNppRow
		if err := json.Unmarshal(bytes.TrimSpace(out), &pt); err != nil {
			return nil, fmt.Errorf("PyTorch benchmark output (ONEDNN_MAX_CPU_ISA=%s): %w", v, err)
		}
		for _, r := range pt {
			if !(r.MsPerImage > 0) || math.IsInf(r.MsPerImage, 0) {
				return nil, fmt.Errorf("PyTorch benchmark output (ONEDNN_MAX_CPU_ISA=%s): %s %v: time %v ms, want a positive number",
					v, r.Model, r.Backward, r.MsPerImage)
			}
			r.Impl, r.OneDNNISA = "pytorch", v
			i := slices.IndexFunc(best, func(b NCSNppRow) bool { return b.Model == r.Model && b.Backward == r.Backward })
			switch {
			case i < 0:
				best = append(best, r)
			case r.MsPerImage < best[i].MsPerImage:
				best[i] = r
			}
		}
	}
	return best, nil
}

// OneDNNISAs parses --onednn-isa: one or more comma-separated names of
// letters, digits and underscores (oneDNN's ISA names, e.g. ALL, AVX2,
// AVX512_CORE).
func OneDNNISAs(list string) ([]string, error) {
	var out []string
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if v == "" || strings.IndexFunc(v, func(r rune) bool {
			return !(r == '_' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z')
		}) >= 0 {
			return nil, fmt.Errorf("--onednn-isa: %q is not a list of oneDNN ISA names (e.g. ALL,AVX2)", list)
		}
		out = append(out, v)
	}
	return out, nil
}

// WriteNCSNpp prints the rows as a table: each holdgo row next to PyTorch's, with the speed-ups.
func WriteNCSNpp(w io.Writer, rows []NCSNppRow) {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "NCSN++ on %s, ms per image (median; wall time, then process CPU time), lower is better\n", host)
	if n := len(rows); n > 0 && len(rows[0].RoundMs) >= 2 {
		fmt.Fprintf(w, "%d rounds, holdgo and PyTorch alternating: times are the rounds' medians, speed-ups the medians of the rounds' ratios\n",
			len(rows[0].RoundMs))
	}
	fmt.Fprintf(w, "%-15s %5s %-17s %10s %10s %8s %10s %10s %8s %8s %7s %7s  %s\n", "model", "batch", "pass", "holdgo", "pytorch", "speed-up",
		"holdgo cpu", "torch cpu", "cpu ratio", "GFLOP/s", "% peak", "torch %", "torch's oneDNN ISA")
	for _, r := range rows {
		if r.Impl != "holdgo" {
			continue
		}
		pass := "forward"
		if r.Backward {
			pass = "forward+backward"
		}
		pt, ratio, ptCPU, cpuRatio, ptISA, ptPct := "—", "—", "—", "—", "", "—"
		for _, p := range rows {
			if p.Impl == "pytorch" && p.Model == r.Model && p.Backward == r.Backward {
				pt = fmt.Sprintf("%.2f", p.MsPerImage)
				ratio = fmt.Sprintf("%.2f×", roundRatio(p.RoundMs, r.RoundMs, p.MsPerImage, r.MsPerImage))
				if r.PeakGFLOPS > 0 { // the same network's FLOPs, against the same peak
					ptPct = fmt.Sprintf("%.1f", Percent(r.GFLOPPerImage/p.MsPerImage*1e3, r.PeakGFLOPS))
				}
				ptISA = p.OneDNNISA
				if p.CPUMsPerImage > 0 {
					ptCPU = fmt.Sprintf("%.2f", p.CPUMsPerImage)
					cpuRatio = fmt.Sprintf("%.2f×", roundRatio(p.RoundCPUMs, r.RoundCPUMs, p.CPUMsPerImage, r.CPUMsPerImage))
				}
			}
		}
		fmt.Fprintf(w, "%-15s %5d %-17s %10.2f %10s %8s %10.2f %10s %8s %8.1f %7.1f %7s  %s\n", r.Model, r.Batch, pass, r.MsPerImage, pt, ratio,
			r.CPUMsPerImage, ptCPU, cpuRatio, r.GFLOPS, r.PeakPct, ptPct, ptISA)
	}
}

// NCSNpp times the Go network: one warm-up, then the median of repeats,
// for the forward pass (no tape, frozen weights: layers.Params.Freeze) and
// forward+backward. The warm-up counts
// the pass's FLOPs (CountFLOPs); the rows' percentages are of the FMA peak of
// the kernels' level on the worker pool's threads (PeakGFLOPS).
func NCSNpp(bc NCSNppCase, repeats int) ([]NCSNppRow, error) {
	cfg, err := layers.NCSNppPreset(bc.Model, bc.In, 0, 0)
	if err != nil {
		return nil, err
	}
	cfg.Dropout = 0
	m, err := layers.NewNCSNpp(cfg, rng.New(1))
	if err != nil {
		return nil, err
	}
	r := rng.New(2)
	x := tensor.RandN(r, bc.Batch, cfg.InChannels, cfg.ImageSize, cfg.ImageSize)
	ts := tensor.RandU(r, 0.01, 1, bc.Batch).Data()
	g := autograd.NewTape(tensor.CPU)
	var rows []NCSNppRow
	for _, backward := range []bool{false, true} {
		g.SetNoGrad(!backward)
		// The forward pass runs as the samplers run it, on frozen weights (their convolutions keep
		// the transformed weights, train.LoadModel); a training step's weights change every step.
		if backward {
			m.Params.Thaw()
		} else {
			m.Params.Freeze()
		}
		times, cpu := make([]float64, 0, repeats), make([]float64, 0, repeats)
		pass := func() {
			g.Reset()
			if backward {
				m.Params.ZeroGrad() // the forward pass alone, as PyTorch's, accumulates no gradients
			}
			out := m.Forward(g, g.Const(x), ts)
			if backward {
				g.Backward(g.Mean(g.Square(out)))
			}
		}
		flops := CountFLOPs(pass) // the warm-up
		for range repeats {
			start, cpu0 := time.Now(), processCPU()
			pass()
			times = append(times, time.Since(start).Seconds())
			cpu = append(cpu, processCPU()-cpu0)
		}
		slices.Sort(times)
		slices.Sort(cpu)
		row := NCSNppRow{Impl: "holdgo", Model: bc.Model, Batch: bc.Batch, Backward: backward,
			MsPerImage: times[len(times)/2] / float64(bc.Batch) * 1e3, CPUMsPerImage: cpu[len(cpu)/2] / float64(bc.Batch) * 1e3,
			GFLOPPerImage: float64(flops) / float64(bc.Batch) / 1e9, ISA: isa.Level()}
		row.GFLOPS = row.GFLOPPerImage / row.MsPerImage * 1e3
		if row.PeakGFLOPS, row.PeakPct, err = ofPeak(row.GFLOPS, row.ISA); err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// processCPU is the user + system CPU time of this process so far, in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
