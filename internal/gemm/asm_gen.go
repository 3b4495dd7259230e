//go:build ignore

// asm_gen writes kernel_amd64.s, the assembly microkernels, with the tile
// sizes spelled out instruction by instruction. Run it through go generate
// (the directive is in kernel_amd64.go):
//
//	go generate ./internal/gemm
//
// Each kernel computes an MR×NR tile C = alpha·Ã·B̃ + beta·C, where Ã is read
// in place through element strides rs (row) and cs (column) — so it serves
// row-major A, transposed A and packed panels alike — and B̃ is a packed panel
// of kc rows of NR floats. Per k step it loads the NR-wide row of B̃ into
// NR/W vector registers, broadcasts each of the MR entries of Ã's column and
// issues MR·NR/W FMAs into accumulators that stay in registers for the whole
// loop. A row pointer covers three rows of Ã: (P), (P)(rs*1), (P)(rs*2).
package main

import (
	"bytes"
	"fmt"
	"holdgo/internal/asmgen"
	"log"
	"os"
)

type spec struct {
	name   string // Go function name
	isa    string // for the header comment
	mr, nr int    // tile
	width  int    // floats per vector register
	reg    string // register prefix: "Z" or "Y"
	// packedLoop adds a loop for a packed Ã (rs = 1, cs = mr) that reads it
	// at constant offsets from one pointer, four k steps per iteration: no
	// index registers and a quarter of the pointer updates (measured on Zen 5:
	// at AVX2 3–6 % more GFLOP/s for the kernel alone, at AVX-512 182–186 →
	// 210 GFLOP/s and a frozen ncsnpp-cifar10 forward pass 784 → 676 ms, its
	// Winograd GEMMs reading packed weights). The products are accumulated in
	// the same order, so C is the same to the bit.
	packedLoop bool
	// pfLines > 0 makes the variant for a row-major Ã read in place (cs = 1)
	// with one more argument, pf: per k step it prefetches pfLines cache
	// lines from pf on (PREFETCHT1, into L2), walking forward, so that the
	// rows below the tile — the next panel, which the driver sweeps next —
	// arrive from memory while this tile computes instead of stalling the
	// next tile's loads. One line per k step covers the mr rows below when
	// they are at most 16·kc/mr floats long; two at AVX-512 (all 12 rows of
	// conv 8192×1152×128) measured slower: 146 → 127–131 GFLOP/s on
	// 32768×576×64, 8192×1152×128 even.
	pfLines int
	// bAhead > 0 prefetches B̃ (PREFETCHT0, into L1) bAhead k steps ahead,
	// all nr/16 of each step's lines: for the tiles of a rows-first sweep,
	// where Ã's panel stays in L1 and every k step needs a new line of B̃
	// from L2. Interleaved A/B on the Intel AVX-512 VM, one AVX2 thread:
	// conv 32768×576×64 +4 %, 8192×1152×128 +5 % (16 steps ahead: the
	// same); in the other sweep order, where B̃'s panel sits in L1, it cost
	// 3–6 % (the MLP products), so only those variants have it. At
	// AVX-512, with unroll (7 rounds of holdctl bench gemm): one thread
	// conv +1–3 %, the MLP products +3 %, two threads +0.5–5 % on all eight.
	bAhead int
	// unroll adds loops of four k steps for Ã read in place with a unit
	// stride, row-major (cs = 1: each row pointer at +4u for step u) or
	// transposed (rs = 1: rows of stored A at R8, R8+cs, R9, R9+cs), with a
	// quarter of the pointer updates and loop branches of the one-step
	// loop, which is left for the kc mod 4 steps. The products are
	// accumulated in the same order, so C is the same to the bit. A/B as
	// above: x·Wᵀ and dY·W (512×128·128×128) +2–3 %, the rows-first tiles
	// (kernAVX2Rows) part of the conv gains; the transposed loop even
	// (dYᵀ·x); on kernAVX2PF, whose prefetches then come four steps' worth
	// at a time, conv 32768×576×64 lost 4.5 %, so it keeps the one-step loop.
	unroll bool
}

var specs = []spec{
	{name: "kernAVX512", isa: "AVX-512F", mr: 12, nr: 32, width: 16, reg: "Z", packedLoop: true, unroll: true},
	{name: "kernAVX2", isa: "AVX2 + FMA3", mr: 6, nr: 16, width: 8, reg: "Y", packedLoop: true, unroll: true},
	{name: "kernAVX512PF", isa: "AVX-512F", mr: 12, nr: 32, width: 16, reg: "Z", pfLines: 1, bAhead: 8},
	{name: "kernAVX512Rows", isa: "AVX-512F", mr: 12, nr: 32, width: 16, reg: "Z", bAhead: 8, unroll: true},
	{name: "kernAVX2PF", isa: "AVX2 + FMA3", mr: 6, nr: 16, width: 8, reg: "Y", pfLines: 1, bAhead: 8},
	{name: "kernAVX2Rows", isa: "AVX2 + FMA3", mr: 6, nr: 16, width: 8, reg: "Y", bAhead: 8, unroll: true},
	// The short tiles, for a last panel of fewer rows than the kernel's
	// (kernel.short): its Ã is a zero-padded panel of the full height (rs =
	// 1, cs = the full mr), read through the transposed four-step loop.
	{name: "kernAVX512R8", isa: "AVX-512F", mr: 8, nr: 32, width: 16, reg: "Z", unroll: true},
	{name: "kernAVX512R4", isa: "AVX-512F", mr: 4, nr: 32, width: 16, reg: "Z", unroll: true},
	{name: "kernAVX2R4", isa: "AVX2 + FMA3", mr: 4, nr: 16, width: 8, reg: "Y", unroll: true},
	{name: "kernAVX2R2", isa: "AVX2 + FMA3", mr: 2, nr: 16, width: 8, reg: "Y", unroll: true},
}

// rowPointers holds three rows of Ã each.
var rowPointers = []string{"R8", "R9", "R10", "R11"}

func main() {
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by asm_gen.go; DO NOT EDIT.\n\n//go:build !noasm\n\n#include \"textflag.h\"\n")
	for _, s := range specs {
		s.write(&out)
	}
	for _, w := range skinnyWidths {
		writeSkinny(&out, w)
	}
	writeTranspose16(&out)
	writeCopyRows(&out)
	writeTranspose6AVX2(&out)
	writeCopyRows16AVX2(&out)
	writeCopyRows6AVX2(&out)
	writeCopyRows6MaskAVX2(&out)
	writeTranspose8AVX2(&out)
	if err := os.WriteFile("kernel_amd64.s", out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

func (s spec) write(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, "\t"+format+"\n", args...) }
	vecs := s.nr / s.width // vectors per row of the tile
	acc := func(i, v int) string { return fmt.Sprintf("%s%d", s.reg, i*vecs+v) }
	nacc := s.mr * vecs
	bReg := func(v int) string { return fmt.Sprintf("%s%d", s.reg, nacc+v) }
	tmp := func(t int) string { return fmt.Sprintf("%s%d", s.reg, nacc+vecs+t) }
	aAddr := func(i int) string {
		ptr := rowPointers[i/3]
		switch i % 3 {
		case 0:
			return fmt.Sprintf("(%s)", ptr)
		case 1:
			return fmt.Sprintf("(%s)(SI*1)", ptr)
		}
		return fmt.Sprintf("(%s)(SI*2)", ptr)
	}
	pointers := (s.mr + 2) / 3

	args, frame := "", 64
	if s.pfLines > 0 {
		args, frame = ", pf *float32", 72
	}
	fmt.Fprintf(w, "\n// func %s(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32%s)\n", s.name, args)
	fmt.Fprintf(w, "// %s, %d×%d tile: %d accumulators %s0-%s, B row in %s-%s, broadcasts in %s-%s.\n",
		s.isa, s.mr, s.nr, nacc, s.reg, acc(s.mr-1, vecs-1), bReg(0), bReg(vecs-1), tmp(0), tmp(1))
	fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", s.name, frame)
	if s.pfLines > 0 {
		p("MOVQ pf+64(FP), R14")
	}
	p("MOVQ kc+0(FP), CX")
	p("MOVQ a+8(FP), R8")
	p("MOVQ rs+16(FP), SI")
	p("SHLQ $2, SI")
	p("MOVQ cs+24(FP), DI")
	p("SHLQ $2, DI")
	p("MOVQ b+32(FP), DX")
	p("MOVQ c+40(FP), R12")
	p("MOVQ ldc+48(FP), R13")
	p("SHLQ $2, R13")
	p("LEAQ (SI)(SI*2), AX // 3 rows")
	for q := 1; q < pointers; q++ {
		p("LEAQ (%s)(AX*1), %s", rowPointers[q-1], rowPointers[q])
	}
	// Warm the C tile while the loop runs.
	p("MOVQ R12, BX")
	for i := 0; i < s.mr; i++ {
		p("PREFETCHT0 (BX)")
		p("PREFETCHT0 %d(BX)", 4*s.nr-4)
		if i < s.mr-1 {
			p("ADDQ R13, BX")
		}
	}
	for i := 0; i < s.mr; i++ {
		for v := 0; v < vecs; v++ {
			r := acc(i, v)
			p("VXORPS %s, %s, %s", r, r, r)
		}
	}
	// step emits one k step: B̃'s row from boff(DX), Ã's entry of row i
	// from addr(i).
	step := func(boff int, addr func(i int) string) {
		for v := 0; v < vecs; v++ {
			p("VMOVUPS %d(DX), %s", boff+4*s.width*v, bReg(v))
		}
		for i := 0; i < s.mr; i++ {
			t := tmp(i % 2)
			p("VBROADCASTSS %s, %s", addr(i), t)
			for v := 0; v < vecs; v++ {
				p("VFMADD231PS %s, %s, %s", bReg(v), t, acc(i, v))
			}
		}
	}
	// ahead emits the prefetches for the given number of k steps: B̃'s
	// lines bAhead steps on (nr/16 lines per step) and pfLines lines per
	// step from R14.
	ahead := func(steps int) {
		if s.bAhead > 0 {
			for l := range steps * s.nr / 16 {
				p("PREFETCHT0 %d(DX)", 4*s.nr*s.bAhead+64*l)
			}
		}
		for l := range s.pfLines * steps {
			p("PREFETCHT1 %d(R14)", 64*l)
		}
		if s.pfLines > 0 {
			p("ADDQ $%d, R14", 64*s.pfLines*steps)
		}
	}
	// four emits the body of a four-step loop: k step u reads Ã's row i
	// from addr(u, i); DX moves on four rows of B̃.
	four := func(addr func(u, i int) string) {
		for u := 0; u < 4; u++ {
			step(4*s.nr*u, func(i int) string { return addr(u, i) })
		}
		p("ADDQ $%d, DX", 16*s.nr)
	}
	p("TESTQ CX, CX")
	p("JZ %s_store", s.name)
	if s.packedLoop {
		// Packed Ã (rs = 1 and cs = mr elements): kc/4 iterations of four
		// k steps at constant offsets from R8, then the strided loop for
		// the kc mod 4 left.
		p("CMPQ SI, $4")
		p("JNE %s_strided", s.name)
		p("CMPQ DI, $%d", 4*s.mr)
		p("JNE %s_strided", s.name)
		p("MOVQ CX, BX")
		p("SHRQ $2, BX")
		p("JZ %s_strided", s.name)
		fmt.Fprintf(w, "%s_packed:\n", s.name)
		// Ã four iterations ahead (the next panel's start near the end):
		// 1024³ at AVX2 110 → 113–115 GFLOP/s.
		p("PREFETCHT0 %d(R8)", 16*s.mr*4)
		four(func(u, i int) string { return fmt.Sprintf("%d(R8)", 4*(u*s.mr+i)) })
		p("ADDQ $%d, R8", 16*s.mr)
		p("DECQ BX")
		p("JNZ %s_packed", s.name)
		// The strided loop's row pointers follow R8 (rows 3–5 from R9).
		for q := 1; q < pointers; q++ {
			p("LEAQ (%s)(AX*1), %s", rowPointers[q-1], rowPointers[q])
		}
		p("ANDQ $3, CX")
		p("JZ %s_store", s.name)
	}
	// The strided loop, one k step per iteration; with packedLoop, a copy
	// of it that prefetches Ã eight k steps ahead serves a transposed Ã read
	// in place (rs = 1: each k step a new row of stored A, 8–16 % more
	// GFLOP/s on dYᵀ·x at AVX2).
	strided := func(label string, prefetch bool) {
		fmt.Fprintf(w, "%s:\n", label)
		if prefetch {
			p("PREFETCHT0 (R8)(DI*8)")
		}
		ahead(1)
		step(0, aAddr)
		p("ADDQ $%d, DX", 4*s.nr)
		for q := 0; q < pointers; q++ {
			p("ADDQ DI, %s", rowPointers[q])
		}
		p("DECQ CX")
		p("JNZ %s", label)
	}
	if s.packedLoop || s.unroll {
		fmt.Fprintf(w, "%s_strided:\n", s.name)
	}
	if s.unroll {
		// Ã read in place with one unit stride, four k steps per
		// iteration as in the packed loop, the kc mod 4 left to the
		// single-step loops.
		p("MOVQ CX, BX")
		p("SHRQ $2, BX")
		p("JZ %s_single", s.name)
		p("CMPQ DI, $4")
		p("JEQ %s_rows4", s.name)
		p("CMPQ SI, $4")
		p("JEQ %s_cols", s.name)
		p("JMP %s_single", s.name)

		// Row-major Ã (cs = 1): k step u reads each row pointer at +4u.
		fmt.Fprintf(w, "%s_rows4:\n", s.name)
		ahead(4)
		four(func(u, i int) string { return fmt.Sprintf("%d%s", 4*u, aAddr(i)) })
		for q := 0; q < pointers; q++ {
			p("ADDQ $16, %s", rowPointers[q])
		}
		p("DECQ BX")
		p("JNZ %s_rows4", s.name)
		p("ANDQ $3, CX")
		p("JZ %s_store", s.name)
		p("JMP %s_loop", s.name)

		// Transposed Ã (rs = 1): k step u reads row u of stored A, the
		// mr entries at +4i; R8 and R9 point at rows 0 and 2 of the four,
		// R10 and R11 eight rows further on, for the prefetches. After the
		// loop the row pointers are set again (rows of Ã 4 bytes apart).
		fmt.Fprintf(w, "%s_cols:\n", s.name)
		p("MOVQ DI, AX")
		p("SHLQ $2, AX")
		p("LEAQ (R8)(DI*2), R9")
		p("LEAQ (R8)(DI*8), R10")
		p("LEAQ (R9)(DI*8), R11")
		fmt.Fprintf(w, "%s_cols4:\n", s.name)
		p("PREFETCHT0 (R10)")
		p("PREFETCHT0 (R10)(DI*1)")
		p("PREFETCHT0 (R11)")
		p("PREFETCHT0 (R11)(DI*1)")
		ahead(4)
		bases := []string{"(R8)", "(R8)(DI*1)", "(R9)", "(R9)(DI*1)"}
		four(func(u, i int) string { return fmt.Sprintf("%d%s", 4*i, bases[u]) })
		for _, r := range []string{"R8", "R9", "R10", "R11"} {
			p("ADDQ AX, %s", r)
		}
		p("DECQ BX")
		p("JNZ %s_cols4", s.name)
		p("LEAQ (SI)(SI*2), AX")
		for q := 1; q < pointers; q++ {
			p("LEAQ (%s)(AX*1), %s", rowPointers[q-1], rowPointers[q])
		}
		p("ANDQ $3, CX")
		p("JZ %s_store", s.name)
		fmt.Fprintf(w, "%s_single:\n", s.name)
	}
	if s.packedLoop {
		p("CMPQ SI, $4")
		p("JNE %s_loop", s.name)
		strided(s.name+"_tloop", true)
		p("JMP %s_store", s.name)
	}
	strided(s.name+"_loop", false)

	// C = alpha·acc + beta·C; beta == ±0 must not read C (it may hold NaNs).
	fmt.Fprintf(w, "%s_store:\n", s.name)
	alpha, beta := tmp(0), tmp(1)
	p("VBROADCASTSS alpha+56(FP), %s", alpha)
	p("MOVL beta+60(FP), AX")
	p("ANDL $0x7fffffff, AX")
	p("JZ %s_overwrite", s.name)
	p("VBROADCASTSS beta+60(FP), %s", beta)
	for i := 0; i < s.mr; i++ {
		for v := 0; v < vecs; v++ {
			p("VMULPS %s, %s, %s", alpha, acc(i, v), acc(i, v))
			p("VFMADD231PS %d(R12), %s, %s", 4*s.width*v, beta, acc(i, v))
			p("VMOVUPS %s, %d(R12)", acc(i, v), 4*s.width*v)
		}
		if i < s.mr-1 {
			p("ADDQ R13, R12")
		}
	}
	p("VZEROUPPER")
	p("RET")
	fmt.Fprintf(w, "%s_overwrite:\n", s.name)
	for i := 0; i < s.mr; i++ {
		for v := 0; v < vecs; v++ {
			p("VMULPS %s, %s, %s", alpha, acc(i, v), acc(i, v))
			p("VMOVUPS %s, %d(R12)", acc(i, v), 4*s.width*v)
		}
		if i < s.mr-1 {
			p("ADDQ R13, R12")
		}
	}
	p("VZEROUPPER")
	p("RET")
}

// writeTranspose16 emits the AVX-512 packer for a strided operand: it reads
// 16 source rows (byte offsets offs[r] from src; a caller with fewer rows
// repeats the last) 16 floats at a time and writes the 16×16 transpose, one
// output row of 16 floats per source column, stored under mask (the lanes
// the panel wants) dstStride bytes apart. Per block: 16 loads, the
// unpcklps/unpckhps, unpcklpd/unpckhpd, two vshuff32x4 stages (64 shuffles)
// and 16 masked stores.
func writeTranspose16(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, "\t"+format+"\n", args...) }
	z := func(i int) string { return fmt.Sprintf("Z%d", i) }
	fmt.Fprintf(w, "\n// func transpose16(dst *float32, dstStride int, src *float32, offs *[16]int, blocks int, mask uint16)\n")
	fmt.Fprintf(w, "TEXT ·transpose16(SB), NOSPLIT, $0-42\n")
	p("MOVQ dst+0(FP), DI")
	p("MOVQ dstStride+8(FP), DX")
	p("MOVQ src+16(FP), SI")
	p("MOVQ offs+24(FP), BX")
	p("MOVQ blocks+32(FP), CX")
	p("MOVWLZX mask+40(FP), AX")
	p("KMOVW AX, K1")
	p("TESTQ CX, CX")
	p("JZ transpose16_done")
	fmt.Fprintf(w, "transpose16_loop:\n")
	for r := 0; r < 16; r++ {
		p("MOVQ %d(BX), AX", 8*r)
		p("VMOVUPS (SI)(AX*1), %s", z(r))
	}
	// Stage 1: t[2j], t[2j+1] = unpack lo/hi ps of rows 2j, 2j+1 (Z16..Z31).
	for j := 0; j < 8; j++ {
		p("VUNPCKLPS %s, %s, %s", z(2*j+1), z(2*j), z(16+2*j))
		p("VUNPCKHPS %s, %s, %s", z(2*j+1), z(2*j), z(17+2*j))
	}
	// Stage 2: u[g][q] (Z4g+q): 128-bit chunk c holds rows 4g..4g+3 of
	// column q+4c.
	for g := 0; g < 4; g++ {
		t := 16 + 4*g
		p("VUNPCKLPD %s, %s, %s", z(t+2), z(t), z(4*g))
		p("VUNPCKHPD %s, %s, %s", z(t+2), z(t), z(4*g+1))
		p("VUNPCKLPD %s, %s, %s", z(t+3), z(t+1), z(4*g+2))
		p("VUNPCKHPD %s, %s, %s", z(t+3), z(t+1), z(4*g+3))
	}
	// Stage 3: pair groups 0,1 and 2,3 chunk-wise (Z16..Z31).
	for q := 0; q < 4; q++ {
		p("VSHUFF32X4 $0x44, %s, %s, %s", z(4+q), z(q), z(16+q))
		p("VSHUFF32X4 $0xEE, %s, %s, %s", z(4+q), z(q), z(20+q))
		p("VSHUFF32X4 $0x44, %s, %s, %s", z(12+q), z(8+q), z(24+q))
		p("VSHUFF32X4 $0xEE, %s, %s, %s", z(12+q), z(8+q), z(28+q))
	}
	// Stage 4: output row q+4c in Zq+4c.
	for q := 0; q < 4; q++ {
		p("VSHUFF32X4 $0x88, %s, %s, %s", z(24+q), z(16+q), z(q))
		p("VSHUFF32X4 $0xDD, %s, %s, %s", z(24+q), z(16+q), z(q+4))
		p("VSHUFF32X4 $0x88, %s, %s, %s", z(28+q), z(20+q), z(q+8))
		p("VSHUFF32X4 $0xDD, %s, %s, %s", z(28+q), z(20+q), z(q+12))
	}
	for r := 0; r < 16; r++ {
		p("VMOVUPS %s, K1, (DI)", z(r))
		p("ADDQ DX, DI")
	}
	p("ADDQ $64, SI")
	p("DECQ CX")
	p("JNZ transpose16_loop")
	fmt.Fprintf(w, "transpose16_done:\n")
	p("VZEROUPPER")
	p("RET")
}

// writeCopyRows emits the AVX-512 packer for a contiguous operand: n rows of
// up to 32 floats, loaded under loadMask (lanes not loaded read as zero) and
// stored under storeMask, so a short row is zero-padded to the panel width.
// Masked lanes are never touched in memory.
func writeCopyRows(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, "\t"+format+"\n", args...) }
	fmt.Fprintf(w, "\n// func copyRows(dst *float32, dstStride int, src *float32, srcStride int, n int, loadMask, storeMask uint32)\n")
	fmt.Fprintf(w, "TEXT ·copyRows(SB), NOSPLIT, $0-48\n")
	p("MOVQ dst+0(FP), DI")
	p("MOVQ dstStride+8(FP), DX")
	p("MOVQ src+16(FP), SI")
	p("MOVQ srcStride+24(FP), BX")
	p("MOVQ n+32(FP), CX")
	p("MOVL loadMask+40(FP), AX")
	p("KMOVW AX, K1")
	p("SHRL $16, AX")
	p("KMOVW AX, K2")
	p("MOVL storeMask+44(FP), AX")
	p("KMOVW AX, K3")
	p("SHRL $16, AX")
	p("KMOVW AX, K4")
	p("TESTQ CX, CX")
	p("JZ copyRows_done")
	fmt.Fprintf(w, "copyRows_loop:\n")
	p("VMOVUPS.Z (SI), K1, Z0")
	p("VMOVUPS.Z 64(SI), K2, Z1")
	p("VMOVUPS Z0, K3, (DI)")
	p("VMOVUPS Z1, K4, 64(DI)")
	p("ADDQ BX, SI")
	p("ADDQ DX, DI")
	p("DECQ CX")
	p("JNZ copyRows_loop")
	fmt.Fprintf(w, "copyRows_done:\n")
	p("VZEROUPPER")
	p("RET")
}

// writeTranspose6AVX2 emits the AVX2 packer of a full 6-row panel of a
// row-major A: 8 columns at a time it loads the 6×8 block (rows ld bytes
// apart) and stores its transpose, 8 panel rows of 6 floats = 48 contiguous
// floats. Rows 0–3 go through the two-stage unpack (unpcklps/unpckhps, then
// unpcklpd/unpckhpd: column p of rows 0–3 in one 128-bit half), rows 4–5
// through one unpack (their column p as one 64-bit pair); each panel row is
// a 16-byte and an 8-byte store. blocks ≥ 1.
func writeTranspose6AVX2(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, "\t"+format+"\n", args...) }
	fmt.Fprintf(w, "\n// func transpose6AVX2(dst *float32, src *float32, ld int, blocks int)\n")
	fmt.Fprintf(w, "TEXT ·transpose6AVX2(SB), NOSPLIT, $0-32\n")
	p("MOVQ dst+0(FP), DI")
	p("MOVQ src+8(FP), SI")
	p("MOVQ ld+16(FP), R8")
	p("MOVQ blocks+24(FP), CX")
	p("LEAQ (R8)(R8*2), R9")  // 3·ld
	p("LEAQ (R8)(R8*4), R10") // 5·ld
	fmt.Fprintf(w, "transpose6_loop:\n")
	p("VMOVUPS (SI), Y0")
	p("VMOVUPS (SI)(R8*1), Y1")
	p("VMOVUPS (SI)(R8*2), Y2")
	p("VMOVUPS (SI)(R9*1), Y3")
	p("VMOVUPS (SI)(R8*4), Y4")
	p("VMOVUPS (SI)(R10*1), Y5")
	p("VUNPCKLPS Y1, Y0, Y6")  // r0p0 r1p0 r0p1 r1p1 | p4, p5
	p("VUNPCKHPS Y1, Y0, Y7")  // p2, p3 | p6, p7
	p("VUNPCKLPS Y3, Y2, Y8")  // rows 2, 3
	p("VUNPCKHPS Y3, Y2, Y9")  //
	p("VUNPCKLPS Y5, Y4, Y14") // r4p0 r5p0 r4p1 r5p1 | p4, p5
	p("VUNPCKHPS Y5, Y4, Y15") // p2, p3 | p6, p7
	p("VUNPCKLPD Y8, Y6, Y10") // rows 0–3 of column 0 | column 4
	p("VUNPCKHPD Y8, Y6, Y11") // column 1 | 5
	p("VUNPCKLPD Y9, Y7, Y12") // column 2 | 6
	p("VUNPCKHPD Y9, Y7, Y13") // column 3 | 7
	p("VEXTRACTF128 $1, Y10, X6")
	p("VEXTRACTF128 $1, Y11, X7")
	p("VEXTRACTF128 $1, Y12, X8")
	p("VEXTRACTF128 $1, Y13, X9")
	p("VEXTRACTF128 $1, Y14, X0")
	p("VEXTRACTF128 $1, Y15, X1")
	type half struct {
		four, two string
		high      bool
	}
	rows := []half{
		{"X10", "X14", false}, {"X11", "X14", true}, {"X12", "X15", false}, {"X13", "X15", true},
		{"X6", "X0", false}, {"X7", "X0", true}, {"X8", "X1", false}, {"X9", "X1", true},
	}
	for c, r := range rows {
		p("VMOVUPS %s, %d(DI)", r.four, 24*c)
		if r.high {
			p("VMOVHPS %s, %d(DI)", r.two, 24*c+16)
		} else {
			p("VMOVQ %s, %d(DI)", r.two, 24*c+16)
		}
	}
	p("ADDQ $32, SI")
	p("ADDQ $192, DI")
	p("DECQ CX")
	p("JNZ transpose6_loop")
	p("VZEROUPPER")
	p("RET")
}

// writeCopyRows16AVX2 emits the AVX2 packer of a full 16-column panel of a
// row-major B: n rows of 16 floats, srcStride bytes apart, to consecutive
// 64-byte rows of dst. n ≥ 1.
func writeCopyRows16AVX2(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, "\t"+format+"\n", args...) }
	fmt.Fprintf(w, "\n// func copyRows16AVX2(dst *float32, src *float32, srcStride int, n int)\n")
	fmt.Fprintf(w, "TEXT ·copyRows16AVX2(SB), NOSPLIT, $0-32\n")
	p("MOVQ dst+0(FP), DI")
	p("MOVQ src+8(FP), SI")
	p("MOVQ srcStride+16(FP), BX")
	p("MOVQ n+24(FP), CX")
	fmt.Fprintf(w, "copyRows16_loop:\n")
	p("VMOVUPS (SI), Y0")
	p("VMOVUPS 32(SI), Y1")
	p("VMOVUPS Y0, (DI)")
	p("VMOVUPS Y1, 32(DI)")
	p("ADDQ BX, SI")
	p("ADDQ $64, DI")
	p("DECQ CX")
	p("JNZ copyRows16_loop")
	p("VZEROUPPER")
	p("RET")
}

// writeCopyRows6AVX2 emits the AVX2 packer of a transposed Ã's full
// 6-row panels: n rows of 6 floats, srcStride bytes apart, to consecutive
// 24-byte slots of dst. Each row moves as one 8-float load and store; the
// store's last two lanes spill into the next slot, which the next row's
// store overwrites (stores retire in order), so row p reads 8 floats from
// its start and writes dst up to float 6p+8: the caller leaves the last row
// to Go code.
func writeCopyRows6AVX2(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, "\t"+format+"\n", args...) }
	fmt.Fprintf(w, "\n// func copyRows6AVX2(dst *float32, src *float32, srcStride int, n int)\n")
	fmt.Fprintf(w, "TEXT ·copyRows6AVX2(SB), NOSPLIT, $0-32\n")
	p("MOVQ dst+0(FP), DI")
	p("MOVQ src+8(FP), SI")
	p("MOVQ srcStride+16(FP), BX")
	p("MOVQ n+24(FP), CX")
	p("TESTQ CX, CX")
	p("JZ copyRows6_done")
	fmt.Fprintf(w, "copyRows6_loop:\n")
	p("VMOVUPS (SI), Y0")
	p("VMOVUPS Y0, (DI)")
	p("ADDQ BX, SI")
	p("ADDQ $24, DI")
	p("DECQ CX")
	p("JNZ copyRows6_loop")
	p("VZEROUPPER")
	fmt.Fprintf(w, "copyRows6_done:\n")
	p("RET")
}

// writeCopyRows6MaskAVX2 emits copyRows6AVX2 for a ragged panel of fewer
// than 6 rows: each load is masked to the lanes set in mask (the panel's
// rows; the others read as zero and are not read from memory), so the
// slot's padding lanes are written as zeros. The stores spill as in
// copyRows6AVX2: the caller leaves the last row to Go code. n ≥ 1.
func writeCopyRows6MaskAVX2(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, "\t"+format+"\n", args...) }
	fmt.Fprintf(w, "\n// func copyRows6MaskAVX2(dst *float32, src *float32, srcStride int, n int, mask *[8]int32)\n")
	fmt.Fprintf(w, "TEXT ·copyRows6MaskAVX2(SB), NOSPLIT, $0-40\n")
	p("MOVQ dst+0(FP), DI")
	p("MOVQ src+8(FP), SI")
	p("MOVQ srcStride+16(FP), BX")
	p("MOVQ n+24(FP), CX")
	p("MOVQ mask+32(FP), AX")
	p("VMOVDQU (AX), Y1")
	fmt.Fprintf(w, "copyRows6Mask_loop:\n")
	p("VMASKMOVPS (SI), Y1, Y0")
	p("VMOVUPS Y0, (DI)")
	p("ADDQ BX, SI")
	p("ADDQ $24, DI")
	p("DECQ CX")
	p("JNZ copyRows6Mask_loop")
	p("VZEROUPPER")
	p("RET")
}

// writeTranspose8AVX2 emits the AVX2 packer of a transposed B's full
// panels: it reads 8 rows of stored B (ld bytes apart) 8 floats at a time
// and writes each 8×8 block's transpose, one output row of 8 floats per
// source column, dstStride bytes apart. Per block: 8 loads, 8 unpcklps/
// unpckhps, 8 shufps, 8 vperm2f128 and 8 stores. blocks ≥ 1.
func writeTranspose8AVX2(w *bytes.Buffer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, "\t"+format+"\n", args...) }
	y := func(i int) string { return fmt.Sprintf("Y%d", i) }
	fmt.Fprintf(w, "\n// func transpose8AVX2(dst *float32, dstStride int, src *float32, ld int, blocks int)\n")
	fmt.Fprintf(w, "TEXT ·transpose8AVX2(SB), NOSPLIT, $0-40\n")
	p("MOVQ dst+0(FP), DI")
	p("MOVQ dstStride+8(FP), DX")
	p("MOVQ src+16(FP), SI")
	p("MOVQ ld+24(FP), R8")
	p("MOVQ blocks+32(FP), CX")
	p("LEAQ (R8)(R8*2), R9")  // 3·ld
	p("LEAQ (R8)(R8*4), R10") // 5·ld
	p("LEAQ (R9)(R8*4), R11") // 7·ld
	p("LEAQ (DX)(DX*2), AX")  // 3·dstStride
	p("LEAQ (DX)(DX*4), BX")  // 5·dstStride
	p("LEAQ (AX)(DX*4), R12") // 7·dstStride
	p("MOVQ DX, R13")
	p("SHLQ $3, R13") // 8·dstStride
	fmt.Fprintf(w, "transpose8_loop:\n")
	rows := []string{"(SI)", "(SI)(R8*1)", "(SI)(R8*2)", "(SI)(R9*1)", "(SI)(R8*4)", "(SI)(R10*1)", "(SI)(R9*2)", "(SI)(R11*1)"}
	for r, a := range rows {
		p("VMOVUPS %s, %s", a, y(r))
	}
	// Output row c (source column c) in Y8+c.
	asmgen.Transpose8x8(p)
	outs := []string{"(DI)", "(DI)(DX*1)", "(DI)(DX*2)", "(DI)(AX*1)", "(DI)(DX*4)", "(DI)(BX*1)", "(DI)(AX*2)", "(DI)(R12*1)"}
	for c, a := range outs {
		p("VMOVUPS %s, %s", y(8+c), a)
	}
	p("ADDQ $32, SI")
	p("ADDQ R13, DI")
	p("DECQ CX")
	p("JNZ transpose8_loop")
	p("VZEROUPPER")
	p("RET")
}

// skinnyWidths are the tile widths of the skinny kernels.
var skinnyWidths = []int{1, 2, 4, 8}

// writeSkinny emits skinny{w}AVX512, the kernel of products with one short
// side (≤ 8): a 32×w tile T = Ã·B̃ over kc, Ã a packed panel of 32 rows
// (Ã[p*32+i]), B̃ kc rows of w floats (B̃[p*w+j]); the tile is stored column
// by column, T[j*32+i], for the Go driver to merge into C (either way round).
// The vectors run along the 32 rows (two zmm), so no lane is wasted on the
// short side; for w < 4 the k loop is unrolled over independent sets of
// accumulators to hide the FMA latency.
func writeSkinny(w *bytes.Buffer, width int) {
	p := func(format string, args ...any) { fmt.Fprintf(w, "\t"+format+"\n", args...) }
	sets := max(1, 4/width)
	acc := func(set, j, h int) string { return fmt.Sprintf("Z%d", set*2*width+2*j+h) }
	name := fmt.Sprintf("skinny%dAVX512", width)
	fmt.Fprintf(w, "\n// func %s(kc int, a *float32, b *float32, t *float32)\n", name)
	fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $0-32\n", name)
	p("MOVQ kc+0(FP), CX")
	p("MOVQ a+8(FP), SI")
	p("MOVQ b+16(FP), DX")
	p("MOVQ t+24(FP), DI")
	for set := 0; set < sets; set++ {
		for j := 0; j < width; j++ {
			for h := 0; h < 2; h++ {
				r := acc(set, j, h)
				p("VXORPS %s, %s, %s", r, r, r)
			}
		}
	}
	step := func(set, koff int) {
		p("VMOVUPS %d(SI), Z16", 128*koff)
		p("VMOVUPS %d(SI), Z17", 128*koff+64)
		for j := 0; j < width; j++ {
			t := fmt.Sprintf("Z%d", 18+j%2)
			p("VBROADCASTSS %d(DX), %s", 4*(width*koff+j), t)
			p("VFMADD231PS %s, Z16, %s", t, acc(set, j, 0))
			p("VFMADD231PS %s, Z17, %s", t, acc(set, j, 1))
		}
	}
	if sets > 1 {
		fmt.Fprintf(w, "%s_loop%d:\n", name, sets)
		p("CMPQ CX, $%d", sets)
		p("JB %s_one", name)
		for set := 0; set < sets; set++ {
			step(set, set)
		}
		p("ADDQ $%d, SI", 128*sets)
		p("ADDQ $%d, DX", 4*width*sets)
		p("SUBQ $%d, CX", sets)
		p("JMP %s_loop%d", name, sets)
	}
	fmt.Fprintf(w, "%s_one:\n", name)
	p("TESTQ CX, CX")
	p("JZ %s_store", name)
	step(0, 0)
	p("ADDQ $128, SI")
	p("ADDQ $%d, DX", 4*width)
	p("DECQ CX")
	p("JMP %s_one", name)
	fmt.Fprintf(w, "%s_store:\n", name)
	for set := 1; set < sets; set++ {
		for j := 0; j < width; j++ {
			for h := 0; h < 2; h++ {
				p("VADDPS %s, %s, %s", acc(set, j, h), acc(0, j, h), acc(0, j, h))
			}
		}
	}
	for j := 0; j < width; j++ {
		p("VMOVUPS %s, %d(DI)", acc(0, j, 0), 128*j)
		p("VMOVUPS %s, %d(DI)", acc(0, j, 1), 128*j+64)
	}
	p("VZEROUPPER")
	p("RET")
}
