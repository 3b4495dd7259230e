package tensor_test

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"holdgo/internal/isa"
	"holdgo/internal/parallel"
	"holdgo/tensor"
	"holdgo/tensor/optest"
)

// The convolution cases of the backend table with each algorithm forced
// (im2col, F(2,3), F(4,3)) at every instruction-set level and 1 or 2 threads,
// against the Reference device with the table's tolerance.
func TestWinogradAgainstReference(t *testing.T) {
	defer tensor.SetWinogradMode(tensor.SetWinogradMode(0))
	for mode := 1; mode < len(tensor.WinogradModes); mode++ {
		tensor.SetWinogradMode(mode)
		for _, level := range isa.Levels() {
			prevISA, _ := isa.Set(level)
			for _, threads := range []int{1, 2} {
				prev := parallel.SetThreads(threads)
				for _, c := range optest.Cases() {
					if c.Kind != tensor.OpConv2d && c.Kind != tensor.OpConv2dGradInput && c.Kind != tensor.OpConv2dGradWeight {
						continue
					}
					// The weight gradient also with chunks of as few tiles as
					// the GEMM's panel (accumulated over chunks).
					chunkBytes := []int{0}
					if c.Kind == tensor.OpConv2dGradWeight {
						chunkBytes = append(chunkBytes, 1)
					}
					for _, cb := range chunkBytes {
						var prevBytes int
						if cb != 0 {
							prevBytes = tensor.SetWinogradWGradBytes(cb)
						}
						r := optest.Run(tensor.CPU, c)
						if cb != 0 {
							tensor.SetWinogradWGradBytes(prevBytes)
						}
						if r.Err != nil || !(r.NMSE <= 1e-10) {
							t.Errorf("%s, %s, %s, threads=%d, chunk bytes %d: NMSE %.3g, %v", c.Name, tensor.WinogradModes[mode], level, threads, cb, r.NMSE, r.Err)
						}
					}
				}
				parallel.SetThreads(prev)
			}
			isa.Set(prevISA)
		}
	}
}

// winoShapes are NCSN++ (ncsnpp-cifar10) convolution shapes: n, c, o, h(=w).
var winoShapes = [][4]int{
	{4, 128, 128, 32}, {4, 256, 256, 16}, {4, 256, 256, 8}, {4, 256, 256, 4},
	{4, 128, 256, 16}, {4, 512, 256, 8}, {4, 9, 128, 32},
	{32, 32, 32, 28}, {32, 64, 64, 14}, {32, 64, 64, 7}, {32, 32, 64, 14}, {32, 96, 32, 28}, // ncsnpp-small
}

// benchShapes adds to winoShapes the shapes the rule sends to im2col, to
// time both algorithms there: ncsnpp-small's 32 channels at 14×14 and 7×7,
// its input (3 → 32) and output (32 → 1) convolutions.
var benchShapes = append(winoShapes[:len(winoShapes):len(winoShapes)],
	[4]int{32, 32, 32, 14}, [4]int{32, 32, 32, 7}, [4]int{32, 3, 32, 28}, [4]int{32, 32, 1, 28}, [4]int{32, 16, 16, 28},
	[4]int{4, 128, 3, 32}, [4]int{32, 32, 3, 28}, [4]int{32, 9, 32, 28})

// The error of each algorithm against the Reference device on NCSN++ shapes
// with N(0, 1) inputs and weights: max |err| / max |y| and the normalised MSE.
// go test -run WinogradError -v ./tensor prints the table of docs/ncsnpp.md.
func TestWinogradError(t *testing.T) {
	if testing.Short() {
		t.Skip("reference convolutions of NCSN++ size")
	}
	defer tensor.SetWinogradMode(tensor.SetWinogradMode(0))
	var b strings.Builder
	fmt.Fprintln(&b, "| n, c → o, h×w | pass | im2col | F(2,3) | F(4,3) |\n|---|---|---|---|---|")
	for _, s := range winoShapes {
		n, c, o, h := s[0], s[1], s[2], s[3]
		r := tensor.NewRNG(11)
		x, w, dy := tensor.RandN(r, n, c, h, h), tensor.RandN(r, o, c, 3, 3), tensor.RandN(r, n, o, h, h)
		refY, _ := tensor.Conv2d(nil, onRef(x), onRef(w), nil, 1, 1).ToHost()
		dx0, _ := tensor.Zeros(n, c, h, h).ToDevice(tensor.Reference)
		refDx, _ := tensor.Conv2dGradInput(dx0, onRef(dy), onRef(w), 1, 1, 0).ToHost()
		refDw, _ := tensor.Conv2dGradWeight(onRef(tensor.Zeros(o, c, 3, 3)), onRef(x), onRef(dy), 1, 1, 0).ToHost()
		rowY := fmt.Sprintf("| %d, %d → %d, %d×%d | forward |", n, c, o, h, h)
		rowDx := fmt.Sprintf("| %d, %d → %d, %d×%d | input gradient |", n, c, o, h, h)
		rowDw := fmt.Sprintf("| %d, %d → %d, %d×%d | weight gradient |", n, c, o, h, h)
		for mode := 1; mode < len(tensor.WinogradModes); mode++ {
			tensor.SetWinogradMode(mode)
			y := tensor.Conv2d(nil, x, w, nil, 1, 1)
			dx := tensor.Conv2dGradInput(tensor.Zeros(n, c, h, h), dy, w, 1, 1, 0)
			dw := tensor.Conv2dGradWeight(tensor.Zeros(o, c, 3, 3), x, dy, 1, 1, 0)
			for _, p := range []struct {
				row       *string
				got, want *tensor.Tensor
			}{{&rowY, y, refY}, {&rowDx, dx, refDx}, {&rowDw, dw, refDw}} {
				rel := maxRel(p.got.Data(), p.want.Data())
				nmse, _ := optest.NMSE(p.got.Data(), p.want.Data())
				*p.row += fmt.Sprintf(" %.1e (NMSE %.0e) |", rel, nmse)
				if !(nmse <= 1e-10) {
					t.Errorf("%s %s: NMSE %.3g", *p.row, tensor.WinogradModes[mode], nmse)
				}
			}
		}
		fmt.Fprintln(&b, rowY)
		fmt.Fprintln(&b, rowDx)
		fmt.Fprintln(&b, rowDw)
	}
	t.Log("\n" + b.String())
}

func onRef(x *tensor.Tensor) *tensor.Tensor {
	y, err := x.ToDevice(tensor.Reference)
	if err != nil {
		panic(err)
	}
	return y
}

func maxRel(got, want []float32) float64 {
	var e, m float64
	for i := range got {
		e = max(e, math.Abs(float64(got[i])-float64(want[i])))
		m = max(m, math.Abs(float64(want[i])))
	}
	return e / m
}

// BenchmarkConv3x3 times the forward pass and the input and weight gradients of NCSN++'s
// 3×3 convolutions through each algorithm; GFLOP/s counts the direct
// convolution's 2·N·O·C·9·H·W flops for all of them. Threads as
// parallel.Threads (GOMAXPROCS), e.g. go test -bench Conv3x3 -cpu 1,2.
func BenchmarkConv3x3(b *testing.B) {
	defer tensor.SetWinogradMode(tensor.SetWinogradMode(0))
	for _, s := range benchShapes {
		n, c, o, h := s[0], s[1], s[2], s[3]
		r := tensor.NewRNG(1)
		x, w, dy := tensor.RandN(r, n, c, h, h), tensor.RandN(r, o, c, 3, 3), tensor.RandN(r, n, o, h, h)
		y, dx, dw := tensor.Zeros(n, o, h, h), tensor.Zeros(n, c, h, h), tensor.Zeros(o, c, 3, 3)
		flops := 2 * float64(n*o*c*9*h*h)
		for mode := range tensor.WinogradModes {
			for _, pass := range []string{"forward", "dx", "dw"} {
				b.Run(fmt.Sprintf("%dx%dto%dx%dx%d/%s/%s", n, c, o, h, h, pass, tensor.WinogradModes[mode]), func(b *testing.B) {
					tensor.SetWinogradMode(mode)
					parallel.SetThreads(runtime.GOMAXPROCS(0))
					for b.Loop() {
						switch pass {
						case "forward":
							tensor.Conv2d(y, x, w, nil, 1, 1)
						case "dx":
							tensor.Conv2dGradInput(dx, dy, w, 1, 1, 0)
						default:
							tensor.Conv2dGradWeight(dw, x, dy, 1, 1, 0)
						}
					}
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkConv1x1 times NCSN++'s 1×1 convolutions (ncsnpp-small's NIN and
// skip shapes), forward and both gradients, into preallocated outputs.
func BenchmarkConv1x1(b *testing.B) {
	r := tensor.NewRNG(1)
	for _, s := range [][4]int{{32, 64, 64, 14}, {32, 96, 32, 28}, {32, 64, 64, 7}} {
		n, c, o, h := s[0], s[1], s[2], s[3]
		x, w, bias := tensor.RandN(r, n, c, h, h), tensor.RandN(r, o, c, 1, 1), tensor.RandN(r, o)
		dy, out, dx, dw := tensor.RandN(r, n, o, h, h), tensor.RandN(r, n, o, h, h), tensor.RandN(r, n, c, h, h), tensor.RandN(r, o, c, 1, 1)
		for _, pass := range []string{"forward", "dx", "dw"} {
			b.Run(fmt.Sprintf("%dx%dto%dx%dx%d/%s", n, c, o, h, h, pass), func(b *testing.B) {
				for b.Loop() {
					switch pass {
					case "forward":
						tensor.Conv2d(out, x, w, bias, 1, 0)
					case "dx":
						tensor.Conv2dGradInput(dx, dy, w, 1, 0, 1)
					case "dw":
						tensor.Conv2dGradWeight(dw, x, dy, 1, 0, 1)
					}
				}
				b.ReportMetric(2*float64(n*c*o*h*h)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
