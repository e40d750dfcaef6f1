//go:build !purego

// Micro-kernels for the last, partial row panel of a block (1 to 5 valid
// rows of 6): the full 6x16 kernel would spend up to 5/6 of its FMAs on
// zero padding. They read the same packed panels (A still 6 floats per k
// step) and update only their rows of C. With 1 to 3 rows, even and odd
// k steps go to separate accumulator sets so that at least 4 independent
// FMA chains hide the FMA latency; 4 and 5 rows have 8 and 10 chains.

#include "textflag.h"

// LOADB loads the 16 floats of the packed B row at byte offset OFFB.
#define LOADB(OFFB) \
	VMOVUPS OFFB(DI), Y0;      \
	VMOVUPS (OFFB+32)(DI), Y1

// ROW accumulates A(row at byte offset OFFA) times the loaded B row.
#define ROW(OFFA, ACC0, ACC1) \
	VBROADCASTSS OFFA(SI), Y2; \
	VFMADD231PS  Y0, Y2, ACC0; \
	VFMADD231PS  Y1, Y2, ACC1

// CROW adds two accumulators into one C row (16 floats at DX), advances DX.
#define CROW(ACC0, ACC1) \
	VADDPS  (DX), ACC0, ACC0;   \
	VADDPS  32(DX), ACC1, ACC1; \
	VMOVUPS ACC0, (DX);         \
	VMOVUPS ACC1, 32(DX);       \
	ADDQ    R8, DX

#define ZERO12 \
	VXORPS Y4, Y4, Y4;    \
	VXORPS Y5, Y5, Y5;    \
	VXORPS Y6, Y6, Y6;    \
	VXORPS Y7, Y7, Y7;    \
	VXORPS Y8, Y8, Y8;    \
	VXORPS Y9, Y9, Y9;    \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11; \
	VXORPS Y12, Y12, Y12; \
	VXORPS Y13, Y13, Y13; \
	VXORPS Y14, Y14, Y14; \
	VXORPS Y15, Y15, Y15

// func kernel1x16AVX2(k int, a, b, c []float32, ldc int)
TEXT ·kernel1x16AVX2(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	ZERO12
	MOVQ  CX, BX
	SHRQ  $1, BX
	ANDQ  $1, CX
	TESTQ BX, BX
	JZ    r1rem

r1loop:
	LOADB(0)
	ROW(0, Y4, Y5)
	LOADB(64)
	ROW(24, Y6, Y7)
	ADDQ $48, SI
	ADDQ $128, DI
	DECQ BX
	JNZ  r1loop

r1rem:
	TESTQ CX, CX
	JZ    r1store
	LOADB(0)
	ROW(0, Y4, Y5)

r1store:
	VADDPS Y6, Y4, Y4
	VADDPS Y7, Y5, Y5
	CROW(Y4, Y5)
	VZEROUPPER
	RET

// func kernel2x16AVX2(k int, a, b, c []float32, ldc int)
TEXT ·kernel2x16AVX2(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	ZERO12
	MOVQ  CX, BX
	SHRQ  $1, BX
	ANDQ  $1, CX
	TESTQ BX, BX
	JZ    r2rem

r2loop:
	LOADB(0)
	ROW(0, Y4, Y5)
	ROW(4, Y6, Y7)
	LOADB(64)
	ROW(24, Y8, Y9)
	ROW(28, Y10, Y11)
	ADDQ $48, SI
	ADDQ $128, DI
	DECQ BX
	JNZ  r2loop

r2rem:
	TESTQ CX, CX
	JZ    r2store
	LOADB(0)
	ROW(0, Y4, Y5)
	ROW(4, Y6, Y7)

r2store:
	VADDPS Y8, Y4, Y4
	VADDPS Y9, Y5, Y5
	VADDPS Y10, Y6, Y6
	VADDPS Y11, Y7, Y7
	CROW(Y4, Y5)
	CROW(Y6, Y7)
	VZEROUPPER
	RET

// func kernel3x16AVX2(k int, a, b, c []float32, ldc int)
TEXT ·kernel3x16AVX2(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	ZERO12
	MOVQ  CX, BX
	SHRQ  $1, BX
	ANDQ  $1, CX
	TESTQ BX, BX
	JZ    r3rem

r3loop:
	LOADB(0)
	ROW(0, Y4, Y5)
	ROW(4, Y6, Y7)
	ROW(8, Y8, Y9)
	LOADB(64)
	ROW(24, Y10, Y11)
	ROW(28, Y12, Y13)
	ROW(32, Y14, Y15)
	ADDQ $48, SI
	ADDQ $128, DI
	DECQ BX
	JNZ  r3loop

r3rem:
	TESTQ CX, CX
	JZ    r3store
	LOADB(0)
	ROW(0, Y4, Y5)
	ROW(4, Y6, Y7)
	ROW(8, Y8, Y9)

r3store:
	VADDPS Y10, Y4, Y4
	VADDPS Y11, Y5, Y5
	VADDPS Y12, Y6, Y6
	VADDPS Y13, Y7, Y7
	VADDPS Y14, Y8, Y8
	VADDPS Y15, Y9, Y9
	CROW(Y4, Y5)
	CROW(Y6, Y7)
	CROW(Y8, Y9)
	VZEROUPPER
	RET

// func kernel4x16AVX2(k int, a, b, c []float32, ldc int)
TEXT ·kernel4x16AVX2(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	ZERO12
	TESTQ CX, CX
	JZ    r4store

r4loop:
	LOADB(0)
	ROW(0, Y4, Y5)
	ROW(4, Y6, Y7)
	ROW(8, Y8, Y9)
	ROW(12, Y10, Y11)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  r4loop

r4store:
	CROW(Y4, Y5)
	CROW(Y6, Y7)
	CROW(Y8, Y9)
	CROW(Y10, Y11)
	VZEROUPPER
	RET

// func kernel5x16AVX2(k int, a, b, c []float32, ldc int)
TEXT ·kernel5x16AVX2(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	ZERO12
	TESTQ CX, CX
	JZ    r5store

r5loop:
	LOADB(0)
	ROW(0, Y4, Y5)
	ROW(4, Y6, Y7)
	ROW(8, Y8, Y9)
	ROW(12, Y10, Y11)
	ROW(16, Y12, Y13)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  r5loop

r5store:
	CROW(Y4, Y5)
	CROW(Y6, Y7)
	CROW(Y8, Y9)
	CROW(Y10, Y11)
	CROW(Y12, Y13)
	VZEROUPPER
	RET
