package train

import (
	"fmt"
	"sync"

	"holdgo/autograd"
	"holdgo/hold"
	"holdgo/tensor"
)

// KernelEstimator returns the estimator of layers.MLPConfig.Estimate for an
// SDE on d-dimensional data: x̂₀ = Σ_j a_j(t)·x_j per sample, the flat-prior
// (GLS) estimate of the data block from the n-block state with the weights
// of hold.SDE.EstimateWeights, recorded on the tape as Mul and Sum so that
// gradients with respect to the state flow (the likelihood needs them). The
// weights are computed on the host in float64 for each distinct time (a
// sampler step's times are all equal: one evaluation) and, for a state on
// a device, copied there.
func KernelEstimator(sde *hold.SDE, d int) func(g *autograd.Tape, x, t *autograd.Value) *autograd.Value {
	n := sde.Blocks()
	var (
		mu    sync.Mutex
		lastT float32
		lastA []float64
	)
	weights := func(t float32) []float64 {
		mu.Lock()
		defer mu.Unlock()
		if lastA == nil || t != lastT {
			lastT, lastA = t, sde.EstimateWeights(float64(t))
		}
		return lastA
	}
	return func(g *autograd.Tape, x, t *autograd.Value) *autograd.Value {
		b := x.Shape()[0]
		th, err := t.T.ToHost() // t itself on the CPU
		if err != nil {
			panic(fmt.Sprintf("train: the x̂₀ estimate needs the times on the host: %v", err))
		}
		w := make([]float32, b*n)
		for i, tv := range th.Data() {
			for j, a := range weights(tv) {
				w[i*n+j] = float32(a)
			}
		}
		wt, err := tensor.FromSlice(w, b, n, 1).ToDevice(x.T.Device()) // no copy to the CPU
		if err != nil {
			panic(fmt.Sprintf("train: the x̂₀ estimate's weights cannot go to %s: %v", x.T.Device().Name(), err))
		}
		return g.Reshape(g.Sum(g.Mul(g.Reshape(x, b, n, d), g.Const(wt)), 1), b, d)
	}
}
