package kernel

import (
	"sync"

	"github.com/phasec/phasec/vm/blas"
)

// matmulBatches is one call of a batched matmul whose batches are small
// (attention's per-head products): rather than each product split across
// threads (where the hand-offs cost more than they save) or all of them on
// one thread, the threads run whole batches side by side, each product on
// one thread (blas.Parallel; Run is thread tid's share).
type matmulBatches struct {
	m         *matmul
	A, B, C   *bufData
	M, N, K   int64
	lda, ldb  int64
	beta      float32
	pb        *blas.PackedB
	ep        *gemmEpState // nil: no epilogue
	count     int64        // batches: the product of C's batch extents
	batchDims int
}

var batchJobs = sync.Pool{New: func() any { return new(matmulBatches) }}

// runBatches runs the batches of a matmul call on threads threads when
// there are at least two batches and one product would run on one thread
// anyway; it reports false (and runs nothing) otherwise.
func (m *matmul) runBatches(fr *frame, threads int, A, B, C *bufData, M, N, K, lda, ldb int64, beta float32, pb *blas.PackedB, ep *gemmEpState) bool {
	nb := m.cRank - 2
	if nb == 0 || threads < 2 || fr.inParallel || blas.GemmThreads(threads, int(M), int(N), int(K)) > 1 {
		return false
	}
	count := int64(1)
	for d := range nb {
		count *= C.shape[d]
	}
	if count < 2 {
		return false
	}
	threads = int(min(int64(threads), count))
	if ep != nil {
		ep.prepareBatches(threads)
	}
	j := batchJobs.Get().(*matmulBatches)
	*j = matmulBatches{m: m, A: A, B: B, C: C, M: M, N: N, K: K, lda: lda, ldb: ldb, beta: beta, pb: pb, ep: ep, count: count, batchDims: nb}
	blas.Parallel(threads, j)
	*j = matmulBatches{}
	batchJobs.Put(j)
	return true
}

// Run computes batches [count*tid/threads, count*(tid+1)/threads).
func (j *matmulBatches) Run(tid, threads int) {
	m, nb := j.m, j.batchDims
	var bi [8]int64
	for b := j.count * int64(tid) / int64(threads); b < j.count*int64(tid+1)/int64(threads); b++ {
		r := b
		for d := nb - 1; d >= 0; d-- {
			bi[d] = r % j.C.shape[d]
			r /= j.C.shape[d]
		}
		offC := b * j.M * j.N
		offA := batchOffset(j.A, m.aIdx, m.batch, bi[:nb], nb)
		var finish blas.Epilogue
		if j.ep != nil {
			finish = j.ep.batchFor(tid, bi[:nb], offC)
		}
		if j.pb != nil {
			blas.SgemmPackedB(1, m.transA, int(j.M), m.alpha, j.A.f32[offA:], int(j.lda), j.pb, j.beta, j.C.f32[offC:], int(j.N), finish)
			continue
		}
		offB := batchOffset(j.B, m.bIdx, m.batch, bi[:nb], nb)
		blas.SgemmEpilogue(1, m.transA, m.transB, int(j.M), int(j.N), int(j.K), m.alpha,
			j.A.f32[offA:], int(j.lda), j.B.f32[offB:], int(j.ldb), j.beta, j.C.f32[offC:], int(j.N), finish)
	}
}
