package tensor_test

import (
	"testing"

	"holdgo/tensor"
	"holdgo/tensor/optest"
)

// TestFrozenConvWeights: a convolution with a frozen weight gives the result of the reference device's
// direct convolution (float64) on every call, forward and input gradient, for F(2,3) and F(4,3);
// after Thaw and a change of the weight it follows the new weight; with FrozenBudget 0 nothing is
// kept and the results are the same.
func TestFrozenConvWeights(t *testing.T) {
	const n, c, o, h = 2, 16, 24, 12
	r := tensor.NewRNG(7)
	x, w, dy := tensor.RandN(r, n, c, h, h), tensor.RandN(r, o, c, 3, 3), tensor.RandN(r, n, o, h, h)
	ref := func() (y, dx []float32) {
		yr, _ := tensor.Conv2d(nil, onRef(x), onRef(w), nil, 1, 1).ToHost()
		dxr, _ := tensor.Conv2dGradInput(onRef(tensor.Zeros(n, c, h, h)), onRef(dy), onRef(w), 1, 1, 0).ToHost()
		return yr.Data(), dxr.Data()
	}
	check := func(what string, got, want []float32) {
		t.Helper()
		if nmse, _ := optest.NMSE(got, want); !(nmse <= 1e-10) {
			t.Fatalf("%s: NMSE %.3g against the direct convolution", what, nmse)
		}
	}
	for mode := 2; mode <= 3; mode++ {
		prev := tensor.SetWinogradMode(mode)
		name := tensor.WinogradModes[mode]
		yWant, dxWant := ref()
		tensor.Freeze(w)
		for call := range 3 { // the first call makes the transforms, the others reuse them
			check(name+" forward", tensor.Conv2d(nil, x, w, nil, 1, 1).Data(), yWant)
			check(name+" input gradient", tensor.Conv2dGradInput(tensor.Zeros(n, c, h, h), dy, w, 1, 1, 0).Data(), dxWant)
			if call == 0 && tensor.FrozenBytes() == 0 {
				t.Fatalf("%s: a frozen weight's transforms were not kept", name)
			}
		}
		tensor.Thaw(w)
		if got := tensor.FrozenBytes(); got != 0 {
			t.Fatalf("%s: %d bytes kept after Thaw", name, got)
		}
		wd := w.Data()
		for i := range wd {
			wd[i] *= -0.5
		}
		yWant, dxWant = ref()
		check(name+" forward after Thaw", tensor.Conv2d(nil, x, w, nil, 1, 1).Data(), yWant)
		// Over the budget: nothing kept, the same results.
		budget := tensor.FrozenBudget.Swap(0)
		tensor.Freeze(w)
		check(name+" forward over the budget", tensor.Conv2d(nil, x, w, nil, 1, 1).Data(), yWant)
		check(name+" input gradient over the budget", tensor.Conv2dGradInput(tensor.Zeros(n, c, h, h), dy, w, 1, 1, 0).Data(), dxWant)
		if got := tensor.FrozenBytes(); got != 0 {
			t.Fatalf("%s: %d bytes kept over a budget of 0", name, got)
		}
		tensor.Thaw(w)
		tensor.FrozenBudget.Store(budget)
		tensor.SetWinogradMode(prev)
	}
}
