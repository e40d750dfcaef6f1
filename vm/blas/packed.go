package blas

// PackedB is op(B) of a GEMM packed once into the micro-kernel's panel
// layout, for B that does not change between calls (a model's weights):
// SgemmPackedB then skips the B packing that Sgemm repeats on every call,
// as ONNX Runtime's MLAS packs constant weights once at session load.
//
// The layout is packB's, for all of op(B) at once: per k block pc
// (kBlock(k) rows, the last one shorter, as Sgemm's loop nest blocks k)
// the roundUp(n, nr) columns as nr-column micro-panels, the block at
// panels[pc*roundUp(n, nr):], its panel q at q*nr*kcur inside it. A
// column block jc (a multiple of nr) of a k block is then a contiguous
// run of panels, which is all the loop nest reads.
// The source is kept too (a GEMV streams it as stored).
type PackedB struct {
	transB bool
	k, n   int
	b      []float32 // the source op(B) was packed from
	ldb    int
	panels []float32
}

// PackB packs op(B) (k x n; B as stored is k x n, or n x k when transB,
// rows at stride ldb) for SgemmPackedB. It panics with an *ArgError when
// the arguments do not describe such a matrix (see CheckSgemm). The
// result keeps b: its bytes must not change while the PackedB is in use.
func PackB(transB bool, k, n int, b []float32, ldb int) *PackedB {
	if err := CheckSgemm(false, transB, 0, n, k, 0, max(k, 1), len(b), ldb, 0, max(n, 1)); err != nil {
		panic(err)
	}
	p := &PackedB{transB: transB, k: k, n: n, b: b, ldb: ldb}
	n16 := roundUp(n, nr)
	p.panels = make([]float32, k*n16)
	for kb, pc := kBlock(k), 0; pc < k; pc += kb {
		kcur := min(kb, k-pc)
		packB(p.panels[pc*n16:], b, ldb, transB, pc, 0, kcur, n, 0, n16/nr)
	}
	return p
}

// Fits reports whether p is op(B) for a GEMM with these transB, k, n and
// ldb (its source had the same geometry).
func (p *PackedB) Fits(transB bool, k, n, ldb int) bool {
	return p.transB == transB && p.k == k && p.n == n && p.ldb == ldb
}

// block returns the packed panels of op(B)[pc:pc+kcur, jc:jc+ncur] (jc a
// multiple of nr) in the layout of block.bp.
func (p *PackedB) block(pc, kcur, jc, ncur int) []float32 {
	off := pc*roundUp(p.n, nr) + jc*kcur
	return p.panels[off : off+roundUp(ncur, nr)*kcur]
}

// SgemmPackedB is SgemmEpilogue with op(B) already packed: C =
// alpha*op(A)*op(B) + beta*C, op(A) m x k (transA: stored k x m) at
// stride lda, C m x p.n at stride ldc, ep (nil: none) finishing each
// tile. It panics with an *ArgError when A or C does not fit.
func SgemmPackedB(threads int, transA bool, m int, alpha float32, a []float32, lda int, p *PackedB, beta float32, c []float32, ldc int, ep Epilogue) {
	sgemm(threads, transA, p.transB, m, p.n, p.k, alpha, a, lda, p.b, p.ldb, p, beta, c, ldc, ep)
}
