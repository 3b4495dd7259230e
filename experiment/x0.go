package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"holdgo/imagedata"
	"holdgo/rng"
	"holdgo/sample"
	"holdgo/train"
)

// X0Level is one noise level of X0Errors (holdctl model x0); the JSON keys are stable.
type X0Level struct {
	T        float64 `json:"t"`
	Sigma    float64 `json:"sigma"`
	RMSError float64 `json:"rms_error"`
	Ratio    float64 `json:"error_over_sigma"`
	RMS      float64 `json:"rms_x0"`
	MaxAbs   float64 `json:"max_abs_x0"`
}

// X0Table returns an emit function of X0Errors that prints each level to w: a JSON line, or a row of
// a table whose title line and header it prints first.
func X0Table(w io.Writer, title string, asJSON bool) func(X0Level) error {
	if asJSON {
		enc := json.NewEncoder(w)
		return func(row X0Level) error { return enc.Encode(row) }
	}
	fmt.Fprintf(w, "%s\n%10s %10s %12s %10s %8s %8s\n", title, "t", "σ", "rms error", "error/σ", "rms x̂₀", "max|x̂₀|")
	return func(row X0Level) error {
		_, err := fmt.Fprintf(w, "%10.4g %10.4g %12.4g %10.3g %8.3g %8.3g\n", row.T, row.Sigma, row.RMSError, row.Ratio, row.RMS, row.MaxAbs)
		return err
	}
}

// LevelError is X0Errors' error for a noise level that no time of the SDE reaches.
type LevelError struct{ Err error }

func (e *LevelError) Error() string { return e.Err.Error() }

func (e *LevelError) Unwrap() error { return e.Err }

// X0Errors measures a trained image model's data prediction x̂₀ along the forward path from the first
// n images of test: x_t = m_t q0 + L_t ε (one noise draw of seed) at levels noise levels σ of the
// state's sufficient statistic, evenly spaced in log σ from smax to smin, calling emit with the RMS
// error of x̂₀, that error over σ, and the RMS and largest |x̂₀| at each.
func X0Errors(m *train.Model, test *imagedata.Dataset, n, levels int, smax, smin float64, seed uint64, emit func(X0Level) error) error {
	sde, d := m.SDE, test.Dimension()
	q0 := make([]float32, n*d)
	for i := range n {
		test.Scale(q0[i*d:(i+1)*d], test.Pixels(i), false, nil)
	}
	blocks := sde.Blocks()
	r := rng.New(seed)
	eps := make([]float64, n*blocks*d)
	for i := range eps {
		eps[i] = r.Normal()
	}
	u := make([]float64, n*blocks*d)
	x0 := make([]float64, n*d)
	times := make([]float64, n)
	for k := range levels {
		sigma := math.Exp(math.Log(smax) + float64(k)/float64(levels-1)*(math.Log(smin)-math.Log(smax)))
		t, err := sample.TimeAtNoiseLevel(sde, sigma, sde.MinTime(), sde.Horizon())
		if err != nil {
			return &LevelError{err}
		}
		kern := sde.Kernel(t)
		for i := range n {
			times[i] = t
		}
		ForwardStates(u, q0, eps, kern, n, blocks, d)
		if err := sample.PredictX0(sde, m.Score, x0, u, times); err != nil {
			return err
		}
		var e2, s2, mx float64
		for i, v := range x0 {
			e := v - float64(q0[i])
			e2 += e * e
			s2 += v * v
			mx = math.Max(mx, math.Abs(v))
		}
		row := X0Level{T: t, Sigma: sigma, RMSError: math.Sqrt(e2 / float64(len(x0))), RMS: math.Sqrt(s2 / float64(len(x0))), MaxAbs: mx}
		row.Ratio = row.RMSError / sigma
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}
