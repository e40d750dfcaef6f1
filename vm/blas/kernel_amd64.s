//go:build !purego

// Hand-written AVX2+FMA micro-kernel for Sgemm and the FMA peak probe.
//
// Operand order is Go's (Plan 9): the destination is last, so
// VFMADD231PS Y0, Y2, Y4 computes Y4 += Y2 * Y0.

#include "textflag.h"

// One k step of the 6x16 tile: two 8-wide loads of the packed B row
// (16 floats, 64 bytes), six broadcasts of the packed A column (6 floats,
// 24 bytes) and twelve independent FMAs into Y4..Y15. OFFA/OFFB are the
// byte offsets of this step inside the current A/B pointers.
#define STEP(OFFA, OFFB) \
	VMOVUPS      OFFB(DI), Y0;          \
	VMOVUPS      (OFFB+32)(DI), Y1;     \
	VBROADCASTSS OFFA(SI), Y2;          \
	VBROADCASTSS (OFFA+4)(SI), Y3;      \
	VFMADD231PS  Y0, Y2, Y4;            \
	VFMADD231PS  Y1, Y2, Y5;            \
	VFMADD231PS  Y0, Y3, Y6;            \
	VFMADD231PS  Y1, Y3, Y7;            \
	VBROADCASTSS (OFFA+8)(SI), Y2;      \
	VBROADCASTSS (OFFA+12)(SI), Y3;     \
	VFMADD231PS  Y0, Y2, Y8;            \
	VFMADD231PS  Y1, Y2, Y9;            \
	VFMADD231PS  Y0, Y3, Y10;           \
	VFMADD231PS  Y1, Y3, Y11;           \
	VBROADCASTSS (OFFA+16)(SI), Y2;     \
	VBROADCASTSS (OFFA+20)(SI), Y3;     \
	VFMADD231PS  Y0, Y2, Y12;           \
	VFMADD231PS  Y1, Y2, Y13;           \
	VFMADD231PS  Y0, Y3, Y14;           \
	VFMADD231PS  Y1, Y3, Y15

// Adds two accumulators into one C row (16 floats at DX) and advances DX.
#define STOREROW(ACC0, ACC1) \
	VADDPS  (DX), ACC0, ACC0;    \
	VADDPS  32(DX), ACC1, ACC1;  \
	VMOVUPS ACC0, (DX);          \
	VMOVUPS ACC1, 32(DX);        \
	ADDQ    R8, DX

// func kernel6x16AVX2(k int, a, b, c []float32, ldc int)
//
// C[i*ldc+j] += sum_p A[p*6+i] * B[p*16+j] for i < 6, j < 16, where A and B
// are packed micro-panels. The caller guarantees len(a) >= 6k, len(b) >= 16k
// and len(c) >= 5*ldc+16; nothing is checked here.
TEXT ·kernel6x16AVX2(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8

	// Touch the C tile early so its lines are in L1 when the loop ends.
	MOVQ       DX, AX
	PREFETCHT0 (AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)

	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

	MOVQ CX, BX
	SHRQ $2, BX // BX = k / 4 unrolled iterations
	ANDQ $3, CX // CX = k % 4 remainder steps
	TESTQ BX, BX
	JZ   rem

loop4:
	PREFETCHT0 384(DI)
	STEP(0, 0)
	STEP(24, 64)
	PREFETCHT0 448(DI)
	STEP(48, 128)
	STEP(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	DECQ BX
	JNZ  loop4

rem:
	TESTQ CX, CX
	JZ    store

loop1:
	STEP(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop1

store:
	STOREROW(Y4, Y5)
	STOREROW(Y6, Y7)
	STOREROW(Y8, Y9)
	STOREROW(Y10, Y11)
	STOREROW(Y12, Y13)
	STOREROW(Y14, Y15)
	VZEROUPPER
	RET

// func fmaPeakAVX2(n int)
//
// Runs n iterations of 12 independent 8-wide FMA chains (192 FLOP per
// iteration). Twelve chains cover 2 FMA pipes x 4-cycle latency with room to
// spare, so the loop runs at the core's FMA throughput limit.
TEXT ·fmaPeakAVX2(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	TESTQ CX, CX
	JZ   peakdone

peakloop:
	VFMADD231PS Y0, Y1, Y4
	VFMADD231PS Y0, Y1, Y5
	VFMADD231PS Y0, Y1, Y6
	VFMADD231PS Y0, Y1, Y7
	VFMADD231PS Y0, Y1, Y8
	VFMADD231PS Y0, Y1, Y9
	VFMADD231PS Y0, Y1, Y10
	VFMADD231PS Y0, Y1, Y11
	VFMADD231PS Y0, Y1, Y12
	VFMADD231PS Y0, Y1, Y13
	VFMADD231PS Y0, Y1, Y14
	VFMADD231PS Y0, Y1, Y15
	DECQ CX
	JNZ  peakloop

peakdone:
	VZEROUPPER
	RET
