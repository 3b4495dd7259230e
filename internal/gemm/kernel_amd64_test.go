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

// TestPackers checks the AVX-512 and AVX2 packers against pack.go's plain-Go
// ones, bit for bit, over ragged and full panels, every k tail (0…40 covers
// 0, 1 and 2 transpose blocks of 16 or up to 5 of 8, plus tails), both layouts
// of the source, odd strides and offsets; the destination is pre-filled with
// NaNs so a lane that is not written shows.
func TestPackers(t *testing.T) {
	nan := float32(math.NaN())
	for _, kern := range kernels {
		if kern.packedA {
			continue
		}
		for _, trans := range []bool{false, true} {
			for rows := 1; rows <= 70; rows += 3 {
				for kc := 0; kc <= 40; kc++ {
					for _, w := range []int{kern.mr, kern.nr, -kern.nr} {
						// Source: rows×kc (or kc×rows when trans) of op with padding;
						// −nr: packB with rows ≥ 512 floats apart (packBAVX2's blocked order).
						ld := kc + 3
						if trans != (w != kern.mr) { // packA trans and packB non-trans read rows of width rows
							ld = rows + 5
						}
						if w < 0 {
							w, ld = -w, rows+517
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
						if w == kern.mr {
							packA(want, trans, src, ld, 1, rows, 1, kc, w)
							kern.packA(got, trans, src, ld, 1, rows, 1, kc, w)
						} else {
							packB(want, trans, src, ld, 1, kc, 1, rows, w)
							kern.packB(got, trans, src, ld, 1, kc, 1, rows, w)
						}
						for i := range want {
							if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
								t.Fatalf("%s trans=%v rows=%d kc=%d w=%d: element %d = %v, want %v", kern.isa, trans, rows, kc, w, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestKernelPackedLoop: a kernel with a loop for packed Ã (the AVX2 one: four k steps at constant
// offsets) gives, bit for bit, what its strided loop gives for the same Ã stored row by row, for kc
// below, at and off multiples of four, with and without beta.
func TestKernelPackedLoop(t *testing.T) {
	for _, kern := range kernels {
		if kern.packedA || !slices.Contains(Levels(), kern.isa) {
			continue
		}
		for _, kc := range []int{1, 2, 3, 4, 5, 7, 8, 9, 64, 67} {
			packed := make([]float32, kern.mr*kc) // packed[p*mr+i] = Ã[i][p]
			rows := make([]float32, kern.mr*kc)   // rows[i*kc+p] = Ã[i][p]
			b := make([]float32, kern.nr*kc)
			for i := range kern.mr {
				for p := range kc {
					v := float32(math.Sin(float64(1+i*kc+p))) * 3
					packed[p*kern.mr+i], rows[i*kc+p] = v, v
				}
			}
			for j := range b {
				b[j] = float32(math.Cos(float64(j))) * 2
			}
			for _, beta := range []float32{0, 0.5} {
				c1, c2 := make([]float32, kern.mr*kern.nr), make([]float32, kern.mr*kern.nr)
				for j := range c1 {
					c1[j], c2[j] = float32(j%5), float32(j%5)
				}
				kern.micro(kc, packed, 1, kern.mr, b, c1, kern.nr, 1.5, beta)
				kern.micro(kc, rows, kc, 1, b, c2, kern.nr, 1.5, beta)
				for j := range c1 {
					if math.Float32bits(c1[j]) != math.Float32bits(c2[j]) {
						t.Fatalf("%s kc %d beta %v: c[%d] packed %v, row by row %v", kern.isa, kc, beta, j, c1[j], c2[j])
					}
				}
			}
		}
	}
}
