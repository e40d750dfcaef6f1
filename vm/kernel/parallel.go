package kernel

import (
	"runtime"
	"sync"
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
