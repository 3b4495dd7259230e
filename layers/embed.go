package layers

import "holdgo/tensor"

// Time embeddings of NCSN++ (docs/ncsnpp.md#time-embedding). Both depend
// only on t (and fixed weights), so they are computed outside the tape, by the
// fused ops tensor.FourierEmbedding and tensor.PositionalEmbedding on the
// device that holds the times (NCSNpp.embedOn); these are their host forms.

// FourierEmbedding returns (B, 2·len(w)): sin and cos of log(t)·w·2π, in
// float32 arithmetic in PyTorch's order (GaussianFourierProjection).
func FourierEmbedding(t, w []float32) *tensor.Tensor {
	return tensor.FourierEmbedding(nil, tensor.FromSlice(t, len(t)), tensor.FromSlice(w, len(w)))
}

// PositionalEmbedding returns (B, dim): the transformer sinusoidal embedding
// of t with max_positions 10000 (get_timestep_embedding; dim even).
func PositionalEmbedding(t []float32, dim int) *tensor.Tensor {
	return tensor.PositionalEmbedding(nil, tensor.FromSlice(t, len(t)), dim)
}
