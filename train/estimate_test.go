package train

import (
	"math"
	"testing"

	"holdgo/autograd"
	"holdgo/hold"
	"holdgo/tensor"
)

// TestKernelEstimator checks x̂₀ = Σ_j a_j(t)·x_j per sample and dimension, and its gradient with
// respect to the state (a_j(t) in each block), against hold.SDE.EstimateWeights in float64 for a batch
// of different times (and equal ones, the sampler's case).
func TestKernelEstimator(t *testing.T) {
	sde, err := hold.New(hold.DefaultConfig(hold.KindHOLD))
	if err != nil {
		t.Fatal(err)
	}
	const b, n, d = 6, 3, 2
	est := KernelEstimator(sde, d)
	for _, times := range [][]float32{{1e-3, 0.01, 0.05, 0.2, 1, 6}, {0.3, 0.3, 0.3, 0.3, 0.3, 0.3}} {
		x := tensor.Zeros(b, n*d)
		tensor.NewRNG(2).FillNormal(x.Data(), 0, 1)
		g := autograd.NewTape(tensor.CPU)
		xv := g.Var(x)
		out := est(g, xv, g.Const(tensor.FromSlice(times, b)))
		got := out.T.Clone()
		dy := tensor.Zeros(b, d)
		tensor.NewRNG(3).FillNormal(dy.Data(), 0, 1)
		g.Backward(g.Sum(g.Mul(out, g.Const(dy))))
		for i := range b {
			a := sde.EstimateWeights(float64(times[i]))
			for k := range d {
				want := 0.0
				for j := range n {
					want += a[j] * float64(x.Data()[i*n*d+j*d+k])
					gw := a[j] * float64(dy.Data()[i*d+k])
					if gx := float64(xv.Grad.Data()[i*n*d+j*d+k]); !(math.Abs(gx-gw) <= 1e-6*(math.Abs(gw)+1e-3)) {
						t.Errorf("t=%g: d/dx[block %d, dim %d] = %v, want a_j·dy = %v", times[i], j, k, gx, gw)
					}
				}
				if e := math.Abs(float64(got.Data()[i*d+k]) - want); !(e <= 1e-6*(1+math.Abs(want))) {
					t.Errorf("t=%g dim %d: x̂₀ = %v, want %v", times[i], k, got.Data()[i*d+k], want)
				}
			}
		}
	}
}
