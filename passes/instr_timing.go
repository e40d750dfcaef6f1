package passes

import (
	"fmt"
	"strings"
	"time"

	"github.com/phasec/phasec/phase"
)

// Timing records how long each pass took as a tree (Sequentials hold their
// children) with self time and share of the total, grouped by the phase the
// module was in when each top-level step started. The report stays
// available after the run (Report), unlike TVM's, which is cleared on exit.
type Timing struct {
	BaseInstrument
	roots []*timingNode
	stack []*timingNode
}

type timingNode struct {
	name     string
	phase    phase.Phase
	total    time.Duration
	failed   bool
	children []*timingNode
}

func (*Timing) ChangeBlind() {}
func (*Timing) InputBlind()  {}

func (*Timing) Name() string { return "timing" }

func (t *Timing) EnterContext(*PassContext) error {
	t.roots, t.stack = nil, nil
	return nil
}

func (t *Timing) BeforePass(ev *Event) error {
	n := &timingNode{name: ev.Info.Name, phase: ev.PhaseBefore}
	if len(t.stack) == 0 {
		t.roots = append(t.roots, n)
	} else {
		top := t.stack[len(t.stack)-1]
		top.children = append(top.children, n)
	}
	t.stack = append(t.stack, n)
	return nil
}

func (t *Timing) AfterPass(ev *Event) error { return t.pop(ev, false) }

func (t *Timing) AfterPassFailed(ev *Event) error { return t.pop(ev, true) }

func (t *Timing) pop(ev *Event, failed bool) error {
	if len(t.stack) == 0 {
		return fmt.Errorf("AfterPass(%s) without BeforePass", ev.Info.Name)
	}
	n := t.stack[len(t.stack)-1]
	t.stack = t.stack[:len(t.stack)-1]
	n.total, n.failed = ev.Duration, failed
	return nil
}

// Total is the time spent in top-level steps.
func (t *Timing) Total() time.Duration {
	var d time.Duration
	for _, n := range t.roots {
		d += n.total
	}
	return d
}

// Report renders the timing tree:
//
//	pass timing: 12.000ms total
//	phase none: 12.000ms (100.0%)
//	  Normalize     2.000ms  16.7%  self 2.000ms
//	  seq          10.000ms  83.3%  self 1.000ms
//	    Fold        9.000ms  75.0%  self 9.000ms
func (t *Timing) Report() string {
	var b strings.Builder
	total := t.Total()
	fmt.Fprintf(&b, "pass timing: %s total\n", ms(total))
	width := 0
	var measure func(ns []*timingNode, depth int)
	measure = func(ns []*timingNode, depth int) {
		for _, n := range ns {
			width = max(width, 2*depth+len(n.name))
			measure(n.children, depth+1)
		}
	}
	measure(t.roots, 1)
	var row func(n *timingNode, depth int)
	row = func(n *timingNode, depth int) {
		self := n.total
		for _, c := range n.children {
			self -= c.total
		}
		name := strings.Repeat("  ", depth) + n.name
		fmt.Fprintf(&b, "%-*s %10s %6s  self %s", width, name, ms(n.total), pct(n.total, total), ms(self))
		if n.failed {
			b.WriteString("  FAILED")
		}
		b.WriteByte('\n')
		for _, c := range n.children {
			row(c, depth+1)
		}
	}
	// Group consecutive top-level steps by phase, in run order.
	for i := 0; i < len(t.roots); {
		j := i
		var d time.Duration
		for j < len(t.roots) && t.roots[j].phase == t.roots[i].phase {
			d += t.roots[j].total
			j++
		}
		fmt.Fprintf(&b, "phase %v: %s (%s)\n", t.roots[i].phase, ms(d), pct(d, total))
		for _, n := range t.roots[i:j] {
			row(n, 1)
		}
		i = j
	}
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond)) }

func pct(d, total time.Duration) string {
	if total <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(d)/float64(total))
}
