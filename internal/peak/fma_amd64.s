//go:build !noasm

#include "textflag.h"

// The register-only FMA loops of package peak (peak.go): independent chains
// acc += 1·1 in registers, no loads or stores, enough of them to cover the FMA
// latency times the FMA ports of current x86 cores (4 cycles × 2 ports: 8
// chains; 16 for AVX-512, 12 for AVX2, all the registers leave). After the
// loop the chains are summed, so lane 0 of the result is chains·iters (exact
// while that is below 2^24) and a test can check every chain ran.

// func fmaAVX512(iters int) float32
// 16 chains of VFMADD231PS on 16 float32 lanes: 512 FLOPs per iteration.
TEXT ·fmaAVX512(SB), NOSPLIT, $0-12
	MOVQ         iters+0(FP), CX
	MOVL         $0x3f800000, AX // 1.0
	VPBROADCASTD AX, Z31
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPXORD       Z2, Z2, Z2
	VPXORD       Z3, Z3, Z3
	VPXORD       Z4, Z4, Z4
	VPXORD       Z5, Z5, Z5
	VPXORD       Z6, Z6, Z6
	VPXORD       Z7, Z7, Z7
	VPXORD       Z8, Z8, Z8
	VPXORD       Z9, Z9, Z9
	VPXORD       Z10, Z10, Z10
	VPXORD       Z11, Z11, Z11
	VPXORD       Z12, Z12, Z12
	VPXORD       Z13, Z13, Z13
	VPXORD       Z14, Z14, Z14
	VPXORD       Z15, Z15, Z15
	TESTQ        CX, CX
	JLE          sum512

loop512:
	VFMADD231PS Z31, Z31, Z0
	VFMADD231PS Z31, Z31, Z1
	VFMADD231PS Z31, Z31, Z2
	VFMADD231PS Z31, Z31, Z3
	VFMADD231PS Z31, Z31, Z4
	VFMADD231PS Z31, Z31, Z5
	VFMADD231PS Z31, Z31, Z6
	VFMADD231PS Z31, Z31, Z7
	VFMADD231PS Z31, Z31, Z8
	VFMADD231PS Z31, Z31, Z9
	VFMADD231PS Z31, Z31, Z10
	VFMADD231PS Z31, Z31, Z11
	VFMADD231PS Z31, Z31, Z12
	VFMADD231PS Z31, Z31, Z13
	VFMADD231PS Z31, Z31, Z14
	VFMADD231PS Z31, Z31, Z15
	DECQ        CX
	JNZ         loop512

sum512:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z5, Z4, Z4
	VADDPS Z7, Z6, Z6
	VADDPS Z9, Z8, Z8
	VADDPS Z11, Z10, Z10
	VADDPS Z13, Z12, Z12
	VADDPS Z15, Z14, Z14
	VADDPS Z2, Z0, Z0
	VADDPS Z6, Z4, Z4
	VADDPS Z10, Z8, Z8
	VADDPS Z14, Z12, Z12
	VADDPS Z4, Z0, Z0
	VADDPS Z12, Z8, Z8
	VADDPS Z8, Z0, Z0
	VMOVSS X0, ret+8(FP)
	VZEROUPPER
	RET

// func fmaAVX2(iters int) float32
// 12 chains of VFMADD231PS on 8 float32 lanes: 192 FLOPs per iteration.
TEXT ·fmaAVX2(SB), NOSPLIT, $0-12
	MOVQ         iters+0(FP), CX
	MOVL         $0x3f800000, AX // 1.0
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3
	VXORPS       Y4, Y4, Y4
	VXORPS       Y5, Y5, Y5
	VXORPS       Y6, Y6, Y6
	VXORPS       Y7, Y7, Y7
	VXORPS       Y8, Y8, Y8
	VXORPS       Y9, Y9, Y9
	VXORPS       Y10, Y10, Y10
	VXORPS       Y11, Y11, Y11
	TESTQ        CX, CX
	JLE          sum256

loop256:
	VFMADD231PS Y15, Y15, Y0
	VFMADD231PS Y15, Y15, Y1
	VFMADD231PS Y15, Y15, Y2
	VFMADD231PS Y15, Y15, Y3
	VFMADD231PS Y15, Y15, Y4
	VFMADD231PS Y15, Y15, Y5
	VFMADD231PS Y15, Y15, Y6
	VFMADD231PS Y15, Y15, Y7
	VFMADD231PS Y15, Y15, Y8
	VFMADD231PS Y15, Y15, Y9
	VFMADD231PS Y15, Y15, Y10
	VFMADD231PS Y15, Y15, Y11
	DECQ        CX
	JNZ         loop256

sum256:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y5, Y4, Y4
	VADDPS Y7, Y6, Y6
	VADDPS Y9, Y8, Y8
	VADDPS Y11, Y10, Y10
	VADDPS Y2, Y0, Y0
	VADDPS Y6, Y4, Y4
	VADDPS Y10, Y8, Y8
	VADDPS Y4, Y0, Y0
	VADDPS Y8, Y0, Y0
	VMOVSS X0, ret+8(FP)
	VZEROUPPER
	RET
