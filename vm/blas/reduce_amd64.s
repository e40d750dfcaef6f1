//go:build !purego

// AVX2 dot product, AXPY and reductions (see reduce.go for the contracts).

#include "textflag.h"

// Folds Y0..Y3 into the low lane of X0 (sum).
#define HSUM4 \
	VADDPS       Y1, Y0, Y0;  \
	VADDPS       Y3, Y2, Y2;  \
	VADDPS       Y2, Y0, Y0;  \
	VEXTRACTF128 $1, Y0, X1;  \
	VADDPS       X1, X0, X0;  \
	VMOVHLPS     X0, X1, X1;  \
	VADDPS       X1, X0, X0;  \
	VMOVSHDUP    X0, X1;      \
	VADDSS       X1, X0, X0

// func dotF32AVX2(a, b *float32, n int) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DX
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, BX
	ANDQ   $-32, BX
	JZ     dot8

dot32:
	VMOVUPS     (SI)(AX*4), Y4
	VMOVUPS     32(SI)(AX*4), Y5
	VMOVUPS     64(SI)(AX*4), Y6
	VMOVUPS     96(SI)(AX*4), Y7
	VFMADD231PS (DX)(AX*4), Y4, Y0
	VFMADD231PS 32(DX)(AX*4), Y5, Y1
	VFMADD231PS 64(DX)(AX*4), Y6, Y2
	VFMADD231PS 96(DX)(AX*4), Y7, Y3
	ADDQ        $32, AX
	CMPQ        AX, BX
	JB          dot32

dot8:
	MOVQ CX, BX
	ANDQ $-8, BX
	CMPQ AX, BX
	JAE  dotfold

dot8loop:
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DX)(AX*4), Y4, Y0
	ADDQ        $8, AX
	CMPQ        AX, BX
	JB          dot8loop

dotfold:
	HSUM4
	CMPQ AX, CX
	JAE  dotdone

dot1:
	VMOVSS      (SI)(AX*4), X4
	VFMADD231SS (DX)(AX*4), X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JB          dot1

dotdone:
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func axpyF32AVX2(alpha float32, x, y *float32, n int)
TEXT ·axpyF32AVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y15
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	MOVQ         n+24(FP), CX
	XORQ         AX, AX
	MOVQ         CX, BX
	ANDQ         $-32, BX
	JZ           axpy8

axpy32:
	VMOVUPS     (DI)(AX*4), Y0
	VMOVUPS     32(DI)(AX*4), Y1
	VMOVUPS     64(DI)(AX*4), Y2
	VMOVUPS     96(DI)(AX*4), Y3
	VFMADD231PS (SI)(AX*4), Y15, Y0
	VFMADD231PS 32(SI)(AX*4), Y15, Y1
	VFMADD231PS 64(SI)(AX*4), Y15, Y2
	VFMADD231PS 96(SI)(AX*4), Y15, Y3
	VMOVUPS     Y0, (DI)(AX*4)
	VMOVUPS     Y1, 32(DI)(AX*4)
	VMOVUPS     Y2, 64(DI)(AX*4)
	VMOVUPS     Y3, 96(DI)(AX*4)
	ADDQ        $32, AX
	CMPQ        AX, BX
	JB          axpy32

axpy8:
	MOVQ CX, BX
	ANDQ $-8, BX
	CMPQ AX, BX
	JAE  axpy1check

axpy8loop:
	VMOVUPS     (DI)(AX*4), Y0
	VFMADD231PS (SI)(AX*4), Y15, Y0
	VMOVUPS     Y0, (DI)(AX*4)
	ADDQ        $8, AX
	CMPQ        AX, BX
	JB          axpy8loop

axpy1check:
	CMPQ AX, CX
	JAE  axpydone

axpy1:
	VMOVSS      (DI)(AX*4), X0
	VFMADD231SS (SI)(AX*4), X15, X0
	VMOVSS      X0, (DI)(AX*4)
	INCQ        AX
	CMPQ        AX, CX
	JB          axpy1

axpydone:
	VZEROUPPER
	RET

// func sumF32AVX2(a *float32, n int) float32
TEXT ·sumF32AVX2(SB), NOSPLIT, $0-20
	MOVQ   a+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   CX, BX
	ANDQ   $-32, BX
	JZ     sum8

sum32:
	VADDPS (SI)(AX*4), Y0, Y0
	VADDPS 32(SI)(AX*4), Y1, Y1
	VADDPS 64(SI)(AX*4), Y2, Y2
	VADDPS 96(SI)(AX*4), Y3, Y3
	ADDQ   $32, AX
	CMPQ   AX, BX
	JB     sum32

sum8:
	MOVQ CX, BX
	ANDQ $-8, BX
	CMPQ AX, BX
	JAE  sumfold

sum8loop:
	VADDPS (SI)(AX*4), Y0, Y0
	ADDQ   $8, AX
	CMPQ   AX, BX
	JB     sum8loop

sumfold:
	HSUM4
	CMPQ AX, CX
	JAE  sumdone

sum1:
	VADDSS (SI)(AX*4), X0, X0
	INCQ   AX
	CMPQ   AX, CX
	JB     sum1

sumdone:
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func maxF32AVX2(a *float32, blocks int) (m float32, nan bool)
//
// Max over a[:8*blocks] (blocks >= 1), and whether any of it is NaN
// (VMAXPS drops NaNs depending on operand order, so they are tracked
// with an unordered compare instead).
TEXT ·maxF32AVX2(SB), NOSPLIT, $0-21
	MOVQ         a+0(FP), SI
	MOVQ         blocks+8(FP), CX
	VMOVUPS      (SI), Y0
	VMOVAPS      Y0, Y1
	VXORPS       Y4, Y4, Y4
	VCMPPS       $3, Y0, Y0, Y4
	ADDQ         $32, SI
	DECQ         CX
	JZ           maxfold

maxloop:
	VMOVUPS (SI), Y5
	VMAXPS  Y5, Y0, Y0
	VCMPPS  $3, Y5, Y5, Y6
	VORPS   Y6, Y4, Y4
	ADDQ    $32, SI
	DECQ    CX
	JNZ     maxloop

maxfold:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4E, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xB1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSS       X0, m+16(FP)
	VMOVMSKPS    Y4, AX
	TESTL        AX, AX
	SETNE        nan+20(FP)
	VZEROUPPER
	RET
