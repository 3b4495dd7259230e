package layers

import (
	"math"

	"holdgo/tensor"
)

// Time embeddings of NCSN++ (docs/ncsnpp.md#time-embedding). Both depend
// only on t (and fixed weights), so they are computed outside the tape: by
// these functions on the host, or by the device's kernels (NCSNpp.embedOn).

// FourierEmbedding returns (B, 2·len(w)): sin and cos of log(t)·w·2π, in
// float32 arithmetic in PyTorch's order (GaussianFourierProjection).
func FourierEmbedding(t, w []float32) *tensor.Tensor {
	e := tensor.Zeros(len(t), 2*len(w))
	d := e.Data()
	twoPi := float32(2 * math.Pi)
	for b, tb := range t {
		lt := float32(math.Log(float64(tb)))
		row := d[b*2*len(w) : (b+1)*2*len(w)]
		for i, wi := range w {
			p := lt * wi * twoPi
			row[i] = float32(math.Sin(float64(p)))
			row[len(w)+i] = float32(math.Cos(float64(p)))
		}
	}
	return e
}

// PositionalEmbedding returns (B, dim): the transformer sinusoidal embedding
// of t with max_positions 10000 (get_timestep_embedding; dim even).
func PositionalEmbedding(t []float32, dim int) *tensor.Tensor {
	half := dim / 2
	e := tensor.Zeros(len(t), dim)
	d := e.Data()
	scale := math.Log(10000) / float64(max(half-1, 1))
	for b, tb := range t {
		for k := range half {
			f := float32(math.Exp(float64(k) * -scale))
			a := float64(tb * f)
			d[b*dim+k] = float32(math.Sin(a))
			d[b*dim+half+k] = float32(math.Cos(a))
		}
	}
	return e
}
