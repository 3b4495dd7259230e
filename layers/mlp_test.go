package layers

import (
	"math"
	"slices"
	"testing"

	"holdgo/autograd"
	"holdgo/tensor"
)

// mlpRef64 is the score MLP in float64 from its parameters: input
// (x, sin z, cos z, t[, log t]) with z = 2π·B·x[:P] (no features without
// Fourier), Linear layers with SiLU between them.
func mlpRef64(m *MLP, x []float64, t float64) []float64 {
	h := append([]float64{}, x...)
	src := x
	if m.Config.Estimate { // the test's estimator: x̂₀ = 0.5·x[0:2] − 0.25·x[2:4]
		src = []float64{0.5*x[0] - 0.25*x[2], 0.5*x[1] - 0.25*x[3]}
		h = append(h, src...)
	}
	if c := m.Config; c.Fourier > 0 {
		b := m.Params.Slice(m.Params.Data, 2*c.Layers)
		z := make([]float64, c.Fourier)
		for k := range z {
			for j := range c.FourierInputs {
				z[k] += 2 * math.Pi * float64(b[k*c.FourierInputs+j]) * src[j]
			}
		}
		for _, v := range z {
			h = append(h, math.Sin(v))
		}
		for _, v := range z {
			h = append(h, math.Cos(v))
		}
	}
	h = append(h, t)
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

// TestMLPInputFeatures checks the score MLP with and without the log-time
// input and Fourier features against a float64 evaluation from its
// parameters, and the gradients with respect to t (through log t) and x
// (through the features) against central differences of it.
func TestMLPInputFeatures(t *testing.T) {
	for _, c := range []struct {
		logTime  bool
		fourier  int
		estimate bool
	}{{false, 0, false}, {true, 0, false}, {false, 8, false}, {true, 8, false}, {true, 8, true}, {false, 0, true}} {
		logTime := c.logTime
		cfg := MLPConfig{In: 7, Hidden: 16, Out: 2, Layers: 3, LogTime: logTime, Estimate: c.estimate}
		if c.fourier > 0 {
			cfg.Fourier, cfg.FourierInputs, cfg.FourierScale = c.fourier, 2, 3
		}
		m, err := NewMLP(cfg, tensor.NewRNG(3))
		if err != nil {
			t.Fatal(err)
		}
		m.Estimator = func(g *autograd.Tape, x, _ *autograd.Value) *autograd.Value {
			return g.Sub(g.MulScalar(g.Slice(x, 1, 0, 2), 0.5), g.MulScalar(g.Slice(x, 1, 2, 4), 0.25))
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
		tv, xv := g.Var(ts), g.Var(x)
		out := m.ScoreForward(g, xv, tv)
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
				if d := math.Abs(float64(got.Data()[i*2+k]) - w); !(d <= 1e-5*(1+math.Abs(w))) {
					t.Errorf("%+v, sample %d: out[%d] %v, float64 %v", c, i, k, got.Data()[i*2+k], w)
				}
			}
			// d/dt Σ dy·out by central differences in float64, relative step.
			h := 1e-6 * ti
			up, dn := mlpRef64(m, xi, ti+h), mlpRef64(m, xi, ti-h)
			fd := 0.0
			for k := range up {
				fd += float64(dy.Data()[i*2+k]) * (up[k] - dn[k]) / (2 * h)
			}
			if gt := float64(tv.Grad.Data()[i]); !(math.Abs(gt-fd) <= 1e-3*(1e-3/ti+math.Abs(fd))) {
				t.Errorf("%+v, t=%g: d/dt %v, central difference %v", c, ti, gt, fd)
			}
			for j := range xi {
				up, dn := slices.Clone(xi), slices.Clone(xi)
				up[j] += 1e-6
				dn[j] -= 1e-6
				yu, yd := mlpRef64(m, up, ti), mlpRef64(m, dn, ti)
				fd := 0.0
				for k := range yu {
					fd += float64(dy.Data()[i*2+k]) * (yu[k] - yd[k]) / 2e-6
				}
				if gx := float64(xv.Grad.Data()[i*6+j]); !(math.Abs(gx-fd) <= 1e-4*(1+math.Abs(fd))) {
					t.Errorf("%+v, sample %d: d/dx[%d] %v, central difference %v", c, i, j, gx, fd)
				}
			}
		}
	}
}
