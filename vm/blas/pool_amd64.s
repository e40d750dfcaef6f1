//go:build !purego

#include "textflag.h"

// func poolStride2AVX2(dst, src *float32, n, taps int, isMax bool)
//
// dst[j] = max(dst[j], src[2j], src[2j+1], .., src[2j+taps-1]) (isMax) or
// dst[j] + src[2j] + .. + src[2j+taps-1] (in that order), for j < n, n a
// multiple of 8, taps >= 1, reading src[0 : 2n+taps-1]. Per 8 outputs and
// tap: two loads of 8, VSHUFPS picks the even elements of each 128-bit
// lane and VPERMPD puts the lanes in order. The max propagates a NaN of
// either operand (Go's max): VMAXPS returns its second source when either
// is NaN (the data element), so a NaN already in the accumulator is
// blended back.
TEXT ·poolStride2AVX2(SB), NOSPLIT, $0-33
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), CX
	MOVQ    taps+24(FP), R8
	MOVBQZX isMax+32(FP), R9
	SHRQ    $3, CX
	JZ      done

block:
	VMOVUPS (DI), Y3
	MOVQ    SI, AX
	MOVQ    R8, BX

tap:
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VPERMPD $0xD8, Y2, Y2
	TESTQ   R9, R9
	JZ      sum
	VMAXPS    Y2, Y3, Y4
	VCMPPS    $3, Y3, Y3, Y5
	VBLENDVPS Y5, Y3, Y4, Y3
	JMP     next

sum:
	VADDPS Y2, Y3, Y3

next:
	ADDQ $4, AX
	DECQ BX
	JNZ  tap
	VMOVUPS Y3, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     block

done:
	VZEROUPPER
	RET
