package layers

import (
	"fmt"

	"holdgo/autograd"
	"holdgo/rng"
)

// ScoreNet is a score network E_θ(x, t) as training and sampling use it: the
// state x (B, n·d), flattened per sample, and the times t (B) map to the
// network output for the last block (B, d).
type ScoreNet interface {
	ScoreForward(g *autograd.Tape, x, t *autograd.Value) *autograd.Value
	// Parameters are the network's weights (flat buffers).
	Parameters() *Params
	// Widths are the values per sample of the state and of the output.
	Widths() (state, out int)
}

// Dropouter is a ScoreNet with dropout: SetDropout(s) turns it on with the
// masks of the training step s.Key, s.Step (the k-th dropout of a forward pass
// uses stream rng.DropoutStream(k); s.ID is ignored), SetDropout(nil) off
// (evaluation).
type Dropouter interface {
	SetDropout(s *rng.Stream)
}

// Parameters returns the MLP's weights.
func (m *MLP) Parameters() *Params { return m.Params }

// Widths of the toy score network: the state (In − 1, the last input is t)
// and the output.
func (m *MLP) Widths() (state, out int) { return m.Config.In - 1, m.Config.Out }

// Parameters returns the network's weights (the fixed Fourier weights
// included; they take no gradient).
func (m *NCSNpp) Parameters() *Params { return m.Params }

// Widths are C_in·H·W and C_out·H·W.
func (m *NCSNpp) Widths() (state, out int) {
	s := m.Config.ImageSize * m.Config.ImageSize
	return m.Config.InChannels * s, m.Config.OutChannels * s
}

// ScoreForward evaluates the network on the flattened state x (B, C_in·H·W)
// and times t (B, on the network's device) and returns (B, C_out·H·W).
func (m *NCSNpp) ScoreForward(g *autograd.Tape, x, t *autograd.Value) *autograd.Value {
	c := m.Config
	b := x.Shape()[0]
	if state, _ := m.Widths(); x.T.Len() != b*state || t.T.Len() != b {
		panic(fmt.Sprintf("ncsnpp: state %v and times %v for a %d×%d×%d input", x.Shape(), t.Shape(), c.InChannels, c.ImageSize, c.ImageSize))
	}
	out := m.forward(g, g.Reshape(x, b, c.InChannels, c.ImageSize, c.ImageSize), t.T.Reshape(b))
	return g.Reshape(out, b, -1)
}
