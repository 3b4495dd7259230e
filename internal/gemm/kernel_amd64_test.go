//go:build !noasm

package gemm

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// BenchmarkMicro times one microkernel alone, its operands hot in L1: the
// ceiling for Sgemm on this ISA (packed A: rs=1, cs=mr; in-place A: rs=kc).
func BenchmarkMicro(b *testing.B) {
	for _, kern := range kernels {
		if kern.packedA {
			continue
		}
		for _, kc := range []int{128, 256} {
			for _, inPlace := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/kc=%d/inplace=%v", kern.isa, kc, inPlace), func(b *testing.B) {
					a := make([]float32, kern.mr*kc)
					bp := make([]float32, kern.nr*kc)
					c := make([]float32, kern.mr*kern.nr)
					rs, cs := 1, kern.mr
					if inPlace {
						rs, cs = kc, 1
					}
					for range b.N {
						kern.micro(kc, a, rs, cs, bp, c, kern.nr, 1, 1)
					}
					flops := 2 * float64(kern.mr*kern.nr*kc) * float64(b.N)
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// TestPackersAVX512 checks the AVX-512 packers against pack.go's plain-Go
// ones, bit for bit, over ragged and full panels, every k tail (0…40 covers
// 0, 1 and 2 transpose blocks plus tails), both layouts of the source, odd
// strides and offsets; the destination is pre-filled with NaNs so a lane
// that is not written shows.
func TestPackersAVX512(t *testing.T) {
	if !slices.Contains(Levels(), AVX512) {
		t.Skip("no AVX-512 on this machine")
	}
	nan := float32(math.NaN())
	for _, trans := range []bool{false, true} {
		for rows := 1; rows <= 70; rows += 3 {
			for kc := 0; kc <= 40; kc++ {
				for _, w := range []int{12, 32} {
					// Source: rows×kc (or kc×rows when trans) of op with padding.
					ld := kc + 3
					if trans != (w == 32) { // packA trans and packB non-trans read rows of width rows
						ld = rows + 5
					}
					src := make([]float32, 2+(max(rows, kc)+1)*ld)
					for i := range src {
						src[i] = float32(i%97) - 40
					}
					want := make([]float32, ((rows+w-1)/w)*w*kc+1)
					got := make([]float32, len(want))
					for i := range got {
						want[i], got[i] = nan, nan
					}
					if w == 12 {
						packA(want, trans, src, ld, 1, rows, 1, kc, w)
						packAAVX512(got, trans, src, ld, 1, rows, 1, kc, w)
					} else {
						packB(want, trans, src, ld, 1, kc, 1, rows, w)
						packBAVX512(got, trans, src, ld, 1, kc, 1, rows, w)
					}
					for i := range want {
						if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
							t.Fatalf("trans=%v rows=%d kc=%d w=%d: element %d = %v, want %v", trans, rows, kc, w, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
