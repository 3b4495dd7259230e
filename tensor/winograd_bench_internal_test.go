package tensor

import (
	"fmt"
	"testing"

	"holdgo/internal/gemm"
)

// BenchmarkWinogradWeightTransform times the per-call weight transform of
// F(4,3) (forward and flipped) on NCSN++'s 256-channel layers.
func BenchmarkWinogradWeightTransform(b *testing.B) {
	for _, ch := range []int{128, 256} {
		w := make([]float32, ch*ch*9)
		for i := range w {
			w[i] = float32(i%7) - 3
		}
		for _, flip := range []bool{false, true} {
			b.Run(fmt.Sprintf("%d/flip=%v", ch, flip), func(b *testing.B) {
				for b.Loop() {
					wc := newWinoConv(winoF43, 4, ch, ch, 16, 16)
					mr := gemm.PanelHeight()
					up := getScratch(36 * wc.packedStride(mr))
					wc.transformWeights(*up, w, flip, mr)
					putScratch(up)
				}
			})
		}
	}
}
