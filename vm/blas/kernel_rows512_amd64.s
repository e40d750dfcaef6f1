//go:build !purego

// AVX-512 micro-kernels for the last, partial row panel under a pair of
// column panels (1 to 5 valid rows of 6; kernelChoice.wideRows): the
// 12x32 and 6x32 kernels' counterparts, where the rows were left to the
// 16-column AVX2 kernels at a quarter of their FLOP per instruction. They
// read the same packed panels (A 6 floats per k step, two 16-column B
// panels) and update only their rows of C. Each C element's sum runs in
// the same order as the AVX2 partial-row kernels' (kernel_rows_amd64.s):
// with 1 to 3 rows even and odd k steps go to separate accumulators,
// added at the end, so that at least 4 independent FMA chains hide the
// FMA latency; 4 and 5 rows accumulate in k order (8 and 10 chains).

#include "textflag.h"
#include "kernel512_amd64.h"

// LOADB2 loads the two B panels' 16 floats at byte offset OFFB.
#define LOADB2(OFFB) \
	VMOVUPS OFFB(DI), Z0; \
	VMOVUPS OFFB(R12), Z1

// ROWZ accumulates A(row at byte offset OFFA) times the loaded B rows.
#define ROWZ(OFFA, ACC0, ACC1) \
	VBROADCASTSS OFFA(SI), Z2; \
	VFMADD231PS  Z0, Z2, ACC0; \
	VFMADD231PS  Z1, Z2, ACC1

#define ZERO20 \
	VPXORD Z8, Z8, Z8;    \
	VPXORD Z9, Z9, Z9;    \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27

// ARGS loads the arguments: CX = k, SI = a, DI = b (first panel), R12 =
// the second B panel, DX = c, R8 = ldc in bytes; BX = k/2, CX = k%2.
#define ARGS \
	MOVQ k+0(FP), CX;        \
	MOVQ a_base+8(FP), SI;   \
	MOVQ b_base+32(FP), DI;  \
	MOVQ c_base+56(FP), DX;  \
	MOVQ ldc+80(FP), R8;     \
	SHLQ $2, R8;             \
	MOVQ CX, R10;            \
	SHLQ $6, R10;            \
	LEAQ (DI)(R10*1), R12;   \
	MOVQ CX, BX;             \
	SHRQ $1, BX;             \
	ANDQ $1, CX

// NEXT2 advances past two k steps.
#define NEXT2 \
	ADDQ $48, SI;  \
	ADDQ $128, DI; \
	ADDQ $128, R12

// func kernel1x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)
//
// C[i*ldc+j] += sum_p a[p*6+i] * B[j/16][p*16+j%16] for i < 1 (2, 3, 4,
// 5 in the kernels below), j < 32, with B[q] = b[q*16k:]; with overwrite,
// = instead of += (FINISH512). The caller guarantees len(a) >= 6k,
// len(b) >= 32k and len(c) >= (rows-1)*ldc+32.
TEXT ·kernel1x32AVX512(SB), NOSPLIT, $0-89
	ARGS
	ZERO20
	TESTQ BX, BX
	JZ    z1rem

z1loop:
	LOADB2(0)
	ROWZ(0, Z8, Z9)
	LOADB2(64)
	ROWZ(24, Z18, Z19)
	NEXT2
	DECQ BX
	JNZ  z1loop

z1rem:
	TESTQ CX, CX
	JZ    z1store
	LOADB2(0)
	ROWZ(0, Z8, Z9)

z1store:
	VADDPS Z18, Z8, Z8
	VADDPS Z19, Z9, Z9
	FINISH512(ROWS1)

// func kernel2x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)
TEXT ·kernel2x32AVX512(SB), NOSPLIT, $0-89
	ARGS
	ZERO20
	TESTQ BX, BX
	JZ    z2rem

z2loop:
	LOADB2(0)
	ROWZ(0, Z8, Z9)
	ROWZ(4, Z10, Z11)
	LOADB2(64)
	ROWZ(24, Z18, Z19)
	ROWZ(28, Z20, Z21)
	NEXT2
	DECQ BX
	JNZ  z2loop

z2rem:
	TESTQ CX, CX
	JZ    z2store
	LOADB2(0)
	ROWZ(0, Z8, Z9)
	ROWZ(4, Z10, Z11)

z2store:
	VADDPS Z18, Z8, Z8
	VADDPS Z19, Z9, Z9
	VADDPS Z20, Z10, Z10
	VADDPS Z21, Z11, Z11
	FINISH512(ROWS2)

// func kernel3x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)
TEXT ·kernel3x32AVX512(SB), NOSPLIT, $0-89
	ARGS
	ZERO20
	TESTQ BX, BX
	JZ    z3rem

z3loop:
	LOADB2(0)
	ROWZ(0, Z8, Z9)
	ROWZ(4, Z10, Z11)
	ROWZ(8, Z12, Z13)
	LOADB2(64)
	ROWZ(24, Z18, Z19)
	ROWZ(28, Z20, Z21)
	ROWZ(32, Z22, Z23)
	NEXT2
	DECQ BX
	JNZ  z3loop

z3rem:
	TESTQ CX, CX
	JZ    z3store
	LOADB2(0)
	ROWZ(0, Z8, Z9)
	ROWZ(4, Z10, Z11)
	ROWZ(8, Z12, Z13)

z3store:
	VADDPS Z18, Z8, Z8
	VADDPS Z19, Z9, Z9
	VADDPS Z20, Z10, Z10
	VADDPS Z21, Z11, Z11
	VADDPS Z22, Z12, Z12
	VADDPS Z23, Z13, Z13
	FINISH512(ROWS3)

// func kernel4x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)
TEXT ·kernel4x32AVX512(SB), NOSPLIT, $0-89
	ARGS
	ZERO20
	TESTQ BX, BX
	JZ    z4rem

z4loop:
	LOADB2(0)
	ROWZ(0, Z8, Z9)
	ROWZ(4, Z10, Z11)
	ROWZ(8, Z12, Z13)
	ROWZ(12, Z14, Z15)
	LOADB2(64)
	ROWZ(24, Z8, Z9)
	ROWZ(28, Z10, Z11)
	ROWZ(32, Z12, Z13)
	ROWZ(36, Z14, Z15)
	NEXT2
	DECQ BX
	JNZ  z4loop

z4rem:
	TESTQ CX, CX
	JZ    z4store
	LOADB2(0)
	ROWZ(0, Z8, Z9)
	ROWZ(4, Z10, Z11)
	ROWZ(8, Z12, Z13)
	ROWZ(12, Z14, Z15)

z4store:
	FINISH512(ROWS4)

// func kernel5x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)
TEXT ·kernel5x32AVX512(SB), NOSPLIT, $0-89
	ARGS
	ZERO20
	TESTQ BX, BX
	JZ    z5rem

z5loop:
	LOADB2(0)
	ROWZ(0, Z8, Z9)
	ROWZ(4, Z10, Z11)
	ROWZ(8, Z12, Z13)
	ROWZ(12, Z14, Z15)
	ROWZ(16, Z16, Z17)
	LOADB2(64)
	ROWZ(24, Z8, Z9)
	ROWZ(28, Z10, Z11)
	ROWZ(32, Z12, Z13)
	ROWZ(36, Z14, Z15)
	ROWZ(40, Z16, Z17)
	NEXT2
	DECQ BX
	JNZ  z5loop

z5rem:
	TESTQ CX, CX
	JZ    z5store
	LOADB2(0)
	ROWZ(0, Z8, Z9)
	ROWZ(4, Z10, Z11)
	ROWZ(8, Z12, Z13)
	ROWZ(12, Z14, Z15)
	ROWZ(16, Z16, Z17)

z5store:
	FINISH512(ROWS5)
