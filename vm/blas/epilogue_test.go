package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// affineEpilogue sets every element to 2x+1 and counts, per element, how
// often it was finished (-race checks that concurrent tiles are disjoint).
type affineEpilogue struct {
	seen    []int
	threads int
	bad     string
}

func (e *affineEpilogue) Tile(tid int, c []float32, ldc, i0, i1, j0, j1 int) {
	if tid < 0 || tid >= e.threads {
		e.bad = fmt.Sprintf("tid %d of %d threads", tid, e.threads)
	}
	for i := i0; i < i1; i++ {
		for j := j0; j < j1; j++ {
			c[i*ldc+j] = 2*c[i*ldc+j] + 1
			e.seen[i*ldc+j]++
		}
	}
}

// TestSgemmEpilogue checks on every shape class, both parallel shapes and
// the GEMV path that SgemmEpilogue finishes each element of C exactly once
// and only after its final value: the result equals the plain GEMM's
// followed by the same epilogue, bit for bit (same micro-kernel, same
// summation order), and padding columns are untouched.
func TestSgemmEpilogue(t *testing.T) {
	forceThreads(t)
	for _, threads := range []int{1, 2, 3} {
		rng := rand.New(rand.NewPCG(7, uint64(threads)))
		for _, tc := range gemmCases() {
			d := newGemmData(tc, rng)
			want := append([]float32(nil), d.c...)
			SgemmThreads(threads, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, want, d.ldc)
			ep := &affineEpilogue{seen: make([]int, len(d.c)), threads: threads}
			SgemmEpilogue(threads, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc, ep)
			require.Empty(t, ep.bad)
			label := fmt.Sprintf("threads=%d/%v", threads, tc)
			for i := range tc.m {
				for j := range d.ldc {
					at := i*d.ldc + j
					if j >= tc.n {
						require.Equal(t, float32(12345), d.c[at], "%s: padding (%d, %d)", label, i, j)
						require.Zero(t, ep.seen[at], "%s: padding (%d, %d) finished", label, i, j)
						continue
					}
					require.Equal(t, 1, ep.seen[at], "%s: (%d, %d) finished %d times", label, i, j, ep.seen[at])
					require.Equal(t, 2*want[at]+1, d.c[at], "%s: (%d, %d)", label, i, j)
				}
			}
		}
	}
}

// nopEpilogue is an Epilogue that does nothing.
type nopEpilogue struct{}

func (nopEpilogue) Tile(int, []float32, int, int, int, int, int) {}

func TestSgemmEpilogueDoesNotAllocate(t *testing.T) {
	forceThreads(t)
	a := make([]float32, 128*128)
	b := make([]float32, 128*128)
	c := make([]float32, 128*128)
	var ep Epilogue = nopEpilogue{}
	for _, run := range []func(){
		func() { SgemmEpilogue(2, false, true, 128, 128, 128, 1, a, 128, b, 128, 0, c, 128, ep) },
		func() { SgemmEpilogue(2, false, false, 128, 16, 128, 1, a, 128, b, 16, 0, c, 16, ep) },
		func() { SgemmEpilogue(2, false, true, 1, 128, 128, 1, a, 128, b, 128, 0, c, 128, ep) },
	} {
		run()
		require.Zero(t, testing.AllocsPerRun(20, run))
	}
}

// rowEpilogue adds oc + 1000*n to each element of a convolution row and
// records which (n, oc, pixel) it finished.
type rowEpilogue struct {
	seen    map[[3]int]int
	threads int
	mu      chan struct{}
}

func (e *rowEpilogue) Row(tid int, row []float32, n, oc, p0 int) {
	if tid < 0 || tid >= e.threads {
		panic(fmt.Sprintf("tid %d of %d threads", tid, e.threads))
	}
	for j := range row {
		row[j] += float32(oc + 1000*n)
	}
	e.mu <- struct{}{}
	for j := range row {
		e.seen[[3]int{n, oc, p0 + j}]++
	}
	<-e.mu
}

// TestConvRowEpilogue checks that Conv finishes every output element once,
// after bias and ReLU, with the row's image, channel and first pixel, on
// the implicit GEMM and the depthwise path.
func TestConvRowEpilogue(t *testing.T) {
	old := minConvWorkPerThread
	minConvWorkPerThread = 1
	defer func() { minConvWorkPerThread = old }()
	rng := rand.New(rand.NewPCG(3, 4))
	one := []int{1, 1}
	for i, g := range []ConvGeom{
		nchwGeom(2, 1, 3, 7, []int{9, 8}, []int{3, 3}, one, one, []int{1, 1}),
		nchwGeom(2, 5, 5, 5, []int{7, 7}, []int{3, 3}, one, one, []int{1, 1}), // depthwise
		nchwGeom(1, 1, 300, 4, []int{5, 5}, []int{1, 1}, one, one, []int{0, 0}),
	} {
		for _, threads := range []int{1, 3} {
			nx, nw, ny := g.sizes()
			x, w := randF32(nx, rng), randF32(nw, rng)
			base := ConvEpilogue{Bias: randF32(g.OutC, rng), ReLU: true}
			want := naiveConv(&g, x, w, base)
			ep := &rowEpilogue{seen: map[[3]int]int{}, threads: threads, mu: make(chan struct{}, 1)}
			with := base
			with.Rows = ep
			y := make([]float32, ny)
			Conv(threads, NewConvPlan(&g), x, w, nil, y, with)
			np := g.pixels()
			for n := range g.Batch {
				for oc := range g.OutC {
					for p := range np {
						at := n*g.YN + oc*g.YC + p
						require.Equal(t, 1, ep.seen[[3]int{n, oc, p}], "case %d threads %d: (%d, %d, %d)", i, threads, n, oc, p)
						require.InDelta(t, want[at]+float32(oc+1000*n), y[at], 1e-3, "case %d threads %d: (%d, %d, %d)", i, threads, n, oc, p)
					}
				}
			}
		}
	}
}
