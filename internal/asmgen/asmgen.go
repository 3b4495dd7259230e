// Package asmgen holds the instruction sequences that more than one of the
// assembly generators emits (internal/gemm/asm_gen.go and
// tensor/wino_asm_gen.go, run by go generate). It is imported by those
// generators only, never by the engine.
package asmgen

// Transpose8x8 emits the AVX2 transpose of the 8×8 block of floats in
// Y0–Y7 (row r in Yr) into Y8–Y15 (column c of the block in Y8+c),
// overwriting Y0–Y7. op writes one instruction (Go assembler syntax, format
// and arguments as fmt.Sprintf).
//
// Three stages, 24 shuffles: unpcklps/unpckhps pair rows 2q, 2q+1 (per
// 128-bit lane, columns c, c+1 and c+2, c+3 of the two rows); shufps $0x44
// and $0xEE join two such pairs, giving rows 0–3 (u0–u3) and 4–7 (u4–u7)
// of columns c | c+4 for c = 0…3; vperm2f128 $0x20 and $0x31 join the low
// and the high lanes of u_c and u_{c+4}.
func Transpose8x8(op func(format string, args ...any)) {
	for q := 0; q < 4; q++ {
		op("VUNPCKLPS Y%d, Y%d, Y%d", 2*q+1, 2*q, 8+2*q)
		op("VUNPCKHPS Y%d, Y%d, Y%d", 2*q+1, 2*q, 9+2*q)
	}
	for h := 0; h < 2; h++ {
		t := 8 + 4*h
		op("VSHUFPS $0x44, Y%d, Y%d, Y%d", t+2, t, 4*h)
		op("VSHUFPS $0xEE, Y%d, Y%d, Y%d", t+2, t, 4*h+1)
		op("VSHUFPS $0x44, Y%d, Y%d, Y%d", t+3, t+1, 4*h+2)
		op("VSHUFPS $0xEE, Y%d, Y%d, Y%d", t+3, t+1, 4*h+3)
	}
	for c := 0; c < 4; c++ {
		op("VPERM2F128 $0x20, Y%d, Y%d, Y%d", c+4, c, 8+c)
		op("VPERM2F128 $0x31, Y%d, Y%d, Y%d", c+4, c, 12+c)
	}
}
