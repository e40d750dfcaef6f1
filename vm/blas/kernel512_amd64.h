// Included by the AVX-512 GEMM micro-kernels (kernel_avx512_amd64.s,
// kernel_rows512_amd64.s): the store of a block of C rows after the k
// loop, shared by every row count. A kernel's accumulators for C row i
// are Z(8+2i) (columns 0-15) and Z(9+2i) (columns 16-31); DX points at C
// row 0 and R8 holds the row stride in bytes.

// STOREROW512 adds two accumulators into one C row (32 floats at DX) and
// advances DX.
#define STOREROW512(ACC0, ACC1) \
	VADDPS  (DX), ACC0, ACC0;   \
	VADDPS  64(DX), ACC1, ACC1; \
	VMOVUPS ACC0, (DX);         \
	VMOVUPS ACC1, 64(DX);       \
	ADDQ    R8, DX

// STOREROW512N stores two accumulators as one C row (32 floats at DX),
// overwriting it, and advances DX.
#define STOREROW512N(ACC0, ACC1) \
	VMOVUPS ACC0, (DX);   \
	VMOVUPS ACC1, 64(DX); \
	ADDQ    R8, DX

// ROWS1 .. ROWS6 and ROWS12 apply a row store (STOREROW512 or
// STOREROW512N) to the first 1..6 or 12 rows' accumulators, one C row
// after the other.
#define ROWS1(ROW) ROW(Z8, Z9)
#define ROWS2(ROW) ROWS1(ROW); ROW(Z10, Z11)
#define ROWS3(ROW) ROWS2(ROW); ROW(Z12, Z13)
#define ROWS4(ROW) ROWS3(ROW); ROW(Z14, Z15)
#define ROWS5(ROW) ROWS4(ROW); ROW(Z16, Z17)
#define ROWS6(ROW) ROWS5(ROW); ROW(Z18, Z19)

#define ROWS12(ROW) \
	ROWS6(ROW);    \
	ROW(Z20, Z21); \
	ROW(Z22, Z23); \
	ROW(Z24, Z25); \
	ROW(Z26, Z27); \
	ROW(Z28, Z29); \
	ROW(Z30, Z31)

// FINISH512 stores the rows (ROWS1 .. ROWS6, ROWS12) into C after the k
// loop, added to C or, when the kernel's overwrite argument is set (the
// first k block of a beta = 0 product, whose C is not cleared),
// overwriting it, and returns. The one branch per call is predictable (a
// product's calls all take one side per k block). Its label is local to
// the function, so a function expands it once.
#define FINISH512(ROWS) \
	CMPB overwrite+88(FP), $0; \
	JNE  overwriting;          \
	ROWS(STOREROW512);         \
	VZEROUPPER;                \
	RET;                       \
overwriting:                   \
	ROWS(STOREROW512N);        \
	VZEROUPPER;                \
	RET
