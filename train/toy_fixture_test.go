package train

import (
	"testing"

	"holdgo/data"
	"holdgo/hold"
	"holdgo/layers"
	"holdgo/tensor"
)

// toyModel is the device tests' model: the toy score MLP (weights from seed 11) for an SDE of kind on
// the 2-D Swiss roll, with the data source and its dimension.
func toyModel(t *testing.T, kind string) (*hold.SDE, data.Source, *layers.MLP, int) {
	t.Helper()
	sde, err := hold.New(hold.DefaultConfig(kind))
	if err != nil {
		t.Fatal(err)
	}
	src, err := data.Open("swissroll", 0)
	if err != nil {
		t.Fatal(err)
	}
	d, n := src.Dimension(), sde.Blocks()
	net, err := layers.NewMLP(layers.ToyScoreNet(n*d, d), tensor.NewRNG(11))
	if err != nil {
		t.Fatal(err)
	}
	return sde, src, net, d
}
