package bench

// What holdctl bench gemm, triad, mlp, peak, ncsnpp and ops and holdctl model info run: each one's
// settings as a tagged configuration struct (internal/cliconf: the flag, its help and its bounds on
// the field) and a Run function that checks them, measures and prints the report. An error about the
// settings or the input (a size over the memory budget, an unknown name) is an *InputError.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"holdgo/cuda"
	"holdgo/internal/atomicfile"
	"holdgo/internal/budget"
	"holdgo/internal/devices"
	"holdgo/internal/outpath"
	"holdgo/internal/parallel"
	"holdgo/layers"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// InputError is a benchmark's error about its settings or input (the checkpoint, a flag's value, a
// size over the memory budget) rather than a failure while it ran: holdctl's exit status 2.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// checkCount refuses (an *InputError) count values of size bytes over the memory budget, naming the
// size flags.
func checkCount(flags string, count, size int64) error {
	if err := budget.CheckCount(count, size, "--"+flags); err != nil {
		return &InputError{err}
	}
	return nil
}

// GemmRun is holdctl bench gemm's settings. The sizes' bounds: beyond them a run takes hours or more
// memory than a machine has (sides ≤ 65536, repeats ≤ 1048576).
type GemmRun struct {
	M       int    `flag:"m" min:"1" max:"65536"`
	K       int    `flag:"k" min:"1" max:"65536"`
	N       int    `flag:"n" min:"1" max:"65536"`
	TransA  bool   `flag:"trans-a" help:"A is stored transposed (k×m)"`
	TransB  bool   `flag:"trans-b" help:"B is stored transposed (n×k)"`
	Threads int    `flag:"threads" min:"1" max:"256" help:"worker threads"`
	ISA     string `flag:"isa" help:"force avx512, avx2 or generic (default: best available)"`
	Repeats int    `flag:"repeats" min:"1" max:"1048576" help:"timed repeats (the median is reported)"`
	JSON    bool   `flag:"json" help:"print {\"gflops\": …} as JSON"`
}

// RunGemm times the SGEMM of g on g.Threads worker threads (Gemm) and prints it (WriteGemm), after
// checking its three matrices against the memory budget.
func RunGemm(g GemmRun, w io.Writer) error {
	if err := checkCount("m/--k/--n", int64(g.M)*int64(g.K)+int64(g.K)*int64(g.N)+int64(g.M)*int64(g.N), 4); err != nil {
		return err
	}
	defer parallel.SetThreads(parallel.SetThreads(g.Threads))
	cfg := GemmConfig{M: g.M, K: g.K, N: g.N, TransA: g.TransA, TransB: g.TransB, ISA: g.ISA, Repeats: g.Repeats}
	res, err := Gemm(cfg)
	if err != nil { // an unknown or unsupported --isa
		return &InputError{fmt.Errorf("bench gemm: %w", err)}
	}
	return WriteGemm(w, cfg, g.Threads, res, g.JSON)
}

// TriadRun is holdctl bench triad's settings.
type TriadRun struct {
	N       int  `flag:"n" min:"1" max:"2147483648" help:"elements per array"`
	Threads int  `flag:"threads" min:"1" max:"256"`
	Repeats int  `flag:"repeats" min:"1" max:"1048576"`
	JSON    bool `flag:"json"`
}

// RunTriad measures the triad bandwidth on t.Threads worker threads (Triad) and prints it
// (WriteTriad), after checking its three arrays against the memory budget.
func RunTriad(t TriadRun, w io.Writer) error {
	if err := checkCount("n", 3*int64(t.N), 4); err != nil {
		return err
	}
	defer parallel.SetThreads(parallel.SetThreads(t.Threads))
	return WriteTriad(w, t.N, t.Threads, t.Repeats, Triad(t.N, t.Repeats), t.JSON)
}

// MLPRun is holdctl bench mlp's settings.
type MLPRun struct {
	Batch   int  `flag:"batch" min:"1" max:"1048576"`
	Hidden  int  `flag:"hidden" min:"1" max:"16384"`
	Threads int  `flag:"threads" min:"1" max:"256"`
	Repeats int  `flag:"repeats" min:"1" max:"1048576"`
	JSON    bool `flag:"json"`
}

// RunMLP times the toy MLP's training step on m.Threads worker threads (MLP) and prints it
// (WriteMLP), after checking its activations, roughly, against the memory budget.
func RunMLP(m MLPRun, w io.Writer) error {
	if err := checkCount("batch/--hidden", int64(m.Batch)*int64(m.Hidden)*16+int64(m.Hidden)*int64(m.Hidden)*16, 4); err != nil {
		return err
	}
	defer parallel.SetThreads(parallel.SetThreads(m.Threads))
	res, err := MLP(m.Batch, m.Hidden, m.Repeats)
	if err != nil {
		return &InputError{fmt.Errorf("bench mlp: %w", err)}
	}
	return WriteMLP(w, m.Batch, m.Hidden, m.Threads, m.Repeats, res, m.JSON)
}

// PeakRun is holdctl bench peak's settings.
type PeakRun struct {
	Threads  int           `flag:"threads" min:"0" max:"256" note:"0: all cores" help:"the many-thread column (0: all cores)"`
	Duration time.Duration `flag:"duration" gt:"0" max:"3.6e12" help:"per FMA measurement (the best of 5 windows is reported)"` // (0, 1h]
	TriadN   int           `flag:"triad-n" min:"1" max:"2147483648" help:"elements per triad array (3 float32 arrays, much larger than the caches)"`
	Repeats  int           `flag:"repeats" min:"1" max:"1048576" help:"timed triad repeats (the median is reported)"`
	JSON     bool          `flag:"json" help:"print the report as JSON"`
}

// RunPeak measures the machine's peak (MeasurePeak) and prints it (WritePeak), after checking the
// triad's arrays against the memory budget.
func RunPeak(p PeakRun, w io.Writer) error {
	if err := checkCount("triad-n", 3*int64(p.TriadN), 4); err != nil {
		return err
	}
	cfg := PeakConfig{Threads: p.Threads, Duration: p.Duration, TriadN: p.TriadN, Repeats: p.Repeats}
	r, err := MeasurePeak(cfg)
	if err != nil {
		return err
	}
	return WritePeak(w, cfg, r, p.JSON)
}

// NCSNppRun is holdctl bench ncsnpp's settings.
type NCSNppRun struct {
	Models     string `flag:"models" help:"comma-separated presets"`
	Threads    int    `flag:"threads" min:"0" max:"256" note:"0: all cores" help:"worker threads (holdgo and torch)"`
	Repeats    int    `flag:"repeats" min:"1" max:"1048576" help:"timed repeats after one warm-up (the median is reported)"`
	Rounds     int    `flag:"rounds" min:"1" max:"1048576" help:"run holdgo and PyTorch this many times, alternating; report the median round and the median of the rounds' speed-ups (robust to a shared machine's slow spells)"`
	Python     string `flag:"python" help:"interpreter with torch (empty: skip PyTorch)"`
	Script     string `flag:"script" help:"PyTorch benchmark script"`
	OneDNNISA  string `flag:"onednn-isa" help:"comma-separated ONEDNN_MAX_CPU_ISA values to run PyTorch under (ALL: oneDNN's own choice); each row reports PyTorch's fastest"`
	JSON       bool   `flag:"json" help:"print the rows as JSON"`
	CPUProfile string `flag:"cpuprofile" help:"write a pprof CPU profile of the holdgo runs to this file (atomically, at the end)"`
	Force      bool   `flag:"force" help:"let --cpuprofile replace an existing file of another kind (never an input, nor a run's own files)"`
}

// DefaultNCSNppRun is bench ncsnpp's defaults: both presets, 2 threads, PyTorch from /usr/bin/python3.
func DefaultNCSNppRun() NCSNppRun {
	return NCSNppRun{Models: "ncsnpp-small,ncsnpp-cifar10", Threads: 2, Repeats: 3, Rounds: 1, Python: "/usr/bin/python3",
		Script: "scripts/bench_ncsnpp.py", OneDNNISA: "ALL"}
}

// RunNCSNpp checks r (the presets, a training step of each against the memory budget, the oneDNN ISA
// names, --cpuprofile through the output guard), times the networks in holdgo and PyTorch
// (NCSNppAll; warnings to warn) and prints the rows.
func RunNCSNpp(r NCSNppRun, w, warn io.Writer) error {
	cases, err := NCSNppCasesFor(strings.Split(r.Models, ","))
	if err != nil {
		return &InputError{fmt.Errorf("--models: %w", err)}
	}
	for _, bc := range cases { // a training step's activations, as train and bench train check them
		cfg, err := layers.NCSNppPreset(bc.Model, bc.In, 0, 0)
		if err != nil {
			return err
		}
		what := fmt.Sprintf("bench ncsnpp: a training step of %s at batch %d (estimated; --models chooses the networks)", bc.Model, bc.Batch)
		if err := budget.Check(int64(min(cfg.TrainBytes(bc.Batch), 1<<62)), what); err != nil {
			return &InputError{err}
		}
	}
	isas, err := OneDNNISAs(r.OneDNNISA)
	if err != nil {
		return &InputError{err}
	}
	defer parallel.SetThreads(parallel.SetThreads(r.Threads))
	// --cpuprofile: checked by the output guard first (never a run's file, an input, a link or
	// another kind of file without --force), collected in memory, written atomically at the end.
	var profile *bytes.Buffer
	if r.CPUProfile != "" {
		if err := outpath.New(r.Force).CheckAll(outpath.Output{Flag: "cpuprofile", Path: r.CPUProfile, Kind: outpath.Profile}); err != nil {
			return &InputError{err}
		}
		profile = new(bytes.Buffer)
	}
	var torch *TorchOptions // --python "": no PyTorch
	if r.Python != "" {
		torch = &TorchOptions{Python: r.Python, Script: r.Script, ISAs: isas, Warn: warn}
	}
	var pw io.Writer
	if profile != nil {
		pw = profile
	}
	rows, err := NCSNppAll(cases, r.Repeats, r.Rounds, torch, pw)
	if err != nil {
		return err
	}
	if profile != nil {
		if err := atomicfile.WriteFile(r.CPUProfile, profile.Bytes()); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	if r.JSON {
		return json.NewEncoder(w).Encode(rows)
	}
	WriteNCSNpp(w, rows)
	return nil
}

// OpsRun is holdctl bench ops's settings.
type OpsRun struct {
	Device  string        `flag:"device" help:"cpu, reference, cuda or cuda:N"`
	Tol     float64       `flag:"tol" min:"0" help:"largest normalised MSE against the reference that passes (TF32 GEMMs reach ~1e-5)"` // +Inf passed every op
	Perf    bool          `flag:"perf" help:"time every case of the table on the device (median of 5 rounds) instead of checking it"`
	Filter  string        `flag:"filter" help:"--perf: only the cases whose name contains this text (e.g. MatMul, Conv2d{n:2)"`
	MinTime time.Duration `flag:"min-time" gt:"0" max:"6e10" help:"--perf: the time spent timing each case"` // (0, 1m]
}

// RunOps opens o.Device and runs the backend test table on it against the Reference (Ops), printing
// the supported-ops matrix, or with o.Perf times every case whose name contains o.Filter (OpsPerf).
// isSet says which flags were given: --filter or --min-time without --perf is refused (the check of
// every op would run in full, dropping them silently). Ops that fail or cannot run are an error.
func RunOps(o OpsRun, isSet func(string) bool, w io.Writer) error {
	if !o.Perf {
		perfOnly := map[string]string{"filter": o.Filter, "min-time": o.MinTime.String()}
		for _, name := range []string{"filter", "min-time"} {
			if isSet(name) {
				return &InputError{fmt.Errorf("bench ops: --%s %s applies to --perf only: add --perf to time the cases, or drop it", name, perfOnly[name])}
			}
		}
	}
	dev, err := devices.Open(o.Device)
	if err != nil {
		return &InputError{fmt.Errorf("bench ops: %w", err)}
	}
	if o.Perf {
		rows, failed := OpsPerf(dev, o.Filter, o.MinTime)
		if len(rows) == 0 {
			return &InputError{fmt.Errorf("bench ops: no case name contains %q", o.Filter)}
		}
		WriteOpsPerf(w, dev.Name(), rows)
		if failed > 0 {
			return fmt.Errorf("bench ops --perf: %d of %d cases could not run on %s", failed, len(rows), dev.Name())
		}
		return nil
	}
	rows, failed := Ops(dev, o.Tol)
	WriteOps(w, dev.Name(), rows)
	if failed > 0 {
		return fmt.Errorf("bench ops: %d of %d ops fail or are unsupported on %s", failed, len(rows), dev.Name())
	}
	return nil
}

// SampleRun is holdctl bench sample's settings.
type SampleRun struct {
	sample.SpecFlags
	Ckpt    string `flag:"ckpt" required:"true" help:"trained run directory or checkpoint file"`
	Batch   int    `flag:"batch" min:"1" max:"65536" help:"images sampled, every network evaluation one forward pass of them all"`
	Seed    uint64 `flag:"seed" help:"random seed"`
	Repeats int    `flag:"repeats" min:"1" max:"1048576" help:"timed forward passes (the median is reported)"`
	JSON    bool   `flag:"json" help:"print the result as JSON"`
}

// RunSample times sampling r.Ckpt with the sampler flags (Sample; isSet says which were given) and
// prints the result.
func RunSample(r SampleRun, isSet func(string) bool, w io.Writer) error {
	res, err := Sample(SampleConfig{Ckpt: r.Ckpt, Spec: r.Spec(isSet), Batch: r.Batch, Seed: r.Seed, Repeats: r.Repeats})
	if err != nil {
		return err
	}
	if r.JSON {
		return json.NewEncoder(w).Encode(res)
	}
	WriteSample(w, res)
	return nil
}

// TrainRun is holdctl bench train's settings beside --device.
type TrainRun struct {
	Model    string `flag:"model" help:"mlp (the toy score network on 2-D points) or an NCSN++ preset: ncsnpp-tiny, ncsnpp-small, ncsnpp-cifar10"`
	SDE      string `flag:"sde" help:"hold, cld, vp or ve"`
	Batch    int    `flag:"batch" min:"0" max:"4096" note:"0: the model's default" help:"batch size (0: 512 for mlp, 4 for ncsnpp)"`
	Steps    int    `flag:"steps" min:"1" max:"1048576" help:"timed steps after one warm-up step"`
	Channels int    `flag:"channels" min:"1" max:"64" help:"NCSN++ image channels"`
	JSON     bool   `flag:"json" help:"print the result as JSON (on --device record: the per-step counters by kernel family)"`
	Profile  bool   `flag:"profile" help:"on a CUDA device, time one more non-logging step call by call (each kernel, GEMM, copy and memset between two events of its own) and print the device time, bytes and FLOPs by kernel family and the slowest kernels"`
	// Precision is the GPU arithmetic (train.CheckPrecision); "" is tf32.
	Precision string `flag:"precision" help:"GPU arithmetic: tf32 (TF32 tensor cores; the default), bf16 (BF16 tensor-core products, FP32 sums and storage) or strict (FP32 everywhere)"`
}

// RunTrain opens device and times r's training steps on it (Train: counting launches, syncs and
// copies on a CUDA device; on the recording device "record", counting everything and running
// nothing) and prints them; the device and the settings are the user's (*InputError).
func RunTrain(r TrainRun, device string, w io.Writer) error {
	var dev tensor.Device
	var err error
	if err := train.CheckPrecision(r.Precision); err != nil {
		return &InputError{fmt.Errorf("--precision: %w", err)}
	}
	if device == devices.Record {
		dev, _ = cuda.NewRecordingDevice()
	} else if dev, err = devices.Open(device); err != nil {
		return &InputError{err}
	}
	devices.SetPrecision(dev, r.Precision)
	dev, counting := CountingDevice(dev)
	if r.Profile && counting == nil {
		return &InputError{fmt.Errorf("--profile needs a CUDA device (--device cuda), not %s", device)}
	}
	res, err := Train(dev, counting, r.Model, r.SDE, r.Batch, r.Steps, r.Channels, r.Profile)
	if err != nil {
		return &InputError{err}
	}
	switch {
	case r.JSON:
		return json.NewEncoder(w).Encode(res.JSON(r.Steps))
	case res.Recorded:
		WriteRecord(w, res, r.Steps)
	default:
		WriteTrain(w, res, r.Steps)
		if res.Profile != nil {
			WriteProfile(w, res.Profile, res.StepSeconds)
		}
	}
	return nil
}

// ModelInfoRun is holdctl model info's settings.
type ModelInfoRun struct {
	InChannels  int `flag:"in-channels" min:"1" max:"1048576" help:"input channels n·C (HOLD-3 on RGB: 9)"`
	OutChannels int `flag:"out-channels" min:"0" max:"1048576" note:"0: in-channels/3" help:"output channels (0: in-channels/3)"`
	ImageSize   int `flag:"image-size" min:"0" max:"16384" note:"0: the preset's" help:"image side (0: the preset's)"`
	NF          int `flag:"nf" min:"0" max:"4096" note:"0: the preset's" help:"base channels (0: the preset's)"`              // train.MaxChannels
	ResBlocks   int `flag:"res-blocks" min:"0" max:"64" note:"0: the preset's" help:"res-blocks per level (0: the preset's)"` // train.MaxResBlocks
	Batch       int `flag:"batch" min:"0" max:"4096" note:"0: no step" help:"also run one forward+backward at this batch and report its memory and time"`
	parallel.ThreadsOption
	Model     string `flag:"model" help:"an NCSN++ preset (layers.NCSNppPresets)"`
	NoRecycle bool   `flag:"no-recycle" help:"keep every tensor of --batch's step until its end (autograd.RecycleOff), as before recycling"`
	JSON      bool   `flag:"json" help:"print JSON"`
}

// RunModelInfo prints the size of r's NCSN++ configuration (NewModelInfo) and, with r.Batch > 0, one
// training step's memory and time (ModelStep) after checking its activations against the memory budget.
func RunModelInfo(r ModelInfoRun, w io.Writer) error {
	cfg, err := layers.NCSNppPreset(r.Model, r.InChannels, r.OutChannels, r.ImageSize)
	if err != nil {
		return &InputError{err}
	}
	if r.NF > 0 {
		cfg.NF = r.NF
	}
	if r.ResBlocks > 0 {
		cfg.NumResBlocks = r.ResBlocks
	}
	if err := cfg.Validate(); err != nil {
		return &InputError{err}
	}
	info := NewModelInfo(cfg)
	if b := r.Batch; b > 0 {
		// The activations of one step: a generous bound of 64 float32 maps of NF·4 channels per image.
		if err := checkCount("batch", int64(b)*int64(cfg.ImageSize)*int64(cfg.ImageSize)*int64(cfg.NF)*4*64, 4); err != nil {
			return err
		}
		r.Apply()
		st, err := ModelStep(cfg, b, !r.NoRecycle)
		if err != nil {
			return err
		}
		info.StepMemory = *st
	}
	return info.Write(w, r.JSON)
}
