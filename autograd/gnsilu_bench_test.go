package autograd

import (
	"fmt"
	"testing"

	"holdgo/internal/parallel"
	"holdgo/tensor"
)

// BenchmarkGroupNormSiLU compares the fused node with GroupNorm then SiLU,
// forward and backward, on ncsnpp-small's first level (batch 32, 32
// channels, 28×28) and ncsnpp-cifar10's (batch 4, 128 channels, 32×32), one
// thread.
func BenchmarkGroupNormSiLU(b *testing.B) {
	prev := parallel.SetThreads(1)
	defer parallel.SetThreads(prev)
	for _, sh := range [][]int{{32, 32, 28, 28}, {4, 128, 32, 32}} {
		r := tensor.NewRNG(1)
		x, gamma, beta := tensor.RandN(r, sh...), tensor.RandN(r, sh[1]), tensor.RandN(r, sh[1])
		dgamma, dbeta := tensor.Zeros(sh[1]), tensor.Zeros(sh[1])
		for _, fused := range []bool{false, true} {
			name := "separate"
			if fused {
				name = "fused"
			}
			b.Run(fmt.Sprint(sh)+"/"+name, func(b *testing.B) {
				g := NewTape(tensor.CPU)
				for range b.N {
					g.Reset()
					xv := g.Var(x)
					gv, bv := Param(gamma, dgamma), Param(beta, dbeta)
					var y *Value
					if fused {
						y = g.GroupNormSiLU(xv, gv, bv, 8, 1e-6)
					} else {
						y = g.SiLU(g.GroupNorm(xv, gv, bv, 8, 1e-6))
					}
					y.Grad = x
					g.BackwardFrom(y)
				}
			})
		}
	}
}
