package blas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// refSgemm is the obviously correct triple loop, accumulated in float64. It
// also returns, per element of C, the magnitude |alpha| sum_p |A_ip B_pj| +
// |beta C_ij| that bounds the float32 rounding error.
func refSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) (want, mag []float64) {
	want = make([]float64, len(c))
	mag = make([]float64, len(c))
	for i := range c {
		want[i] = float64(c[i])
	}
	for i := range m {
		for j := range n {
			var sum, abs float64
			for p := range k {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				sum += float64(av) * float64(bv)
				abs += math.Abs(float64(av) * float64(bv))
			}
			old := float64(c[i*ldc+j])
			if beta == 0 {
				old = 0 // reference BLAS: C is not read when beta is zero
			}
			want[i*ldc+j] = float64(alpha)*sum + float64(beta)*old
			mag[i*ldc+j] = math.Abs(float64(alpha))*abs + math.Abs(float64(beta)*old)
		}
	}
	return want, mag
}

// tolerance is the allowed |got - want| for an element of magnitude mag
// (see refSgemm) after a k-term float32 dot product: the classic bound
// gamma_k = k*u on summation error (u = 2^-24) doubled for the alpha/beta
// steps, and never tighter than the project's fp32 tolerance 1e-5.
func tolerance(k int, mag float64) float64 {
	return max(1e-5, float64(k+2)*0x1p-23) * max(mag, 1e-30)
}

type gemmCase struct {
	m, n, k        int
	transA, transB bool
	alpha, beta    float32
	pad            int // extra leading-dimension padding on A, B and C
}

func (tc gemmCase) String() string {
	return fmt.Sprintf("%dx%dx%d/tA=%v/tB=%v/alpha=%g/beta=%g/pad=%d", tc.m, tc.n, tc.k, tc.transA, tc.transB, tc.alpha, tc.beta, tc.pad)
}

// shapeClasses covers: empty and 1x1x1; exact tiles; sizes off the tile
// widths (mr=6, nr=16) by one; k around kc=256 and 2*kc; m around mc=144;
// n past nc=4096; GEMV-like m=1 and n=1; odd primes.
var shapeClasses = [][3]int{
	{1, 1, 1}, {0, 5, 3}, {5, 0, 3}, {4, 5, 0}, {6, 16, 1}, {6, 16, 8}, {5, 15, 7}, {7, 17, 9},
	{12, 32, 256}, {13, 33, 257}, {11, 31, 255}, {19, 47, 513}, {144, 16, 4}, {145, 17, 5},
	{150, 35, 300}, {3, 4100, 5}, {1, 300, 300}, {300, 1, 300}, {37, 41, 43}, {97, 83, 61},
	// The parallel shapes: columns split (many micro-panels) and rows split
	// over a shared packed B (few panels, many rows).
	{50, 300, 70}, {200, 100, 30},
	// Last row panels of 2, 3 and 4 rows (the partial-row kernels; 1 and 5
	// rows come up above), with odd k for their two accumulator sets.
	{4, 40, 31}, {10, 32, 20}, {9, 16, 601}, {8, 48, 1},
}

func gemmCases() []gemmCase {
	var cases []gemmCase
	scalars := [][2]float32{{1, 0}, {1, 1}, {0.5, -2}, {-1.5, 0}, {0, 0.5}, {2, 1}}
	i := 0
	for _, s := range shapeClasses {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				// Rotate through alpha/beta and padding so every shape and
				// transpose combination meets several of them.
				for r := range 2 {
					ab := scalars[(i+r*3)%len(scalars)]
					cases = append(cases, gemmCase{m: s[0], n: s[1], k: s[2], transA: tA, transB: tB, alpha: ab[0], beta: ab[1], pad: (i + r) % 3 * 3})
				}
				i++
			}
		}
	}
	return cases
}

type gemmData struct {
	a, b, c       []float32
	lda, ldb, ldc int
}

// newGemmData fills A and B with random values in [-1, 1) and C with random
// values too, except that with beta == 0 C holds NaN (which must not leak).
// Padding columns of C hold a sentinel that must survive.
func newGemmData(tc gemmCase, rng *rand.Rand) gemmData {
	aRows, aCols := tc.m, tc.k
	if tc.transA {
		aRows, aCols = tc.k, tc.m
	}
	bRows, bCols := tc.k, tc.n
	if tc.transB {
		bRows, bCols = tc.n, tc.k
	}
	d := gemmData{lda: aCols + tc.pad, ldb: bCols + tc.pad, ldc: tc.n + tc.pad}
	d.lda, d.ldb, d.ldc = max(d.lda, 1), max(d.ldb, 1), max(d.ldc, 1)
	fill := func(rows, ld int) []float32 {
		s := make([]float32, rows*ld)
		for i := range s {
			s[i] = rng.Float32()*2 - 1
		}
		return s
	}
	d.a, d.b, d.c = fill(aRows, d.lda), fill(bRows, d.ldb), fill(tc.m, d.ldc)
	for i := range tc.m {
		for j := range d.ldc {
			switch {
			case j >= tc.n:
				d.c[i*d.ldc+j] = 12345
			case tc.beta == 0:
				d.c[i*d.ldc+j] = float32(math.NaN())
			}
		}
	}
	return d
}

// withKernel runs f with Sgemm using the given micro-kernels.
func withKernel(t *testing.T, kern kernelChoice, f func()) {
	t.Helper()
	saved := activeKernel
	activeKernel = kern
	defer func() { activeKernel = saved }()
	f()
}

// kernels lists the micro-kernels this CPU can run: the portable one always,
// the assembly ones where the CPU has AVX2+FMA.
func kernels() map[string]kernelChoice {
	ks := map[string]kernelChoice{"go": {name: "go-6x16", fn: kernel6x16Go}}
	if activeKernel.name != "go-6x16" {
		ks[activeKernel.name] = activeKernel
	}
	if activeKernel.wide != nil {
		narrow := activeKernel
		narrow.name, narrow.wide, narrow.wideLast, narrow.wideOne = "avx2-fma-6x16", nil, nil, nil
		narrow.wideRows, narrow.storeFirst = [mr]wideKernel{}, false
		ks[narrow.name] = narrow
	}
	if activeKernel.storeFirst {
		// beta == 0 clearing C first and adding, as without overwriting kernels.
		adding := activeKernel
		adding.name, adding.storeFirst = activeKernel.name+"-no-store", false
		ks[adding.name] = adding
	}
	return ks
}

// forceThreads lets every shape use all the threads it is given, so the
// parallel splits (and their empty shares) run on tiny shapes too.
func forceThreads(t testing.TB) {
	saved, savedGemv := minWorkPerThread, minGemvWorkPerThread
	minWorkPerThread, minGemvWorkPerThread = 1, 1
	t.Cleanup(func() { minWorkPerThread, minGemvWorkPerThread = saved, savedGemv })
}

func TestSgemmMatchesNaive(t *testing.T) {
	forceThreads(t)
	for name, kern := range kernels() {
		for _, threads := range []int{1, 2, 3} {
			rng := rand.New(rand.NewPCG(1, uint64(threads)))
			for _, tc := range gemmCases() {
				d := newGemmData(tc, rng)
				want, mag := refSgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc)
				withKernel(t, kern, func() {
					SgemmThreads(threads, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc)
				})
				requireClose(t, fmt.Sprintf("%s/threads=%d/%v", name, threads, tc), tc.k, d.c, want, mag)
			}
		}
	}
}

func requireClose(t *testing.T, label string, k int, got []float32, want, mag []float64) {
	t.Helper()
	for i := range got {
		if diff := math.Abs(float64(got[i]) - want[i]); !(diff <= tolerance(k, mag[i])) {
			require.Failf(t, "sgemm mismatch", "%s: element %d = %v, want %v (tolerance %g)", label, i, got[i], want[i], tolerance(k, mag[i]))
		}
	}
}

// TestSgemmKernelsAgree runs the assembly and the portable micro-kernel on
// the same inputs for every shape class and compares them directly.
func TestSgemmKernelsAgree(t *testing.T) {
	forceThreads(t)
	ks := kernels()
	if len(ks) < 2 {
		t.Skip("no assembly kernel on this CPU: only the portable kernel runs (covered by TestSgemmMatchesNaive)")
	}
	rng := rand.New(rand.NewPCG(2, 2))
	for _, tc := range gemmCases() {
		d := newGemmData(tc, rng)
		results := map[string][]float32{}
		for name, kern := range ks {
			c := append([]float32(nil), d.c...)
			withKernel(t, kern, func() {
				SgemmThreads(2, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, c, d.ldc)
			})
			results[name] = c
		}
		_, mag := refSgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc)
		goRes := results["go"]
		for i, v := range results[activeKernel.name] {
			if diff := math.Abs(float64(v) - float64(goRes[i])); !(diff <= 2*tolerance(tc.k, mag[i])) {
				require.Failf(t, "kernels disagree", "%v: element %d: asm %v, go %v", tc, i, v, goRes[i])
			}
		}
	}
}

func TestSgemmAllCoresEntryPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	tc := gemmCase{m: 200, n: 190, k: 180, alpha: 1, beta: 0}
	d := newGemmData(tc, rng)
	want, mag := refSgemm(false, false, tc.m, tc.n, tc.k, 1, d.a, d.lda, d.b, d.ldb, 0, d.c, d.ldc)
	Sgemm(false, false, tc.m, tc.n, tc.k, 1, d.a, d.lda, d.b, d.ldb, 0, d.c, d.ldc)
	requireClose(t, "Sgemm", tc.k, d.c, want, mag)
}

// TestSgemmConcurrentCalls shares the worker pool between goroutines; run
// with -race it also checks the pool's synchronisation.
func TestSgemmConcurrentCalls(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(4, uint64(g)))
			tc := gemmCase{m: 70 + g, n: 90, k: 300, transB: g%2 == 0, alpha: 1, beta: 1}
			d := newGemmData(tc, rng)
			want, mag := refSgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, 1, d.a, d.lda, d.b, d.ldb, 1, d.c, d.ldc)
			SgemmThreads(2, tc.transA, tc.transB, tc.m, tc.n, tc.k, 1, d.a, d.lda, d.b, d.ldb, 1, d.c, d.ldc)
			requireClose(t, fmt.Sprint("goroutine ", g), tc.k, d.c, want, mag)
		})
	}
	wg.Wait()
}

func TestSgemmSteadyStateDoesNotAllocate(t *testing.T) {
	forceThreads(t) // the two-thread paths, not only the serial one
	a := make([]float32, 128*128)
	b := make([]float32, 128*128)
	c := make([]float32, 128*128)
	for _, run := range []func(){
		func() { SgemmThreads(2, false, true, 128, 128, 128, 1, a, 128, b, 128, 0, c, 128) }, // columns split
		func() { SgemmThreads(2, false, false, 128, 16, 128, 1, a, 128, b, 16, 0, c, 16) },   // shared B
		func() { SgemmThreads(2, false, true, 1, 128, 128, 1, a, 128, b, 128, 0, c, 128) },   // GEMV
	} {
		run()
		require.Zero(t, testing.AllocsPerRun(20, run))
	}
}

func TestCheckSgemm(t *testing.T) {
	tests := []struct {
		name                            string
		transA, transB                  bool
		m, n, k                         int
		lenA, lda, lenB, ldb, lenC, ldc int
		wantArg                         string // "" means valid
	}{
		{"valid", false, false, 2, 3, 4, 8, 4, 12, 3, 6, 3, ""},
		{"valid transposed", true, true, 2, 3, 4, 8, 2, 12, 4, 6, 3, ""},
		{"valid padded", false, false, 2, 3, 4, 9, 5, 15, 4, 7, 4, ""},
		{"valid empty", false, false, 0, 0, 0, 0, 1, 0, 1, 0, 1, ""},
		{"negative m", false, false, -1, 3, 4, 8, 4, 12, 3, 6, 3, "m/n/k"},
		{"lda too small", false, false, 2, 3, 4, 8, 3, 12, 3, 6, 3, "lda"},
		{"lda too small transposed", true, false, 2, 3, 4, 8, 1, 12, 3, 6, 3, "lda"},
		{"a too short", false, false, 2, 3, 4, 7, 4, 12, 3, 6, 3, "a"},
		{"b too short", false, true, 2, 3, 4, 8, 4, 11, 4, 6, 3, "b"},
		{"ldc too small", false, false, 2, 3, 4, 8, 4, 12, 3, 6, 2, "ldc"},
		{"c too short", false, false, 2, 3, 4, 8, 4, 12, 3, 5, 3, "c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSgemm(tt.transA, tt.transB, tt.m, tt.n, tt.k, tt.lenA, tt.lda, tt.lenB, tt.ldb, tt.lenC, tt.ldc)
			if tt.wantArg == "" {
				require.NoError(t, err)
				return
			}
			var argErr *ArgError
			require.ErrorAs(t, err, &argErr)
			require.Equal(t, tt.wantArg, argErr.Arg)
		})
	}
}

func TestSgemmPanicsWithArgError(t *testing.T) {
	defer func() {
		err, ok := recover().(*ArgError)
		require.True(t, ok, "Sgemm must panic with *ArgError")
		require.Equal(t, "a", err.Arg)
		require.Contains(t, err.Error(), "len(a)=5 is too short for 2x3")
	}()
	Sgemm(false, false, 2, 2, 3, 1, make([]float32, 5), 3, make([]float32, 6), 2, 0, make([]float32, 4), 2)
}

// TestWideKernelMatchesTiles checks kernelChoice.wide against four calls of
// the portable 6x16 kernel on the same panels, for k around the unrolling
// (k = 0 must leave C alone) and with a C row stride wider than the block.
func TestWideKernelMatchesTiles(t *testing.T) {
	if activeKernel.wide == nil {
		t.Skip("no wide kernel on this CPU")
	}
	rng := rand.New(rand.NewPCG(4, 4))
	const ldc = 40
	for _, k := range []int{0, 1, 2, 3, 4, 5, 7, 8, 17, 64} {
		a := make([]float32, 2*mr*k)
		b := make([]float32, 2*nr*k)
		for i := range a {
			a[i] = rng.Float32()*2 - 1
		}
		for i := range b {
			b[i] = rng.Float32()*2 - 1
		}
		c := make([]float32, 2*mr*ldc)
		for i := range c {
			c[i] = rng.Float32()
		}
		want := append([]float32(nil), c...)
		c0 := append([]float32(nil), c...)
		for _, q := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
			if k == 0 {
				break // nothing to add (the portable kernel wants k >= 1)
			}
			kernel6x16Go(k, a[q[0]*mr*k:], b[q[1]*nr*k:], want[q[0]*mr*ldc+q[1]*nr:], ldc)
		}
		last := append([]float32(nil), c...)
		activeKernel.wide(k, a, b, c, ldc, false)
		for i := range c {
			require.InDelta(t, want[i], c[i], 1e-5*float64(k+1), "k=%d element %d (row %d, column %d)", k, i, i/ldc, i%ldc)
		}
		// wideOne: the first B panel's 16 columns only.
		one := append([]float32(nil), c0...)
		activeKernel.wideOne(k, a, b, one, ldc)
		for i := range one {
			w := want[i]
			if i%ldc >= nr {
				w = c0[i]
			}
			require.InDelta(t, w, one[i], 1e-5*float64(k+1), "wideOne k=%d element %d (row %d, column %d)", k, i, i/ldc, i%ldc)
		}
		// wideLast: the first A panel's six rows only; the rows below stay.
		activeKernel.wideLast(k, a, b, last, ldc, false)
		for i := range last {
			w := want[i]
			if i >= mr*ldc {
				w = c0[i]
			}
			require.InDelta(t, w, last[i], 1e-5*float64(k+1), "wideLast k=%d element %d (row %d, column %d)", k, i, i/ldc, i%ldc)
		}
	}
}

// TestWideRowsKernelsMatchRows checks kernelChoice.wideRows[r] against the
// r-row kernel (kernelChoice.rows) on each of the two B panels: the sums
// run in the same order, so C must match bit for bit, rows r and below
// untouched, for k around the unrolling and a wide C row stride.
func TestWideRowsKernelsMatchRows(t *testing.T) {
	if activeKernel.wide == nil || activeKernel.wideRows[1] == nil {
		t.Skip("no wide partial-row kernels on this CPU")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	const ldc = 41
	for r := 1; r < mr; r++ {
		for _, k := range []int{0, 1, 2, 3, 4, 5, 7, 16, 33, 256} {
			a := make([]float32, mr*k)
			b := make([]float32, 2*nr*k)
			for i := range a {
				a[i] = rng.Float32()*2 - 1
			}
			for i := range b {
				b[i] = rng.Float32()*2 - 1
			}
			c := make([]float32, mr*ldc)
			for i := range c {
				c[i] = rng.Float32()
			}
			want := append([]float32(nil), c...)
			if k > 0 {
				activeKernel.rows[r](k, a, b, want, ldc)
				activeKernel.rows[r](k, a, b[nr*k:], want[nr:], ldc)
			}
			activeKernel.wideRows[r](k, a, b, c, ldc, false)
			for i := range c {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(c[i]), "rows=%d k=%d element %d (row %d, column %d): %g, want %g", r, k, i, i/ldc, i%ldc, c[i], want[i])
			}
		}
	}
}

// TestWideKernelsOverwrite checks every wide kernel (12 rows: wide, 6:
// wideLast, 1..5: wideRows) in both modes on the same panels: with
// overwrite its block of a C holding NaN must come out bit for bit as
// adding into a zeroed block does (the first k block of a beta = 0
// product), and adding into random C as adding the block's products to
// it in float32 (the products themselves are checked against the
// portable kernels above); outside the block C stays as it was, for k
// around the unrolling and a C row stride wider than the block.
func TestWideKernelsOverwrite(t *testing.T) {
	if !activeKernel.storeFirst {
		t.Skip("no overwriting kernels on this CPU")
	}
	kernels := map[int]wideKernel{2 * mr: activeKernel.wide, mr: activeKernel.wideLast}
	for r := 1; r < mr; r++ {
		kernels[r] = activeKernel.wideRows[r]
	}
	rng := rand.New(rand.NewPCG(6, 7))
	const ldc = 37 + 2*nr
	for rows, kern := range kernels {
		require.NotNil(t, kern, "rows=%d", rows)
		for _, k := range []int{0, 1, 2, 3, 4, 5, 7, 16, 33} {
			a := make([]float32, 2*mr*k) // two A panels; fewer rows read one
			b := make([]float32, 2*nr*k)
			for i := range a {
				a[i] = rng.Float32()*2 - 1
			}
			for i := range b {
				b[i] = rng.Float32()*2 - 1
			}
			inBlock := func(i int) bool { return i/ldc < rows && i%ldc < 2*nr }
			old := make([]float32, 2*mr*ldc)
			for i := range old {
				old[i] = rng.Float32()*2 - 1
			}
			// The block's products alone: added into zeros.
			products := append([]float32(nil), old...)
			for i := range products {
				if inBlock(i) {
					products[i] = 0
				}
			}
			kern(k, a, b, products, ldc, false)
			stored := append([]float32(nil), old...)
			for i := range stored {
				if inBlock(i) {
					stored[i] = float32(math.NaN())
				}
			}
			kern(k, a, b, stored, ldc, true)
			added := append([]float32(nil), old...)
			kern(k, a, b, added, ldc, false)
			for i := range old {
				wantStored, wantAdded := old[i], old[i]
				if inBlock(i) {
					wantStored, wantAdded = products[i], old[i]+products[i]
				}
				require.Equal(t, math.Float32bits(wantStored), math.Float32bits(stored[i]), "rows=%d k=%d overwrite element %d (row %d, column %d): %g, want %g", rows, k, i, i/ldc, i%ldc, stored[i], wantStored)
				require.Equal(t, math.Float32bits(wantAdded), math.Float32bits(added[i]), "rows=%d k=%d add element %d (row %d, column %d): %g, want %g", rows, k, i, i/ldc, i%ldc, added[i], wantAdded)
			}
		}
	}
}

// TestStoreFirstMatchesClearing checks that a beta = 0 product whose first
// k block stores into C (kernelChoice.storeFirst) gives C bit for bit as
// clearing C and adding does, with C's old contents NaN, on shapes with
// every kind of edge (rows left under the 12- and 6-row blocks, an odd
// 16-column panel, a partial panel, several k blocks), B packed per call
// and once, on one and two threads.
func TestStoreFirstMatchesClearing(t *testing.T) {
	if !activeKernel.storeFirst {
		t.Skip("no overwriting kernels on this CPU")
	}
	forceThreads(t)
	adding := activeKernel
	adding.storeFirst = false
	rng := rand.New(rand.NewPCG(8, 9))
	// m = 13..18 and 24 leave 1..5 rows, 6 rows and none under the 12-row
	// blocks.
	for _, s := range [][3]int{{1, 40, 7}, {5, 33, 300}, {13, 48, 17}, {14, 32, 9}, {15, 64, 40}, {16, 40, 300}, {17, 32, 5}, {18, 33, 2}, {24, 64, 33},
		{64, 512, 784}, {128, 80, 600}, {31, 100, 257}, {7, 16, 3}} {
		m, n, k := s[0], s[1], s[2]
		a, b := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = rng.Float32()*2 - 1
		}
		for i := range b {
			b[i] = rng.Float32()*2 - 1
		}
		pb := PackB(false, k, n, b, n)
		for _, threads := range []int{1, 2} {
			run := func(kern kernelChoice, packed bool) []float32 {
				c := make([]float32, m*n)
				for i := range c {
					c[i] = float32(math.NaN())
				}
				withKernel(t, kern, func() {
					if packed {
						SgemmPackedB(threads, false, m, 1, a, k, pb, 0, c, n, nil)
					} else {
						SgemmThreads(threads, false, false, m, n, k, 1, a, k, b, n, 0, c, n)
					}
				})
				return c
			}
			for _, packed := range []bool{false, true} {
				want, got := run(adding, packed), run(activeKernel, packed)
				for i := range want {
					require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "%dx%dx%d threads=%d packed=%v element %d", m, n, k, threads, packed, i)
				}
			}
		}
	}
}
