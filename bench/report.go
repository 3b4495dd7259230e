package bench

import (
	"encoding/json"
	"fmt"
	"io"

	"holdgo/layers"
)

// The reports of holdctl bench gemm, triad, mlp and peak and of holdctl model info: one line of text, or
// one JSON object whose keys are stable.

// WriteGemm prints what Gemm measured of cfg on threads worker threads: one line, or one JSON object
// (gflops, m, k, n, trans_a, trans_b, threads, isa, seconds, peak_gflops, peak_pct).
func WriteGemm(w io.Writer, cfg GemmConfig, threads int, r GemmResult, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{
			"gflops": r.GFLOPS, "m": cfg.M, "k": cfg.K, "n": cfg.N, "trans_a": cfg.TransA, "trans_b": cfg.TransB,
			"threads": threads, "isa": r.ISA, "seconds": r.Time.Seconds(),
			"peak_gflops": r.PeakGFLOPS, "peak_pct": r.PeakPct,
		})
	}
	_, err := fmt.Fprintf(w, "sgemm %dx%dx%d (transA=%v transB=%v) %s, %d thread(s): %.1f GFLOP/s, %.0f %% of the %.1f GFLOP/s FMA peak (median of %d, %v)\n",
		cfg.M, cfg.K, cfg.N, cfg.TransA, cfg.TransB, r.ISA, threads, r.GFLOPS, r.PeakPct, r.PeakGFLOPS, cfg.Repeats, r.Time)
	return err
}

// WriteTriad prints the bandwidth Triad measured on n elements, threads worker threads and repeats
// timed runs: one line, or one JSON object (gbps, n, threads).
func WriteTriad(w io.Writer, n, threads, repeats int, gbps float64, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"gbps": gbps, "n": n, "threads": threads})
	}
	_, err := fmt.Fprintf(w, "triad a = b + s·c, %d float32 elements, %d thread(s): %.1f GB/s (median of %d)\n", n, threads, gbps, repeats)
	return err
}

// WriteMLP prints what MLP measured at batch and hidden width on threads worker threads over repeats
// timed steps: one line, or one JSON object (ms, batch, hidden, threads, isa, gflop, gflops,
// peak_gflops, peak_pct).
func WriteMLP(w io.Writer, batch, hidden, threads, repeats int, r MLPResult, asJSON bool) error {
	ms := r.Time.Seconds() * 1e3
	if asJSON {
		return json.NewEncoder(w).Encode(map[string]any{"ms": ms, "batch": batch,
			"hidden": hidden, "threads": threads, "isa": r.ISA, "gflop": float64(r.FLOPs) / 1e9,
			"gflops": r.GFLOPS, "peak_gflops": r.PeakGFLOPS, "peak_pct": r.PeakPct})
	}
	_, err := fmt.Fprintf(w, "toy MLP train step, batch %d, hidden %d, %s, %d thread(s): %.3f ms, %.2f GFLOP/s, %.1f %% of the %.1f GFLOP/s FMA peak (median of %d; %.1f MFLOP per step, op list)\n",
		batch, hidden, r.ISA, threads, ms, r.GFLOPS, r.PeakPct, r.PeakGFLOPS, repeats, float64(r.FLOPs)/1e6)
	return err
}

// WritePeak prints a PeakReport measured with cfg: a table of the FMA peak per level on one and
// r.Threads threads and a line of the triad bandwidth, or the report as JSON.
func WritePeak(w io.Writer, cfg PeakConfig, r PeakReport, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(r)
	}
	fmt.Fprintf(w, "FMA peak: independent FMA chains in registers, GFLOP/s (best of %d windows of %v); kernels use %s now\n",
		PeakWindows, cfg.Duration/PeakWindows, r.Active)
	many := fmt.Sprintf("%d threads", r.Threads)
	if r.Threads == 1 {
		many = "1 thread"
	}
	fmt.Fprintf(w, "%-8s %12s %12s %12s\n", "isa", "1 thread", many, "per thread")
	for _, l := range r.Levels {
		fmt.Fprintf(w, "%-8s %12.1f %12.1f %12.1f\n", l.ISA, l.One, l.Many, l.PerCore)
	}
	_, err := fmt.Fprintf(w, "triad a = b + s·c, 3×%d float32 (%.0f MiB): %.1f GB/s on 1 thread, %.1f GB/s on %d (median of %d)\n",
		r.TriadN, 12*float64(r.TriadN)/(1<<20), r.TriadOne, r.TriadAll, r.Threads, cfg.Repeats)
	return err
}

// ModelInfo is what holdctl model info prints of an NCSN++ configuration: its shape, its parameter
// counts and, when a step was measured (ModelStep), that step's memory, time and FLOPs.
type ModelInfo struct {
	Model           string `json:"model"`
	InChannels      int    `json:"in_channels"`
	OutChannels     int    `json:"out_channels"`
	ImageSize       int    `json:"image_size"`
	NF              int    `json:"nf"`
	ChMult          []int  `json:"ch_mult"`
	ResBlocks       int    `json:"num_res_blocks"`
	AttnResolutions []int  `json:"attn_resolutions"`
	Embedding       string `json:"embedding"`
	Params          int    `json:"params"`       // trainable
	FixedParams     int    `json:"fixed_params"` // the Fourier weights: checkpointed, not trained
	StepMemory
}

// NewModelInfo describes cfg (no step measured).
func NewModelInfo(cfg layers.NCSNppConfig) ModelInfo {
	r := ModelInfo{Model: cfg.Name, InChannels: cfg.InChannels, OutChannels: cfg.OutChannels, ImageSize: cfg.ImageSize,
		NF: cfg.NF, ChMult: cfg.ChMult, ResBlocks: cfg.NumResBlocks, AttnResolutions: cfg.AttnResolutions,
		Embedding: cfg.Embedding, Params: layers.NCSNppParamCount(cfg)}
	if cfg.Embedding == layers.EmbedFourier {
		r.FixedParams = cfg.NF
	}
	return r
}

// Write prints the description: one JSON object, or a line of the shape, one of the parameters and,
// when a step was measured, one of its memory and times and one of its FLOPs.
func (r ModelInfo) Write(w io.Writer, asJSON bool) error {
	if asJSON {
		out, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(out))
		return err
	}
	fmt.Fprintf(w, "%s: %d → %d channels at %d×%d, nf %d, ch_mult %v, %d res-blocks per level, attention at %v, %s embedding\n",
		r.Model, r.InChannels, r.OutChannels, r.ImageSize, r.ImageSize, r.NF, r.ChMult, r.ResBlocks, r.AttnResolutions, r.Embedding)
	fmt.Fprintf(w, "trainable parameters: %d (%.1f M)", r.Params, float64(r.Params)/1e6)
	if r.FixedParams > 0 {
		fmt.Fprintf(w, ", plus %d fixed Fourier weights", r.FixedParams)
	}
	fmt.Fprintln(w)
	if r.Batch > 0 {
		recycle := "recycling"
		if !r.Recycle {
			recycle = "no recycling"
		}
		fmt.Fprintf(w, "training step at batch %d (%s): %.1f MiB of activations after the forward pass, %.1f MiB of tensors at the peak (forward + backward), %.1f MiB allocated in all; forward %.0f ms, forward+backward %.0f ms\n",
			r.Batch, recycle, r.ForwardMiB, r.PeakMiB, r.StepMiB, r.ForwardMs, r.StepMs)
		fmt.Fprintf(w, "FLOPs (op list, convolutions as direct): forward %.2f GFLOP, %.1f GFLOP/s, %.1f %% of peak; forward+backward %.2f GFLOP, %.1f GFLOP/s, %.1f %% of peak (the %s FMA peak on %d thread(s): %.1f GFLOP/s)\n",
			r.ForwardGFLOP, r.ForwardGFLOPS, r.ForwardPct, r.StepGFLOP, r.StepGFLOPS, r.StepPct, r.ISA, r.Threads, r.PeakGFLOPS)
	}
	return nil
}
