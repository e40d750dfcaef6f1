//go:build !purego

#include "textflag.h"

// func poolStride2AVX2(dst, src *float32, n int, isMax bool)
//
// dst[j] = max(dst[j], src[2j]) (isMax) or dst[j] + src[2j], for j < n,
// n a multiple of 8, reading src[0 : 2n]. Per 8 outputs: two loads of 8,
// VSHUFPS picks the even elements of each 128-bit lane and VPERMPD puts
// the lanes in order. The max propagates a NaN of either operand (Go's
// max): VMAXPS returns its second source when either is NaN (the data
// element), so a NaN already in dst is blended back.
TEXT ·poolStride2AVX2(SB), NOSPLIT, $0-25
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), CX
	MOVBQZX isMax+24(FP), R9
	SHRQ    $3, CX
	JZ      done
	TESTQ   R9, R9
	JZ      sumloop

maxloop:
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y1
	VSHUFPS   $0x88, Y1, Y0, Y2
	VPERMPD   $0xD8, Y2, Y2
	VMOVUPS   (DI), Y3
	VMAXPS    Y2, Y3, Y4
	VCMPPS    $3, Y3, Y3, Y5
	VBLENDVPS Y5, Y3, Y4, Y3
	VMOVUPS   Y3, (DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       maxloop
	JMP       done

sumloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VPERMPD $0xD8, Y2, Y2
	VADDPS  (DI), Y2, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     sumloop

done:
	VZEROUPPER
	RET
