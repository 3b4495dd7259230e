//go:build ignore

// asm_gen writes the SIMD kernels of package vec: kernel_amd64.s (Go
// assembly, one function per kernel and instruction set), kernel_amd64.go
// (their declarations and the per-level tables) and coef.go (the float
// constants, shared with the plain-Go kernels in generic.go). Run it through
// go generate (the directive is in vec.go):
//
//	go generate ./internal/vec
//
// Element-wise kernels share one loop: unrolled full vectors, then single
// vectors, then one masked vector for the tail (AVX-512: a K mask; AVX2:
// VMASKMOVPS with a mask in Y15), so every element of a call goes through the
// same instructions. The per-vector bodies below are written once for both
// instruction sets; the few instructions that differ (rounding, blends,
// compares, 2^n scaling) are gen methods. Constants live in vconst<> (16
// copies each); a kernel keeps as many of them in registers as are left after
// its temporaries, and reads the rest from memory.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"log"
	"math"
	"os"
	"strings"
)

// constant is a 32-bit lane value in vconst<>; goName != "" also writes it
// to coef.go as a float32 constant.
type constant struct {
	name    string
	bits    uint32
	goName  string
	comment string
}

func f32(x float64) uint32 { return math.Float32bits(float32(x)) }

var constants = []constant{
	{"one", f32(1), "", ""},
	{"minusTwo", f32(-2), "", ""},
	{"absMask", 0x7fffffff, "", ""},
	{"signMask", 0x80000000, "", ""},
	{"bias", 127, "", ""},
	{"minExp", uint32(0xffffff82), "", ""}, // int32 -126
	// exp: x = n·ln2 + r, |r| ≤ ln2/2, e^r = 1 + r + r²·P(r) (Cephes expf,
	// < 1 ulp), e^x = e^r·2^n.
	{"expLo", f32(-115), "expLo", "exp's argument is clamped to [expLo, expHi]: x·e^x underflows below, e^x overflows above"},
	{"expHi", f32(89), "expHi", ""},
	{"log2e", f32(1.44269504088896341), "log2e", ""},
	{"ln2Hi", f32(0.693359375), "ln2Hi", "ln 2 = ln2Hi + ln2Lo; n·ln2Hi is exact for |n| < 2^15"},
	{"ln2Lo", f32(-2.12194440e-4), "ln2Lo", ""},
	{"expP0", f32(1.9875691500e-4), "expP0", "e^r ≈ 1 + r + r²·(((((P0·r + P1)·r + P2)·r + P3)·r + P4)·r + P5)"},
	{"expP1", f32(1.3981999507e-3), "expP1", ""},
	{"expP2", f32(8.3334519073e-3), "expP2", ""},
	{"expP3", f32(4.1665795894e-2), "expP3", ""},
	{"expP4", f32(1.6666665459e-1), "expP4", ""},
	{"expP5", f32(5.0000001201e-1), "expP5", ""},
	// tanh: |x| < tanhSmall: x + x³·P(x²) (Cephes tanhf); else
	// sign(x)·(1-e)/(1+e), e = e^{-2|x|}, where 1-e does not cancel.
	{"tanhSmall", f32(0.625), "tanhSmall", "below it tanh uses x + x³·P(x²)"},
	{"tanhP0", f32(-5.70498872745e-3), "tanhP0", "P(z) = (((P0·z + P1)·z + P2)·z + P3)·z + P4"},
	{"tanhP1", f32(2.06390887954e-2), "tanhP1", ""},
	{"tanhP2", f32(-5.37397155531e-2), "tanhP2", ""},
	{"tanhP3", f32(1.33314422036e-1), "tanhP3", ""},
	{"tanhP4", f32(-3.33332819422e-1), "tanhP4", ""},
	// silu'(x) = σ(x)·g(x), g(x) = 1 + x·σ(-x), is zero at x0; within
	// gradWin of it g = h·Q(h), h = (x - x0Hi) - x0Lo (fit_gen.go -w 0.5
	// -deg 6: 1.5e-8 relative), as 1 + x·σ(-x) cancels there.
	{"gradX0Hi", f32(-1.2784646), "gradX0Hi", "x0 = -1.2784645427610737 = gradX0Hi + gradX0Lo"},
	{"gradX0Lo", f32(1.29792825e-08), "gradX0Lo", ""},
	{"gradWin", f32(0.5), "gradWin", ""},
	{"gradLo", f32(-170), "gradLo", "SiLUGrad clamps x to [gradLo, gradHi]; below, dy·silu'(x) underflows for |dy| < 1e26"},
	{"gradHi", f32(115), "gradHi", ""},
	{"gradQ0", f32(1), "gradQ0", "Q(h) = Q0 + Q1·h + … + Q6·h⁶"},
	{"gradQ1", f32(-0.10890602), "gradQ1", ""},
	{"gradQ2", f32(-0.048883006), "gradQ2", ""},
	{"gradQ3", f32(-0.0047133425), "gradQ3", ""},
	{"gradQ4", f32(0.0030460462), "gradQ4", ""},
	{"gradQ5", f32(0.0010580135), "gradQ5", ""},
	{"gradQ6", f32(-2.794121e-05), "gradQ6", ""},
}

func constIndex(name string) int {
	for i, c := range constants {
		if c.name == name {
			return i
		}
	}
	log.Fatalf("no constant %q", name)
	return 0
}

type isa struct {
	suffix string // Go name suffix and level: "AVX512"
	level  string // isa package constant
	reg    string // "Z" or "Y"
	width  int    // float32 lanes
	nregs  int    // vector registers usable for temporaries and constants
}

var (
	avx512 = &isa{suffix: "AVX512", level: "isa.AVX512", reg: "Z", width: 16, nregs: 32}
	avx2   = &isa{suffix: "AVX2", level: "isa.AVX2", reg: "Y", width: 8, nregs: 15} // Y15: tail mask
	isas   = []*isa{avx512, avx2}
)

// elem is an element-wise kernel: per vector, load the slices in load into
// t[0], t[1], …, run body, store its results into the slices in store.
type elem struct {
	name    string
	slices  []string
	scalars []string // float32 arguments, broadcast into registers
	load    []string
	store   []string
	consts  []string // in order of preference for a register
	temps   int
	unroll  int
	body    func(g *gen, t []string) []string
}

var unaryArgs = []string{"dst", "x"}

var elems = []elem{
	{name: "exp", slices: unaryArgs, load: []string{"x"}, store: []string{"dst"}, temps: 7, unroll: 2,
		consts: append([]string{"expLo", "expHi"}, expConsts...),
		body: func(g *gen, t []string) []string {
			g.op("VMAXPS %s, %s, %s", t[0], g.creg("expLo", t[1]), t[1]) // NaN stays NaN
			g.op("VMINPS %s, %s, %s", t[1], g.creg("expHi", t[2]), t[1])
			g.expCore(t[1], t[2], t[4], t[3], t[5])
			g.scale(t[4], t[2], t[0], t[5], t[6])
			return t[:1]
		}},
	{name: "sigmoid", slices: unaryArgs, load: []string{"x"}, store: []string{"dst"}, temps: 7, unroll: 2,
		consts: append([]string{"expLo", "one", "signMask"}, expConsts...),
		body: func(g *gen, t []string) []string {
			g.negAbsClamp(t[0], t[1], "expLo")
			g.expCore(t[1], t[2], t[4], t[3], t[5])
			g.scale(t[4], t[2], t[4], t[5], t[6])              // e = e^-|x|
			g.op("VADDPS %s, %s, %s", g.c("one"), t[4], t[1])  // 1 + e
			g.blendSign(t[0], t[4], g.creg("one", t[3]), t[2]) // x < 0 ? e : 1
			g.op("VDIVPS %s, %s, %s", t[1], t[2], t[0])
			return t[:1]
		}},
	{name: "silu", slices: unaryArgs, load: []string{"x"}, store: []string{"dst"}, temps: 7, unroll: 2,
		consts: append([]string{"expLo", "one", "signMask", "minExp"}, expConsts...),
		body: func(g *gen, t []string) []string {
			g.negAbsClamp(t[0], t[1], "expLo") // xc = max(-|x|, expLo)
			g.expCore(t[1], t[2], t[4], t[3], t[5])
			g.scaleLoose(t[4], t[2], t[5], t[6])              // e = e^-|x|
			g.op("VADDPS %s, %s, %s", g.c("one"), t[5], t[5]) // d = 1 + e
			g.op("VMULPS %s, %s, %s", t[4], t[1], t[4])       // xc·e^r
			g.blendSign(t[0], t[4], t[0], t[4])               // x < 0 ? xc·e^r : x
			g.op("VDIVPS %s, %s, %s", t[5], t[4], t[4])
			g.op("VXORPS %s, %s, %s", t[6], t[6], t[6])
			g.blendSign(t[0], t[2], t[6], t[2]) // x < 0 ? n : 0
			g.scale(t[4], t[2], t[0], t[5], t[6])
			return t[:1]
		}},
	{name: "tanh", slices: unaryArgs, load: []string{"x"}, store: []string{"dst"}, temps: 8, unroll: 2,
		consts: append([]string{"expLo", "one", "absMask", "signMask", "minusTwo", "minExp", "tanhSmall",
			"tanhP0", "tanhP1", "tanhP2", "tanhP3", "tanhP4"}, expConsts...),
		body: func(g *gen, t []string) []string {
			g.op("VANDPS %s, %s, %s", g.c("absMask"), t[0], t[1]) // a = |x|
			g.op("VMULPS %s, %s, %s", g.c("minusTwo"), t[1], t[2])
			g.op("VMAXPS %s, %s, %s", t[2], g.creg("expLo", t[3]), t[2])
			g.expCore(t[2], t[3], t[4], t[5], t[6])
			g.scaleLoose(t[4], t[3], t[4], t[5])                       // e = e^-2a
			g.op("VSUBPS %s, %s, %s", t[4], g.creg("one", t[7]), t[5]) // 1 - e
			g.op("VADDPS %s, %s, %s", g.c("one"), t[4], t[4])          // 1 + e
			g.op("VDIVPS %s, %s, %s", t[4], t[5], t[5])
			g.op("VMULPS %s, %s, %s", t[0], t[0], t[2]) // z = x²
			g.poly(t[2], t[3], "tanhP0", "tanhP1", "tanhP2", "tanhP3", "tanhP4")
			g.op("VMULPS %s, %s, %s", t[2], t[3], t[3])
			g.op("VFMADD213PS %s, %s, %s", t[0], t[0], t[3]) // small: x + x·z·P(z)
			m := g.cmpLT(t[1], "tanhSmall", t[1])
			g.blendMask(m, t[3], t[5], t[5])
			g.op("VANDPS %s, %s, %s", g.c("signMask"), t[0], t[6])
			g.op("VORPS %s, %s, %s", t[6], t[5], t[0]) // sign(x): large is |tanh|, and tanh(-0) = -0
			return t[:1]
		}},
	{name: "siluGrad", slices: []string{"dst", "x", "dy"}, load: []string{"x", "dy"}, store: []string{"dst"},
		temps: 8, unroll: 1,
		consts: append([]string{"gradLo", "one", "signMask", "minExp", "gradHi", "absMask", "gradWin",
			"gradX0Hi", "gradX0Lo", "gradQ0", "gradQ1", "gradQ2", "gradQ3", "gradQ4", "gradQ5", "gradQ6"}, expConsts...),
		body: func(g *gen, t []string) []string {
			x, dy := t[0], t[1]
			g.negAbsClamp(x, t[2], "gradLo") // xc
			g.expCore(t[2], t[3], t[4], t[5], t[6])
			g.scaleLoose(t[4], t[3], t[5], t[6])                       // e = e^-|x|
			g.op("VADDPS %s, %s, %s", g.c("one"), t[5], t[6])          // 1 + e
			g.op("VDIVPS %s, %s, %s", t[6], g.creg("one", t[7]), t[6]) // r = 1/(1+e)
			g.op("VMULPS %s, %s, %s", t[6], t[5], t[5])                // e·r
			g.op("VMULPS %s, %s, %s", t[6], t[4], t[4])                // e^r·r
			g.blendSign(x, t[4], t[6], t[4])                           // σ(x), times 2^-n for x < 0
			g.blendSign(x, t[6], t[5], t[5])                           // σ(-x)
			g.op("VMAXPS %s, %s, %s", x, g.creg("gradLo", t[6]), t[6]) // NaN stays NaN
			g.op("VMINPS %s, %s, %s", t[6], g.creg("gradHi", t[7]), t[6])
			g.op("VFMADD213PS %s, %s, %s", g.c("one"), t[5], t[6]) // g = 1 + x·σ(-x)
			g.op("VSUBPS %s, %s, %s", g.c("gradX0Hi"), x, t[5])
			g.op("VSUBPS %s, %s, %s", g.c("gradX0Lo"), t[5], t[5]) // h
			g.poly(t[5], t[2], "gradQ6", "gradQ5", "gradQ4", "gradQ3", "gradQ2", "gradQ1", "gradQ0")
			g.op("VMULPS %s, %s, %s", t[5], t[2], t[2]) // h·Q(h)
			g.op("VANDPS %s, %s, %s", g.c("absMask"), t[5], t[5])
			m := g.cmpLT(t[5], "gradWin", t[5])
			g.blendMask(m, t[2], t[6], t[6])
			g.op("VMULPS %s, %s, %s", dy, t[4], t[4])
			g.op("VMULPS %s, %s, %s", t[6], t[4], t[4])
			g.op("VXORPS %s, %s, %s", t[5], t[5], t[5])
			g.blendSign(x, t[3], t[5], t[3]) // x < 0 ? n : 0
			g.scale(t[4], t[3], t[0], t[5], t[6])
			return t[:1]
		}},
	{name: "add", slices: []string{"dst", "a", "b"}, load: []string{"a", "b"}, store: []string{"dst"}, temps: 2, unroll: 4,
		body: func(g *gen, t []string) []string { g.op("VADDPS %s, %s, %s", t[1], t[0], t[0]); return t[:1] }},
	{name: "sub", slices: []string{"dst", "a", "b"}, load: []string{"a", "b"}, store: []string{"dst"}, temps: 2, unroll: 4,
		body: func(g *gen, t []string) []string { g.op("VSUBPS %s, %s, %s", t[1], t[0], t[0]); return t[:1] }},
	{name: "mul", slices: []string{"dst", "a", "b"}, load: []string{"a", "b"}, store: []string{"dst"}, temps: 2, unroll: 4,
		body: func(g *gen, t []string) []string { g.op("VMULPS %s, %s, %s", t[1], t[0], t[0]); return t[:1] }},
	{name: "scale", slices: []string{"dst", "a"}, scalars: []string{"s"}, load: []string{"a"}, store: []string{"dst"}, temps: 1, unroll: 4,
		body: func(g *gen, t []string) []string { g.op("VMULPS %s, %s, %s", g.c("s"), t[0], t[0]); return t[:1] }},
	{name: "addScalar", slices: []string{"dst", "a"}, scalars: []string{"s"}, load: []string{"a"}, store: []string{"dst"}, temps: 1, unroll: 4,
		body: func(g *gen, t []string) []string { g.op("VADDPS %s, %s, %s", g.c("s"), t[0], t[0]); return t[:1] }},
	{name: "addScaled", slices: []string{"dst", "a", "b"}, scalars: []string{"s"}, load: []string{"a", "b"}, store: []string{"dst"},
		temps: 2, unroll: 4,
		body: func(g *gen, t []string) []string {
			g.op("VMULPS %s, %s, %s", g.c("s"), t[1], t[1]) // not fused: a + float32(s·b)
			g.op("VADDPS %s, %s, %s", t[1], t[0], t[0])
			return t[:1]
		}},
	{name: "ema", slices: []string{"shadow", "params"}, scalars: []string{"k"}, load: []string{"shadow", "params"},
		store: []string{"shadow"}, temps: 2, unroll: 4,
		body: func(g *gen, t []string) []string {
			g.op("VSUBPS %s, %s, %s", t[1], t[0], t[1])
			g.op("VMULPS %s, %s, %s", g.c("k"), t[1], t[1])
			g.op("VSUBPS %s, %s, %s", t[1], t[0], t[0]) // s - k·(s - p)
			return t[:1]
		}},
	{name: "adam", slices: []string{"params", "grads", "m", "v"},
		scalars: []string{"b1", "c1", "b2", "c2", "step", "sqrtBC2", "eps"},
		load:    []string{"params", "grads", "m", "v"}, store: []string{"params", "m", "v"}, temps: 6, unroll: 2,
		body: func(g *gen, t []string) []string {
			p, gr, m, v := t[0], t[1], t[2], t[3]
			g.op("VMULPS %s, %s, %s", g.c("b1"), m, m)
			g.op("VMULPS %s, %s, %s", g.c("c1"), gr, t[4])
			g.op("VADDPS %s, %s, %s", t[4], m, m) // m = b1·m + (1-b1)·g
			g.op("VMULPS %s, %s, %s", g.c("b2"), v, v)
			g.op("VMULPS %s, %s, %s", g.c("c2"), gr, t[4])
			g.op("VMULPS %s, %s, %s", gr, t[4], t[4])
			g.op("VADDPS %s, %s, %s", t[4], v, v) // v = b2·v + (1-b2)·g·g
			g.op("VSQRTPS %s, %s", v, t[4])
			g.op("VDIVPS %s, %s, %s", g.c("sqrtBC2"), t[4], t[4])
			g.op("VADDPS %s, %s, %s", g.c("eps"), t[4], t[4]) // denom
			g.op("VMULPS %s, %s, %s", g.c("step"), m, t[5])
			g.op("VDIVPS %s, %s, %s", t[4], t[5], t[5])
			g.op("VSUBPS %s, %s, %s", t[5], p, p) // p -= step·m/denom
			return []string{p, m, v}
		}},
}

var expConsts = []string{"log2e", "ln2Hi", "ln2Lo", "one", "bias", "expP0", "expP1", "expP2", "expP3", "expP4", "expP5"}

// gen writes one kernel for one instruction set.
type gen struct {
	w      *bytes.Buffer
	isa    *isa
	consts map[string]string // name → register holding it
	tail   bool              // emitting the masked tail
}

func (g *gen) op(format string, args ...any) { fmt.Fprintf(g.w, "\t"+format+"\n", args...) }

func (g *gen) label(name string) { fmt.Fprintf(g.w, "%s:\n", name) }

// c is an operand for a constant or scalar: its register, or vconst<>.
func (g *gen) c(name string) string {
	if r, ok := g.consts[name]; ok {
		return r
	}
	return fmt.Sprintf("vconst<>+%d(SB)", 64*constIndex(name))
}

// creg is a register holding the constant: its own, or scratch loaded now.
func (g *gen) creg(name, scratch string) string {
	if r, ok := g.consts[name]; ok {
		return r
	}
	g.op("VBROADCASTSS %s, %s", g.c(name), scratch)
	return scratch
}

// negAbsClamp sets dst = max(-|x|, lo), NaN staying NaN.
func (g *gen) negAbsClamp(x, dst, lo string) {
	g.op("VORPS %s, %s, %s", g.c("signMask"), x, dst)
	g.op("VMAXPS %s, %s, %s", dst, g.mustReg(lo), dst)
}

// mustReg is the register holding a constant the kernel lists first.
func (g *gen) mustReg(name string) string {
	r, ok := g.consts[name]
	if !ok {
		log.Fatalf("%s must be in a register", name)
	}
	return r
}

// expCore: for x in [expLo, expHi] (or NaN), n = round(x·log2e) and
// y = e^r, r = x - n·ln2, so e^x = y·2^n. Clobbers r and z.
func (g *gen) expCore(x, n, y, r, z string) {
	g.op("VMULPS %s, %s, %s", g.c("log2e"), x, n)
	if g.isa == avx512 {
		g.op("VRNDSCALEPS $0, %s, %s", n, n)
	} else {
		g.op("VROUNDPS $0, %s, %s", n, n)
	}
	g.op("VMOVAPS %s, %s", x, r)
	g.op("VFNMADD231PS %s, %s, %s", g.c("ln2Hi"), n, r)
	g.op("VFNMADD231PS %s, %s, %s", g.c("ln2Lo"), n, r)
	g.poly(r, y, "expP0", "expP1", "expP2", "expP3", "expP4", "expP5")
	g.op("VMULPS %s, %s, %s", r, r, z)
	g.op("VFMADD213PS %s, %s, %s", r, z, y) // r + r²·P(r)
	g.op("VADDPS %s, %s, %s", g.c("one"), y, y)
}

// poly sets y = Horner(coefs…)(x), highest degree first.
func (g *gen) poly(x, y string, coefs ...string) {
	if r, ok := g.consts[coefs[0]]; ok {
		g.op("VMOVAPS %s, %s", r, y)
	} else {
		g.op("VBROADCASTSS %s, %s", g.c(coefs[0]), y)
	}
	for _, c := range coefs[1:] {
		g.op("VFMADD213PS %s, %s, %s", g.c(c), x, y)
	}
}

// scale sets dst = y·2^n for integral n in [-166, 128], rounding once.
func (g *gen) scale(y, n, dst, a, b string) {
	if g.isa == avx512 {
		g.op("VSCALEFPS %s, %s, %s", n, y, dst)
		return
	}
	// 2^n = 2^n1·2^n2 with both factors normal.
	g.op("VCVTPS2DQ %s, %s", n, a)
	g.op("VPSRAD $1, %s, %s", a, b)
	g.op("VPSUBD %s, %s, %s", b, a, a)
	g.op("VPADDD %s, %s, %s", g.c("bias"), b, b)
	g.op("VPSLLD $23, %s, %s", b, b)
	g.op("VPADDD %s, %s, %s", g.c("bias"), a, a)
	g.op("VPSLLD $23, %s, %s", a, a)
	g.op("VMULPS %s, %s, %s", b, y, dst)
	g.op("VMULPS %s, %s, %s", a, dst, dst)
}

// scaleLoose sets dst = y·2^max(n, -126): exact for n ≥ -126, and below
// that a number too small to matter next to 1.
func (g *gen) scaleLoose(y, n, dst, a string) {
	if g.isa == avx512 {
		g.op("VSCALEFPS %s, %s, %s", n, y, dst)
		return
	}
	g.op("VCVTPS2DQ %s, %s", n, a)
	g.op("VPMAXSD %s, %s, %s", g.c("minExp"), a, a)
	g.op("VPADDD %s, %s, %s", g.c("bias"), a, a)
	g.op("VPSLLD $23, %s, %s", a, a)
	g.op("VMULPS %s, %s, %s", a, y, dst)
}

// blendSign sets dst = sign bit of sel ? ifNeg : ifPos (ifPos a register).
func (g *gen) blendSign(sel, ifNeg, ifPos, dst string) {
	if g.isa == avx512 {
		g.op("VPMOVD2M %s, K2", sel)
		g.op("VBLENDMPS %s, %s, K2, %s", ifNeg, ifPos, dst)
		return
	}
	g.op("VBLENDVPS %s, %s, %s, %s", sel, ifNeg, ifPos, dst)
}

// cmpLT returns a mask of a < constant c (false for NaN), in tmp on AVX2.
func (g *gen) cmpLT(a, c, tmp string) string {
	if g.isa == avx512 {
		g.op("VCMPPS $1, %s, %s, K3", g.c(c), a)
		return "K3"
	}
	g.op("VCMPPS $1, %s, %s, %s", g.c(c), a, tmp)
	return tmp
}

// blendMask sets dst = mask ? ifTrue : ifFalse (ifFalse a register).
func (g *gen) blendMask(mask, ifTrue, ifFalse, dst string) {
	if g.isa == avx512 {
		g.op("VBLENDMPS %s, %s, %s, %s", ifTrue, ifFalse, mask, dst)
		return
	}
	g.op("VBLENDVPS %s, %s, %s, %s", mask, ifTrue, ifFalse, dst)
}

var ptrRegs = []string{"SI", "DI", "R8", "R9"}

// frame lays out the Go arguments: slices, then float32 scalars.
func frame(slices, scalars []string) (offs map[string]int, size int) {
	offs = map[string]int{}
	for _, s := range slices {
		offs[s] = size
		size += 24
	}
	for _, s := range scalars {
		offs[s] = size
		size += 4
	}
	return offs, size
}

func (e elem) write(w *bytes.Buffer, is *isa) {
	g := &gen{w: w, isa: is, consts: map[string]string{}}
	name := e.name + is.suffix
	offs, size := frame(e.slices, e.scalars)
	unroll := e.unroll
	for unroll > 1 && e.temps*unroll+len(e.scalars) > is.nregs-4 {
		unroll--
	}
	reg := func(i int) string { return fmt.Sprintf("%s%d", is.reg, i) }
	next := e.temps * unroll
	fmt.Fprintf(w, "\n// func %s(%s []float32%s)\n", name, strings.Join(e.slices, ", "), scalarDecl(e.scalars))
	fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", name, size)
	ptr := map[string]string{}
	for i, s := range e.slices {
		ptr[s] = ptrRegs[i]
		g.op("MOVQ %s_base+%d(FP), %s", s, offs[s], ptrRegs[i])
	}
	g.op("MOVQ %s_len+%d(FP), DX", e.slices[0], offs[e.slices[0]]+8)
	for _, s := range e.scalars {
		if next >= is.nregs {
			log.Fatalf("%s: scalars do not fit", name)
		}
		g.consts[s] = reg(next)
		g.op("VBROADCASTSS %s+%d(FP), %s", s, offs[s], reg(next))
		next++
	}
	for _, c := range e.consts {
		if _, ok := g.consts[c]; ok || next >= is.nregs {
			continue
		}
		g.op("VBROADCASTSS %s, %s", g.c(c), reg(next))
		g.consts[c] = reg(next)
		next++
	}
	vec := func(copy int) {
		t := make([]string, e.temps)
		for i := range t {
			t[i] = reg(copy*e.temps + i)
		}
		off := fmt.Sprintf("%d", 4*is.width*copy)
		for i, s := range e.load {
			switch {
			case !g.tail:
				g.op("VMOVUPS %s(%s)(BX*4), %s", off, ptr[s], t[i])
			case is == avx512:
				g.op("VMOVUPS.Z (%s)(BX*4), K1, %s", ptr[s], t[i])
			default:
				g.op("VMASKMOVPS (%s)(BX*4), Y15, %s", ptr[s], t[i])
			}
		}
		out := e.body(g, t)
		for i, s := range e.store {
			switch {
			case !g.tail:
				g.op("VMOVUPS %s, %s(%s)(BX*4)", out[i], off, ptr[s])
			case is == avx512:
				g.op("VMOVUPS %s, K1, (%s)(BX*4)", out[i], ptr[s])
			default:
				g.op("VMASKMOVPS %s, Y15, (%s)(BX*4)", out[i], ptr[s])
			}
		}
	}
	step := unroll * is.width
	g.op("XORQ BX, BX")
	g.op("CMPQ DX, $%d", step)
	g.op("JB %s_one", name)
	g.label(name + "_loop")
	for u := range unroll {
		vec(u)
	}
	g.op("ADDQ $%d, BX", step)
	g.op("LEAQ %d(BX), AX", step)
	g.op("CMPQ AX, DX")
	g.op("JBE %s_loop", name)
	g.label(name + "_one")
	if unroll > 1 {
		g.op("LEAQ %d(BX), AX", is.width)
		g.op("CMPQ AX, DX")
		g.op("JA %s_tail", name)
		vec(0)
		g.op("ADDQ $%d, BX", is.width)
		g.op("JMP %s_one", name)
		g.label(name + "_tail")
	}
	g.op("MOVQ DX, CX")
	g.op("SUBQ BX, CX")
	g.op("JZ %s_done", name)
	g.tailMask()
	g.tail = true
	vec(0)
	g.label(name + "_done")
	g.op("VZEROUPPER")
	g.op("RET")
}

// tailMask enables the CX (< width) remaining lanes: K1 or Y15.
func (g *gen) tailMask() {
	if g.isa == avx512 {
		g.op("MOVL $1, AX")
		g.op("SHLL CX, AX")
		g.op("DECL AX")
		g.op("KMOVW AX, K1")
		return
	}
	g.op("LEAQ vtail<>+32(SB), AX")
	g.op("NEGQ CX")
	g.op("VMOVDQU (AX)(CX*4), Y15")
}

func scalarDecl(scalars []string) string {
	if len(scalars) == 0 {
		return ""
	}
	return ", " + strings.Join(scalars, ", ") + " float32"
}

// writeReduce writes sum (sq false) or sumSquares: Σx (Σx²) accumulated in
// float64 in 8 vector accumulators; with dev, sumSqDev: Σ(x−m)² for a
// float64 m, over the elements up to the last multiple of the float64 lanes
// (the Go wrapper adds the rest: a zero-filled tail lane would add m²).
func writeReduce(w *bytes.Buffer, is *isa, fn string, sq, dev bool) {
	g := &gen{w: w, isa: is}
	name := fn + is.suffix
	reg := func(i int) string { return fmt.Sprintf("%s%d", is.reg, i) }
	half := is.width / 2 // float64 lanes
	lowHalf := map[string]string{"Z": "Y", "Y": "X"}[is.reg]
	acc := func(v, a string) {
		if dev {
			g.op("VSUBPD %s, %s, %s", reg(12), v, v)
		}
		if sq {
			g.op("VFMADD231PD %s, %s, %s", v, v, a)
		} else {
			g.op("VADDPD %s, %s, %s", v, a, a)
		}
	}
	ret := 24
	if dev {
		ret = 32
		fmt.Fprintf(w, "\n// func %s(x []float32, m float64) float64\n", name)
		fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $0-40\n", name)
		g.op("VBROADCASTSD m+24(FP), %s", reg(12))
	} else {
		fmt.Fprintf(w, "\n// func %s(x []float32) float64\n", name)
		fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $0-32\n", name)
	}
	g.op("MOVQ x_base+0(FP), SI")
	g.op("MOVQ x_len+8(FP), DX")
	for i := range 8 {
		g.op("VXORPD %s, %s, %s", reg(i), reg(i), reg(i))
	}
	g.op("XORQ BX, BX")
	g.op("CMPQ DX, $%d", 8*half)
	g.op("JB %s_one", name)
	g.label(name + "_loop")
	for i := range 8 {
		g.op("VCVTPS2PD %d(SI)(BX*4), %s", 4*half*i, reg(8+i%4))
		acc(reg(8+i%4), reg(i))
	}
	g.op("ADDQ $%d, BX", 8*half)
	g.op("LEAQ %d(BX), AX", 8*half)
	g.op("CMPQ AX, DX")
	g.op("JBE %s_loop", name)
	g.label(name + "_one")
	g.op("LEAQ %d(BX), AX", half)
	g.op("CMPQ AX, DX")
	g.op("JA %s_tail", name)
	g.op("VCVTPS2PD (SI)(BX*4), %s", reg(8))
	acc(reg(8), reg(0))
	g.op("ADDQ $%d, BX", half)
	g.op("JMP %s_one", name)
	g.label(name + "_tail")
	if !dev {
		g.op("MOVQ DX, CX")
		g.op("SUBQ BX, CX")
		g.op("JZ %s_sum", name)
		g.tailMask()
		if is == avx512 {
			g.op("VMOVUPS.Z (SI)(BX*4), K1, Z8")
		} else {
			g.op("VMASKMOVPS (SI)(BX*4), Y15, Y8")
		}
		g.op("VCVTPS2PD %s8, %s", lowHalf, reg(9))
		acc(reg(9), reg(1))
	}
	g.label(name + "_sum")
	for _, p := range [][2]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {4, 6}, {0, 4}} {
		g.op("VADDPD %s, %s, %s", reg(p[1]), reg(p[0]), reg(p[0]))
	}
	hsum64(g, 0)
	g.op("VMOVSD X0, ret+%d(FP)", ret)
	g.op("VZEROUPPER")
	g.op("RET")
}

// hsum64 adds the float64 lanes of vector register r into the low lane of
// Xr (register r+1 is scratch).
func hsum64(g *gen, r int) {
	if g.isa == avx512 {
		g.op("VEXTRACTF64X4 $1, Z%d, Y%d", r, r+1)
		g.op("VADDPD Y%d, Y%d, Y%d", r+1, r, r)
	}
	g.op("VEXTRACTF128 $1, Y%d, X%d", r, r+1)
	g.op("VADDPD X%d, X%d, X%d", r+1, r, r)
	g.op("VPERMILPD $1, X%d, X%d", r, r+1)
	g.op("VADDSD X%d, X%d, X%d", r+1, r, r)
}

// lanesLoop emits the loop of the float64-lane kernels (sumDotDev,
// affine64): step(i) handles vector i of an iteration at offset i·lanes
// elements from BX; four vectors per iteration while they fit in DX
// elements, then one at a time, then a jump to exit (the Go wrapper does
// the elements past the last whole vector).
func lanesLoop(g *gen, name string, lanes int, step func(i int), exit string) {
	g.op("XORQ BX, BX")
	g.op("CMPQ DX, $%d", 4*lanes)
	g.op("JB %s_one", name)
	g.label(name + "_loop")
	for i := range 4 {
		step(i)
	}
	g.op("ADDQ $%d, BX", 4*lanes)
	g.op("LEAQ %d(BX), AX", 4*lanes)
	g.op("CMPQ AX, DX")
	g.op("JBE %s_loop", name)
	g.label(name + "_one")
	g.op("LEAQ %d(BX), AX", lanes)
	g.op("CMPQ AX, DX")
	g.op("JA %s", exit)
	step(0)
	g.op("ADDQ $%d, BX", lanes)
	g.op("JMP %s_one", name)
}

// writeSumDotDev writes sumDotDev: Σdy and Σdy·(x−m) for a float64 m, each
// element converted to float64, in 4 + 4 vector accumulators, over the
// elements up to the last multiple of the float64 lanes (the Go wrapper
// adds the rest): the sums of group norm's backward pass.
func writeSumDotDev(w *bytes.Buffer, is *isa) {
	g := &gen{w: w, isa: is}
	name := "sumDotDev" + is.suffix
	reg := func(i int) string { return fmt.Sprintf("%s%d", is.reg, i) }
	half := is.width / 2 // float64 lanes
	step := func(i int) {
		g.op("VCVTPS2PD %d(SI)(BX*4), %s", 4*half*i, reg(8+i%2))
		g.op("VCVTPS2PD %d(DI)(BX*4), %s", 4*half*i, reg(10+i%2))
		g.op("VSUBPD %s, %s, %s", reg(12), reg(10+i%2), reg(10+i%2))
		g.op("VADDPD %s, %s, %s", reg(8+i%2), reg(i), reg(i))
		g.op("VFMADD231PD %s, %s, %s", reg(10+i%2), reg(8+i%2), reg(4+i))
	}
	fmt.Fprintf(w, "\n// func %s(dy, x []float32, m float64) (sum, dot float64)\n", name)
	fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $0-72\n", name)
	g.op("MOVQ dy_base+0(FP), SI")
	g.op("MOVQ dy_len+8(FP), DX")
	g.op("MOVQ x_base+24(FP), DI")
	g.op("VBROADCASTSD m+48(FP), %s", reg(12))
	for i := range 8 {
		g.op("VXORPD %s, %s, %s", reg(i), reg(i), reg(i))
	}
	lanesLoop(g, name, half, step, name+"_sum")
	g.label(name + "_sum")
	for _, p := range [][2]int{{0, 1}, {2, 3}, {0, 2}, {4, 5}, {6, 7}, {4, 6}} {
		g.op("VADDPD %s, %s, %s", reg(p[1]), reg(p[0]), reg(p[0]))
	}
	hsum64(g, 0)
	hsum64(g, 4)
	g.op("VMOVSD X0, sum+56(FP)")
	g.op("VMOVSD X4, dot+64(FP)")
	g.op("VZEROUPPER")
	g.op("RET")
}

// writeAffine64 writes affine64: dst[i] = float32(fma(a, float64(x[i]), c))
// in float64 (one FMA, rounded to float64, then to float32), four vectors
// of float64 lanes per iteration, over the elements up to the last multiple
// of the float64 lanes (the Go wrapper does the rest): group norm's affine
// map with a single read stream.
func writeAffine64(w *bytes.Buffer, is *isa) {
	g := &gen{w: w, isa: is}
	name := "affine64" + is.suffix
	lanes := is.width / 2
	half := map[string]string{"Z": "Y", "Y": "X"}[is.reg]
	cvt := "VCVTPD2PS"
	if is == avx2 {
		cvt = "VCVTPD2PSY"
	}
	step := func(i int) {
		g.op("VCVTPS2PD %d(SI)(BX*4), %s%d", 4*lanes*i, is.reg, i)
		g.op("VFMADD213PD %s9, %s8, %s%d", is.reg, is.reg, is.reg, i)
		g.op("%s %s%d, %s%d", cvt, is.reg, i, half, i)
		g.op("VMOVUPS %s%d, %d(DI)(BX*4)", half, i, 4*lanes*i)
	}
	fmt.Fprintf(w, "\n// func %s(dst, x []float32, a, c float64)\n", name)
	fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $0-64\n", name)
	g.op("MOVQ dst_base+0(FP), DI")
	g.op("MOVQ dst_len+8(FP), DX")
	g.op("MOVQ x_base+24(FP), SI")
	g.op("VBROADCASTSD a+48(FP), %s8", is.reg)
	g.op("VBROADCASTSD c+56(FP), %s9", is.reg)
	lanesLoop(g, name, lanes, step, name+"_done")
	g.label(name + "_done")
	g.op("VZEROUPPER")
	g.op("RET")
}

// sin64Consts are the float64 constants of writeSin64, one 64-byte row of 8 equal lanes each in
// vconst64<>: sinRef's, with the same values (Go's constant arithmetic rounds 1.0/6 and the rest to
// the nearest float64 exactly as the Go kernel's expressions do).
var sin64Consts = []struct {
	name string
	bits uint64
}{
	{"twoOverPi", math.Float64bits(2 / math.Pi)},
	{"pio2Hi", math.Float64bits(1.57079632673412561417e+00)},
	{"pio2Lo", math.Float64bits(6.07710050650619224932e-11)},
	{"s3", math.Float64bits(-1.0 / 6)},
	{"s5", math.Float64bits(1.0 / 120)},
	{"s7", math.Float64bits(-1.0 / 5040)},
	{"s9", math.Float64bits(1.0 / 362880)},
	{"c2", math.Float64bits(-0.5)},
	{"c4", math.Float64bits(1.0 / 24)},
	{"c6", math.Float64bits(-1.0 / 720)},
	{"c8", math.Float64bits(1.0 / 40320)},
	{"c10", math.Float64bits(1.0 / 3628800)},
	{"one", math.Float64bits(1)},
	{"magic", math.Float64bits(0x1.8p52)}, // k + 1.5·2⁵² holds the integer k in its low bits
	{"absMask", 1<<63 - 1},
	{"sinLimit", math.Float64bits(1 << 19)},
	{"signBit", 1 << 63},
	{"oneBit", 1},
}

// c64 is the vconst64<> operand of a sin64Consts constant.
func c64(name string) string {
	for i, c := range sin64Consts {
		if c.name == name {
			return fmt.Sprintf("vconst64<>+%d(SB)", 64*i)
		}
	}
	panic("no float64 constant " + name)
}

// writeSin64 writes sin64{ISA}(dst, x []float32) (outside bool): sinRef on the elements up to the
// last multiple of the float64 lanes (the Go wrapper does the rest), operation for operation — the
// same float64 products and sums in the same order, none fused, the round to even, the quadrant's
// polynomial chosen by a blend and its sign by an XOR — so every element has sinRef's bits. A lane
// with |x| ≥ 2¹⁹ or NaN keeps x itself (|x| > 1, never a sine) and outside reports that there was
// one: the wrapper then redoes those with math.Sin, from dst alone, so dst may be x.
func writeSin64(w *bytes.Buffer, is *isa) {
	g := &gen{w: w, isa: is}
	name := "sin64" + is.suffix
	lanes := is.width / 2
	r := func(i int) string { return fmt.Sprintf("%s%d", is.reg, i) }
	half := map[string]string{"Z": "Y", "Y": "X"}[is.reg]
	and, xor, cvt := "VANDPD", "VXORPD", "VCVTPD2PSY"
	if is == avx512 {
		and, xor, cvt = "VPANDQ", "VPXORQ", "VCVTPD2PS"
	}
	step := func(i int) {
		g.op("VCVTPS2PD %d(SI)(BX*4), %s", 4*lanes*i, r(0)) // x
		g.op("%s %s, %s, %s", and, c64("absMask"), r(0), r(1))
		if is == avx512 { // outside: !(|x| < 2¹⁹), NaN included
			g.op("VCMPPD $5, %s, %s, K1", c64("sinLimit"), r(1))
			g.op("KORW K1, K2, K2")
		} else {
			g.op("VCMPPD $5, %s, %s, %s", c64("sinLimit"), r(1), r(10))
			g.op("VORPD %s, %s, %s", r(10), r(7), r(7))
		}
		g.op("VMULPD %s, %s, %s", c64("twoOverPi"), r(0), r(2))
		if is == avx512 {
			g.op("VRNDSCALEPD $0, %s, %s", r(2), r(2))
		} else {
			g.op("VROUNDPD $0, %s, %s", r(2), r(2))
		}
		g.op("VADDPD %s, %s, %s", r(9), r(2), r(2)) // k + 0: −0 becomes +0
		g.op("VMULPD %s, %s, %s", c64("pio2Hi"), r(2), r(3))
		g.op("VSUBPD %s, %s, %s", r(3), r(0), r(3)) // x − k·pio2Hi
		g.op("VMULPD %s, %s, %s", c64("pio2Lo"), r(2), r(4))
		g.op("VSUBPD %s, %s, %s", r(4), r(3), r(3)) // r
		g.op("VMULPD %s, %s, %s", r(3), r(3), r(4)) // r²
		// sin: r·(1 + r²·(s3 + r²·(s5 + r²·(s7 + r²·s9))))
		g.op("VMULPD %s, %s, %s", c64("s9"), r(4), r(5))
		for _, c := range []string{"s7", "s5", "s3"} {
			g.op("VADDPD %s, %s, %s", c64(c), r(5), r(5))
			g.op("VMULPD %s, %s, %s", r(5), r(4), r(5))
		}
		g.op("VADDPD %s, %s, %s", c64("one"), r(5), r(5))
		g.op("VMULPD %s, %s, %s", r(5), r(3), r(5))
		// cos: 1 + r²·(c2 + r²·(c4 + r²·(c6 + r²·(c8 − r²·c10))))
		g.op("VMULPD %s, %s, %s", c64("c10"), r(4), r(6))
		g.op("VSUBPD %s, %s, %s", r(6), r(8), r(6)) // c8 − r²·c10
		g.op("VMULPD %s, %s, %s", r(6), r(4), r(6))
		for _, c := range []string{"c6", "c4", "c2"} {
			g.op("VADDPD %s, %s, %s", c64(c), r(6), r(6))
			g.op("VMULPD %s, %s, %s", r(6), r(4), r(6))
		}
		g.op("VADDPD %s, %s, %s", c64("one"), r(6), r(6))
		// Quadrant q = k mod 4 from k's low bits: cos for odd q, the sign flipped for q&2.
		g.op("VADDPD %s, %s, %s", c64("magic"), r(2), r(2))
		if is == avx512 {
			g.op("VPTESTMQ %s, %s, K3", c64("oneBit"), r(2))
			g.op("VMOVAPD %s, K3, %s", r(6), r(5))
		} else {
			g.op("VPSLLQ $63, %s, %s", r(2), r(1))
			g.op("VBLENDVPD %s, %s, %s, %s", r(1), r(6), r(5), r(5))
		}
		g.op("VPSLLQ $62, %s, %s", r(2), r(1))
		g.op("%s %s, %s, %s", and, c64("signBit"), r(1), r(1))
		g.op("%s %s, %s, %s", xor, r(1), r(5), r(5))
		if is == avx512 { // outside lanes keep x: the wrapper finds them by |value| > 1
			g.op("VMOVAPD %s, K1, %s", r(0), r(5))
		} else {
			g.op("VBLENDVPD %s, %s, %s, %s", r(10), r(0), r(5), r(5))
		}
		g.op("%s %s, %s%d", cvt, r(5), half, 5)
		g.op("VMOVUPS %s%d, %d(DI)(BX*4)", half, 5, 4*lanes*i)
	}
	fmt.Fprintf(w, "\n// func %s(dst, x []float32) (outside bool)\n", name)
	fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $0-49\n", name)
	g.op("MOVQ dst_base+0(FP), DI")
	g.op("MOVQ dst_len+8(FP), DX")
	g.op("MOVQ x_base+24(FP), SI")
	g.op("%s %s, %s, %s", xor, r(9), r(9), r(9))
	g.op("VMOVUPD %s, %s", c64("c8"), r(8))
	if is == avx512 {
		g.op("KXORW K2, K2, K2")
	} else {
		g.op("VXORPD %s, %s, %s", r(7), r(7), r(7))
	}
	lanesLoop(g, name, lanes, step, name+"_done")
	g.label(name + "_done")
	if is == avx512 {
		g.op("KORTESTW K2, K2")
		g.op("SETNE outside+48(FP)")
	} else {
		g.op("VMOVMSKPD %s, AX", r(7))
		g.op("TESTQ AX, AX")
		g.op("SETNE outside+48(FP)")
	}
	g.op("VZEROUPPER")
	g.op("RET")
}

// writeMix writes mix{32,64}_{rows}{ISA}: for n elements (a multiple of the
// float64 lanes of a vector; the Go wrapper does the rest), out[r][i] =
// Σ_j coef[r·nin+j]·in[j][i] with float64 FMAs in the order of j, for a
// fixed number of output rows and nin input rows given by pointer arrays.
// Two vectors of elements per iteration; every input of an iteration is
// read before any output is written, so an output row may be an input row.
// f32: the rows hold float32, converted to float64 on load and rounded once
// on store.
func writeMix(w *bytes.Buffer, is *isa, f32 bool, rows int) string {
	g := &gen{w: w, isa: is}
	bits := map[bool]string{true: "32", false: "64"}[f32]
	name := fmt.Sprintf("mix%s_%d%s", bits, rows, is.suffix)
	typ := map[bool]string{true: "float32", false: "float64"}[f32]
	lanes := is.width / 2 // float64 lanes per vector
	esz := map[bool]int{true: 4, false: 8}[f32]
	half := map[string]string{"Z": "Y", "Y": "X"}[is.reg]
	reg := func(i int) string { return fmt.Sprintf("%s%d", is.reg, i) }
	fmt.Fprintf(w, "\n// func %s(n int, outs *[4]*%s, ins *[8]*%s, nin int, coef *float64)\n", name, typ, typ)
	fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $0-40\n", name)
	g.op("MOVQ n+0(FP), DX")
	g.op("MOVQ outs+8(FP), DI")
	g.op("MOVQ ins+16(FP), SI")
	g.op("MOVQ nin+24(FP), CX")
	g.op("MOVQ coef+32(FP), R8")
	g.op("MOVQ CX, R9")
	g.op("SHLQ $3, R9") // row stride of coef in bytes
	g.op("LEAQ (R9)(R9*2), R10")
	coefAddr := []string{"(R12)", "(R12)(R9*1)", "(R12)(R9*2)", "(R12)(R10*1)"}
	load := func(off int, dst string) {
		if f32 {
			g.op("VCVTPS2PD %d(R13)(BX*4), %s", off*esz, dst)
		} else {
			g.op("VMOVUPD %d(R13)(BX*8), %s", off*esz, dst)
		}
	}
	store := func(src string, off int) {
		if f32 {
			cvt := "VCVTPD2PS"
			if is == avx2 {
				cvt = "VCVTPD2PSY"
			}
			g.op("%s %s, %s11", cvt, src, half)
			g.op("VMOVUPS %s11, %d(R13)(BX*4)", half, off*esz)
		} else {
			g.op("VMOVUPD %s, %d(R13)(BX*8)", src, off*esz)
		}
	}
	body := func(chunks int, label string) {
		for c := range chunks {
			for r := range rows {
				a := reg(4*c + r)
				g.op("VXORPD %s, %s, %s", a, a, a)
			}
		}
		g.op("XORQ R11, R11")
		g.op("MOVQ R8, R12")
		g.label(label)
		g.op("MOVQ (SI)(R11*8), R13")
		for c := range chunks {
			load(c*lanes, reg(8+c))
		}
		for r := range rows {
			g.op("VBROADCASTSD %s, %s", coefAddr[r], reg(10))
			for c := range chunks {
				g.op("VFMADD231PD %s, %s, %s", reg(10), reg(8+c), reg(4*c+r))
			}
		}
		g.op("ADDQ $8, R12")
		g.op("INCQ R11")
		g.op("CMPQ R11, CX")
		g.op("JB %s", label)
		for r := range rows {
			g.op("MOVQ %d(DI), R13", 8*r)
			for c := range chunks {
				store(reg(4*c+r), c*lanes)
			}
		}
	}
	g.op("XORQ BX, BX")
	g.label(name + "_loop")
	g.op("LEAQ %d(BX), AX", 2*lanes)
	g.op("CMPQ AX, DX")
	g.op("JA %s_one", name)
	body(2, name+"_in2")
	g.op("ADDQ $%d, BX", 2*lanes)
	g.op("JMP %s_loop", name)
	g.label(name + "_one")
	g.op("LEAQ %d(BX), AX", lanes)
	g.op("CMPQ AX, DX")
	g.op("JA %s_done", name)
	body(1, name+"_in1")
	g.label(name + "_done")
	g.op("VZEROUPPER")
	g.op("RET")
	return fmt.Sprintf("//go:noescape\nfunc %s(n int, outs *[4]*%s, ins *[8]*%s, nin int, coef *float64)\n\n", name, typ, typ)
}

func main() {
	var s bytes.Buffer
	fmt.Fprintf(&s, "// Code generated by asm_gen.go; DO NOT EDIT.\n\n//go:build !noasm\n\n#include \"textflag.h\"\n")
	fmt.Fprintf(&s, "\n// vconst: one 64-byte row of 16 equal lanes per constant.\n")
	for i, c := range constants {
		for l := range 8 {
			fmt.Fprintf(&s, "DATA vconst<>+%d(SB)/8, $0x%08x%08x\n", 64*i+8*l, c.bits, c.bits)
		}
	}
	fmt.Fprintf(&s, "GLOBL vconst<>(SB), RODATA|NOPTR, $%d\n", 64*len(constants))
	fmt.Fprintf(&s, "\n// vtail: the AVX2 tail mask for r lanes is the 8 lanes from vtail+32-4r.\n")
	for l := range 16 {
		v := uint32(0)
		if l < 8 {
			v = 0xffffffff
		}
		fmt.Fprintf(&s, "DATA vtail<>+%d(SB)/4, $0x%08x\n", 4*l, v)
	}
	fmt.Fprintf(&s, "GLOBL vtail<>(SB), RODATA|NOPTR, $64\n")
	fmt.Fprintf(&s, "\n// vconst64: one 64-byte row of 8 equal float64 lanes per constant of sin64.\n")
	for i, c := range sin64Consts {
		for l := range 8 {
			fmt.Fprintf(&s, "DATA vconst64<>+%d(SB)/8, $0x%016x\n", 64*i+8*l, c.bits)
		}
	}
	fmt.Fprintf(&s, "GLOBL vconst64<>(SB), RODATA|NOPTR, $%d\n", 64*len(sin64Consts))

	var decl bytes.Buffer
	fmt.Fprintf(&decl, "// Code generated by asm_gen.go; DO NOT EDIT.\n\n//go:build !noasm\n\npackage vec\n\nimport \"holdgo/internal/isa\"\n\n")
	for _, is := range isas {
		for _, e := range elems {
			e.write(&s, is)
			fmt.Fprintf(&decl, "//go:noescape\nfunc %s%s(%s []float32%s)\n\n", e.name, is.suffix, strings.Join(e.slices, ", "), scalarDecl(e.scalars))
		}
		for _, r := range []string{"sum", "sumSquares"} {
			writeReduce(&s, is, r, r == "sumSquares", false)
			fmt.Fprintf(&decl, "//go:noescape\nfunc %s%s(x []float32) float64\n\n", r, is.suffix)
		}
		writeReduce(&s, is, "sumSqDev", true, true)
		fmt.Fprintf(&decl, "//go:noescape\nfunc sumSqDev%s(x []float32, m float64) float64\n\n", is.suffix)
		writeSumDotDev(&s, is)
		fmt.Fprintf(&decl, "//go:noescape\nfunc sumDotDev%s(dy, x []float32, m float64) (sum, dot float64)\n\n", is.suffix)
		writeAffine64(&s, is)
		fmt.Fprintf(&decl, "//go:noescape\nfunc affine64%s(dst, x []float32, a, c float64)\n\n", is.suffix)
		writeSin64(&s, is)
		fmt.Fprintf(&decl, "//go:noescape\nfunc sin64%s(dst, x []float32) (outside bool)\n\n", is.suffix)
		for _, f32 := range []bool{true, false} {
			for rows := 1; rows <= 4; rows++ {
				decl.WriteString(writeMix(&s, is, f32, rows))
			}
		}
	}
	for _, is := range isas {
		fmt.Fprintf(&decl, "var %sImpl = impl{\n\tlevel: %s,\n", strings.ToLower(is.suffix), is.level)
		for _, e := range elems {
			fmt.Fprintf(&decl, "\t%s: %s%s,\n", e.name, e.name, is.suffix)
		}
		fmt.Fprintf(&decl, "\tsum: sum%s,\n\tsumSquares: sumSquares%s,\n\tsumSqDev: sumSqDev%s,\n\tsumDotDev: sumDotDev%s,\n\taffine64: affine64%s,\n\tsin64: sin64%s,\n", is.suffix, is.suffix, is.suffix, is.suffix, is.suffix, is.suffix)
		fmt.Fprintf(&decl, "\tf64Lanes: %d,\n", is.width/2)
		fmt.Fprintf(&decl, "}\n\n")
	}
	// The Mix kernels are called directly, not through function values in
	// impl: a pointer passed through a function value escapes, and the
	// callers' pointer arrays would be heap-allocated on every call.
	for _, bits := range []string{"32", "64"} {
		fmt.Fprintf(&decl, "// mix%sKernel runs level's Mix kernel for rows output rows.\n", bits)
		fmt.Fprintf(&decl, "func mix%sKernel(level string, rows, n int, outs *[4]*float%s, ins *[8]*float%s, nin int, coef *float64) {\n\tswitch level {\n", bits, bits, bits)
		for _, is := range isas {
			fmt.Fprintf(&decl, "\tcase %s:\n\t\tswitch rows {\n", is.level)
			for rows := 1; rows <= 4; rows++ {
				fmt.Fprintf(&decl, "\t\tcase %d:\n\t\t\tmix%s_%d%s(n, outs, ins, nin, coef)\n", rows, bits, rows, is.suffix)
			}
			fmt.Fprintf(&decl, "\t\t}\n")
		}
		fmt.Fprintf(&decl, "\t}\n}\n\n")
	}
	fmt.Fprintf(&decl, "// archImpl returns the assembly kernels for level, or nil.\nfunc archImpl(level string) *impl {\n\tswitch level {\n")
	for _, is := range isas {
		fmt.Fprintf(&decl, "\tcase %s:\n\t\treturn &%sImpl\n", is.level, strings.ToLower(is.suffix))
	}
	fmt.Fprintf(&decl, "\t}\n\treturn nil\n}\n")

	var coef bytes.Buffer
	fmt.Fprintf(&coef, "// Code generated by asm_gen.go; DO NOT EDIT.\n\npackage vec\n\n// Constants of the exp, tanh and SiLU-gradient approximations; see asm_gen.go.\nconst (\n")
	for _, c := range constants {
		if c.goName == "" {
			continue
		}
		if c.comment != "" {
			fmt.Fprintf(&coef, "\t// %s\n", c.comment)
		}
		fmt.Fprintf(&coef, "\t%s float32 = %v\n", c.goName, math.Float32frombits(c.bits))
	}
	fmt.Fprintf(&coef, ")\n")

	write("kernel_amd64.s", s.Bytes(), false)
	write("kernel_amd64.go", decl.Bytes(), true)
	write("coef.go", coef.Bytes(), true)
}

func write(path string, src []byte, gofmt bool) {
	if gofmt {
		var err error
		if src, err = format.Source(src); err != nil {
			log.Fatalf("%s: %v", path, err)
		}
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
