package experiment

import (
	"fmt"
	"io"
	"strings"

	"holdgo/data"
	"holdgo/metrics"
	"holdgo/train"
)

// EvalRun is holdctl eval after its flags and argument are read: samples against the data
// distribution.
type EvalRun struct {
	Samples      string // the samples' .npy ("": none given)
	Data         string // the data distribution: gmm1d, swissroll or a .npy file of points
	SwissNoise   float64
	Ckpt         string // take the data distribution of this run instead of Data (when CkptSet)
	CkptSet      bool
	DataSet      bool   // Data was given (not with Ckpt)
	TrainData    string // a run trained on a .npy file: its points from this file
	N            int    // fresh data points to compare with
	KernelPoints int
	Projections  int
	PRK          int
	Seed         uint64
	JSON         bool
}

// RunEval checks the settings, opens the data distribution (Data, or the run Ckpt's), reads the samples
// (metrics.ReadSamples), measures them (metrics.Eval) and writes the report on w. Errors of the settings
// and inputs are InputErrors.
func RunEval(r EvalRun, w io.Writer) error {
	path := r.Samples
	if path == "" {
		return inputErr("eval needs the samples: --samples FILE.npy")
	}
	if !strings.HasSuffix(path, ".npy") {
		return inputErr("eval: %s: want a .npy file of samples", path)
	}
	n, kp, proj := r.N, r.KernelPoints, r.Projections
	if k := r.PRK; k >= n {
		return inputErr("eval: --pr-k %d: want 0 (skip) or a neighbour count below --n (%d)", k, n)
	}
	var (
		src data.Source
		err error
	)
	if r.CkptSet {
		if r.DataSet {
			return inputErr("eval: give either --data or --ckpt, not both")
		}
		m, err := train.LoadModel(r.Ckpt, false, r.TrainData)
		if err != nil {
			return inputErr("eval: %v", err)
		}
		src = m.Source
	} else if src, err = data.Open(r.Data, r.SwissNoise); err != nil {
		return inputErr("eval: %v", err)
	}
	x, dim, err := metrics.ReadSamples(path, src, r.PRK)
	if err != nil {
		return inputErr("eval: %v", err)
	}
	rep, err := metrics.Eval(x, dim, src, metrics.EvalOptions{Samples: path, N: n, KernelPoints: kp, Projections: proj,
		PRK: r.PRK, Seed: r.Seed})
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return rep.Write(w, r.JSON, proj, kp)
}
