//go:build !purego

// AVX-512 micro-kernel for Sgemm: a 6x32 tile over two adjacent packed B
// micro-panels, for CPUs whose FMA units are 512 bits wide (Zen 5: twice
// the 256-bit FMA throughput; see kernel512_amd64.go).

#include "textflag.h"

// One k step: a 16-wide load from each B micro-panel (DI, DI+R9), six
// broadcasts of the packed A column and twelve independent FMAs into
// Z4..Z15 (row i in Z(4+2i), Z(5+2i)).
#define STEP32(OFFA, OFFB) \
	VMOVUPS      OFFB(DI), Z0;         \
	VMOVUPS      OFFB(DI)(R9*1), Z1;   \
	VBROADCASTSS OFFA(SI), Z16;        \
	VBROADCASTSS (OFFA+4)(SI), Z17;    \
	VBROADCASTSS (OFFA+8)(SI), Z18;    \
	VBROADCASTSS (OFFA+12)(SI), Z19;   \
	VBROADCASTSS (OFFA+16)(SI), Z20;   \
	VBROADCASTSS (OFFA+20)(SI), Z21;   \
	VFMADD231PS  Z0, Z16, Z4;          \
	VFMADD231PS  Z1, Z16, Z5;          \
	VFMADD231PS  Z0, Z17, Z6;          \
	VFMADD231PS  Z1, Z17, Z7;          \
	VFMADD231PS  Z0, Z18, Z8;          \
	VFMADD231PS  Z1, Z18, Z9;          \
	VFMADD231PS  Z0, Z19, Z10;         \
	VFMADD231PS  Z1, Z19, Z11;         \
	VFMADD231PS  Z0, Z20, Z12;         \
	VFMADD231PS  Z1, Z20, Z13;         \
	VFMADD231PS  Z0, Z21, Z14;         \
	VFMADD231PS  Z1, Z21, Z15

// Adds two accumulators into one C row (32 floats at DX) and advances DX.
#define STOREROW32(ACC0, ACC1) \
	VADDPS  (DX), ACC0, ACC0;    \
	VADDPS  64(DX), ACC1, ACC1;  \
	VMOVUPS ACC0, (DX);          \
	VMOVUPS ACC1, 64(DX);        \
	ADDQ    R8, DX

// func kernel6x32AVX512(k int, a, b, c []float32, ldc int)
//
// C[i*ldc+j] += sum_p A[p*6+i] * B[p*16+j] for i < 6, j < 16 and
// C[i*ldc+16+j] += sum_p A[p*6+i] * B[16k+p*16+j]: the 6x16 kernel on two
// adjacent micro-panels at once, each element summed in the same order.
// The caller guarantees len(a) >= 6k, len(b) >= 32k and
// len(c) >= 5*ldc+32; nothing is checked here.
TEXT ·kernel6x32AVX512(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	MOVQ CX, R9
	SHLQ $6, R9 // R9 = 64k bytes: the second micro-panel

	MOVQ       DX, AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)

	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

	MOVQ  CX, BX
	SHRQ  $2, BX // k / 4 unrolled iterations
	ANDQ  $3, CX // k % 4 remainder steps
	TESTQ BX, BX
	JZ    rem

loop4:
	PREFETCHT0 512(DI)
	PREFETCHT0 512(DI)(R9*1)
	STEP32(0, 0)
	STEP32(24, 64)
	STEP32(48, 128)
	STEP32(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	DECQ BX
	JNZ  loop4

rem:
	TESTQ CX, CX
	JZ    store

loop1:
	STEP32(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop1

store:
	STOREROW32(Z4, Z5)
	STOREROW32(Z6, Z7)
	STOREROW32(Z8, Z9)
	STOREROW32(Z10, Z11)
	STOREROW32(Z12, Z13)
	STOREROW32(Z14, Z15)
	VZEROUPPER
	RET

// One k step reading B in place: 32 floats of row p of B at DI, which
// then advances by ldb (R10 bytes), also stored into the two packed
// micro-panels (R12, R12+R9), as packB lays them out.
#define STEPB(OFFA) \
	VMOVUPS      (DI), Z0;             \
	VMOVUPS      64(DI), Z1;           \
	PREFETCHT0   (DI)(R11*1);          \
	PREFETCHT0   64(DI)(R11*1);        \
	ADDQ         R10, DI;              \
	VMOVUPS      Z0, (R12);            \
	VMOVUPS      Z1, (R12)(R9*1);      \
	ADDQ         $64, R12;             \
	VBROADCASTSS OFFA(SI), Z16;        \
	VBROADCASTSS (OFFA+4)(SI), Z17;    \
	VBROADCASTSS (OFFA+8)(SI), Z18;    \
	VBROADCASTSS (OFFA+12)(SI), Z19;   \
	VBROADCASTSS (OFFA+16)(SI), Z20;   \
	VBROADCASTSS (OFFA+20)(SI), Z21;   \
	VFMADD231PS  Z0, Z16, Z4;          \
	VFMADD231PS  Z1, Z16, Z5;          \
	VFMADD231PS  Z0, Z17, Z6;          \
	VFMADD231PS  Z1, Z17, Z7;          \
	VFMADD231PS  Z0, Z18, Z8;          \
	VFMADD231PS  Z1, Z18, Z9;          \
	VFMADD231PS  Z0, Z19, Z10;         \
	VFMADD231PS  Z1, Z19, Z11;         \
	VFMADD231PS  Z0, Z20, Z12;         \
	VFMADD231PS  Z1, Z20, Z13;         \
	VFMADD231PS  Z0, Z21, Z14;         \
	VFMADD231PS  Z1, Z21, Z15

// func kernel6x32PackAVX512(k int, a, b, c []float32, ldc, ldb int, bp []float32)
//
// C[i*ldc+j] += sum_p A[p*6+i] * b[p*ldb+j] for i < 6, j < 32: the 6x32
// kernel reading op(B) = B as stored (row p at b[p*ldb:]), packing it on
// the way into bp (two micro-panels, bp[:16k] and bp[16k:32k]) for the
// row tiles after this one; each element is summed in kernel6x32AVX512's
// order, so bitwise the same results. The caller guarantees len(a) >= 6k,
// len(b) >= (k-1)*ldb+32, len(c) >= 5*ldc+32 and len(bp) >= 32k; nothing
// is checked here.
TEXT ·kernel6x32PackAVX512(SB), NOSPLIT, $0-120
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	MOVQ ldb+88(FP), R10
	SHLQ $2, R10  // R10 = ldb bytes
	MOVQ bp_base+96(FP), R12
	MOVQ CX, R9
	SHLQ $6, R9   // R9 = 64k bytes: the second micro-panel
	LEAQ (R10)(R10*2), R11
	ADDQ R10, R11
	ADDQ R11, R11 // R11 = 8 rows ahead, for the prefetches

	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

	MOVQ  CX, BX
	SHRQ  $2, BX
	ANDQ  $3, CX
	TESTQ BX, BX
	JZ    drem

dloop4:
	STEPB(0)
	STEPB(24)
	STEPB(48)
	STEPB(72)
	ADDQ $96, SI
	DECQ BX
	JNZ  dloop4

drem:
	TESTQ CX, CX
	JZ    dstore

dloop1:
	STEPB(0)
	ADDQ $24, SI
	DECQ CX
	JNZ  dloop1

dstore:
	STOREROW32(Z4, Z5)
	STOREROW32(Z6, Z7)
	STOREROW32(Z8, Z9)
	STOREROW32(Z10, Z11)
	STOREROW32(Z12, Z13)
	STOREROW32(Z14, Z15)
	VZEROUPPER
	RET
