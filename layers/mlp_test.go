package layers

import (
	"math"
	"testing"

	"holdgo/autograd"
	"holdgo/tensor"
)

// mlpRef64 is the score MLP in float64 from its parameters: input
// (x, t[, log t]), Linear layers with SiLU between them.
func mlpRef64(m *MLP, x []float64, t float64) []float64 {
	h := append(append([]float64{}, x...), t)
	if m.Config.LogTime {
		h = append(h, math.Log(t))
	}
	for i := range m.Config.Layers {
		w, b := m.Params.Slice(m.Params.Data, 2*i), m.Params.Slice(m.Params.Data, 2*i+1)
		out := make([]float64, len(b))
		for o := range out {
			s := float64(b[o])
			for k, v := range h {
				s += float64(w[o*len(h)+k]) * v
			}
			if i < m.Config.Layers-1 {
				s /= 1 + math.Exp(-s)
			}
			out[o] = s
		}
		h = out
	}
	return h
}

// TestMLPLogTime checks the score MLP with and without the log-time input
// against a float64 evaluation from its parameters, and the gradient with
// respect to t (through log t) against central differences of it.
func TestMLPLogTime(t *testing.T) {
	for _, logTime := range []bool{false, true} {
		m, err := NewMLP(MLPConfig{In: 7, Hidden: 16, Out: 2, Layers: 3, LogTime: logTime}, tensor.NewRNG(3))
		if err != nil {
			t.Fatal(err)
		}
		const batch = 5
		r := tensor.NewRNG(9)
		x, ts, dy := tensor.Zeros(batch, 6), tensor.Zeros(batch), tensor.Zeros(batch, 2)
		r.FillNormal(x.Data(), 0, 1)
		r.FillNormal(dy.Data(), 0, 1)
		for i := range batch {
			ts.Data()[i] = float32(math.Pow(10, -3+float64(i))) // 1e-3 … 10
		}
		g := autograd.NewTape(tensor.CPU)
		tv := g.Var(ts)
		out := m.ScoreForward(g, g.Const(x), tv)
		got := out.T.Clone()
		g.Backward(g.Sum(g.Mul(out, g.Const(dy))))
		for i := range batch {
			xi := make([]float64, 6)
			for k := range xi {
				xi[k] = float64(x.Data()[i*6+k])
			}
			ti := float64(ts.Data()[i])
			want := mlpRef64(m, xi, ti)
			for k, w := range want {
				if d := math.Abs(float64(got.Data()[i*2+k]) - w); d > 1e-5*(1+math.Abs(w)) {
					t.Errorf("log-time %v, sample %d: out[%d] %v, float64 %v", logTime, i, k, got.Data()[i*2+k], w)
				}
			}
			// d/dt Σ dy·out by central differences in float64, relative step.
			h := 1e-6 * ti
			up, dn := mlpRef64(m, xi, ti+h), mlpRef64(m, xi, ti-h)
			fd := 0.0
			for k := range up {
				fd += float64(dy.Data()[i*2+k]) * (up[k] - dn[k]) / (2 * h)
			}
			if gt := float64(tv.Grad.Data()[i]); math.Abs(gt-fd) > 1e-3*(1e-3/ti+math.Abs(fd)) {
				t.Errorf("log-time %v, t=%g: d/dt %v, central difference %v", logTime, ti, gt, fd)
			}
		}
	}
}
