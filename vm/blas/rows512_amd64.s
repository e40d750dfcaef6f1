//go:build !purego

// 512-bit row loops (rows512_amd64.go): the row reductions and layer
// norm's normalization on ZMM registers, n a multiple of 16.

#include "textflag.h"

// Folds Z0..Z3 into the float32 sum in X0.
#define HSUM4Z \
	VADDPS        Z1, Z0, Z0;  \
	VADDPS        Z3, Z2, Z2;  \
	VADDPS        Z2, Z0, Z0;  \
	VEXTRACTF32X8 $1, Z0, Y1;  \
	VADDPS        Y1, Y0, Y0;  \
	VEXTRACTF128  $1, Y0, X1;  \
	VADDPS        X1, X0, X0;  \
	VMOVHLPS      X0, X1, X1;  \
	VADDPS        X1, X0, X0;  \
	VMOVSHDUP     X0, X1;      \
	VADDSS        X1, X0, X0

// func sumF32AVX512(a *float32, n int) float32
TEXT ·sumF32AVX512(SB), NOSPLIT, $0-20
	MOVQ   a+0(FP), SI
	MOVQ   n+8(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   CX, BX
	ANDQ   $-64, BX
	JZ     sum16

sum64:
	VADDPS (SI)(AX*4), Z0, Z0
	VADDPS 64(SI)(AX*4), Z1, Z1
	VADDPS 128(SI)(AX*4), Z2, Z2
	VADDPS 192(SI)(AX*4), Z3, Z3
	ADDQ   $64, AX
	CMPQ   AX, BX
	JB     sum64

sum16:
	CMPQ AX, CX
	JAE  sumfold
	VADDPS (SI)(AX*4), Z0, Z0
	ADDQ   $16, AX
	JMP    sum16

sumfold:
	HSUM4Z
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func dotF32AVX512(a, b *float32, n int) float32
TEXT ·dotF32AVX512(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DX
	MOVQ   n+16(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   CX, BX
	ANDQ   $-64, BX
	JZ     dot16

dot64:
	VMOVUPS     (SI)(AX*4), Z4
	VMOVUPS     64(SI)(AX*4), Z5
	VMOVUPS     128(SI)(AX*4), Z6
	VMOVUPS     192(SI)(AX*4), Z7
	VFMADD231PS (DX)(AX*4), Z4, Z0
	VFMADD231PS 64(DX)(AX*4), Z5, Z1
	VFMADD231PS 128(DX)(AX*4), Z6, Z2
	VFMADD231PS 192(DX)(AX*4), Z7, Z3
	ADDQ        $64, AX
	CMPQ        AX, BX
	JB          dot64

dot16:
	CMPQ AX, CX
	JAE  dotfold
	VMOVUPS     (SI)(AX*4), Z4
	VFMADD231PS (DX)(AX*4), Z4, Z0
	ADDQ        $16, AX
	JMP         dot16

dotfold:
	HSUM4Z
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func normF32AVX512(dst, x, scale, shift *float32, n int, m, rs float32)
//
// dst = ((x - m) * rs) * scale + shift, the last two fused: normF32AVX2's
// operations, 16 lanes at a time.
TEXT ·normF32AVX512(SB), NOSPLIT, $0-48
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         scale+16(FP), DX
	MOVQ         shift+24(FP), R8
	MOVQ         n+32(FP), CX
	VBROADCASTSS m+40(FP), Z14
	VBROADCASTSS rs+44(FP), Z15
	XORQ         AX, AX
	TESTQ        CX, CX
	JZ           normdone

norm16:
	VMOVUPS     (SI)(AX*4), Z0
	VSUBPS      Z14, Z0, Z0
	VMULPS      Z15, Z0, Z0
	VMOVUPS     (R8)(AX*4), Z2
	VFMADD132PS (DX)(AX*4), Z2, Z0
	VMOVUPS     Z0, (DI)(AX*4)
	ADDQ        $16, AX
	CMPQ        AX, CX
	JB          norm16

normdone:
	VZEROUPPER
	RET

// func normScaleF32AVX512(dst, x, scale *float32, n int, m, rs float32)
TEXT ·normScaleF32AVX512(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         scale+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS m+32(FP), Z14
	VBROADCASTSS rs+36(FP), Z15
	XORQ         AX, AX
	TESTQ        CX, CX
	JZ           scaledone

scale16:
	VMOVUPS (SI)(AX*4), Z0
	VSUBPS  Z14, Z0, Z0
	VMULPS  Z15, Z0, Z0
	VMULPS  (DX)(AX*4), Z0, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ    $16, AX
	CMPQ    AX, CX
	JB      scale16

scaledone:
	VZEROUPPER
	RET
