package blas

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSgemmPackedBMatchesUnpacked: on every shape class (n and k off the
// panel widths and kc, extent 1, both transposes, alpha/beta and padding),
// both parallel shapes and the GEMV path, with every micro-kernel, B
// packed once gives the per-call packing's result bit for bit (same
// panels, same kernels, same summation order), and the per-call result
// matches the naive triple loop; an epilogue finishes every element once.
func TestSgemmPackedBMatchesUnpacked(t *testing.T) {
	forceThreads(t)
	for name, kern := range kernels() {
		for _, threads := range []int{1, 2, 3} {
			rng := rand.New(rand.NewPCG(11, uint64(threads)))
			for _, tc := range gemmCases() {
				d := newGemmData(tc, rng)
				label := fmt.Sprintf("%s/threads=%d/%v", name, threads, tc)
				want := append([]float32(nil), d.c...)
				got := append([]float32(nil), d.c...)
				ep := &affineEpilogue{seen: make([]int, len(d.c)), threads: threads}
				withKernel(t, kern, func() {
					SgemmThreads(threads, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, want, d.ldc)
					p := PackB(tc.transB, tc.k, tc.n, d.b, d.ldb)
					require.True(t, p.Fits(tc.transB, tc.k, tc.n, d.ldb))
					SgemmPackedB(threads, tc.transA, tc.m, tc.alpha, d.a, d.lda, p, tc.beta, got, d.ldc, ep)
				})
				require.Empty(t, ep.bad)
				for i := range tc.m {
					for j := range d.ldc {
						at := i*d.ldc + j
						if j >= tc.n {
							require.Equal(t, float32(12345), got[at], "%s: padding (%d, %d)", label, i, j)
							continue
						}
						require.Equal(t, 1, ep.seen[at], "%s: (%d, %d) finished %d times", label, i, j, ep.seen[at])
						require.Equal(t, 2*want[at]+1, got[at], "%s: (%d, %d)", label, i, j)
					}
				}
			}
		}
	}
}

// TestPackBRejectsBadShapes: PackB checks B like Sgemm does.
func TestPackBRejectsBadShapes(t *testing.T) {
	require.PanicsWithError(t, "blas: sgemm: len(b)=5 is too short for 2x3 with ldb=3 (need 6)", func() { PackB(false, 2, 3, make([]float32, 5), 3) })
	require.Panics(t, func() { PackB(true, 2, 3, make([]float32, 6), 1) }, "ldb below op(B)^T's 2 columns")
	p := PackB(true, 2, 3, make([]float32, 6), 2)
	require.False(t, p.Fits(false, 2, 3, 2))
	require.False(t, p.Fits(true, 3, 2, 2))
}

// TestSgemmPackedBDoesNotAllocate: with B packed, a call allocates nothing
// once the pooled call state exists, on both parallel shapes and the GEMV.
func TestSgemmPackedBDoesNotAllocate(t *testing.T) {
	forceThreads(t)
	a := make([]float32, 128*128)
	b := make([]float32, 128*128)
	c := make([]float32, 128*128)
	wide, narrow := PackB(true, 128, 128, b, 128), PackB(false, 128, 16, b, 16)
	for _, run := range []func(){
		func() { SgemmPackedB(2, false, 128, 1, a, 128, wide, 0, c, 128, nil) },         // columns split
		func() { SgemmPackedB(2, false, 128, 1, a, 128, narrow, 0, c, 16, nil) },        // shared B
		func() { SgemmPackedB(2, false, 1, 1, a, 128, wide, 0, c, 128, nopEpilogue{}) }, // GEMV
	} {
		run()
		require.Zero(t, testing.AllocsPerRun(20, run))
	}
}

// shareJob records which shares ran.
type shareJob struct {
	ran, threads []int // per share: runs, and the thread count it saw
}

func (j *shareJob) Run(tid, threads int) {
	j.ran[tid]++
	j.threads[tid] = threads
}

// TestParallelRunsEveryShare: Parallel runs every share exactly once on
// the pool (-race checks the hand-off) and allocates nothing.
func TestParallelRunsEveryShare(t *testing.T) {
	for _, threads := range []int{0, 1, 2, 5} {
		j := &shareJob{ran: make([]int, max(threads, 1)), threads: make([]int, max(threads, 1))}
		Parallel(threads, j)
		for tid, n := range j.ran {
			require.Equal(t, 1, n, "threads=%d: share %d ran %d times", threads, tid, n)
			require.Equal(t, max(threads, 1), j.threads[tid])
		}
	}
	j := &shareJob{ran: make([]int, 2), threads: make([]int, 2)}
	require.Zero(t, testing.AllocsPerRun(20, func() { Parallel(2, j) }))
}

// blockingJob's share 1 waits for release (when it is not nil).
type blockingJob struct {
	started chan struct{}
	release chan struct{}
	ran     [2]int
}

func (j *blockingJob) Run(tid, threads int) {
	j.ran[tid]++
	if tid == 1 && j.release != nil {
		close(j.started)
		<-j.release
	}
}

// TestParallelDoesNotWaitForABusyWorker: while a pool worker (or the
// other caller) is stuck in one call's share, another call on the same
// pool completes, its shares run on its caller, each once; then the
// first completes too, and many calls from several goroutines at once
// run every share exactly once (-race checks the claims).
func TestParallelDoesNotWaitForABusyWorker(t *testing.T) {
	stuck := &blockingJob{started: make(chan struct{}), release: make(chan struct{})}
	doneStuck := make(chan struct{})
	go func() {
		Parallel(2, stuck)
		close(doneStuck)
	}()
	<-stuck.started
	free := &blockingJob{}
	done := make(chan struct{})
	go func() {
		for range 100 {
			Parallel(2, free)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Parallel waited for a worker stuck in another call")
	}
	require.Equal(t, [2]int{100, 100}, free.ran)
	close(stuck.release)
	<-doneStuck
	require.Equal(t, [2]int{1, 1}, stuck.ran)

	var wg sync.WaitGroup
	jobs := make([]*shareJob, 4)
	for g := range jobs {
		jobs[g] = &shareJob{ran: make([]int, 3), threads: make([]int, 3)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				Parallel(3, jobs[g])
			}
		}()
	}
	wg.Wait()
	for g, j := range jobs {
		require.Equal(t, []int{200, 200, 200}, j.ran, "goroutine %d", g)
	}
}
