package blas

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Cache blocking for Zen 4 (L1d 32 KiB, L2 1 MiB per core, L3 32 MiB shared):
//   - kc: one packed B micro-panel (kc x nr) plus one A micro-panel (mr x kc)
//     is 22 KiB, so both stay in L1 while a tile is computed;
//   - mc: the packed A block (mc x kc, 144 KiB) stays in L2 while all B
//     micro-panels stream past it;
//   - nc: the packed B block (kc x nc, 4 MiB) lives in L3.
//
// mc is a multiple of mr and nc a multiple of nr so that only the last
// block of each dimension has edge tiles.
const (
	kc = 256
	mc = 144
	nc = 4096
)

// kBlock is the k block size of a k-deep product: k in the fewest blocks
// of at most kc, of equal size rounded up to a multiple of 4 (the
// kernels' unrolling). An uneven split would end in a short block that
// pays a whole pass over C and its own A packing for a few k steps (784,
// the MLP's first layer, was 3 x 256 + 16; it is 4 x 196).
func kBlock(k int) int {
	if k <= kc {
		return kc
	}
	return min(kc, roundUp(ceilDiv(k, ceilDiv(k, kc)), 4))
}

// minWorkPerThread is the multiply-add count (m*n*k) per thread below
// which one more thread does not pay for the hand-off and the extra
// packing: measured under SCHED_FIFO, two threads lost at 128^3 (2M) and
// won 1.1x at 192^3 (7M) and 1.4x at 256^3 (17M). The GEMV path, bound by
// streaming B, gains from a second thread much earlier (1x4096x1024, 4M
// multiply-adds: 1.7-2x). (Variables so tests can run tiny shapes on
// several threads.)
var (
	minWorkPerThread     = 1 << 22
	minGemvWorkPerThread = 1 << 18
)

// maxThreads bounds SgemmThreads' parallelism (and so the worker pool).
const maxThreads = 256

// CheckSgemm reports whether the arguments describe a valid Sgemm call on
// slices of lengths lenA, lenB and lenC, as an *ArgError naming the first bad
// argument. Callers that prepare a GEMM ahead of time (vm/kernel at kernel load)
// use it to turn a bad shape into an error instead of Sgemm's panic.
//
// Row-major layout: op(A) is m x k, op(B) is k x n, C is m x n. A is stored
// m x k (k x m when transA) with row stride lda >= its column count; the
// same for B (k x n, or n x k when transB) and C (m x n, ldc >= n).
func CheckSgemm(transA, transB bool, m, n, k int, lenA, lda, lenB, ldb, lenC, ldc int) error {
	if m < 0 || n < 0 || k < 0 {
		return &ArgError{Arg: "m/n/k", Msg: fmt.Sprintf("negative dimension m=%d n=%d k=%d", m, n, k)}
	}
	aRows, aCols := m, k
	if transA {
		aRows, aCols = k, m
	}
	bRows, bCols := k, n
	if transB {
		bRows, bCols = n, k
	}
	if err := checkMatrix("a", "lda", aRows, aCols, lenA, lda); err != nil {
		return err
	}
	if err := checkMatrix("b", "ldb", bRows, bCols, lenB, ldb); err != nil {
		return err
	}
	return checkMatrix("c", "ldc", m, n, lenC, ldc)
}

func checkMatrix(name, ldName string, rows, cols, length, ld int) error {
	if ld < max(1, cols) {
		return &ArgError{Arg: ldName, Msg: fmt.Sprintf("%s=%d is less than the %d columns of %s", ldName, ld, cols, name)}
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	if need := (rows-1)*ld + cols; length < need {
		return &ArgError{Arg: name, Msg: fmt.Sprintf("len(%s)=%d is too short for %dx%d with %s=%d (need %d)", name, length, rows, cols, ldName, ld, need)}
	}
	return nil
}

// ArgError describes an invalid Sgemm argument.
type ArgError struct {
	Arg string // the offending argument: "a", "lda", "m/n/k", ...
	Msg string
}

func (e *ArgError) Error() string { return "blas: sgemm: " + e.Msg }

// Sgemm computes C = alpha*op(A)*op(B) + beta*C in float32 on all
// GOMAXPROCS cores (fewer for small problems), where op(X) is X or X^T as
// transA/transB say. Layout and the precondition are those of CheckSgemm;
// Sgemm checks them once per call and panics with the *ArgError if they do
// not hold (a caller bug: callers with untrusted shapes call CheckSgemm
// first). With beta == 0, C is overwritten and its old contents (even NaN)
// are ignored, as in reference BLAS.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	SgemmThreads(runtime.GOMAXPROCS(0), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmThreads is Sgemm with at most threads goroutines working on the call
// (threads < 1 means 1). Small problems still use fewer.
func SgemmThreads(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	SgemmEpilogue(threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
}

// SgemmEpilogue is SgemmThreads followed by ep (nil: none), which is
// applied to each tile of C as soon as the tile holds its final GEMM
// value, while it is still in cache (see Epilogue).
func SgemmEpilogue(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, ep Epilogue) {
	sgemm(threads, transA, transB, m, n, k, alpha, a, lda, b, ldb, nil, beta, c, ldc, ep)
}

// sgemm is SgemmEpilogue with op(B) optionally packed already (pb, nil:
// pack per call).
func sgemm(threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, pb *PackedB, beta float32, c []float32, ldc int, ep Epilogue) {
	if err := CheckSgemm(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc); err != nil {
		panic(err)
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(c, ldc, 0, m, 0, n, beta)
		if ep != nil {
			ep.Tile(0, c, ldc, 0, m, 0, n)
		}
		return
	}
	gemv := m == 1 && (!transA || lda == 1)
	threads = gemmThreads(threads, m, n, k, gemv)
	g := getGemm()
	g.gemmCall = gemmCall{
		transA: transA, transB: transB, m: m, n: n, k: k, kb: kBlock(k),
		alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, pb: pb, beta: beta, c: c, ldc: ldc,
		threads: threads, kern: activeKernel.fn, kernRows: activeKernel.rows, wide: activeKernel.wide, wideLast: activeKernel.wideLast, wideOne: activeKernel.wideOne, wideRows: activeKernel.wideRows, ep: ep,
		storeFirst: beta == 0 && activeKernel.storeFirst, sharedBuf: g.sharedBuf, scratch: g.scratch,
	}
	if len(g.scratch) < threads {
		g.scratch = append(g.scratch, make([]threadScratch, threads-len(g.scratch))...)
	}
	if gemv {
		// A GEMV (a batch-1 dense layer): packing B would cost as much as
		// the product, so stream B through dot products or AXPYs instead.
		g.parallel(phaseGemv)
	} else {
		g.run()
	}
	g.shared.bp = nil
	g.a, g.b, g.pb, g.c, g.ep = nil, nil, nil, nil, nil // do not keep the caller's matrices alive
	putGemm(g)
}

// GemmThreads is how many of threads goroutines Sgemm runs an m x n x k
// product on (m > 1: not a GEMV): fewer than threads when a thread's share
// would be too small to pay for the hand-off. A caller with many small
// products (a batched matmul's heads) runs them side by side instead.
func GemmThreads(threads, m, n, k int) int { return gemmThreads(threads, m, n, k, false) }

func gemmThreads(threads, m, n, k int, gemv bool) int {
	threads = min(max(threads, 1), maxThreads)
	minWork := minWorkPerThread
	if gemv {
		minWork = minGemvWorkPerThread
	}
	if work := m * n * k; work/threads < minWork {
		threads = max(1, min(threads, work/minWork))
	}
	return threads
}

// A Job is work split across the GEMM worker pool by Parallel.
type Job interface {
	// Run does share tid (0 <= tid < threads) of the work.
	Run(tid, threads int)
}

// Parallel runs job.Run(tid, threads) for every tid < threads (threads
// < 1 means 1) on the GEMM worker pool, the caller running tid 0, and
// returns when all have returned. The workers are those Sgemm uses (they
// spin briefly between calls), so a caller that splits many small GEMMs
// across threads, each on one thread, hands off as cheaply as Sgemm
// does. Calls allocate nothing when job is a pointer.
func Parallel(threads int, job Job) {
	threads = min(max(threads, 1), maxThreads)
	if threads == 1 {
		job.Run(0, 1)
		return
	}
	g := getGemm()
	g.gemmCall = gemmCall{threads: threads, job: job, sharedBuf: g.sharedBuf, scratch: g.scratch}
	if len(g.scratch) < threads {
		g.scratch = append(g.scratch, make([]threadScratch, threads-len(g.scratch))...)
	}
	g.parallel(phaseJob)
	g.job = nil
	putGemm(g)
}

// gemm is one Sgemm call: its arguments, the shared packed B block and
// per-thread scratch. Pooled so a steady stream of calls does not allocate.
type gemm struct {
	gemmCall // reset per call
	// claims[t] is share t's claim word for the current phase: gen<<1
	// while nobody runs it, gen<<1|1 once its worker or the caller does
	// (parallel). Outside gemmCall: a late worker of an earlier call may
	// read it while the gemm serves another call.
	claims [maxThreads]atomic.Uint64
}

// gemmCall is one call's part of a gemm.
type gemmCall struct {
	transA, transB bool
	m, n, k        int
	kb             int // the k block size, kBlock(k)
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
	pb             *PackedB // op(B) packed already; nil: pack per call
	threads        int
	kern           microKernel
	kernRows       [mr]microKernel // see kernelChoice.rows
	wide, wideLast wideKernel      // see kernelChoice.wide; nil: none
	wideOne        microKernel
	wideRows       [mr]wideKernel // see kernelChoice.wideRows
	ep             Epilogue       // nil: none
	job            Job            // phaseJob's work (Parallel)
	// storeFirst: beta == 0 and kernelChoice.storeFirst, so C is not
	// cleared: the first k block's wide kernels overwrite it (macroKernel).
	storeFirst bool

	phase  int   // phasePackB, phaseCompute, phaseColumns, phaseGemv or phaseJob
	shared block // the block all threads work on in phasePackB/phaseCompute
	// sharedBuf is the buffer shared.bp packs into (kept across calls;
	// shared.bp points into the PackedB when there is one).
	sharedBuf []float32

	scratch []threadScratch
	wg      sync.WaitGroup
	pending atomic.Int32 // shares 1.. of the current phase not done yet
}

// block is one (jc, pc) step of the loop nest: C[:, jc:jc+ncur] gets
// op(A)[:, pc:pc+kcur] * op(B)[pc:pc+kcur, jc:jc+ncur], with that part of
// op(B) packed in bp (micro-panel q, columns jc+q*nr.., at bp[q*nr*kcur:]).
type block struct {
	jc, ncur, pc, kcur int
	bp                 []float32
}

type threadScratch struct {
	tid  int       // the thread's number, for Epilogue.Tile
	ap   []float32 // packed A block, roundUp(mc, mr) x kc
	bp   []float32 // this thread's own packed B block (phaseColumns)
	tile [mr * nr]float32
}

// freeGemms keeps finished calls' state (with their packing buffers) for
// reuse. A plain list, not a sync.Pool: a Pool's per-P slots missed often
// enough when calls moved between Ps (e.g. after a GOMAXPROCS change) that
// fresh multi-megabyte buffers were allocated and page-faulted mid-run.
// It holds at most maxFreeGemms entries, i.e. the buffers of that many
// concurrent calls, for the life of the process.
var freeGemms struct {
	sync.Mutex
	list []*gemm
}

const maxFreeGemms = 8

func getGemm() *gemm {
	freeGemms.Lock()
	defer freeGemms.Unlock()
	if n := len(freeGemms.list); n > 0 {
		g := freeGemms.list[n-1]
		freeGemms.list = freeGemms.list[:n-1]
		return g
	}
	return new(gemm)
}

func putGemm(g *gemm) {
	freeGemms.Lock()
	defer freeGemms.Unlock()
	if len(freeGemms.list) < maxFreeGemms {
		freeGemms.list = append(freeGemms.list, g)
	}
}

const (
	phasePackB = iota
	phaseCompute
	phaseColumns
	phaseGemv
	phaseJob
)

// minPanelsPerThread is how many 16-column micro-panels of C each thread
// needs before the threads split columns (sharing nothing) rather than
// rows (sharing the packed B, with barriers).
var minPanelsPerThread = 8

// run is the GotoBLAS/BLIS loop nest, in one of two parallel shapes:
//
//   - phaseColumns (one thread, or enough columns): each thread owns a
//     range of C's columns and runs the whole nest on it with its own
//     packed B; threads share nothing and meet once, at the end. Only A
//     packing is repeated per thread (cheap: m*k against m*n*k/threads).
//   - shared B (few columns, many rows): per (jc, pc) block the threads
//     pack disjoint micro-panels of one B block, then each computes a range
//     of rows; two barriers per block.
func (g *gemm) run() {
	if g.threads == 1 || ceilDiv(g.n, nr) >= g.threads*minPanelsPerThread || g.m < g.threads*4*mr {
		g.parallel(phaseColumns)
		return
	}
	for jc := 0; jc < g.n; jc += nc {
		ncur := min(nc, g.n-jc)
		for pc := 0; pc < g.k; pc += g.kb {
			kcur := min(g.kb, g.k-pc)
			if g.pb != nil {
				g.shared = block{jc: jc, ncur: ncur, pc: pc, kcur: kcur, bp: g.pb.block(pc, kcur, jc, ncur)}
				g.parallel(phaseCompute)
				continue
			}
			if need := kcur * roundUp(ncur, nr); len(g.sharedBuf) < need {
				g.sharedBuf = make([]float32, need)
			}
			g.shared = block{jc: jc, ncur: ncur, pc: pc, kcur: kcur, bp: g.sharedBuf}
			g.parallel(phasePackB)
			g.parallel(phaseCompute)
		}
	}
}

// parallel runs one phase's shares 0..g.threads-1: the caller runs share
// 0, then every share that no pool worker has claimed yet; the workers
// run the shares they claim. Each share runs exactly once. A worker that
// is not scheduled in time (its core busy with another process, or with
// another call's share) so costs no more than its share run on the
// caller, where waiting for it cost up to a scheduler time slice: under
// load, two threads ran a 64x512x784 GEMM slower than one.
func (g *gemm) parallel(phase int) {
	g.phase = phase
	if g.threads == 1 {
		g.work(0)
		return
	}
	gen := callGen.Add(1)
	queues := startWorkers(g.threads - 1)
	g.wg.Add(g.threads - 1)
	g.pending.Store(int32(g.threads - 1))
	for t := 1; t < g.threads; t++ {
		g.claims[t].Store(gen << 1)
	}
	for t := 1; t < g.threads; t++ {
		select {
		case queues[t-1] <- workItem{g: g, tid: t, gen: gen}:
		default: // the worker has not taken its last item: share t stays the caller's
		}
	}
	g.work(0)
	for t := 1; t < g.threads; t++ {
		g.runShare(t, gen)
	}
	if g.threads <= runtime.GOMAXPROCS(0) {
		// Every worker can be running now, so spinning only waits for work,
		// not for a core.
		spinUntil(func() bool { return g.pending.Load() == 0 })
	}
	g.wg.Wait()
}

// callGen numbers parallel phases (claims' generations).
var callGen atomic.Uint64

// runShare runs share t of phase generation gen if nobody has claimed it.
// A worker holding an item of a finished phase (the gemm may serve
// another call by then) finds its claim word changed and touches
// nothing else.
func (g *gemm) runShare(t int, gen uint64) {
	if !g.claims[t].CompareAndSwap(gen<<1, gen<<1|1) {
		return
	}
	g.work(t)
	g.pending.Add(-1)
	g.wg.Done()
}

// spinWindow is how long a thread spins before it parks, at a join and
// in an idle worker. Parking is cheap, but waking a parked thread on an
// idle vCPU of a KVM guest took tens of microseconds here (a 256^3
// GEMM on two threads ran no faster than on one); spinning briefly keeps
// back-to-back calls (a model's layers) on hot threads.
const spinWindow = 200 * time.Microsecond

// spinUntil polls done for up to spinWindow and reports whether it became
// true. It yields now and then, so goroutines that are ready to run (a
// vm/kernel parallel loop, say) are not held off by a spinning worker.
func spinUntil(done func() bool) bool {
	var start time.Time
	for i := 0; ; i++ {
		if done() {
			return true
		}
		if i%1024 == 1023 {
			runtime.Gosched()
		}
		if i%64 == 63 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > spinWindow {
				return false
			}
		}
	}
}

// work does thread tid's share of the current phase.
func (g *gemm) work(tid int) {
	s := &g.scratch[tid]
	s.tid = tid
	switch g.phase {
	case phaseGemv:
		g.gemv(tid)
	case phaseJob:
		g.job.Run(tid, g.threads)
	case phasePackB:
		blk := &g.shared
		p0, p1 := split(ceilDiv(blk.ncur, nr), g.threads, tid)
		packB(blk.bp, g.b, g.ldb, g.transB, blk.pc, blk.jc, blk.kcur, blk.ncur, p0, p1)
	case phaseCompute:
		blk := &g.shared
		r0, r1 := split(ceilDiv(g.m, mr), g.threads, tid)
		i0, i1 := r0*mr, min(r1*mr, g.m)
		if i0 >= i1 {
			return
		}
		if blk.pc == 0 && !g.storeFirst {
			scaleC(g.c, g.ldc, i0, i1, blk.jc, blk.jc+blk.ncur, g.beta)
		}
		g.rowBlocks(s, blk, i0, i1)
	case phaseColumns:
		p0, p1 := split(ceilDiv(g.n, nr), g.threads, tid)
		j0, j1 := p0*nr, min(p1*nr, g.n)
		if j0 >= j1 {
			return
		}
		if !g.storeFirst {
			scaleC(g.c, g.ldc, 0, g.m, j0, j1, g.beta)
		}
		for jc := j0; jc < j1; jc += nc {
			ncur := min(nc, j1-jc)
			for pc := 0; pc < g.k; pc += g.kb {
				kcur := min(g.kb, g.k-pc)
				blk := block{jc: jc, ncur: ncur, pc: pc, kcur: kcur}
				if g.pb != nil {
					blk.bp = g.pb.block(pc, kcur, jc, ncur)
				} else {
					if need := kcur * roundUp(ncur, nr); len(s.bp) < need {
						s.bp = make([]float32, need)
					}
					blk.bp = s.bp
					packB(blk.bp, g.b, g.ldb, g.transB, pc, jc, kcur, ncur, 0, ceilDiv(ncur, nr))
				}
				g.rowBlocks(s, &blk, 0, g.m)
			}
		}
	}
}

// rowBlocks computes rows i0..i1 of C for block blk: per mc rows, pack
// alpha*A and run the macro-kernel over all of the block's columns.
func (g *gemm) rowBlocks(s *threadScratch, blk *block, i0, i1 int) {
	if need := roundUp(mc, mr)*kc + packSlack; len(s.ap) < need {
		s.ap = make([]float32, need)
	}
	for ic := i0; ic < i1; ic += mc {
		mcur := min(mc, i1-ic)
		packA(s.ap, g.a, g.lda, g.transA, ic, blk.pc, mcur, blk.kcur, g.alpha)
		g.macroKernel(s, blk, ic, mcur)
	}
}

// gemv computes thread tid's columns of the single row of C when m == 1
// and the row of op(A) is contiguous (a[:k]). Columns are split in
// multiples of 16 so threads do not share cache lines of C.
func (g *gemm) gemv(tid int) {
	p0, p1 := split(ceilDiv(g.n, nr), g.threads, tid)
	j0, j1 := p0*nr, min(p1*nr, g.n)
	if j0 >= j1 {
		return
	}
	x := g.a[:g.k]
	c := g.c[j0:j1]
	if g.transB {
		// C[j] = alpha * (x . B^T row j) + beta*C[j]; B^T row j is b[j*ldb:][:k].
		for j := range c {
			d := g.alpha * dotF32(x, g.b[(j0+j)*g.ldb:][:g.k])
			if g.beta != 0 {
				d += g.beta * c[j]
			}
			c[j] = d
		}
	} else {
		// C += sum_p (alpha*x[p]) * B[p, j0:j1], after scaling C by beta.
		scaleC(c, len(c), 0, 1, 0, len(c), g.beta)
		// No skipping of zero x[p]: 0 * Inf in B must still give NaN, as in
		// the packed path.
		for p, xp := range x {
			axpyF32(g.alpha*xp, g.b[p*g.ldb+j0:][:len(c)], c)
		}
	}
	if g.ep != nil {
		g.ep.Tile(tid, g.c, g.ldc, 0, 1, j0, j1)
	}
}

// macroKernel multiplies the packed A block (rows ic..ic+mcur) by all
// packed B micro-panels of blk into C. Edge tiles go through a zeroed
// scratch tile so the micro-kernel never touches C outside the matrix.
func (g *gemm) macroKernel(s *threadScratch, blk *block, ic, mcur int) {
	kcur, ldc := blk.kcur, g.ldc
	// After the last k block, the epilogue runs on every epilogueCols
	// columns of the row block as soon as they are final (mcur x 64
	// floats: in L1/L2).
	finish := g.ep != nil && blk.pc+kcur == g.k
	// The first k block of a storeFirst product overwrites C: the wide
	// kernels with overwrite, and C cleared under the other kernels,
	// which add.
	first := g.storeFirst && blk.pc == 0
	epFrom := 0
	for jr := 0; jr < blk.ncur; {
		if finish && jr-epFrom >= epilogueCols {
			g.ep.Tile(s.tid, g.c, ldc, ic, ic+mcur, blk.jc+epFrom, blk.jc+jr)
			epFrom = jr
		}
		cbase := ic*ldc + blk.jc + jr
		if g.wide != nil && jr+2*nr <= blk.ncur && mcur >= 2*mr {
			// Two full column panels: 12x32 blocks, a 6x32 block, then
			// the rows left over (fewer than 6): across both panels when
			// there is a kernel for them, else per panel.
			bpanels := blk.bp[jr*kcur : (jr+2*nr)*kcur]
			ir := 0
			for ; ir+2*mr <= mcur; ir += 2 * mr {
				g.wide(kcur, s.ap[ir*kcur:(ir+2*mr)*kcur], bpanels, g.c[cbase+ir*ldc:], ldc, first)
			}
			if ir+mr <= mcur {
				g.wideLast(kcur, s.ap[ir*kcur:(ir+mr)*kcur], bpanels, g.c[cbase+ir*ldc:], ldc, first)
				ir += mr
			}
			if rows := mcur - ir; rows > 0 && g.wideRows[rows] != nil {
				g.wideRows[rows](kcur, s.ap[ir*kcur:(ir+mr)*kcur], bpanels, g.c[cbase+ir*ldc:], ldc, first)
				ir = mcur
			}
			if first {
				scaleC(g.c, ldc, ic+ir, ic+mcur, blk.jc+jr, blk.jc+jr+2*nr, 0)
			}
			g.panelTiles(s, blk, ic, mcur, jr, ir)
			g.panelTiles(s, blk, ic, mcur, jr+nr, ir)
			jr += 2 * nr
			continue
		}
		if first {
			scaleC(g.c, ldc, ic, ic+mcur, blk.jc+jr, blk.jc+min(jr+nr, blk.ncur), 0)
		}
		ir := 0
		if g.wideOne != nil && jr+nr <= blk.ncur {
			// One full column panel: 12x16 blocks, then the rest.
			bpanel := blk.bp[jr*kcur : (jr+nr)*kcur]
			for ; ir+2*mr <= mcur; ir += 2 * mr {
				g.wideOne(kcur, s.ap[ir*kcur:(ir+2*mr)*kcur], bpanel, g.c[cbase+ir*ldc:], ldc)
			}
		}
		g.panelTiles(s, blk, ic, mcur, jr, ir)
		jr += nr
	}
	if finish {
		g.ep.Tile(s.tid, g.c, ldc, ic, ic+mcur, blk.jc+epFrom, blk.jc+blk.ncur)
	}
}

// panelTiles runs the 6x16 micro-kernel on the column panel at jr of
// blk for rows ir0..mcur of the packed A block. Edge tiles go through a
// zeroed scratch tile so the micro-kernel never touches C outside the
// matrix.
func (g *gemm) panelTiles(s *threadScratch, blk *block, ic, mcur, jr, ir0 int) {
	kcur, ldc := blk.kcur, g.ldc
	ncols := min(nr, blk.ncur-jr)
	bpanel := blk.bp[jr*kcur : (jr+nr)*kcur]
	cbase := ic*ldc + blk.jc + jr
	for ir := ir0; ir < mcur; ir += mr {
		nrows := min(mr, mcur-ir)
		apanel := s.ap[ir*kcur : (ir+mr)*kcur]
		kern := g.kern
		if nrows < mr && g.kernRows[nrows] != nil {
			kern = g.kernRows[nrows]
			if ncols == nr {
				kern(kcur, apanel, bpanel, g.c[cbase+ir*ldc:], ldc)
				continue
			}
		}
		if nrows == mr && ncols == nr {
			kern(kcur, apanel, bpanel, g.c[cbase+ir*ldc:], ldc)
			continue
		}
		clear(s.tile[:])
		kern(kcur, apanel, bpanel, s.tile[:], nr)
		for i := range nrows {
			ci := g.c[cbase+(ir+i)*ldc:][:ncols]
			ti := s.tile[i*nr:][:ncols]
			for j := range ci {
				ci[j] += ti[j]
			}
		}
	}
}

// scaleC sets C[i0:i1, j0:j1] *= beta, writing zeros for beta == 0 so that
// NaN or Inf in an uninitialised C does not leak into the result.
func scaleC(c []float32, ldc, i0, i1, j0, j1 int, beta float32) {
	if beta == 1 {
		return
	}
	for i := i0; i < i1; i++ {
		row := c[i*ldc+j0 : i*ldc+j1]
		if beta == 0 {
			clear(row)
			continue
		}
		ScaleF32(row, row, beta)
	}
}

// split returns thread t's share [lo, hi) of n items over threads threads.
func split(n, threads, t int) (lo, hi int) {
	return n * t / threads, n * (t + 1) / threads
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
func roundUp(a, b int) int { return ceilDiv(a, b) * b }

// The worker pool: long-lived goroutines, one queue each, so a call hands
// out work without allocating. Workers never wait on each other, so calls
// from several goroutines at once only queue, never deadlock.
type workItem struct {
	g   *gemm
	tid int
	gen uint64 // the phase's generation (gemm.claims)
}

var (
	workerMu     sync.Mutex
	workerQueues []chan workItem
)

// startWorkers makes sure n workers run and returns their queues.
func startWorkers(n int) []chan workItem {
	workerMu.Lock()
	defer workerMu.Unlock()
	for len(workerQueues) < n {
		q := make(chan workItem, 1)
		workerQueues = append(workerQueues, q)
		tid := len(workerQueues)
		go func() {
			for {
				var it workItem
				// Only workers that have a core of their own (tid <
				// GOMAXPROCS, the caller being thread 0) spin.
				if tid >= runtime.GOMAXPROCS(0) || !spinUntil(func() bool {
					select {
					case it = <-q:
						return true
					default:
						return false
					}
				}) {
					it = <-q
				}
				it.g.runShare(it.tid, it.gen)
			}
		}()
	}
	return workerQueues
}
