package semcheck

import (
	"bufio"
	"bytes"
	"context"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
)

// LimitResult is what opt-bisect limits (passes.Bisect, phasec opt
// --bisect-limit) say about a failing pipeline.
type LimitResult struct {
	// Optional is the number of optional passes the pipeline runs.
	Optional int
	// Limit is the smallest --bisect-limit whose run fails a property, so
	// that Limit-1 optional passes keep every property; Pass is the
	// optional pass number Limit. Limit is -1 when the run with no optional
	// pass fails already (the culprit is a required pass or a barrier step).
	Limit int
	Pass  string
}

// BisectLimits binary-searches the opt-bisect limit of pipeline on mod: a
// run with limit L runs only the first L optional passes (in the order
// gating sees them) and fails when any pass after which the Checker, the
// well-formedness check or the pass itself fails. Runs whose limit skips a
// pass a later one needs (the pipeline's static check or a pass rejects
// it) count as not failing. It runs O(log n) pipelines.
func BisectLimits(mod *ir.Module, pipeline *passes.Pass, in Inputs) (LimitResult, error) {
	names, _, err := limitRun(mod, pipeline, in, 1<<30)
	if err != nil {
		return LimitResult{}, err
	}
	res := LimitResult{Optional: len(names), Limit: -1}
	if _, failed, err := limitRun(mod, pipeline, in, 0); err != nil || failed {
		return res, err
	}
	lo, hi := 0, len(names) // fails(lo) false; fails(hi) unknown
	if _, failed, err := limitRun(mod, pipeline, in, hi); err != nil || !failed {
		res.Limit = 0 // nothing fails even with every optional pass
		return res, err
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		_, failed, err := limitRun(mod, pipeline, in, mid)
		if err != nil {
			return res, err
		}
		if failed {
			hi = mid
		} else {
			lo = mid
		}
	}
	res.Limit, res.Pass = hi, names[hi-1]
	return res, nil
}

// limitRun runs pipeline with opt-bisect limit and reports the optional
// passes gating offered, in order, and whether a property failed.
func limitRun(mod *ir.Module, pipeline *passes.Pass, in Inputs, limit int) ([]string, bool, error) {
	var buf bytes.Buffer
	c := &Checker{Inputs: in}
	if err := c.Reference(mod); err != nil {
		return nil, false, err
	}
	w := &watch{c: c}
	pc := passes.NewPassContext()
	pc.Instruments = []passes.Instrument{&passes.Bisect{Limit: limit, W: &buf}, w, c}
	_, err := pc.Run(context.Background(), pipeline, mod)
	// An error without a recorded failure (a static-check rejection, a
	// pass missing what a skipped pass provides) is not informative and
	// counts as passing.
	_ = err
	failed := w.first != nil || c.Failure != nil
	var names []string
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.LastIndexByte(line, ' '); i >= 0 && strings.HasPrefix(line, "BISECT: ") {
			names = append(names, line[i+1:])
		}
	}
	return names, failed, nil
}
