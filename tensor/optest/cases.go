// Package optest is the tensor op list's backend test table, in the spirit of ggml's
// test-backend-ops: one case table of every op on awkward shapes, and a runner that compares any
// tensor.Device with tensor.Reference. tensor's tests run it on the CPU device at every
// instruction-set level; cuda's on the host shim and, where there is one, on a GPU.
package optest

import (
	"fmt"
	"math"
	"slices"

	"holdgo/rng"
	"holdgo/tensor"
)

// opCase builds operands with rng and runs one op through the public API on
// whatever device the operands live on (toDev moves a host tensor there).
type opCase struct {
	name string
	run  func(rng *tensor.RNG, toDev func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor
}

func positive(t *tensor.Tensor) *tensor.Tensor {
	for i, v := range t.Data() {
		t.Data()[i] = float32(math.Abs(float64(v))) + 0.1
	}
	return t
}

// shapes awkward for the kernels: size 0 and 1, odd sizes, above the grain.
var testShapes = [][]int{{0}, {1}, {3}, {17}, {2, 3}, {1, 5, 1}, {4, 1, 7}, {3, 130, 129}}

func unaryCase(name string, f func(out, a *tensor.Tensor) *tensor.Tensor, pos bool) []opCase {
	var cs []opCase
	for _, sh := range testShapes {
		cs = append(cs, opCase{fmt.Sprintf("%s%v", name, sh), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			a := tensor.RandN(r, sh...)
			if pos {
				positive(a)
			}
			return f(nil, d(a))
		}})
	}
	return cs
}

// scaledCase is one unary case on normal inputs times scale (large arguments).
func scaledCase(name string, f func(out, a *tensor.Tensor) *tensor.Tensor, scale float32) opCase {
	return opCase{name, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		a := tensor.RandN(r, 37, 29)
		for i := range a.Data() {
			a.Data()[i] *= scale
		}
		return f(nil, d(a))
	}}
}

func binaryCases(name string, f func(out, a, b *tensor.Tensor) *tensor.Tensor) []opCase {
	pairs := [][2][]int{{{0}, {0}}, {{5}, {5}}, {{3, 4}, {4}}, {{3, 4}, {3, 1}}, {{1, 4}, {3, 1}},
		{{2, 3, 5}, {1, 3, 1}}, {{}, {2, 2}}, {{40, 300}, {300}}, {{200, 300}, {200, 300}}}
	var cs []opCase
	for _, p := range pairs {
		cs = append(cs, opCase{fmt.Sprintf("%s%v%v", name, p[0], p[1]), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			a, b := tensor.RandN(r, p[0]...), positive(tensor.RandN(r, p[1]...))
			if name == "Eq" { // make some elements equal
				b = tensor.Copy(nil, tensor.Slice(nil, a.Reshape(append([]int{1}, p[0]...)...), 0, 0, 1).Reshape(p[0]...))
				if len(p[0]) == len(p[1]) && slices.Equal(p[0], p[1]) && b.Len() > 1 {
					b.Data()[0] += 1
				} else {
					b = tensor.RandN(r, p[1]...)
				}
			}
			return f(nil, d(a), d(b))
		}})
	}
	return cs
}

func baseCases() map[tensor.OpKind][]opCase {
	mm := func(a, b []int, ta, tb bool, beta float32) opCase {
		return opCase{fmt.Sprintf("MatMul%v%v/%v%v/%v", a, b, ta, tb, beta), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			x, y := d(tensor.RandN(r, a...)), d(tensor.RandN(r, b...))
			if beta == 0 {
				return tensor.MatMul(nil, x, y, ta, tb)
			}
			shape, _ := tensor.MatMulShape(a, b, ta, tb)
			return tensor.MatMulAcc(d(tensor.RandN(r, shape...)), x, y, ta, tb, beta)
		}}
	}
	reduceCases := func(name string, f func(out, a *tensor.Tensor, axes ...int) *tensor.Tensor) []opCase {
		type rc struct {
			shape []int
			axes  []int
		}
		var cs []opCase
		for _, c := range []rc{{[]int{7}, nil}, {[]int{3, 4}, []int{0}}, {[]int{3, 4}, []int{-1}},
			{[]int{2, 3, 5}, []int{0, 2}}, {[]int{2, 3, 5}, []int{1}}, {[]int{512, 130}, []int{0}}, {[]int{0, 3}, []int{1}}} {
			cs = append(cs, opCase{fmt.Sprintf("%s%v%v", name, c.shape, c.axes), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				return f(nil, d(tensor.RandN(r, c.shape...)), c.axes...)
			}})
		}
		return cs
	}
	grad := func(name string, f func(out, a, b *tensor.Tensor) *tensor.Tensor) []opCase {
		return []opCase{{name, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			x := tensor.RandN(r, 33, 65)
			if name != "SiLUGrad" {
				x = tensor.Tanh(nil, x)
			}
			return f(nil, d(x), d(tensor.RandN(r, 33, 65)))
		}}}
	}
	m := map[tensor.OpKind][]opCase{
		tensor.OpFill: {{"Fill", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			return tensor.Fill(d(tensor.Zeros(3, 5)), 2.5)
		}}, {"Fill0", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			return tensor.Fill(d(tensor.RandN(r, 7, 13)), 0)
		}}, {"Fill[1]", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			return tensor.Fill(d(tensor.RandN(r, 1)), -3)
		}}, {"Fill[100003]", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			return tensor.Fill(d(tensor.RandN(r, 100003)), -1.25)
		}}},
		tensor.OpCopy: {{"Copy", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			return tensor.Copy(d(tensor.Zeros(6, 5)), d(tensor.RandN(r, 30)))
		}}},
		tensor.OpSin: append(unaryCase("Sin", tensor.Sin, false), scaledCase("Sin×100", tensor.Sin, 100)),
		tensor.OpAddScalar: unaryCase("AddScalar", func(o, a *tensor.Tensor) *tensor.Tensor {
			return tensor.AddScalar(o, a, -1.25)
		}, false),
		tensor.OpMulScalar: unaryCase("MulScalar", func(o, a *tensor.Tensor) *tensor.Tensor {
			return tensor.MulScalar(o, a, 3.5)
		}, false),
		tensor.OpSiLUGrad:    grad("SiLUGrad", tensor.SiLUGrad),
		tensor.OpTanhGrad:    grad("TanhGrad", tensor.TanhGrad),
		tensor.OpSigmoidGrad: grad("SigmoidGrad", tensor.SigmoidGrad),
		tensor.OpAdd:         binaryCases("Add", tensor.Add),
		tensor.OpSub:         binaryCases("Sub", tensor.Sub),
		tensor.OpMul:         binaryCases("Mul", tensor.Mul),
		tensor.OpDiv:         binaryCases("Div", tensor.Div),
		tensor.OpEq:          binaryCases("Eq", tensor.Eq),
		tensor.OpMatMul: {
			mm([]int{3, 4}, []int{4, 5}, false, false, 0), mm([]int{4, 3}, []int{4, 5}, true, false, 0),
			mm([]int{3, 4}, []int{5, 4}, false, true, 0), mm([]int{4, 3}, []int{5, 4}, true, true, 0),
			mm([]int{2, 3, 17, 9}, []int{2, 3, 9, 1}, false, false, 0), mm([]int{5, 1, 7}, []int{7, 3}, false, false, 0),
			mm([]int{33, 65}, []int{65, 31}, false, false, 1), mm([]int{65, 33}, []int{31, 65}, true, true, 0.5),
			mm([]int{1, 0}, []int{0, 3}, false, false, 0), mm([]int{130, 129}, []int{129, 67}, false, false, 0),
		},
		tensor.OpSum: reduceCases("Sum", tensor.Sum),
		tensor.OpMax: reduceCases("Max", tensor.Max),
		tensor.OpPermute: {
			{"Permute2", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				return tensor.Transpose(nil, d(tensor.RandN(r, 130, 129)))
			}},
			{"Permute3", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				return tensor.Permute(nil, d(tensor.RandN(r, 2, 3, 4)), 2, 0, 1)
			}},
			{"Permute4", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				return tensor.Permute(nil, d(tensor.RandN(r, 2, 1, 3, 5)), 3, 1, 0, 2)
			}},
		},
		tensor.OpConcat: {
			{"Concat0", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				return tensor.Concat(nil, 0, d(tensor.RandN(r, 2, 3)), d(tensor.RandN(r, 0, 3)), d(tensor.RandN(r, 4, 3)))
			}},
			{"Concat1", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				return tensor.Concat(nil, -1, d(tensor.RandN(r, 5, 6)), d(tensor.RandN(r, 5, 1)))
			}},
		},
		tensor.OpSlice: {
			{"Slice", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				return tensor.Slice(nil, d(tensor.RandN(r, 4, 7, 3)), 1, 2, 6)
			}},
			{"Split", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				return tensor.Split(d(tensor.RandN(r, 5, 9)), 1, 6, 3)[1]
			}},
		},
		tensor.OpSliceAdd: {{"SliceAdd", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			return tensor.SliceAdd(d(tensor.RandN(r, 4, 7, 3)), d(tensor.RandN(r, 4, 2, 3)), 1, 5)
		}}},
		tensor.OpGather: {{"Gather", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			return tensor.Gather(nil, d(tensor.RandN(r, 6, 2, 3)), []int{5, 0, 0, 3})
		}}},
		tensor.OpScatterAdd: {{"ScatterAdd", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			return tensor.ScatterAdd(d(tensor.RandN(r, 6, 2, 3)), d(tensor.RandN(r, 4, 2, 3)), []int{5, 0, 0, 3})
		}}},
	}
	// Every other element-wise op of the list gets the cases of its class, from the op table.
	for _, k := range tensor.Ops() {
		if len(m[k]) > 0 {
			continue
		}
		switch k.Class() {
		case tensor.ClassUnary:
			m[k] = unaryCase(k.String(), func(o, a *tensor.Tensor) *tensor.Tensor { return tensor.Apply(k, o, 0, a) }, k.Positive())
		case tensor.ClassPair:
			m[k] = grad(k.String(), func(o, a, b *tensor.Tensor) *tensor.Tensor { return tensor.Apply(k, o, 0, a, b) })
		case tensor.ClassBinary:
			m[k] = binaryCases(k.String(), func(o, a, b *tensor.Tensor) *tensor.Tensor { return tensor.Apply(k, o, 0, a, b) })
		}
	}
	extraCases(m)
	return m
}

// extraCases are the awkward operands a device's kernels get wrong most easily, beyond the shapes
// above: a destination that aliases an operand, broadcasting and permuting over seven axes, a reduction
// over a long vector and over inner axes, NaN through Max, the batched operand on the left of a MatMul
// with a shared right one, and an empty index list.
func extraCases(m map[tensor.OpKind][]opCase) {
	add := func(k tensor.OpKind, name string, run func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor) {
		m[k] = append(m[k], opCase{name, run})
	}
	add(tensor.OpAdd, "Add in place", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		a := d(tensor.RandN(r, 33))
		return tensor.Add(a, a, d(tensor.RandN(r, 33)))
	})
	add(tensor.OpExp, "Exp in place", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		a := d(tensor.RandN(r, 4099))
		return tensor.Exp(a, a)
	})
	for _, p := range [][2][]int{{{2, 3, 4, 5, 6, 7, 2}, {3, 1, 5, 1, 7, 1}}, {{6, 1, 1, 9}, {1, 5, 7, 1}}, {{1000, 1}, {1, 17}}, {{0, 3}, {3}}} {
		add(tensor.OpMul, fmt.Sprintf("Mul%v%v", p[0], p[1]), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			return tensor.Mul(nil, d(tensor.RandN(r, p[0]...)), d(tensor.RandN(r, p[1]...)))
		})
	}
	add(tensor.OpPermute, "Permute7", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		return tensor.Permute(nil, d(tensor.RandN(r, 2, 3, 2, 3, 2, 3, 2)), 6, 4, 2, 0, 1, 3, 5)
	})
	add(tensor.OpSum, "Sum[4099]", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		return tensor.Sum(nil, d(tensor.RandN(r, 4099)))
	})
	add(tensor.OpSum, "Sum[2 3 4 5][1 3]", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		return tensor.Sum(nil, d(tensor.RandN(r, 2, 3, 4, 5)), 1, 3)
	})
	add(tensor.OpMax, "Max NaN", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		x := tensor.RandN(r, 4, 300)
		x.Data()[310] = float32(math.NaN())
		return tensor.Max(nil, d(x), 1)
	})
	add(tensor.OpMatMul, "MatMul shared left", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		return tensor.MatMul(nil, d(tensor.RandN(r, 5, 17)), d(tensor.RandN(r, 4, 5, 9)), true, false)
	})
	add(tensor.OpGather, "Gather empty", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		return tensor.Gather(nil, d(tensor.RandN(r, 5, 3)), nil)
	})
}

// imageCases are the image ops (conv.go, norm.go, fir.go): awkward sizes (1, odd, non-multiples of
// the GEMM tiles), strides, padding, bias or none, and the accumulate (Beta) forms of the gradients.
func imageCases(cases map[tensor.OpKind][]opCase) {
	type conv struct{ n, c, h, w, o, k, stride, pad int }
	convs := []conv{
		{1, 1, 1, 1, 1, 1, 1, 0}, {2, 3, 5, 7, 4, 3, 1, 1}, {3, 5, 8, 8, 6, 3, 2, 1}, {2, 4, 9, 9, 3, 3, 2, 0},
		{2, 17, 6, 5, 33, 1, 1, 0}, {1, 2, 3, 3, 2, 3, 1, 2}, {2, 9, 16, 16, 32, 3, 1, 1}, {1, 3, 7, 6, 5, 1, 2, 0},
		// 3×3 stride 1 pad 1 (Winograd when forced, see tensor's TestWinogradAgainstReference): tiles of
		// 2 and 4 overhanging the edge by 1–3, N = 1 and N > 1, channels not multiples of 16.
		// {3, 5, 30, 33, 6} makes several chunks of tiles (parallel, a ragged last panel).
		{1, 19, 11, 13, 21, 3, 1, 1}, {3, 17, 6, 9, 18, 3, 1, 1}, {3, 5, 30, 33, 6, 3, 1, 1},
		// 1×1 on images of ≥ 49 pixels (the CPU device's per-image GEMMs, tensor/cpu_conv.go's
		// pointwise), with more images than its eight partial weight gradients.
		{3, 13, 9, 8, 11, 1, 1, 0}, {10, 6, 7, 7, 5, 1, 1, 0},
	}
	for _, cv := range convs {
		name := fmt.Sprintf("%+v", cv)
		shapes := func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) (x, w, dy *tensor.Tensor) {
			x, w = d(tensor.RandN(r, cv.n, cv.c, cv.h, cv.w)), d(tensor.RandN(r, cv.o, cv.c, cv.k, cv.k))
			oh, ow := tensor.ConvOutSize(cv.h, cv.k, cv.stride, cv.pad), tensor.ConvOutSize(cv.w, cv.k, cv.stride, cv.pad)
			return x, w, d(tensor.RandN(r, cv.n, cv.o, oh, ow))
		}
		cases[tensor.OpConv2d] = append(cases[tensor.OpConv2d],
			opCase{"Conv2d" + name, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				x, w, _ := shapes(r, d)
				return tensor.Conv2d(nil, x, w, nil, cv.stride, cv.pad)
			}},
			opCase{"Conv2dBias" + name, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				x, w, _ := shapes(r, d)
				return tensor.Conv2d(nil, x, w, d(tensor.RandN(r, cv.o)), cv.stride, cv.pad)
			}},
			opCase{"Conv2dSampleBias" + name, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				x, w, _ := shapes(r, d)
				return tensor.Conv2d(nil, x, w, d(tensor.RandN(r, cv.n, cv.o)), cv.stride, cv.pad)
			}},
			opCase{"Conv2dTwoBias" + name, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				x, w, _ := shapes(r, d)
				return tensor.Conv2dTwoBias(nil, x, w, d(tensor.RandN(r, cv.o)), d(tensor.RandN(r, cv.n, cv.o)), cv.stride, cv.pad)
			}})
		cases[tensor.OpConv2dResidual] = append(cases[tensor.OpConv2dResidual],
			opCase{"Conv2dResidual" + name, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				x, w, dy := shapes(r, d)
				return tensor.Conv2dResidual(nil, x, w, d(tensor.RandN(r, cv.o)), dy, 0.70710677, cv.stride, cv.pad)
			}})
		for _, beta := range []float32{0, 1, 0.5} {
			cases[tensor.OpConv2dGradInput] = append(cases[tensor.OpConv2dGradInput],
				opCase{fmt.Sprintf("Conv2dGradInput%s/%v", name, beta), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
					x, w, dy := shapes(r, d)
					return tensor.Conv2dGradInput(x, dy, w, cv.stride, cv.pad, beta)
				}})
			cases[tensor.OpConv2dGradWeight] = append(cases[tensor.OpConv2dGradWeight],
				opCase{fmt.Sprintf("Conv2dGradWeight%s/%v", name, beta), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
					x, w, dy := shapes(r, d)
					return tensor.Conv2dGradWeight(w, x, dy, cv.stride, cv.pad, beta)
				}},
				// with the per-channel bias gradient added into db from the same pass over dy
				opCase{fmt.Sprintf("Conv2dGradWeightBias%s/%v", name, beta), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
					x, w, dy := shapes(r, d)
					db := d(tensor.RandN(r, cv.o))
					return flat(tensor.Conv2dGradWeightBias(w, db, x, dy, cv.stride, cv.pad, beta), db)
				}})
		}
	}
	// One shape the CPU device's rule sends through Winograd F(4,3) unforced (both channel counts ≥ 128,
	// ≥ 1024 output pixels; tensor/cpu_winograd.go), with channels and sizes off the tiles: forward with a
	// per-sample bias and the accumulating input and weight gradients (costly on the Reference device:
	// three cases).
	const wn, wc, wh, ww, wo = 1, 129, 25, 42, 131
	cases[tensor.OpConv2d] = append(cases[tensor.OpConv2d], opCase{"Conv2dSampleBiasWinograd", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		x, w := d(tensor.RandN(r, wn, wc, wh, ww)), d(tensor.RandN(r, wo, wc, 3, 3))
		return tensor.Conv2d(nil, x, w, d(tensor.RandN(r, wn, wo)), 1, 1)
	}})
	cases[tensor.OpConv2dGradInput] = append(cases[tensor.OpConv2dGradInput], opCase{"Conv2dGradInputWinograd/0.5", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		dx, dy, w := d(tensor.RandN(r, wn, wc, wh, ww)), d(tensor.RandN(r, wn, wo, wh, ww)), d(tensor.RandN(r, wo, wc, 3, 3))
		return tensor.Conv2dGradInput(dx, dy, w, 1, 1, 0.5)
	}})
	cases[tensor.OpConv2dGradWeight] = append(cases[tensor.OpConv2dGradWeight], opCase{"Conv2dGradWeightWinograd/0.5", func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
		x, dy, dw := d(tensor.RandN(r, wn, wc, wh, ww)), d(tensor.RandN(r, wn, wo, wh, ww)), d(tensor.RandN(r, wo, wc, 3, 3))
		return tensor.Conv2dGradWeight(dw, x, dy, 1, 1, 0.5)
	}})
	type gn struct {
		shape  []int
		groups int
	}
	// Odd channel counts, batch 1, 1×1 to 33×33 positions; on CUDA the groups of {1, 15, 33, 33}/5
	// fit shared memory with their dy, those of {2, 6, 33, 33}/1 without it, those of
	// {1, 21, 33, 33}/1 not at all (cuda/groupnorm.go).
	for _, c := range []gn{{[]int{1, 1, 1}, 1}, {[]int{2, 8, 5, 3}, 2}, {[]int{3, 12, 7}, 3}, {[]int{2, 64, 9, 9}, 16},
		{[]int{1, 4}, 4}, {[]int{0, 4, 2}, 2}, {[]int{3, 9, 1, 1}, 3}, {[]int{1, 15, 33, 33}, 5}, {[]int{2, 6, 33, 33}, 1},
		{[]int{1, 21, 33, 33}, 1}} {
		name := fmt.Sprintf("%v/%d", c.shape, c.groups)
		ch := c.shape[1]
		inputs := func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) (x, gamma, beta, dy *tensor.Tensor) {
			x = tensor.RandN(r, c.shape...)
			tensor.MulScalar(x, tensor.AddScalar(x, x, 3), 2) // mean and scale away from 0 and 1
			return d(x), d(tensor.RandN(r, ch)), d(tensor.RandN(r, ch)), d(tensor.RandN(r, c.shape...))
		}
		cases[tensor.OpGroupNorm] = append(cases[tensor.OpGroupNorm], opCase{"GroupNorm" + name, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			x, g, b, _ := inputs(r, d)
			return tensor.GroupNorm(nil, x, g, b, c.groups, 1e-6)
		}})
		cases[tensor.OpGroupNormSiLU] = append(cases[tensor.OpGroupNormSiLU], opCase{"GroupNormSiLU" + name, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			x, g, b, _ := inputs(r, d)
			return tensor.GroupNormSiLU(nil, x, g, b, c.groups, 1e-6)
		}})
		// The backward passes: dx written (β = 0) or accumulated (β = 0.5) and dγ, dβ added into
		// nonzero gradients; the result is dx, dγ and dβ end to end.
		for _, beta := range []float32{0, 0.5} {
			grads := func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) (dx, dgamma, dbeta *tensor.Tensor) {
				dx = tensor.RandN(r, c.shape...)
				if beta == 0 { // never read: NaN would show it
					tensor.Fill(dx, float32(math.NaN()))
				}
				return d(dx), d(tensor.RandN(r, ch)), d(tensor.RandN(r, ch))
			}
			cases[tensor.OpGroupNormBackward] = append(cases[tensor.OpGroupNormBackward], opCase{fmt.Sprintf("GroupNormBackward%s/β=%g", name, beta), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				x, g, _, dy := inputs(r, d)
				dx, dg, db := grads(r, d)
				return flat(tensor.GroupNormBackward(dx, x, g, dy, dg, db, c.groups, 1e-6, beta), dg, db)
			}})
			cases[tensor.OpGroupNormSiLUBackward] = append(cases[tensor.OpGroupNormSiLUBackward], opCase{fmt.Sprintf("GroupNormSiLUBackward%s/β=%g", name, beta), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				x, g, b, dy := inputs(r, d)
				dx, dg, db := grads(r, d)
				return flat(tensor.GroupNormSiLUBackward(dx, x, g, b, dy, dg, db, c.groups, 1e-6, beta), dg, db)
			}})
		}
		// GroupNormSiLU and Dropout fused: the mask from element 0 or from an offset (a data-parallel
		// rank's samples), both passes.
		st := rng.Stream{Key: 0x5eed, Step: 3, ID: rng.DropoutStream(1)}
		for _, dr := range []struct {
			p     float64
			first uint64
		}{{0.1, 37}, {0.5, 0}} {
			dname := fmt.Sprintf("%s/p=%g/first=%d", name, dr.p, dr.first)
			cases[tensor.OpGroupNormSiLUDropout] = append(cases[tensor.OpGroupNormSiLUDropout], opCase{"GroupNormSiLUDropout" + dname, func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				x, g, b, _ := inputs(r, d)
				return tensor.GroupNormSiLUDropout(nil, x, g, b, c.groups, 1e-6, st, dr.p, dr.first)
			}})
			for _, beta := range []float32{0, 0.5} {
				cases[tensor.OpGroupNormSiLUDropoutBackward] = append(cases[tensor.OpGroupNormSiLUDropoutBackward], opCase{fmt.Sprintf("GroupNormSiLUDropoutBackward%s/β=%g", dname, beta), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
					x, g, b, dy := inputs(r, d)
					dx := tensor.RandN(r, c.shape...)
					if beta == 0 { // never read: NaN would show it
						tensor.Fill(dx, float32(math.NaN()))
					}
					dx, dg, db := d(dx), d(tensor.RandN(r, ch)), d(tensor.RandN(r, ch))
					return flat(tensor.GroupNormSiLUDropoutBackward(dx, x, g, b, dy, dg, db, c.groups, 1e-6, beta, st, dr.p, dr.first), dg, db)
				}})
			}
		}
	}
	for _, sh := range [][]int{{1}, {3}, {4, 17}, {2, 64, 64}, {5, 0}, {2, 3, 300}} {
		cases[tensor.OpSoftmax] = append(cases[tensor.OpSoftmax], opCase{fmt.Sprintf("Softmax%v", sh), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			x := tensor.RandN(r, sh...)
			return tensor.Softmax(nil, d(tensor.MulScalar(x, x, 5)))
		}})
		cases[tensor.OpSoftmaxGrad] = append(cases[tensor.OpSoftmaxGrad], opCase{fmt.Sprintf("SoftmaxGrad%v", sh), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
			y := tensor.Softmax(nil, tensor.RandN(r, sh...))
			return tensor.SoftmaxGrad(nil, d(y), d(tensor.RandN(r, sh...)))
		}})
		// attention's scaled softmax (1/√C folded into the pass), a negative scale too
		for _, scale := range []float32{0.125, -3} {
			cases[tensor.OpSoftmax] = append(cases[tensor.OpSoftmax], opCase{fmt.Sprintf("ScaledSoftmax%v/%v", sh, scale), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				x := tensor.RandN(r, sh...)
				return tensor.ScaledSoftmax(nil, d(tensor.MulScalar(x, x, 5)), scale)
			}})
			cases[tensor.OpSoftmaxGrad] = append(cases[tensor.OpSoftmaxGrad], opCase{fmt.Sprintf("ScaledSoftmaxGrad%v/%v", sh, scale), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				y := tensor.ScaledSoftmax(nil, tensor.RandN(r, sh...), scale)
				return tensor.ScaledSoftmaxGrad(nil, d(y), d(tensor.RandN(r, sh...)), scale)
			}})
		}
	}
	// Beyond NCSN++'s geometries and their adjoints, every padding of the CPU device's SIMD passes (up 1,
	// down 1 or 2; up 2, down 1, up to the widest output it takes), and up 3 (its tap-table path).
	firs := []tensor.FIRGeom{tensor.FIRUpsample, tensor.FIRDownsample, tensor.FIRBlur, tensor.FIRUpsample.Adjoint(5), tensor.FIRDownsample.Adjoint(8), tensor.FIRBlur.Adjoint(6),
		{Up: 1, Down: 1, Pad0: 0, Pad1: 3, Gain: 1}, {Up: 1, Down: 2, Pad0: 0, Pad1: 3, Gain: 1}, {Up: 1, Down: 2, Pad0: 3, Pad1: 0, Gain: 2},
		{Up: 2, Down: 1, Pad0: 1, Pad1: 2, Gain: 4}, {Up: 2, Down: 1, Pad0: 3, Pad1: 0, Gain: 1}, {Up: 2, Down: 1, Pad0: 0, Pad1: 9, Gain: 1},
		{Up: 2, Down: 1, Pad0: 3, Pad1: 9, Gain: 1}, {Up: 3, Down: 1, Pad0: 1, Pad1: 1, Gain: 1}}
	for _, g := range firs {
		for _, sh := range [][]int{{1, 1, 2, 2}, {2, 3, 8, 6}, {1, 2, 5, 5}, {3, 4, 16, 16}} {
			if !g.Valid(sh[2]) || !g.Valid(sh[3]) {
				continue
			}
			cases[tensor.OpUpFIRDn2d] = append(cases[tensor.OpUpFIRDn2d], opCase{fmt.Sprintf("UpFIRDn2d%+v%v", g, sh), func(r *tensor.RNG, d func(*tensor.Tensor) *tensor.Tensor) *tensor.Tensor {
				return tensor.UpFIRDn2d(nil, d(tensor.RandN(r, sh...)), g)
			}})
		}
	}
}
