package tensor

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"holdgo/internal/isa"
	"holdgo/internal/parallel"
)

// opCase builds operands with rng and runs one op through the public API on
// whatever device the operands live on (toDev moves a host tensor there).
type opCase struct {
	name string
	run  func(rng *RNG, toDev func(*Tensor) *Tensor) *Tensor
}

func positive(t *Tensor) *Tensor {
	for i, v := range t.data {
		t.data[i] = float32(math.Abs(float64(v))) + 0.1
	}
	return t
}

// shapes awkward for the kernels: size 0 and 1, odd sizes, above the grain.
var testShapes = [][]int{{0}, {1}, {3}, {17}, {2, 3}, {1, 5, 1}, {4, 1, 7}, {3, 130, 129}}

func unaryCase(name string, f func(out, a *Tensor) *Tensor, pos bool) []opCase {
	var cs []opCase
	for _, sh := range testShapes {
		cs = append(cs, opCase{fmt.Sprintf("%s%v", name, sh), func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			a := RandN(r, sh...)
			if pos {
				positive(a)
			}
			return f(nil, d(a))
		}})
	}
	return cs
}

func binaryCases(name string, f func(out, a, b *Tensor) *Tensor) []opCase {
	pairs := [][2][]int{{{0}, {0}}, {{5}, {5}}, {{3, 4}, {4}}, {{3, 4}, {3, 1}}, {{1, 4}, {3, 1}},
		{{2, 3, 5}, {1, 3, 1}}, {{}, {2, 2}}, {{40, 300}, {300}}, {{200, 300}, {200, 300}}}
	var cs []opCase
	for _, p := range pairs {
		cs = append(cs, opCase{fmt.Sprintf("%s%v%v", name, p[0], p[1]), func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			a, b := RandN(r, p[0]...), positive(RandN(r, p[1]...))
			if name == "Eq" { // make some elements equal
				b = Copy(nil, Slice(nil, a.Reshape(append([]int{1}, p[0]...)...), 0, 0, 1).Reshape(p[0]...))
				if len(p[0]) == len(p[1]) && slices.Equal(p[0], p[1]) && b.Len() > 1 {
					b.data[0] += 1
				} else {
					b = RandN(r, p[1]...)
				}
			}
			return f(nil, d(a), d(b))
		}})
	}
	return cs
}

func allCases() map[OpKind][]opCase {
	mm := func(a, b []int, ta, tb bool, beta float32) opCase {
		return opCase{fmt.Sprintf("MatMul%v%v/%v%v/%v", a, b, ta, tb, beta), func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			x, y := d(RandN(r, a...)), d(RandN(r, b...))
			if beta == 0 {
				return MatMul(nil, x, y, ta, tb)
			}
			shape, _ := MatMulShape(a, b, ta, tb)
			return MatMulAcc(d(RandN(r, shape...)), x, y, ta, tb, beta)
		}}
	}
	reduceCases := func(name string, f func(out, a *Tensor, axes ...int) *Tensor) []opCase {
		type rc struct {
			shape []int
			axes  []int
		}
		var cs []opCase
		for _, c := range []rc{{[]int{7}, nil}, {[]int{3, 4}, []int{0}}, {[]int{3, 4}, []int{-1}},
			{[]int{2, 3, 5}, []int{0, 2}}, {[]int{2, 3, 5}, []int{1}}, {[]int{512, 130}, []int{0}}, {[]int{0, 3}, []int{1}}} {
			cs = append(cs, opCase{fmt.Sprintf("%s%v%v", name, c.shape, c.axes), func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
				return f(nil, d(RandN(r, c.shape...)), c.axes...)
			}})
		}
		return cs
	}
	grad := func(name string, f func(out, a, b *Tensor) *Tensor) []opCase {
		return []opCase{{name, func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			x := RandN(r, 33, 65)
			if name != "SiLUGrad" {
				x = Tanh(nil, x)
			}
			return f(nil, d(x), d(RandN(r, 33, 65)))
		}}}
	}
	return map[OpKind][]opCase{
		OpFill: {{"Fill", func(r *RNG, d func(*Tensor) *Tensor) *Tensor { return Fill(d(Zeros(3, 5)), 2.5) }}},
		OpCopy: {{"Copy", func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			return Copy(d(Zeros(6, 5)), d(RandN(r, 30)))
		}}},
		OpNeg:     unaryCase("Neg", Neg, false),
		OpExp:     unaryCase("Exp", Exp, false),
		OpLog:     unaryCase("Log", Log, true),
		OpSqrt:    unaryCase("Sqrt", Sqrt, true),
		OpSquare:  unaryCase("Square", Square, false),
		OpTanh:    unaryCase("Tanh", Tanh, false),
		OpSigmoid: unaryCase("Sigmoid", Sigmoid, false),
		OpSiLU:    unaryCase("SiLU", SiLU, false),
		OpAddScalar: unaryCase("AddScalar", func(o, a *Tensor) *Tensor {
			return AddScalar(o, a, -1.25)
		}, false),
		OpMulScalar: unaryCase("MulScalar", func(o, a *Tensor) *Tensor {
			return MulScalar(o, a, 3.5)
		}, false),
		OpSiLUGrad:    grad("SiLUGrad", SiLUGrad),
		OpTanhGrad:    grad("TanhGrad", TanhGrad),
		OpSigmoidGrad: grad("SigmoidGrad", SigmoidGrad),
		OpAdd:         binaryCases("Add", Add),
		OpSub:         binaryCases("Sub", Sub),
		OpMul:         binaryCases("Mul", Mul),
		OpDiv:         binaryCases("Div", Div),
		OpEq:          binaryCases("Eq", Eq),
		OpMatMul: {
			mm([]int{3, 4}, []int{4, 5}, false, false, 0), mm([]int{4, 3}, []int{4, 5}, true, false, 0),
			mm([]int{3, 4}, []int{5, 4}, false, true, 0), mm([]int{4, 3}, []int{5, 4}, true, true, 0),
			mm([]int{2, 3, 17, 9}, []int{2, 3, 9, 1}, false, false, 0), mm([]int{5, 1, 7}, []int{7, 3}, false, false, 0),
			mm([]int{33, 65}, []int{65, 31}, false, false, 1), mm([]int{65, 33}, []int{31, 65}, true, true, 0.5),
			mm([]int{1, 0}, []int{0, 3}, false, false, 0), mm([]int{130, 129}, []int{129, 67}, false, false, 0),
		},
		OpSum: reduceCases("Sum", Sum),
		OpMax: reduceCases("Max", Max),
		OpPermute: {
			{"Permute2", func(r *RNG, d func(*Tensor) *Tensor) *Tensor { return Transpose(nil, d(RandN(r, 130, 129))) }},
			{"Permute3", func(r *RNG, d func(*Tensor) *Tensor) *Tensor { return Permute(nil, d(RandN(r, 2, 3, 4)), 2, 0, 1) }},
			{"Permute4", func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
				return Permute(nil, d(RandN(r, 2, 1, 3, 5)), 3, 1, 0, 2)
			}},
		},
		OpConcat: {
			{"Concat0", func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
				return Concat(nil, 0, d(RandN(r, 2, 3)), d(RandN(r, 0, 3)), d(RandN(r, 4, 3)))
			}},
			{"Concat1", func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
				return Concat(nil, -1, d(RandN(r, 5, 6)), d(RandN(r, 5, 1)))
			}},
		},
		OpSlice: {
			{"Slice", func(r *RNG, d func(*Tensor) *Tensor) *Tensor { return Slice(nil, d(RandN(r, 4, 7, 3)), 1, 2, 6) }},
			{"Split", func(r *RNG, d func(*Tensor) *Tensor) *Tensor { return Split(d(RandN(r, 5, 9)), 1, 6, 3)[1] }},
		},
		OpSliceAdd: {{"SliceAdd", func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			return SliceAdd(d(RandN(r, 4, 7, 3)), d(RandN(r, 4, 2, 3)), 1, 5)
		}}},
		OpGather: {{"Gather", func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			return Gather(nil, d(RandN(r, 6, 2, 3)), []int{5, 0, 0, 3})
		}}},
		OpScatterAdd: {{"ScatterAdd", func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			return ScatterAdd(d(RandN(r, 6, 2, 3)), d(RandN(r, 4, 2, 3)), []int{5, 0, 0, 3})
		}}},
	}
}

// nmse is Σ(a-b)²/Σb² (0 when both are zero); NaN/Inf mismatches fail on their own.
func nmse(t *testing.T, name string, got, want []float32) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", name, len(got), len(want))
	}
	var num, den float64
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) != math.IsNaN(w) || (math.IsInf(w, 0) || math.IsInf(g, 0)) && g != w {
			t.Errorf("%s: element %d is %v, want %v", name, i, g, w)
			return math.Inf(1)
		}
		if math.IsNaN(w) || math.IsInf(w, 0) {
			continue
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	if den == 0 {
		return num
	}
	return num / den
}

// extraCases holds the cases of op families registered from their own test
// files (image_ops_test.go) by init functions.
var extraCases = map[OpKind][]opCase{}

// TestOpsAgainstReference runs every op of the list on the CPU device (one
// and two threads) and on the Reference device and compares.
func TestOpsAgainstReference(t *testing.T) {
	cases := allCases()
	for k, cs := range extraCases {
		cases[k] = append(cases[k], cs...)
	}
	for _, k := range Ops() {
		if len(cases[k]) == 0 {
			t.Errorf("op %v has no test case", k)
		}
	}
	toRef := func(x *Tensor) *Tensor {
		y, err := x.ToDevice(Reference)
		if err != nil {
			t.Fatal(err)
		}
		return y
	}
	// Every instruction-set level: the SIMD kernels and the GEMM's panel
	// width (which the convolutions' im2col writes) differ between them.
	for _, level := range isa.Levels() {
		prevISA, _ := isa.Set(level)
		for _, threads := range []int{1, 2} {
			checkOpsOnce(t, cases, toRef, level, threads)
		}
		isa.Set(prevISA)
	}
}

// checkOpsOnce runs every case on the CPU at one level and thread count
// and compares it with the reference device.
func checkOpsOnce(t *testing.T, cases map[OpKind][]opCase, toRef func(*Tensor) *Tensor, level string, threads int) {
	t.Helper()
	prev := parallel.SetThreads(threads)
	defer parallel.SetThreads(prev)
	for _, k := range Ops() {
		for _, c := range cases[k] {
			got := c.run(NewRNG(7), func(x *Tensor) *Tensor { return x })
			ref := c.run(NewRNG(7), toRef)
			want, err := ref.ToHost()
			if err != nil {
				t.Fatal(err)
			}
			if !SameShape(got, want) {
				t.Errorf("%s: shape %v, reference %v", c.name, got.shape, want.shape)
				continue
			}
			if e := nmse(t, c.name, got.data, want.data); e > 1e-10 {
				t.Errorf("%s (%s, threads=%d): normalised MSE %.3g against the reference", c.name, level, threads, e)
			}
		}
	}
}

func TestShapeErrorsPanicWithMessage(t *testing.T) {
	cases := map[string]func(){
		"Add":     func() { Add(nil, Zeros(2, 3), Zeros(3, 2)) },
		"MatMul":  func() { MatMul(nil, Zeros(2, 3), Zeros(2, 3), false, false) },
		"Reshape": func() { Zeros(2, 3).Reshape(4, 2) },
		"Slice":   func() { Slice(nil, Zeros(2, 3), 1, 2, 5) },
		"Gather":  func() { Gather(nil, Zeros(2, 3), []int{2}) },
		"Dest":    func() { Exp(Zeros(3), Zeros(2)) },
	}
	for name, f := range cases {
		func() {
			defer func() {
				r := recover()
				if r == nil {
					t.Errorf("%s: no panic on a shape error", name)
				} else if s, ok := r.(string); !ok || len(s) < 10 {
					t.Errorf("%s: unhelpful panic %v", name, r)
				}
			}()
			f()
		}()
	}
}

func TestReshapeIsAView(t *testing.T) {
	a := RandN(NewRNG(1), 2, 6)
	b := a.Reshape(3, -1)
	if !slices.Equal(b.Shape(), []int{3, 4}) {
		t.Fatalf("inferred shape %v", b.Shape())
	}
	b.Data()[5] = 42
	if a.Data()[5] != 42 {
		t.Fatal("Reshape copied the storage")
	}
}

func TestPoolReusesStorage(t *testing.T) {
	p := NewPool(CPU)
	a := p.Get(false, 4, 8)
	a.Data()[0] = 3
	p.Release()
	b := p.Get(true, 8, 4)
	if &a.Data()[0] != &b.Data()[0] {
		t.Fatal("pool did not reuse the released tensor")
	}
	if b.Data()[0] != 0 {
		t.Fatal("Get(zero=true) returned dirty storage")
	}
	allocs := testing.AllocsPerRun(100, func() {
		p.Get(false, 32, 32)
		p.Release()
	})
	if allocs > 0 {
		t.Fatalf("warm pool allocates %v times per Get/Release", allocs)
	}
}
