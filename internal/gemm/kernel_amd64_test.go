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

// TestKernelPackedLoop: a kernel with a loop for packed Ã (four k steps at constant offsets) gives,
// bit for bit, what its strided loop gives for the same Ã stored row by row, for kc below, at and off
// multiples of four, with and without beta. So do the same Ã stored transposed with a padded row
// (rs = 1, cs = mr+3: the AVX2 kernel's four-step transposed loop) and the rows-first kernels
// (microRows, microPF) on the row-by-row copy.
func TestKernelPackedLoop(t *testing.T) {
	for _, kern := range kernels {
		if kern.packedA || !slices.Contains(Levels(), kern.isa) {
			continue
		}
		for _, kc := range []int{1, 2, 3, 4, 5, 7, 8, 9, 64, 67} {
			packed := make([]float32, kern.mr*kc)    // packed[p*mr+i] = Ã[i][p]
			rows := make([]float32, kern.mr*kc)      // rows[i*kc+p] = Ã[i][p]
			trans := make([]float32, (kern.mr+3)*kc) // trans[p*(mr+3)+i] = Ã[i][p]
			b := make([]float32, kern.nr*kc)
			for i := range kern.mr {
				for p := range kc {
					v := float32(math.Sin(float64(1+i*kc+p))) * 3
					packed[p*kern.mr+i], rows[i*kc+p], trans[p*(kern.mr+3)+i] = v, v, v
				}
			}
			for j := range b {
				b[j] = float32(math.Cos(float64(j))) * 2
			}
			for _, beta := range []float32{0, 0.5} {
				variants := map[string]func(c []float32){
					"row by row": func(c []float32) { kern.micro(kc, rows, kc, 1, b, c, kern.nr, 1.5, beta) },
					"transposed": func(c []float32) { kern.micro(kc, trans, 1, kern.mr+3, b, c, kern.nr, 1.5, beta) },
				}
				if kern.microRows != nil {
					variants["microRows"] = func(c []float32) { kern.microRows(kc, rows, kc, b, c, kern.nr, 1.5, beta) }
				}
				if kern.microPF != nil {
					variants["microPF"] = func(c []float32) { kern.microPF(kc, rows, kc, b, c, kern.nr, 1.5, beta, rows) }
				}
				fill := func() []float32 {
					c := make([]float32, kern.mr*kern.nr)
					for j := range c {
						c[j] = float32(j % 5)
					}
					return c
				}
				c1 := fill()
				kern.micro(kc, packed, 1, kern.mr, b, c1, kern.nr, 1.5, beta)
				for name, f := range variants {
					c2 := fill()
					f(c2)
					for j := range c1 {
						if math.Float32bits(c1[j]) != math.Float32bits(c2[j]) {
							t.Fatalf("%s kc %d beta %v: c[%d] packed %v, %s %v", kern.isa, kc, beta, j, c1[j], name, c2[j])
						}
					}
				}
			}
		}
	}
}

// BenchmarkMacro times the macro loop alone, with its operands already
// packed and resident in L2: B panels (jr) outside, A panels (ir) inside,
// an mc×kc block of Ã against kc×nc of B̃, for several kc — how much the
// kernel loses to feeding Ã from L2 while a B̃ micro-panel (kc·nr floats)
// shares L1 with the Ã stream.
func BenchmarkMacro(b *testing.B) {
	for _, kern := range kernels {
		if kern.packedA || !slices.Contains(Levels(), kern.isa) {
			continue
		}
		for _, kc := range []int{192, 256, 384, 576} {
			for _, mc := range []int{kern.mr * 16, kern.mr * 48} {
				nc := 256
				b.Run(fmt.Sprintf("%s/kc=%d/mc=%d", kern.isa, kc, mc), func(b *testing.B) {
					a := make([]float32, mc*kc)
					bp := make([]float32, kc*nc)
					c := make([]float32, mc*nc)
					for i := range a {
						a[i] = 1e-3
					}
					for i := range bp {
						bp[i] = 1e-3
					}
					for range b.N {
						for jr := 0; jr < nc; jr += kern.nr {
							for ir := 0; ir < mc; ir += kern.mr {
								kern.micro(kc, a[ir*kc:], 1, kern.mr, bp[jr*kc:], c[ir*nc+jr:], nc, 1, 1)
							}
						}
					}
					flops := 2 * float64(mc*nc*kc) * float64(b.N)
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// TestShortTiles: each short kernel gives, bit for bit, the first rows of what the full kernel
// gives on the same zero-padded panel (rs = 1, cs = mr), for kc below, at and off multiples of
// four, with beta 0 (over NaN) and 0.5, and leaves the rows below its own untouched.
func TestShortTiles(t *testing.T) {
	for _, kern := range kernels {
		if len(kern.short) == 0 || !slices.Contains(Levels(), kern.isa) {
			continue
		}
		for _, sk := range kern.short {
			for _, kc := range []int{1, 2, 3, 4, 5, 7, 8, 9, 64, 67} {
				panel := make([]float32, kern.mr*kc)
				b := make([]float32, kern.nr*kc)
				for p := range kc {
					for i := range sk.mr {
						panel[p*kern.mr+i] = float32(math.Sin(float64(1+i*kc+p))) * 3
					}
				}
				for j := range b {
					b[j] = float32(math.Cos(float64(j))) * 2
				}
				for _, beta := range []float32{0, 0.5} {
					fill := func() []float32 {
						c := make([]float32, kern.mr*kern.nr)
						for j := range c {
							c[j] = float32(j % 5)
							if beta == 0 && j < sk.mr*kern.nr {
								c[j] = float32(math.NaN())
							}
						}
						return c
					}
					full, short := fill(), fill()
					kern.micro(kc, panel, 1, kern.mr, b, full, kern.nr, 1.5, beta)
					sk.micro(kc, panel, 1, kern.mr, b, short, kern.nr, 1.5, beta)
					for j := range short {
						want := full[j]
						if j >= sk.mr*kern.nr {
							want = float32(j % 5) // below the short tile: untouched
						}
						if math.Float32bits(short[j]) != math.Float32bits(want) {
							t.Fatalf("%s %d-row tile, kc %d beta %v: c[%d] = %v, want %v", kern.isa, sk.mr, kc, beta, j, short[j], want)
						}
					}
				}
			}
		}
	}
}
