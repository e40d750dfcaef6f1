//go:build !purego

#include "textflag.h"

// Packers of the pixel-row convolution's A panels (conv_pixels.go): per
// k, the 6 pixels of a panel at data offset koff[k], into 6 consecutive
// floats of dst.

// func packPix6ContigAVX2(dst, src *float32, koff *int, n int)
//
// dst[6k+j] = src[koff[k]+j] for k < n, j < 6, writing 8 floats per k
// (the last two are overwritten by the next k, or land in dst's slack)
// and reading src[koff[k] : koff[k]+8].
TEXT ·packPix6ContigAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ koff+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   c1

c4:
	MOVQ    0(R8), AX
	VMOVUPS (SI)(AX*4), Y0
	MOVQ    8(R8), DX
	VMOVUPS (SI)(DX*4), Y1
	MOVQ    16(R8), R9
	VMOVUPS (SI)(R9*4), Y2
	MOVQ    24(R8), R10
	VMOVUPS (SI)(R10*4), Y3
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 24(DI)
	VMOVUPS Y2, 48(DI)
	VMOVUPS Y3, 72(DI)
	ADDQ    $32, R8
	ADDQ    $96, DI
	DECQ    BX
	JNZ     c4

c1:
	TESTQ CX, CX
	JZ    cdone

c1loop:
	MOVQ    0(R8), AX
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS Y0, 0(DI)
	ADDQ    $8, R8
	ADDQ    $24, DI
	DECQ    CX
	JNZ     c1loop

cdone:
	VZEROUPPER
	RET

// func packPix6Gather(dst, src *float32, koff *int, n int, pix *int)
//
// dst[6k+j] = src[koff[k]+pix[j]] for k < n, j < 6.
TEXT ·packPix6Gather(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ koff+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ pix+32(FP), AX
	MOVQ 0(AX), R9
	MOVQ 8(AX), R10
	MOVQ 16(AX), R11
	MOVQ 24(AX), R12
	MOVQ 32(AX), R13
	MOVQ 40(AX), R14
	TESTQ CX, CX
	JZ   gdone

gloop:
	MOVQ 0(R8), AX
	LEAQ (SI)(AX*4), BX
	MOVL (BX)(R9*4), AX
	MOVL (BX)(R10*4), DX
	MOVL AX, 0(DI)
	MOVL DX, 4(DI)
	MOVL (BX)(R11*4), AX
	MOVL (BX)(R12*4), DX
	MOVL AX, 8(DI)
	MOVL DX, 12(DI)
	MOVL (BX)(R13*4), AX
	MOVL (BX)(R14*4), DX
	MOVL AX, 16(DI)
	MOVL DX, 20(DI)
	ADDQ $8, R8
	ADDQ $24, DI
	DECQ CX
	JNZ  gloop

gdone:
	RET

// func transpose8x8AVX2(dst *float32, ldd int, src *float32, lds int)
//
// dst[i*ldd+j] = src[j*lds+i] for i, j < 8 (strides in elements).
TEXT ·transpose8x8AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R9
	SHLQ $2, R9
	VMOVUPS (SI), Y0
	ADDQ    R9, SI
	VMOVUPS (SI), Y1
	ADDQ    R9, SI
	VMOVUPS (SI), Y2
	ADDQ    R9, SI
	VMOVUPS (SI), Y3
	ADDQ    R9, SI
	VMOVUPS (SI), Y4
	ADDQ    R9, SI
	VMOVUPS (SI), Y5
	ADDQ    R9, SI
	VMOVUPS (SI), Y6
	ADDQ    R9, SI
	VMOVUPS (SI), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (DI)
	ADDQ    R8, DI
	VMOVUPS Y9, (DI)
	ADDQ    R8, DI
	VMOVUPS Y10, (DI)
	ADDQ    R8, DI
	VMOVUPS Y11, (DI)
	ADDQ    R8, DI
	VMOVUPS Y12, (DI)
	ADDQ    R8, DI
	VMOVUPS Y13, (DI)
	ADDQ    R8, DI
	VMOVUPS Y14, (DI)
	ADDQ    R8, DI
	VMOVUPS Y15, (DI)
	VZEROUPPER
	RET

// BIASLOOP is biasReLUAVX2's loop: dst[AX] = CLAMP(src[AX] + Y14) for AX
// up to CX, 32 floats at a time below BX, 8 below DX, then one at a time
// (CLAMP1), then on to done. L32, L8 and L1 name its labels, one set per
// expansion.
#define BIASLOOP(L32, L8, L1, CLAMP, CLAMP1) \
L32:                          \
	CMPQ    AX, BX;           \
	JAE     L8;               \
	VMOVUPS 0(SI)(AX*4), Y0;  \
	VMOVUPS 32(SI)(AX*4), Y1; \
	VMOVUPS 64(SI)(AX*4), Y2; \
	VMOVUPS 96(SI)(AX*4), Y3; \
	VADDPS  Y14, Y0, Y0;      \
	VADDPS  Y14, Y1, Y1;      \
	VADDPS  Y14, Y2, Y2;      \
	VADDPS  Y14, Y3, Y3;      \
	CLAMP(Y0);                \
	CLAMP(Y1);                \
	CLAMP(Y2);                \
	CLAMP(Y3);                \
	VMOVUPS Y0, 0(DI)(AX*4);  \
	VMOVUPS Y1, 32(DI)(AX*4); \
	VMOVUPS Y2, 64(DI)(AX*4); \
	VMOVUPS Y3, 96(DI)(AX*4); \
	ADDQ    $32, AX;          \
	JMP     L32;              \
L8:                           \
	CMPQ    AX, DX;           \
	JAE     L1;               \
	VMOVUPS (SI)(AX*4), Y0;   \
	VADDPS  Y14, Y0, Y0;      \
	CLAMP(Y0);                \
	VMOVUPS Y0, (DI)(AX*4);   \
	ADDQ    $8, AX;           \
	JMP     L8;               \
L1:                           \
	CMPQ    AX, CX;           \
	JAE     done;             \
	VMOVSS  (SI)(AX*4), X0;   \
	VADDSS  X14, X0, X0;      \
	CLAMP1(X0);               \
	VMOVSS  X0, (DI)(AX*4);   \
	INCQ    AX;               \
	JMP     L1

// RELU8 and RELU1 are MaxScalarF32's max(0, x) on 8 floats and on one
// (Y15 and X15 hold zeros; x when x is NaN); NOCLAMP leaves x as it is.
#define RELU8(Y) VMAXPS Y, Y15, Y
#define RELU1(X) VMAXSS X, X15, X
#define NOCLAMP(R)

// func biasReLUAVX2(dst, src *float32, n int, b float32, relu bool)
// dst[i] = src[i] + b, then max(0, that) when relu, with AddScalarF32's
// and MaxScalarF32's instructions and operand order (the same results,
// NaN and signed zeros included).
TEXT ·biasReLUAVX2(SB), NOSPLIT, $0-29
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS b+24(FP), Y14
	MOVBQZX relu+28(FP), R9
	VXORPS Y15, Y15, Y15
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX
	MOVQ CX, DX
	ANDQ $-8, DX
	TESTQ R9, R9
	JZ add

	BIASLOOP(relu32, relu8, relu1, RELU8, RELU1)

add:
	BIASLOOP(add32, add8, add1, NOCLAMP, NOCLAMP)

done:
	VZEROUPPER
	RET

// func scalarChainAVX2(dst, src *float32, n int, ops *ChainOp, nops int)
// dst = src, then op_i with scalar_i for each op in order, 32 floats at a
// time kept in registers: ChainAdd x+s (AddScalarF32's VADDPS s, x),
// ChainMul x*s (ScaleF32's VMULPS s, x), ChainDiv x/s (DivF32's VDIVPS),
// ChainMax max(s, x) (MaxScalarF32's VMAXPS x, s: x when x is NaN).
// ChainOp is {op uint8; _ [3]byte; s float32}: 8 bytes.
TEXT ·scalarChainAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ ops+24(FP), R8
	MOVQ nops+32(FP), R9
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX
	MOVQ CX, DX
	ANDQ $-8, DX

blk32:
	CMPQ AX, BX
	JAE blk8
	VMOVUPS 0(SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y1
	VMOVUPS 64(SI)(AX*4), Y2
	VMOVUPS 96(SI)(AX*4), Y3
	XORQ R10, R10
op32:
	CMPQ R10, R9
	JAE store32
	MOVBQZX 0(R8)(R10*8), R11
	VBROADCASTSS 4(R8)(R10*8), Y15
	INCQ R10
	CMPQ R11, $1
	JEQ mul32
	CMPQ R11, $2
	JEQ div32
	CMPQ R11, $3
	JEQ max32
	VADDPS Y15, Y0, Y0
	VADDPS Y15, Y1, Y1
	VADDPS Y15, Y2, Y2
	VADDPS Y15, Y3, Y3
	JMP op32
mul32:
	VMULPS Y15, Y0, Y0
	VMULPS Y15, Y1, Y1
	VMULPS Y15, Y2, Y2
	VMULPS Y15, Y3, Y3
	JMP op32
div32:
	VDIVPS Y15, Y0, Y0
	VDIVPS Y15, Y1, Y1
	VDIVPS Y15, Y2, Y2
	VDIVPS Y15, Y3, Y3
	JMP op32
max32:
	VMAXPS Y0, Y15, Y0
	VMAXPS Y1, Y15, Y1
	VMAXPS Y2, Y15, Y2
	VMAXPS Y3, Y15, Y3
	JMP op32
store32:
	VMOVUPS Y0, 0(DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	ADDQ $32, AX
	JMP blk32

blk8:
	CMPQ AX, DX
	JAE blk1
	VMOVUPS 0(SI)(AX*4), Y0
	XORQ R10, R10
op8:
	CMPQ R10, R9
	JAE store8
	MOVBQZX 0(R8)(R10*8), R11
	VBROADCASTSS 4(R8)(R10*8), Y15
	INCQ R10
	CMPQ R11, $1
	JEQ mul8
	CMPQ R11, $2
	JEQ div8
	CMPQ R11, $3
	JEQ max8
	VADDPS Y15, Y0, Y0
	JMP op8
mul8:
	VMULPS Y15, Y0, Y0
	JMP op8
div8:
	VDIVPS Y15, Y0, Y0
	JMP op8
max8:
	VMAXPS Y0, Y15, Y0
	JMP op8
store8:
	VMOVUPS Y0, 0(DI)(AX*4)
	ADDQ $8, AX
	JMP blk8

blk1:
	CMPQ AX, CX
	JAE chaindone
	VMOVSS (SI)(AX*4), X0
	XORQ R10, R10
op1:
	CMPQ R10, R9
	JAE store1
	MOVBQZX 0(R8)(R10*8), R11
	VMOVSS 4(R8)(R10*8), X15
	INCQ R10
	CMPQ R11, $1
	JEQ mul1
	CMPQ R11, $2
	JEQ div1
	CMPQ R11, $3
	JEQ max1
	VADDSS X15, X0, X0
	JMP op1
mul1:
	VMULSS X15, X0, X0
	JMP op1
div1:
	VDIVSS X15, X0, X0
	JMP op1
max1:
	VMAXSS X0, X15, X0
	JMP op1
store1:
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	JMP blk1

chaindone:
	VZEROUPPER
	RET
