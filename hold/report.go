package hold

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Report is an ordered list of named values, what holdctl sde prints: as one JSON object whose keys keep
// their order (floats as encoding/json writes them, the shortest decimal that round-trips to the same
// float64), or as text, a line a value and a line a row of a matrix.
type Report []Field

// Field is one named value of a Report.
type Field struct {
	Key   string
	Value any
}

func (r *Report) add(key string, val any) { *r = append(*r, Field{key, val}) }

// KernelReport is the marginal kernel at time t (Kernel) with the configuration that defines it: sde,
// order, the kind's parameters (Config.Params), t, mean (the coefficients of q0 in μ_t), sigma (Σ_t),
// chol (its Cholesky factor) and ell (ℓ_t). t must be valid (CheckTime).
func (s *SDE) KernelReport(t float64) Report {
	k := s.Kernel(t)
	var r Report
	r.add("sde", s.cfg.Kind)
	r.add("order", s.cfg.Order)
	for _, p := range s.cfg.Params() {
		r.add(p.Key, p.Value)
	}
	r.add("t", t)
	mean := make([]float64, s.cfg.Order)
	for i := range mean {
		mean[i] = k.Mean.At(i, 0)
	}
	r.add("mean", mean)
	r.add("sigma", k.Sigma.Rows())
	r.add("chol", k.Chol.Rows())
	r.add("ell", k.Ell)
	return r
}

// AStepReport is the A-step from t over h (AStep): expA and cholA. h must lie in (0, t].
func (s *SDE) AStepReport(t, h float64) (Report, error) {
	if !(h > 0 && h <= t) {
		return nil, fmt.Errorf("A-step size %g must lie in (0, t] with t = %g", h, t)
	}
	st := s.AStep(t, h)
	return Report{{"expA", st.ExpA.Rows()}, {"cholA", st.CholA.Rows()}}, nil
}

// Query is what holdctl sde asks: the marginal kernel at time T (TSet) or, with AStepSet, the A-step of
// size AStep from T (default: the horizon) of Config's SDE.
type Query struct {
	Config   Config
	T        float64
	TSet     bool
	AStep    float64
	AStepSet bool
}

// Report builds the SDE, checks the time and the step and returns the A-step's report (AStepReport) or
// the kernel's (KernelReport). Every error is one of the query's parameters.
func (q Query) Report() (Report, error) {
	sde, err := New(q.Config)
	if err != nil {
		return nil, err
	}
	t := q.Config.T
	if q.TSet {
		t = q.T
		if err := sde.CheckTime(t); err != nil {
			return nil, err
		}
	}
	switch {
	case q.AStepSet:
		return sde.AStepReport(t, q.AStep)
	case q.TSet:
		return sde.KernelReport(t), nil
	}
	return nil, fmt.Errorf("give --t (kernel at time t) or --astep (A-step size h)")
}

// ValueError is a value of a Report that JSON cannot hold (NaN, ±Inf).
type ValueError struct {
	Key string
	Err error
}

func (e *ValueError) Error() string { return e.Key + ": " + e.Err.Error() }
func (e *ValueError) Unwrap() error { return e.Err }

// WriteJSON writes the report as one JSON object on one line; a value JSON cannot hold is a
// *ValueError and nothing is written.
func (r Report) WriteJSON(w io.Writer) error {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range r {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(f.Key)
		val, err := json.Marshal(f.Value)
		if err != nil {
			return &ValueError{f.Key, err}
		}
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(val)
	}
	buf.WriteString("}\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteText writes "key: value" a line, and a matrix as "key:" followed by a line per row.
func (r Report) WriteText(w io.Writer) error {
	for _, f := range r {
		if rows, ok := f.Value.([][]float64); ok {
			if _, err := fmt.Fprintf(w, "%s:\n", f.Key); err != nil {
				return err
			}
			for _, row := range rows {
				if _, err := fmt.Fprintf(w, "  %v\n", row); err != nil {
					return err
				}
			}
			continue
		}
		if _, err := fmt.Fprintf(w, "%s: %v\n", f.Key, f.Value); err != nil {
			return err
		}
	}
	return nil
}
