//go:build !purego

// AVX2 packing: transposes 8-column blocks of six rows of A into the
// 6-float groups of a packed A micro-panel (see packA in pack.go).

#include "textflag.h"

// func packA6AVX2(dst, src *float32, lda, blocks int, alpha float32)
//
// For c < 8*blocks and i < 6: dst[c*6+i] = alpha * src[i*lda+c].
// Each 8-column block is an 8x8 transpose (rows 6 and 7 zero) whose eight
// 8-float columns are stored 24 bytes apart, each store overwriting the two
// padding floats of the previous one; the last store writes two floats
// past dst[48*blocks-1], so dst needs that much slack.
TEXT ·packA6AVX2(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         lda+16(FP), R8
	MOVQ         blocks+24(FP), CX
	VBROADCASTSS alpha+32(FP), Y15
	SHLQ         $2, R8
	LEAQ         (SI)(R8*1), R9
	LEAQ         (R9)(R8*1), R10
	LEAQ         (R10)(R8*1), R11
	LEAQ         (R11)(R8*1), R12
	LEAQ         (R12)(R8*1), R13
	VXORPS       Y14, Y14, Y14
	XORQ         AX, AX
	TESTQ        CX, CX
	JZ           done

loop:
	VMULPS    (SI)(AX*4), Y15, Y0
	VMULPS    (R9)(AX*4), Y15, Y1
	VMULPS    (R10)(AX*4), Y15, Y2
	VMULPS    (R11)(AX*4), Y15, Y3
	VMULPS    (R12)(AX*4), Y15, Y4
	VMULPS    (R13)(AX*4), Y15, Y5
	VUNPCKLPS Y1, Y0, Y6         // r0[0] r1[0] r0[1] r1[1] | cols 4,5
	VUNPCKHPS Y1, Y0, Y7         // r0[2] r1[2] r0[3] r1[3] | cols 6,7
	VUNPCKLPS Y3, Y2, Y8
	VUNPCKHPS Y3, Y2, Y9
	VUNPCKLPS Y5, Y4, Y10
	VUNPCKHPS Y5, Y4, Y11
	VSHUFPS   $0x44, Y8, Y6, Y0  // rows 0-3 of col 0 | col 4
	VSHUFPS   $0xEE, Y8, Y6, Y1  // col 1 | col 5
	VSHUFPS   $0x44, Y9, Y7, Y2  // col 2 | col 6
	VSHUFPS   $0xEE, Y9, Y7, Y3  // col 3 | col 7
	VSHUFPS   $0x44, Y14, Y10, Y4 // rows 4-5 (and two zeros) of col 0 | col 4
	VSHUFPS   $0xEE, Y14, Y10, Y5
	VSHUFPS   $0x44, Y14, Y11, Y6
	VSHUFPS   $0xEE, Y14, Y11, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VMOVUPS    Y8, (DI)
	VPERM2F128 $0x20, Y5, Y1, Y9
	VMOVUPS    Y9, 24(DI)
	VPERM2F128 $0x20, Y6, Y2, Y10
	VMOVUPS    Y10, 48(DI)
	VPERM2F128 $0x20, Y7, Y3, Y11
	VMOVUPS    Y11, 72(DI)
	VPERM2F128 $0x31, Y4, Y0, Y8
	VMOVUPS    Y8, 96(DI)
	VPERM2F128 $0x31, Y5, Y1, Y9
	VMOVUPS    Y9, 120(DI)
	VPERM2F128 $0x31, Y6, Y2, Y10
	VMOVUPS    Y10, 144(DI)
	VPERM2F128 $0x31, Y7, Y3, Y11
	VMOVUPS    Y11, 168(DI)
	ADDQ       $8, AX
	ADDQ       $192, DI
	DECQ       CX
	JNZ        loop

done:
	VZEROUPPER
	RET

// func packBT8AVX2(dst, src *float32, ldb, blocks int)
//
// For p < 8*blocks and j < 8: dst[p*16+j] = src[j*ldb+p]: eight rows of a
// transposed B become one 8-float half of each 16-float packed B row
// (packB with transB). Each 8x8 block is a full register transpose.
TEXT ·packBT8AVX2(SB), NOSPLIT, $0-32
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  ldb+16(FP), R8
	MOVQ  blocks+24(FP), CX
	SHLQ  $2, R8
	LEAQ  (SI)(R8*1), R9
	LEAQ  (R9)(R8*1), R10
	LEAQ  (R10)(R8*1), R11
	LEAQ  (R11)(R8*1), R12
	LEAQ  (R12)(R8*1), R13
	LEAQ  (R13)(R8*1), BX
	LEAQ  (BX)(R8*1), DX
	XORQ  AX, AX
	TESTQ CX, CX
	JZ    btdone

btloop:
	VMOVUPS   (SI)(AX*4), Y0
	VMOVUPS   (R9)(AX*4), Y1
	VMOVUPS   (R10)(AX*4), Y2
	VMOVUPS   (R11)(AX*4), Y3
	VMOVUPS   (R12)(AX*4), Y4
	VMOVUPS   (R13)(AX*4), Y5
	VMOVUPS   (BX)(AX*4), Y6
	VMOVUPS   (DX)(AX*4), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS   $0x44, Y10, Y8, Y0  // rows 0-3 of col 0 | col 4
	VSHUFPS   $0xEE, Y10, Y8, Y1  // col 1 | col 5
	VSHUFPS   $0x44, Y11, Y9, Y2  // col 2 | col 6
	VSHUFPS   $0xEE, Y11, Y9, Y3  // col 3 | col 7
	VSHUFPS   $0x44, Y14, Y12, Y4 // rows 4-7 of col 0 | col 4
	VSHUFPS   $0xEE, Y14, Y12, Y5
	VSHUFPS   $0x44, Y15, Y13, Y6
	VSHUFPS   $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VMOVUPS    Y8, (DI)
	VPERM2F128 $0x20, Y5, Y1, Y9
	VMOVUPS    Y9, 64(DI)
	VPERM2F128 $0x20, Y6, Y2, Y10
	VMOVUPS    Y10, 128(DI)
	VPERM2F128 $0x20, Y7, Y3, Y11
	VMOVUPS    Y11, 192(DI)
	VPERM2F128 $0x31, Y4, Y0, Y8
	VMOVUPS    Y8, 256(DI)
	VPERM2F128 $0x31, Y5, Y1, Y9
	VMOVUPS    Y9, 320(DI)
	VPERM2F128 $0x31, Y6, Y2, Y10
	VMOVUPS    Y10, 384(DI)
	VPERM2F128 $0x31, Y7, Y3, Y11
	VMOVUPS    Y11, 448(DI)
	ADDQ       $8, AX
	ADDQ       $512, DI
	DECQ       CX
	JNZ        btloop

btdone:
	VZEROUPPER
	RET

// func packB16AVX2(dst, src *float32, ldb, k int)
//
// For p < k: dst[p*16:p*16+16] = src[p*ldb:p*ldb+16] (packB without
// transpose, one full 16-column micro-panel), without a memmove call per
// 64-byte row.
TEXT ·packB16AVX2(SB), NOSPLIT, $0-32
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  ldb+16(FP), R8
	MOVQ  k+24(FP), CX
	SHLQ  $2, R8
	TESTQ CX, CX
	JZ    bndone

bnloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    R8, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     bnloop

bndone:
	VZEROUPPER
	RET
