package optest

import (
	"fmt"
	"math"

	"holdgo/rng"
	"holdgo/tensor"
)

// fusedCases are the fused families (tensor/fused.go). An op that updates several tensors returns
// them joined into one flat tensor; a statistic is returned as float32 values on the device.

// flat joins tensors on one device into one vector.
func flat(ts ...*tensor.Tensor) *tensor.Tensor {
	parts := make([]*tensor.Tensor, len(ts))
	for i, t := range ts {
		parts[i] = t.Reshape(t.Len())
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return tensor.Concat(nil, 0, parts...)
}

// statsValues returns the loss, the squared norm and the skipped count of stats as a device vector.
func statsValues(stats *tensor.Tensor, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
	loss, norm, skipped, err := tensor.ReadStats(stats)
	if err != nil {
		return stats // carries the error
	}
	return d(tensor.FromSlice([]float32{float32(loss), float32(norm * norm), float32(skipped)}, 3))
}

// hostStats returns statistics holding loss and the squared norm.
func hostStats(loss, sumsq float64) *tensor.Tensor {
	s := make([]float32, tensor.StatsLen)
	tensor.PutFloat64s(s, []float64{loss, sumsq, 0})
	return tensor.FromSlice(s, tensor.StatsLen)
}

func fusedCases(cases map[tensor.OpKind][]opCase) {
	st := rng.Stream{Key: 0x5eed, Step: 3, ID: 2}
	type dc func(*tensor.Tensor) *tensor.Tensor
	add := func(k tensor.OpKind, name string, f func(r *tensor.RNG, d dc) *tensor.Tensor) {
		cases[k] = append(cases[k], opCase{name, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor { return f(r, d) }})
	}
	for _, c := range []struct {
		n     int
		first uint64
	}{{0, 0}, {1, 0}, {3, 0}, {17, 0}, {1001, 0}, {1, 7}, {16, 5}, {1001, 12}} {
		add(tensor.OpFillNormal, fmt.Sprintf("FillNormal[%d]/first=%d", c.n, c.first), func(r *tensor.RNG, d dc) *tensor.Tensor {
			return tensor.FillNormalFrom(d(tensor.Zeros(c.n)), st, c.first)
		})
	}
	for _, c := range []struct {
		n     int
		first uint64
		p     float64
		alias bool
	}{{0, 0, 0.3, false}, {1, 0, 0.3, false}, {17, 5, 0.3, false}, {1000, 3, 0.5, true}, {33, 0, 0, false}} {
		add(tensor.OpDropout, fmt.Sprintf("Dropout[%d]/first=%d/p=%g/inplace=%v", c.n, c.first, c.p, c.alias), func(r *tensor.RNG, d dc) *tensor.Tensor {
			x := d(tensor.RandN(r, c.n))
			if c.alias {
				return tensor.Dropout(x, x, st, c.p, c.first)
			}
			return tensor.Dropout(nil, x, st, c.p, c.first)
		})
	}
	for _, c := range [][2]int{{0, 4}, {1, 1}, {7, 16}} {
		add(tensor.OpFourierEmbedding, fmt.Sprintf("FourierEmbedding[%d]/%d", c[0], c[1]), func(r *tensor.RNG, d dc) *tensor.Tensor {
			return tensor.FourierEmbedding(nil, d(positive(tensor.RandU(r, 0, 1, c[0]))), d(tensor.RandN(r, c[1])))
		})
		add(tensor.OpPositionalEmbedding, fmt.Sprintf("PositionalEmbedding[%d]/%d", c[0], 2*c[1]), func(r *tensor.RNG, d dc) *tensor.Tensor {
			return tensor.PositionalEmbedding(nil, d(tensor.RandU(r, 0, 1000, c[0])), 2*c[1])
		})
	}
	sumsq := func(g *tensor.Tensor) float64 {
		var s float64
		for _, v := range g.Data() {
			s += float64(v) * float64(v)
		}
		return s
	}
	for _, c := range []struct {
		n       int
		maxNorm float64
		loss    float64
	}{{0, 0, 1}, {1, 0, 1}, {17, 1, 0.5}, {3000, 0.5, 2}, {3000, 1e6, 2}, {5, 1, math.NaN()}, {5, 1, math.Inf(1)}} {
		a := tensor.AdamStep{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, LR: 2e-3, Step: 7, MaxNorm: c.maxNorm}
		add(tensor.OpAdam, fmt.Sprintf("Adam[%d]/maxNorm=%g/loss=%g", c.n, c.maxNorm, c.loss), func(r *tensor.RNG, d dc) *tensor.Tensor {
			g := tensor.RandN(r, c.n)
			p, m, v := d(tensor.RandN(r, c.n)), d(tensor.RandN(r, c.n)), d(positive(tensor.RandN(r, c.n)))
			stats := d(hostStats(c.loss, sumsq(g)))
			tensor.Adam(p, d(g), m, v, stats, a)
			return flat(p, m, v, statsValues(stats, d))
		})
		add(tensor.OpEMA, fmt.Sprintf("EMA[%d]/loss=%g", c.n, c.loss), func(r *tensor.RNG, d dc) *tensor.Tensor {
			shadow, p := d(tensor.RandN(r, c.n)), d(tensor.RandN(r, c.n))
			return tensor.EMA(shadow, p, d(hostStats(c.loss, 1)), 0.95)
		})
	}
	for _, n := range []int{0, 1, 17, 5000, 300000} {
		add(tensor.OpAddScaled, fmt.Sprintf("AddScaled[%d]", n), func(r *tensor.RNG, d dc) *tensor.Tensor {
			return tensor.AddScaled(nil, d(tensor.RandN(r, n)), d(tensor.RandN(r, n)), 0.70710677)
		})
		add(tensor.OpAddScaled, fmt.Sprintf("AddScaledInPlace[%d]", n), func(r *tensor.RNG, d dc) *tensor.Tensor {
			a := d(tensor.RandN(r, n))
			return tensor.AddScaled(a, a, d(tensor.RandN(r, n)), -3)
		})
		add(tensor.OpSumSq, fmt.Sprintf("SumSq[%d]", n), func(r *tensor.RNG, d dc) *tensor.Tensor {
			return statsValues(tensor.SumSq(d(hostStats(1.5, 0)), d(tensor.RandN(r, n))), d)
		})
	}
	for _, c := range [][3]int{{1, 1, 1}, {3, 7, 3}, {2, 40, 5}, {64, 784, 64}} {
		add(tensor.OpScoreLoss, fmt.Sprintf("ScoreLoss[%d×%d]/batch=%d", c[0], c[1], c[2]), func(r *tensor.RNG, d dc) *tensor.Tensor {
			out, target, stats := d(tensor.RandN(r, c[0], c[1])), d(tensor.RandN(r, c[0], c[1])), d(hostStats(0, 0))
			grad := tensor.ScoreLoss(nil, out, target, stats, c[2])
			return flat(grad, statsValues(stats, d))
		})
	}
	for n := 1; n <= tensor.MaxBlocks; n++ {
		for _, c := range []struct {
			b, dim int
			aux    bool
		}{{1, 1, false}, {3, 5, n > 1}, {4, 33, false}, {0, 3, false}} {
			add(tensor.OpPerturb, fmt.Sprintf("Perturb/n=%d/%d×%d/aux=%v", n, c.b, c.dim, c.aux), func(r *tensor.RNG, d dc) *tensor.Tensor {
				coef := make([]float32, c.b*tensor.PerturbCoefLen)
				for b := range c.b {
					v := make([]float64, 32)
					for k := range v {
						v[k] = (2*r.Float64() - 1)
					}
					tensor.PutFloat64s(coef[b*tensor.PerturbCoefLen:], v)
				}
				var aux *tensor.Tensor
				if c.aux {
					aux = d(tensor.RandN(r, c.b, (n-1)*c.dim))
				}
				x, target := d(tensor.Zeros(c.b, n*c.dim)), d(tensor.Zeros(c.b, c.dim))
				tensor.Perturb(x, target, d(tensor.FromSlice(coef, len(coef))), d(tensor.RandN(r, c.b, c.dim)), d(tensor.RandN(r, c.b, n*c.dim)), aux, n)
				return flat(x, target)
			})
		}
		for _, c := range []struct {
			b, dim, halves int
			score          bool
		}{{3, 7, 0, true}, {3, 7, 1, false}, {3, 7, 1, true}, {5, 300, 2, true}, {2, 9, 2, false}, {0, 4, 2, true}} {
			add(tensor.OpBlockAffine, fmt.Sprintf("BlockAffine/n=%d/%d×%d/halves=%d/score=%v", n, c.b, c.dim, c.halves, c.score),
				func(r *tensor.RNG, d dc) *tensor.Tensor {
					a := tensor.BlockAffine{Blocks: n, Halves: c.halves, BScale: 1 + 0.1*(2*r.Float64()-1), BScore: (2*r.Float64() - 1)}
					for k := range 2 {
						for i := range tensor.MaxBlocks {
							for j := range tensor.MaxBlocks {
								a.A[k].Exp[i][j], a.A[k].Chol[i][j] = (2*r.Float64() - 1), (2*r.Float64() - 1)
							}
						}
					}
					x := d(tensor.RandN(r, c.b, n*c.dim))
					var score *tensor.Tensor
					if c.score {
						score = d(tensor.RandN(r, c.b, c.dim))
					}
					z := make([]*tensor.Tensor, c.halves)
					for k := range z {
						z[k] = d(tensor.RandN(r, c.b, n*c.dim))
					}
					return tensor.BlockStep(x, score, z, a)
				})
		}
	}
}
