package blas

// mr x nr is the register tile of the micro-kernel: 6 rows of 16 floats are
// 12 YMM accumulators, leaving 4 registers for the B row and A broadcasts.
const (
	mr = 6
	nr = 16
)

// microKernel computes C[i*ldc+j] += sum_{p<k} a[p*mr+i] * b[p*nr+j] for
// i < mr, j < nr, where a and b are packed micro-panels (see packA, packB).
// Preconditions (not checked by the assembly): len(a) >= mr*k,
// len(b) >= nr*k, len(c) >= (mr-1)*ldc+nr.
type microKernel func(k int, a, b, c []float32, ldc int)

type kernelChoice struct {
	name string
	fn   microKernel
	// rows[r], when set, computes only the first r rows of the tile (and
	// writes only those rows of C), for the last row panel of a block.
	rows [mr]microKernel
	// wide, when set, computes a (2*mr) x (2*nr) block of C from two
	// consecutive A micro-panels (a, a[mr*k:]) and two consecutive B
	// micro-panels (b, b[nr*k:]): the layouts of packA and packB are
	// unchanged. Preconditions: len(a) >= 2*mr*k, len(b) >= 2*nr*k,
	// len(c) >= (2*mr-1)*ldc+2*nr.
	wide wideKernel
	// wideLast, set with wide, computes the mr x (2*nr) block of one A
	// micro-panel under two consecutive B micro-panels (the rows a block of
	// wide leaves over). len(c) >= (mr-1)*ldc+2*nr.
	wideLast wideKernel
	// wideOne, set with wide, computes the (2*mr) x nr block of two
	// consecutive A micro-panels over one B micro-panel (the last panel of
	// an odd count). len(c) >= (2*mr-1)*ldc+nr.
	wideOne microKernel
	// wideRows[r], set with wide, computes the first r rows of wideLast's
	// block (the last, partial A micro-panel under two B micro-panels),
	// writing only those rows of C: len(c) >= (r-1)*ldc+2*nr.
	wideRows [mr]wideKernel
	// storeFirst, set with wide, lets a beta = 0 product run its first k
	// block's wide, wideLast and wideRows with overwrite and skip clearing
	// C (the blocks the other kernels compute are cleared just before).
	// Unset (tests), C is cleared and every kernel adds.
	storeFirst bool
}

// wideKernel is a microKernel of wider blocks (kernelChoice.wide) that,
// with overwrite, stores its block into C instead of adding to it: the
// first k block of a beta = 0 product then needs no cleared C.
type wideKernel func(k int, a, b, c []float32, ldc int, overwrite bool)

// activeKernel is the micro-kernel Sgemm uses: the portable one unless an
// init function found a faster one for this CPU.
var activeKernel = kernelChoice{name: "go-6x16", fn: kernel6x16Go}

// KernelName reports which micro-kernel the running CPU uses ("avx2-fma-6x16"
// or "go-6x16").
func KernelName() string { return activeKernel.name }

// kernel6x16Go is the portable micro-kernel. It computes the tile in 3x4 sub-tiles of 2 rows x 4
// columns, each with eight scalar accumulators the compiler keeps in
// registers; re-reading the packed panels from L1 per sub-tile is cheaper
// than a load and store of an in-memory accumulator per multiply-add.
func kernel6x16Go(k int, a, b, c []float32, ldc int) {
	a = a[:mr*k]
	b = b[:nr*k]
	for i := 0; i < mr; i += 2 {
		for j := 0; j < nr; j += 4 {
			var c00, c01, c02, c03, c10, c11, c12, c13 float32
			ai, bj := a[i:], b[j:]
			for p := 0; p < k; p++ {
				a0, a1 := ai[p*mr], ai[p*mr+1]
				bp := bj[p*nr : p*nr+4 : p*nr+4]
				b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
				c00 += a0 * b0
				c01 += a0 * b1
				c02 += a0 * b2
				c03 += a0 * b3
				c10 += a1 * b0
				c11 += a1 * b1
				c12 += a1 * b2
				c13 += a1 * b3
			}
			r0 := c[i*ldc+j : i*ldc+j+4 : i*ldc+j+4]
			r1 := c[(i+1)*ldc+j : (i+1)*ldc+j+4 : (i+1)*ldc+j+4]
			r0[0] += c00
			r0[1] += c01
			r0[2] += c02
			r0[3] += c03
			r1[0] += c10
			r1[1] += c11
			r1[2] += c12
			r1[3] += c13
		}
	}
}
