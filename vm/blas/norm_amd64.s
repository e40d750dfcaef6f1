//go:build !purego

#include "textflag.h"

// func normF32AVX2(dst, x, scale, shift *float32, n int, m, rs float32)
TEXT ·normF32AVX2(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         scale+16(FP), DX
	MOVQ         shift+24(FP), R8
	MOVQ         n+32(FP), CX
	VBROADCASTSS m+40(FP), Y14
	VBROADCASTSS rs+44(FP), Y15
	XORQ         AX, AX
	MOVQ         CX, BX
	ANDQ         $-16, BX
	JZ           norm8

norm16:
	VMOVUPS     (SI)(AX*4), Y0
	VMOVUPS     32(SI)(AX*4), Y1
	VSUBPS      Y14, Y0, Y0
	VSUBPS      Y14, Y1, Y1
	VMULPS      Y15, Y0, Y0
	VMULPS      Y15, Y1, Y1
	VMOVUPS     (R8)(AX*4), Y2
	VMOVUPS     32(R8)(AX*4), Y3
	VFMADD132PS (DX)(AX*4), Y2, Y0
	VFMADD132PS 32(DX)(AX*4), Y3, Y1
	VMOVUPS     Y0, (DI)(AX*4)
	VMOVUPS     Y1, 32(DI)(AX*4)
	ADDQ        $16, AX
	CMPQ        AX, BX
	JB          norm16

norm8:
	CMPQ AX, CX
	JAE  normdone
	VMOVUPS     (SI)(AX*4), Y0
	VSUBPS      Y14, Y0, Y0
	VMULPS      Y15, Y0, Y0
	VMOVUPS     (R8)(AX*4), Y2
	VFMADD132PS (DX)(AX*4), Y2, Y0
	VMOVUPS     Y0, (DI)(AX*4)

normdone:
	VZEROUPPER
	RET

// func normScaleF32AVX2(dst, x, scale *float32, n int, m, rs float32)
TEXT ·normScaleF32AVX2(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         scale+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS m+32(FP), Y14
	VBROADCASTSS rs+36(FP), Y15
	XORQ         AX, AX
	TESTQ        CX, CX
	JZ           scaledone

scale8:
	VMOVUPS (SI)(AX*4), Y0
	VSUBPS  Y14, Y0, Y0
	VMULPS  Y15, Y0, Y0
	VMULPS  (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	CMPQ    AX, CX
	JB      scale8

scaledone:
	VZEROUPPER
	RET
