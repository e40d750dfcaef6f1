package blas

// An Epilogue finishes the output of a GEMM or a convolution while it is
// in cache: SgemmEpilogue calls Tile on every element of C exactly once,
// a tile at a time, as soon as the tile holds its final value
// alpha*op(A)*op(B) + beta*C (after the last k block, before the next row
// block is computed); Conv calls Row on each output row (one channel of
// one image over a block of pixels) before storing it.
//
// Calls come from up to the threads goroutines the GEMM or convolution
// runs on, concurrently, always on disjoint elements; tid (0 <= tid <
// threads) numbers the calling goroutine, so an implementation can keep
// per-goroutine scratch without locks. An Epilogue is elementwise by
// contract: its result for an element may depend on that element and on
// other memory, never on other elements of C (whose final values may not
// exist yet).
type Epilogue interface {
	// Tile finishes rows [i0, i1) and columns [j0, j1) of C, element (i, j)
	// at c[i*ldc+j] (c is the whole of the caller's C).
	Tile(tid int, c []float32, ldc, i0, i1, j0, j1 int)
}

// A ConvRowEpilogue finishes one output row of a convolution (see
// Epilogue): row holds output channel oc of image n for pixels p0..
// p0+len(row)-1 (in the row-major order of the output's spatial
// extents), after ConvEpilogue's bias and ReLU; Row updates it in place
// before Conv stores it.
type ConvRowEpilogue interface {
	Row(tid int, row []float32, n, oc, p0 int)
}

// epilogueCols is how many columns of a finished row block SgemmEpilogue
// hands to Epilogue.Tile at a time: with mc = 144 rows, 144 KiB of C,
// still in L2 from the micro-kernel's stores, and rows long enough that
// the epilogue's per-row dispatch (vm/kernel runs one program per row
// segment) is amortised. 64 columns (36 KiB, in L1) cost 3-10% of the
// BERT layer's and the MLP's GEMM times in that dispatch; 256 cost 0-3%
// (BenchmarkGemmEpilogueSideBySide's fused/gemm).
const epilogueCols = 256
