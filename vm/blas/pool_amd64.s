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

// func poolRowsAVX2(dst, src *float32, rows, n, dstStride, srcStride, kh, hstride, taps int, init float32, isMax bool)
//
// For i < rows and j < n (n a multiple of 8, kh, taps >= 1; strides in
// elements): dst[i*dstStride+j] = init op src[i*srcStride + h*hstride +
// 2j + t] over h < kh (outer) and t < taps (inner), op max (Go's, NaN
// propagating, as poolStride2AVX2) or +. Reads, per row and h, up to
// src[..+2n+taps-1], one past the last element it uses.
TEXT ·poolRowsAVX2(SB), NOSPLIT, $0-77
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         rows+16(FP), R10
	MOVQ         dstStride+32(FP), R9
	SHLQ         $2, R9
	MOVQ         srcStride+40(FP), CX
	SHLQ         $2, CX
	MOVQ         hstride+56(FP), R8
	SHLQ         $2, R8
	VBROADCASTSS init+72(FP), Y6
	TESTQ        R10, R10
	JZ           prdone

prow:
	MOVQ DI, DX
	MOVQ SI, AX
	MOVQ n+24(FP), BX
	SHRQ $3, BX
	JZ   prnext

pblock:
	VMOVAPS Y6, Y3
	MOVQ    AX, R11
	MOVQ    kh+48(FP), R12

ph:
	MOVQ R11, R13
	MOVQ taps+64(FP), R14

ptap:
	VMOVUPS (R13), Y0
	VMOVUPS 32(R13), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VPERMPD $0xD8, Y2, Y2
	CMPB    isMax+76(FP), $0
	JEQ     psum
	VMAXPS    Y2, Y3, Y4
	VCMPPS    $3, Y3, Y3, Y5
	VBLENDVPS Y5, Y3, Y4, Y3
	JMP       pnexttap

psum:
	VADDPS Y2, Y3, Y3

pnexttap:
	ADDQ $4, R13
	DECQ R14
	JNZ  ptap
	ADDQ R8, R11
	DECQ R12
	JNZ  ph
	VMOVUPS Y3, (DX)
	ADDQ    $32, DX
	ADDQ    $64, AX
	DECQ    BX
	JNZ     pblock

prnext:
	ADDQ R9, DI
	ADDQ CX, SI
	DECQ R10
	JNZ  prow

prdone:
	VZEROUPPER
	RET
