package tensor

// Test hooks for the external tests (package tensor_test).

// WinogradModes names the convolution algorithms SetWinogradMode forces.
var WinogradModes = []string{"auto", "im2col", "F(2,3)", "F(4,3)"}

// SetWinogradMode forces the algorithm of 3×3, stride-1, pad-1 convolutions
// (an index into WinogradModes) and returns the previous mode.
func SetWinogradMode(mode int) (prev int) {
	prev = int(winoMode)
	winoMode = winoModeKind(mode)
	return prev
}

// SetWinogradWGradBytes sets the bound on a Winograd weight gradient's
// chunk buffers (small values force many chunks of tiles) and returns the
// previous one.
func SetWinogradWGradBytes(n int) (prev int) {
	prev, winoWGradBytes = winoWGradBytes, n
	return prev
}

// FrozenBytes is the memory the forms of frozen tensors hold now.
func FrozenBytes() int64 { return frozenBytes.Load() }
