package kernel

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// The schedule search (TVM's MetaSchedule tuning, at phasec's scale:
// python/tvm/meta_schedule/tune.py's TuneTIR measures candidates of a
// design space on the target and keeps the best per workload). For a
// PrimFunc that no fast path takes, Tune enumerates each schedulable
// nest's candidates (loop orders that keep every reduction's order, vector
// mode on or off, tilings of the two innermost loops, a parallel outer
// spatial loop), shuffles them with a seeded generator so the order is
// deterministic, and measures them on random inputs of the call's shapes
// until the time budget runs out. Nests are tuned one after the other,
// each with the earlier nests at their best (coordinate descent), so the
// search is linear in the number of nests. Every candidate's outputs are
// compared with the untuned kernel's (bit for bit, or within the reordered
// sum's tolerance) before its time counts: a wrong schedule is never kept.
// The best candidate is measured again alternately with the untuned
// kernel, and kept only if it is MinGain faster there.

// TuneOptions bound a search.
type TuneOptions struct {
	// Budget is the wall time for the whole search (default 2s).
	Budget time.Duration
	// Seed fixes the candidate order.
	Seed uint64
	// Dims gives symbolic shape variables by name; others are DefaultDim.
	Dims map[string]int64
	// DefaultDim is the value of a symbolic dimension Dims does not name
	// (default DefaultDim).
	DefaultDim int64
	// Reassociate admits schedules that reorder reductions (results then
	// agree within rounding, see ReordersReduction).
	Reassociate bool
	// MaxCandidates bounds the candidates measured per nest (default 64).
	MaxCandidates int
	// General tunes and measures with pattern dispatch off (Options.General):
	// the general closures a fast path falls back to (tests use it to
	// search every PrimFunc of a corpus).
	General bool
}

// TuneResult is the outcome of one search.
type TuneResult struct {
	// Schedule is the best schedule found, nil when none beat the
	// untuned kernel by MinGain.
	Schedule *Schedule
	// Baseline and Best are the untuned kernel's time per call and the
	// best schedule's, measured side by side at the end of the search
	// (Best == Baseline when Schedule is nil).
	Baseline, Best time.Duration
	// Measured counts the candidates run; Rejected those whose outputs
	// differed from the untuned kernel's (a bug if ever nonzero).
	Measured, Rejected int
	// Elapsed is the search's wall time.
	Elapsed time.Duration
}

// DefaultDim is the size a search gives a symbolic dimension it is not
// told.
const DefaultDim = 32

// MinGain is the least speedup a schedule must show over the untuned
// kernel to be kept: below it, the difference is measurement noise.
const MinGain = 1.05

// FastPathReason starts Tunable's reason for a kernel a fast path takes.
const FastPathReason = "a fast path takes it"

// Tunable reports whether a search may help f: no fast path takes it
// (its dispatch is "general" or "reduction") and some nest is
// schedulable. It returns the reason when not.
func Tunable(f *ir.PrimFunc) (bool, string) {
	k, err := Compile(f, "tune")
	if err != nil {
		return false, err.Error()
	}
	for _, p := range strings.Split(k.Pattern(), "+") {
		if p != "general" && p != "reduction" {
			return false, FastPathReason + " (" + k.Pattern() + ")"
		}
	}
	for _, n := range Nests(f) {
		if n.NotSchedulable == "" {
			return true, ""
		}
	}
	return false, "no loop nest is schedulable"
}

// Tune searches schedules for f.
func Tune(f *ir.PrimFunc, opts TuneOptions) (*TuneResult, error) {
	start := time.Now()
	if opts.Budget <= 0 {
		opts.Budget = 2 * time.Second
	}
	if opts.DefaultDim <= 0 {
		opts.DefaultDim = DefaultDim
	}
	if opts.MaxCandidates <= 0 {
		opts.MaxCandidates = 64
	}
	deadline := start.Add(opts.Budget)
	args, err := tuneArgs(f, opts)
	if err != nil {
		return nil, err
	}
	base, err := CompileWith(f, "tune", Options{General: opts.General})
	if err != nil {
		return nil, err
	}
	m := &measurer{args: args}
	if m.want, err = m.outputs(base); err != nil {
		return nil, fmt.Errorf("the untuned kernel fails on random inputs: %w", err)
	}
	res := &TuneResult{Baseline: m.time(base)}
	res.Best = res.Baseline

	nests := Nests(f)
	r := rand.New(rand.NewPCG(opts.Seed, 0x7475_6e65))
	best := &Schedule{Nests: make([]*NestSchedule, len(nests))}
	var todo []int
	for i, n := range nests {
		if n.NotSchedulable == "" {
			todo = append(todo, i)
		}
	}
	for ti, i := range todo {
		// Each nest gets an equal share of what is left.
		share := time.Until(deadline) / time.Duration(len(todo)-ti)
		nestEnd := time.Now().Add(share)
		cands := nestCandidates(nests[i], opts.Reassociate, r)
		for ci, ns := range cands {
			if ci >= opts.MaxCandidates || time.Now().After(nestEnd) {
				break
			}
			s := &Schedule{Nests: slices.Clone(best.Nests)}
			s.Nests[i] = ns
			k, err := CompileWith(f, "tune", Options{General: opts.General, Schedule: s})
			if err != nil {
				return nil, fmt.Errorf("candidate %s: %w", s, err)
			}
			res.Measured++
			if !m.agrees(k, !s.ReordersReduction(f)) {
				res.Rejected++
				continue
			}
			if t := m.time(k); t < res.Best {
				res.Best, best = t, s
			}
		}
	}
	if res.Best < res.Baseline {
		// Confirm side by side: the untuned and the best kernel measured
		// alternately, so both see the same machine load.
		k, err := CompileWith(f, "tune", Options{General: opts.General, Schedule: best})
		if err != nil {
			return nil, err
		}
		res.Baseline, res.Best = m.sideBySide(base, k, 2)
	}
	if float64(res.Baseline) >= MinGain*float64(res.Best) {
		res.Schedule = best
	} else {
		res.Best = res.Baseline
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// nestCandidates lists a nest's candidate schedules: the written order
// and the default's choice first, then the rest of the space shuffled.
func nestCandidates(info NestInfo, reassociate bool, r *rand.Rand) []*NestSchedule {
	n := info.Depth
	var orders [][]int
	for _, p := range permutations(n, 720) {
		if reassociate || keepsReductions(p, info.Reduce) {
			orders = append(orders, p)
		}
	}
	tiles := [][]int64{nil}
	if n >= 2 {
		for _, a := range []int64{4, 8, 16, 32} {
			for _, b := range []int64{16, 32, 64, 128} {
				tiles = append(tiles, []int64{a, b})
			}
		}
	}
	parallel := runtime.GOMAXPROCS(0) > 1
	var out []*NestSchedule
	for _, o := range orders {
		for _, tile := range tiles {
			if tile != nil && !worthTiling(info, o, tile) {
				continue
			}
			for _, vec := range []bool{true, false} {
				out = append(out, &NestSchedule{Order: o, Vector: vec, Tile: tile, Parallel: -1})
				if !parallel {
					continue
				}
				limit := n
				if tile != nil {
					limit = n - 2
				}
				for pos := range limit {
					if info.CanParallel[o[pos]] {
						out = append(out, &NestSchedule{Order: o, Vector: vec, Tile: tile, Parallel: pos})
						break // the outermost parallel loop only
					}
				}
			}
		}
	}
	// The written order first (the closest to the default), then the rest
	// in a seeded random order.
	head := out[:1]
	rest := out[1:]
	r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	return append(head, rest...)
}

// worthTiling rejects tiles no smaller than the loops they split.
func worthTiling(info NestInfo, order []int, tile []int64) bool {
	n := len(order)
	for k, l := range order[n-2:] {
		if e := info.Extent[l]; e >= 0 && tile[k] >= e {
			return false
		}
	}
	return true
}

// keepsReductions reports whether order visits the reduction loops in
// their written order.
func keepsReductions(order []int, reduce []bool) bool {
	last := -1
	for _, l := range order {
		if reduce[l] {
			if l < last {
				return false
			}
			last = l
		}
	}
	return true
}

// permutations lists up to limit permutations of 0..n-1, identity first
// (Heap's algorithm, iterative).
func permutations(n, limit int) [][]int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	out := [][]int{slices.Clone(p)}
	c := make([]int, n)
	for i := 0; i < n && len(out) < limit; {
		if c[i] < i {
			if i%2 == 0 {
				p[0], p[i] = p[i], p[0]
			} else {
				p[c[i]], p[i] = p[i], p[c[i]]
			}
			out = append(out, slices.Clone(p))
			c[i]++
			i = 0
		} else {
			c[i] = 0
			i++
		}
	}
	return out
}

// maxTuneBytes bounds the inputs a search allocates.
const maxTuneBytes = 256 << 20

// tuneArgs builds random inputs of f's shapes (floats uniform in [-1, 1),
// integers 0 or 1 so that index buffers stay in bounds; integer scalars
// are dimensions, float scalars 1).
func tuneArgs(f *ir.PrimFunc, opts TuneOptions) ([]abi.Arg, error) {
	r := rand.New(rand.NewPCG(opts.Seed, 1))
	dim := func(e ir.PrimExpr) (int64, error) {
		if k, ok := constI(e); ok {
			return k, nil
		}
		if v, ok := e.(*ir.PrimVar); ok {
			if d, ok := opts.Dims[v.Name]; ok {
				return d, nil
			}
			return opts.DefaultDim, nil
		}
		return 0, fmt.Errorf("shape %s is neither a constant nor a variable", exprText(e))
	}
	args := make([]abi.Arg, len(f.Params))
	var total int64
	for i, p := range f.Params {
		b := f.BufferMap[p]
		if b == nil {
			if p.Type.IsHandle() {
				return nil, fmt.Errorf("opaque handle parameter %s", p.Name)
			}
			// A scalar: an integer is usually a shape variable too.
			args[i].I, _ = dim(p)
			args[i].F = 1
			continue
		}
		dt, err := runtimeDType(b.DType)
		if err != nil {
			return nil, err
		}
		shape := make([]int64, len(b.Shape))
		n := int64(1)
		for d, e := range b.Shape {
			if shape[d], err = dim(e); err != nil {
				return nil, fmt.Errorf("buffer %s: %w", b.Name, err)
			}
			n *= shape[d]
		}
		if total += n * int64(dt.Size()); total > maxTuneBytes {
			return nil, fmt.Errorf("inputs exceed %d bytes", maxTuneBytes)
		}
		t := tensor.New(dt, shape...)
		for k := range int(n) {
			if dt.IsFloat() {
				t.SetFloat64(k, r.Float64()*2-1)
			} else {
				t.SetFloat64(k, float64(r.IntN(2)))
			}
		}
		args[i].T = t
	}
	return args, nil
}

// measurer runs kernels on one set of inputs.
type measurer struct {
	args []abi.Arg
	want [][]byte // the untuned kernel's buffers after a call
}

// outputs runs k on a copy of the inputs and returns every buffer after.
func (m *measurer) outputs(k *Kernel) ([][]byte, error) {
	args := slices.Clone(m.args)
	for i, a := range args {
		if a.T != nil {
			c := tensor.New(a.T.DType, a.T.Shape...)
			copy(c.Bytes(), a.T.Bytes())
			args[i].T = c
		}
	}
	if err := k.Call(args); err != nil {
		return nil, err
	}
	out := make([][]byte, len(args))
	for i, a := range args {
		if a.T != nil {
			out[i] = a.T.Bytes()
		}
	}
	return out, nil
}

// agrees reports whether k computes what the untuned kernel did: bit for
// bit when exact, else floats within 1e-4 of max(1, |want|, max|output|)
// (a reordered fp32 sum's error, n·eps·Σ|terms|, for the sizes tuned).
func (m *measurer) agrees(k *Kernel, exact bool) bool {
	got, err := m.outputs(k)
	if err != nil {
		return false
	}
	for i, g := range got {
		if g == nil || bytes.Equal(g, m.want[i]) {
			continue
		}
		dt := m.args[i].T.DType
		if exact || !dt.IsFloat() {
			return false
		}
		w, t := tensor.New(dt, m.args[i].T.Shape...), tensor.New(dt, m.args[i].T.Shape...)
		copy(w.Bytes(), m.want[i])
		copy(t.Bytes(), g)
		scale := 1.0
		for j := range int(w.NumElements()) {
			scale = max(scale, math.Abs(w.Float64At(j)))
		}
		for j := range int(w.NumElements()) {
			if math.Abs(w.Float64At(j)-t.Float64At(j)) > 1e-4*scale {
				return false
			}
		}
	}
	return true
}

// sideBySide measures a and b alternately, rounds times each, and
// returns the best time of each.
func (m *measurer) sideBySide(a, b *Kernel, rounds int) (ta, tb time.Duration) {
	ta, tb = time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for range rounds {
		ta = min(ta, m.time(a))
		tb = min(tb, m.time(b))
	}
	return ta, tb
}

// time measures k's time per call: the fastest of repeated calls after a
// warm-up, about 10ms of calls, at least 3 (1 when the warm-up alone took
// 10ms: a slow kernel's times vary little) and at most 100.
func (m *measurer) time(k *Kernel) time.Duration {
	t0 := time.Now()
	_ = k.Call(m.args) // warm-up: frames, scratch, caches
	best := time.Since(t0)
	least := 3
	if best >= 10*time.Millisecond {
		least = 1
	}
	var spent time.Duration
	for i := 0; i < 100 && (i < least || spent < 10*time.Millisecond); i++ {
		t0 := time.Now()
		_ = k.Call(m.args)
		d := time.Since(t0)
		spent += d
		best = min(best, d)
	}
	return best
}
