package kernel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// T.parallel runs on a fixed set of worker goroutines (started on first
// use, one per GOMAXPROCS), so a call spawns nothing and allocates nothing
// in steady state. The calling goroutine runs the first range itself; when
// every worker is busy (concurrent calls), a range runs inline.

type parJob struct {
	wg     sync.WaitGroup
	k      *Kernel
	parent *frame
	body   stmt
	slot   int
	lo, hi int64
	failed any // a panic in the worker, re-raised by the caller
	// rng, when set, runs [lo, hi) of a pattern kernel on parent itself.
	rng func(fr *frame, lo, hi int64)
	// rr, when set, makes the job a helper of a chunked range run (a job
	// owned by its rangeRun: no wg, never in jobPool).
	rr *rangeRun
}

var (
	workersOnce sync.Once
	workCh      chan *parJob
	jobPool     = sync.Pool{New: func() any { return new(parJob) }}
)

func startWorkers() {
	n := runtime.GOMAXPROCS(0)
	workCh = make(chan *parJob, 4*n)
	for range n {
		go func() {
			for j := range workCh {
				j.run()
			}
		}()
	}
}

func (j *parJob) run() {
	if j.rr != nil {
		j.rr.help()
		return
	}
	defer j.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			j.failed = r
		}
	}()
	if j.rng != nil {
		j.rng(j.parent, j.lo, j.hi)
		return
	}
	fr := j.k.getFrame()
	defer j.k.putFrame(fr)
	fr.copyFrom(j.parent)
	for x := j.lo; x < j.hi; x++ {
		fr.ints[j.slot] = x
		j.body(fr)
	}
}

func (c *compiler) parallelFor(lo, ext iexpr, slot int, body stmt) stmt {
	k := c.k
	return func(fr *frame) {
		start := lo(fr)
		n := ext(fr)
		workers := int64(runtime.GOMAXPROCS(0))
		if fr.inParallel || workers <= 1 || n <= 1 {
			for x := start; x < start+n; x++ {
				fr.ints[slot] = x
				body(fr)
			}
			return
		}
		workers = min(workers, n)
		workersOnce.Do(startWorkers)
		var jobs [64]*parJob
		workers = min(workers, int64(len(jobs)))
		per := (n + workers - 1) / workers
		used := 0
		for w := int64(1); w < workers; w++ {
			a, b := start+w*per, min(start+(w+1)*per, start+n)
			if a >= b {
				break
			}
			j := newJob(k, fr, body, slot, a, b)
			jobs[used] = j
			used++
			select {
			case workCh <- j:
			default:
				j.run()
			}
		}
		// The caller's share runs on a private frame too, so workers can
		// copy the parent's slots while it runs.
		own := newJob(k, fr, body, slot, start, min(start+per, start+n))
		own.run()
		failed := own.failed
		own.release()
		for _, j := range jobs[:used] {
			j.wg.Wait()
			if failed == nil {
				failed = j.failed
			}
			j.release()
		}
		if failed != nil {
			panic(failed)
		}
	}
}

func newJob(k *Kernel, parent *frame, body stmt, slot int, lo, hi int64) *parJob {
	j := jobPool.Get().(*parJob)
	j.k, j.parent, j.body, j.slot, j.lo, j.hi, j.failed = k, parent, body, slot, lo, hi, nil
	j.wg.Add(1)
	return j
}

func (j *parJob) release() {
	j.k, j.parent, j.body, j.failed, j.rng = nil, nil, nil, nil, nil
	jobPool.Put(j)
}

// rangeRun is one chunked range call (runRangeMin): the caller and the
// helpers it wakes take chunks of whole units from a shared counter, so
// a helper that starts late (descheduled on a loaded machine, or busy
// with another call) only does less of the work, and the caller waits
// only for the helpers that joined, each finishing its current chunk,
// never for one that has not started. The protocol is blas.Conv's: state
// counts the helpers inside plus rangeRunClosed once the caller is done;
// a helper joins only an open run and the last one out of a closed run
// signals done. A run is pooled; a helper sent to an earlier call that
// arrives late joins whatever call the run carries then (or none).
type rangeRun struct {
	job          parJob // what the workers receive (job.rr = this run)
	part         func(fr *frame, lo, hi int64)
	fr           *frame
	total, chunk int64
	next         atomic.Int64
	state        atomic.Int32
	done         chan struct{} // capacity 1
	mu           sync.Mutex
	failed       any // the first panic of a helper
}

const rangeRunClosed = 1 << 30

var rangeRuns = sync.Pool{New: func() any {
	r := &rangeRun{done: make(chan struct{}, 1)}
	r.job.rr = r
	r.state.Store(rangeRunClosed)
	return r
}}

// chunksPerWorker is how many chunks runRangeMin cuts per goroutine: a
// late helper leaves the caller at most about one chunk to finish.
const chunksPerWorker = 4

// runChunked runs part over [0, total) in chunks of whole units on the
// caller and up to workers-1 helpers.
func runChunked(fr *frame, total, unit, workers int64, part func(fr *frame, lo, hi int64)) {
	units := total / unit
	chunk := max(1, units/(workers*chunksPerWorker)) * unit
	r := rangeRuns.Get().(*rangeRun)
	r.part, r.fr, r.total, r.chunk = part, fr, total, chunk
	r.next.Store(0)
	r.state.Store(0) // open last: a late helper joins a fully set-up run
	for range workers - 1 {
		select {
		case workCh <- &r.job:
		default:
		}
	}
	failed := r.work()
	if r.state.Or(rangeRunClosed) != 0 {
		<-r.done
	}
	if failed == nil {
		failed = r.failed
	}
	r.part, r.fr, r.failed = nil, nil, nil
	rangeRuns.Put(r)
	if failed != nil {
		panic(failed)
	}
}

// work takes chunks until none are left; it returns a panic of part.
func (r *rangeRun) work() (failed any) {
	defer func() { failed = recover() }()
	for {
		lo := r.next.Add(r.chunk) - r.chunk
		if lo >= r.total {
			return nil
		}
		r.part(r.fr, lo, min(lo+r.chunk, r.total))
	}
}

// help is a helper's share: join, work, leave.
func (r *rangeRun) help() {
	for {
		s := r.state.Load()
		if s&rangeRunClosed != 0 {
			return
		}
		if r.state.CompareAndSwap(s, s+1) {
			break
		}
	}
	if p := r.work(); p != nil {
		r.mu.Lock()
		if r.failed == nil {
			r.failed = p
		}
		r.mu.Unlock()
	}
	if r.state.Add(-1) == rangeRunClosed {
		r.done <- struct{}{}
	}
}
