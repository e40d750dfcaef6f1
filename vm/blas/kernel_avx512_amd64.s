//go:build !purego

// AVX-512 micro-kernel for CPUs whose FMA units are 512 bits wide (Zen 5,
// Intel server cores): twice the AVX2 kernel's FLOP per instruction.
//
// It computes a 12x32 block of C from the same packed micro-panels as the
// 6x16 kernels (packA's 6-row and packB's 16-column panels, unchanged):
// two consecutive A panels (rows 0-5 at a, rows 6-11 at a+6k) and two
// consecutive B panels (columns 0-15 at b, 16-31 at b+16k). Per k step:
// two 16-wide B loads, twelve broadcasts and 24 independent FMAs into
// Z8..Z31, i.e. 12 cycles at two 512-bit FMAs per cycle with 14 loads.
//
// Operand order is Go's (Plan 9): VFMADD231PS Z0, Z2, Z8 computes
// Z8 += Z2 * Z0.

#include "textflag.h"
#include "kernel512_amd64.h"

// One k step: OFFA/OFFB are byte offsets inside the current A/B panels.
#define STEP512(OFFA, OFFB) \
	VMOVUPS OFFB(DI), Z0; \
	VMOVUPS OFFB(R12), Z1; \
	VBROADCASTSS (OFFA+0)(SI), Z2; \
	VFMADD231PS Z0, Z2, Z8; \
	VFMADD231PS Z1, Z2, Z9; \
	VBROADCASTSS (OFFA+4)(SI), Z3; \
	VFMADD231PS Z0, Z3, Z10; \
	VFMADD231PS Z1, Z3, Z11; \
	VBROADCASTSS (OFFA+8)(SI), Z4; \
	VFMADD231PS Z0, Z4, Z12; \
	VFMADD231PS Z1, Z4, Z13; \
	VBROADCASTSS (OFFA+12)(SI), Z5; \
	VFMADD231PS Z0, Z5, Z14; \
	VFMADD231PS Z1, Z5, Z15; \
	VBROADCASTSS (OFFA+16)(SI), Z6; \
	VFMADD231PS Z0, Z6, Z16; \
	VFMADD231PS Z1, Z6, Z17; \
	VBROADCASTSS (OFFA+20)(SI), Z7; \
	VFMADD231PS Z0, Z7, Z18; \
	VFMADD231PS Z1, Z7, Z19; \
	VBROADCASTSS (OFFA+0)(R11), Z2; \
	VFMADD231PS Z0, Z2, Z20; \
	VFMADD231PS Z1, Z2, Z21; \
	VBROADCASTSS (OFFA+4)(R11), Z3; \
	VFMADD231PS Z0, Z3, Z22; \
	VFMADD231PS Z1, Z3, Z23; \
	VBROADCASTSS (OFFA+8)(R11), Z4; \
	VFMADD231PS Z0, Z4, Z24; \
	VFMADD231PS Z1, Z4, Z25; \
	VBROADCASTSS (OFFA+12)(R11), Z5; \
	VFMADD231PS Z0, Z5, Z26; \
	VFMADD231PS Z1, Z5, Z27; \
	VBROADCASTSS (OFFA+16)(R11), Z6; \
	VFMADD231PS Z0, Z6, Z28; \
	VFMADD231PS Z1, Z6, Z29; \
	VBROADCASTSS (OFFA+20)(R11), Z7; \
	VFMADD231PS Z0, Z7, Z30; \
	VFMADD231PS Z1, Z7, Z31

// PFROW prefetches the C row of 32 floats at R13 into L1 and advances
// R13 by the row stride R8. The wide kernels prefetch their C rows before
// the k loop so that the loads of C in their stores do not stall on
// L2/L3 after it: the C of a wide product (128 x 3072: 1.5 MiB) is out of
// L2 on the second and later k blocks (6-18% faster on BERT's k = 768
// GEMMs, 0 on k = 3072).
#define PFROW \
	PREFETCHT0 (R13);   \
	PREFETCHT0 64(R13); \
	ADDQ       R8, R13

// PREFETCHB asks for the next pair of B panels (R13, R13+R10: the
// panels the next 32 columns' tiles read) into L2, the four k steps a
// loop iteration reads of them, and advances R13. Every row block's tile
// under a panel pair asks again, so the pair is in L2 before its first
// tile, whatever the hardware prefetcher saw: a model's weights (BERT's
// 28 MiB) stream from memory, and a 32 KiB pair loaded from L2/L3 by the
// tile that first needs it cost 3-14% of peak; into L2, not L1, which the
// current pair (32 KiB) and A fill.
#define PREFETCHB \
	PREFETCHT1 (R13);          \
	PREFETCHT1 (R13)(R10*1);   \
	PREFETCHT1 64(R13);        \
	PREFETCHT1 64(R13)(R10*1); \
	PREFETCHT1 128(R13);       \
	PREFETCHT1 128(R13)(R10*1);\
	PREFETCHT1 192(R13);       \
	PREFETCHT1 192(R13)(R10*1);\
	ADDQ $256, R13

// func kernel12x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)
//
// C[i*ldc+j] += sum_p A[i/6][p*6+i%6] * B[j/16][p*16+j%16] for i < 12,
// j < 32, where A[q] = a[q*6k:] and B[q] = b[q*16k:] are packed
// micro-panels; with overwrite, = instead of += (FINISH512). The caller guarantees len(a) >= 12k, len(b) >= 32k and
// len(c) >= 11*ldc+32; nothing is checked here.
TEXT ·kernel12x32AVX512(SB), NOSPLIT, $0-89
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	MOVQ CX, R9
	IMULQ $24, R9
	LEAQ (SI)(R9*1), R11 // second A panel
	MOVQ CX, R10
	SHLQ $6, R10
	LEAQ (DI)(R10*1), R12 // second B panel
	MOVQ DX, R13
	PFROW
	PFROW
	PFROW
	PFROW
	PFROW
	PFROW
	PFROW
	PFROW
	PFROW
	PFROW
	PFROW
	PFROW

	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

	LEAQ (DI)(R10*2), R13 // the next pair of B panels (PREFETCHB)
	MOVQ CX, BX
	SHRQ $2, BX // BX = k / 4 unrolled iterations
	ANDQ $3, CX // CX = k % 4 remainder steps
	TESTQ BX, BX
	JZ   rem

loop4:
	STEP512(0, 0)
	STEP512(24, 64)
	STEP512(48, 128)
	STEP512(72, 192)
	PREFETCHB
	ADDQ $96, SI
	ADDQ $96, R11
	ADDQ $256, DI
	ADDQ $256, R12
	DECQ BX
	JNZ  loop4

rem:
	TESTQ CX, CX
	JZ    store

loop1:
	STEP512(0, 0)
	ADDQ $24, SI
	ADDQ $24, R11
	ADDQ $64, DI
	ADDQ $64, R12
	DECQ CX
	JNZ  loop1

store:
	FINISH512(ROWS12)

// func fmaPeakAVX512(n int)
//
// Runs n iterations of 12 independent 16-wide FMA chains (384 FLOP per
// iteration): the core's FMA throughput limit with 512-bit operands.
TEXT ·fmaPeakAVX512(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
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
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
peak:
	VFMADD231PS Z0, Z1, Z4
	VFMADD231PS Z0, Z1, Z5
	VFMADD231PS Z0, Z1, Z6
	VFMADD231PS Z0, Z1, Z7
	VFMADD231PS Z0, Z1, Z8
	VFMADD231PS Z0, Z1, Z9
	VFMADD231PS Z0, Z1, Z10
	VFMADD231PS Z0, Z1, Z11
	VFMADD231PS Z0, Z1, Z12
	VFMADD231PS Z0, Z1, Z13
	VFMADD231PS Z0, Z1, Z14
	VFMADD231PS Z0, Z1, Z15
	DECQ CX
	JNZ  peak
	VZEROUPPER
	RET

// One k step of the 6x32 block: rows 0-5 of one A panel.
#define STEP6x32(OFFA, OFFB) \
	VMOVUPS OFFB(DI), Z0; \
	VMOVUPS OFFB(R12), Z1; \
	VBROADCASTSS (OFFA+0)(SI), Z2; \
	VFMADD231PS Z0, Z2, Z8; \
	VFMADD231PS Z1, Z2, Z9; \
	VBROADCASTSS (OFFA+4)(SI), Z3; \
	VFMADD231PS Z0, Z3, Z10; \
	VFMADD231PS Z1, Z3, Z11; \
	VBROADCASTSS (OFFA+8)(SI), Z4; \
	VFMADD231PS Z0, Z4, Z12; \
	VFMADD231PS Z1, Z4, Z13; \
	VBROADCASTSS (OFFA+12)(SI), Z5; \
	VFMADD231PS Z0, Z5, Z14; \
	VFMADD231PS Z1, Z5, Z15; \
	VBROADCASTSS (OFFA+16)(SI), Z6; \
	VFMADD231PS Z0, Z6, Z16; \
	VFMADD231PS Z1, Z6, Z17; \
	VBROADCASTSS (OFFA+20)(SI), Z7; \
	VFMADD231PS Z0, Z7, Z18; \
	VFMADD231PS Z1, Z7, Z19

// func kernel6x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)
//
// The last six rows of a block under kernel12x32AVX512: C[i*ldc+j] +=
// sum_p a[p*6+i] * B[j/16][p*16+j%16] for i < 6, j < 32, with B[q] =
// b[q*16k:] (= with overwrite). The caller guarantees len(a) >= 6k,
// len(b) >= 32k and len(c) >= 5*ldc+32.
TEXT ·kernel6x32AVX512(SB), NOSPLIT, $0-89
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	MOVQ CX, R10
	SHLQ $6, R10
	LEAQ (DI)(R10*1), R12 // second B panel
	MOVQ DX, R13
	PFROW
	PFROW
	PFROW
	PFROW
	PFROW
	PFROW

	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19

	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   rem6

loop6x4:
	STEP6x32(0, 0)
	STEP6x32(24, 64)
	STEP6x32(48, 128)
	STEP6x32(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	ADDQ $256, R12
	DECQ BX
	JNZ  loop6x4

rem6:
	TESTQ CX, CX
	JZ    store6

loop6x1:
	STEP6x32(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	ADDQ $64, R12
	DECQ CX
	JNZ  loop6x1

store6:
	FINISH512(ROWS6)

// One k step of the 12x16 block: one B panel, two A panels.
#define STEP12x16(OFFA, OFFB) \
	VMOVUPS OFFB(DI), Z0; \
	VBROADCASTSS (OFFA+0)(SI), Z2; \
	VFMADD231PS Z0, Z2, Z8; \
	VBROADCASTSS (OFFA+4)(SI), Z3; \
	VFMADD231PS Z0, Z3, Z9; \
	VBROADCASTSS (OFFA+8)(SI), Z4; \
	VFMADD231PS Z0, Z4, Z10; \
	VBROADCASTSS (OFFA+12)(SI), Z5; \
	VFMADD231PS Z0, Z5, Z11; \
	VBROADCASTSS (OFFA+16)(SI), Z6; \
	VFMADD231PS Z0, Z6, Z12; \
	VBROADCASTSS (OFFA+20)(SI), Z7; \
	VFMADD231PS Z0, Z7, Z13; \
	VBROADCASTSS (OFFA+0)(R11), Z2; \
	VFMADD231PS Z0, Z2, Z14; \
	VBROADCASTSS (OFFA+4)(R11), Z3; \
	VFMADD231PS Z0, Z3, Z15; \
	VBROADCASTSS (OFFA+8)(R11), Z4; \
	VFMADD231PS Z0, Z4, Z16; \
	VBROADCASTSS (OFFA+12)(R11), Z5; \
	VFMADD231PS Z0, Z5, Z17; \
	VBROADCASTSS (OFFA+16)(R11), Z6; \
	VFMADD231PS Z0, Z6, Z18; \
	VBROADCASTSS (OFFA+20)(R11), Z7; \
	VFMADD231PS Z0, Z7, Z19

// Adds one accumulator into one C row (16 floats at DX) and advances DX.
#define STOREROW16(ACC) \
	VADDPS  (DX), ACC, ACC; \
	VMOVUPS ACC, (DX);      \
	ADDQ    R8, DX

// func kernel12x16AVX512(k int, a, b, c []float32, ldc int)
//
// The last column panel of a block under kernel12x32AVX512 (an odd panel
// count): C[i*ldc+j] += sum_p A[i/6][p*6+i%6] * b[p*16+j] for i < 12,
// j < 16, with A[q] = a[q*6k:]. The caller guarantees len(a) >= 12k,
// len(b) >= 16k and len(c) >= 11*ldc+16.
TEXT ·kernel12x16AVX512(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8
	MOVQ CX, R9
	IMULQ $24, R9
	LEAQ (SI)(R9*1), R11 // second A panel

	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19

	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ   rem12

loop12x4:
	STEP12x16(0, 0)
	STEP12x16(24, 64)
	STEP12x16(48, 128)
	STEP12x16(72, 192)
	ADDQ $96, SI
	ADDQ $96, R11
	ADDQ $256, DI
	DECQ BX
	JNZ  loop12x4

rem12:
	TESTQ CX, CX
	JZ    store12

loop12x1:
	STEP12x16(0, 0)
	ADDQ $24, SI
	ADDQ $24, R11
	ADDQ $64, DI
	DECQ CX
	JNZ  loop12x1

store12:
	STOREROW16(Z8)
	STOREROW16(Z9)
	STOREROW16(Z10)
	STOREROW16(Z11)
	STOREROW16(Z12)
	STOREROW16(Z13)
	STOREROW16(Z14)
	STOREROW16(Z15)
	STOREROW16(Z16)
	STOREROW16(Z17)
	STOREROW16(Z18)
	STOREROW16(Z19)
	VZEROUPPER
	RET
