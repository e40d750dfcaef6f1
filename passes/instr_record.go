package passes

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/phasec/phasec/ir"
)

// sizer memoizes Size for the last modules seen (modules are immutable).
type sizer struct {
	mod  [2]*ir.Module
	size [2]int
}

func (s *sizer) of(m *ir.Module) int {
	if m == nil {
		return 0
	}
	for i := range s.mod {
		if s.mod[i] == m {
			return s.size[i]
		}
	}
	s.mod[0], s.size[0] = s.mod[1], s.size[1]
	s.mod[1], s.size[1] = m, Size(m)
	return s.size[1]
}

// RecordEntry is one line of a run record.
type RecordEntry struct {
	Seq         int    `json:"seq"`
	Pass        string `json:"pass"`
	Depth       int    `json:"depth"`
	Why         string `json:"why"`
	PhaseBefore string `json:"phase_before"`
	PhaseAfter  string `json:"phase_after"`
	Changed     bool   `json:"changed"`
	DurationNS  int64  `json:"duration_ns"`
	SizeBefore  int    `json:"size_before"`
	SizeAfter   int    `json:"size_after"`
	HashBefore  string `json:"hash_before"`
	HashAfter   string `json:"hash_after"`
	Error       string `json:"error,omitempty"`
}

// RunRecord writes one JSON line per pass execution (failed ones too, with
// "error"), for CI to diff across runs: which passes still change
// anything, pipeline drift, timing.
type RunRecord struct {
	BaseInstrument
	W     io.Writer
	sizes sizer
}

func (*RunRecord) Name() string { return "run-record" }

func (r *RunRecord) AfterPass(ev *Event) error { return r.write(ev) }

func (r *RunRecord) AfterPassFailed(ev *Event) error { return r.write(ev) }

func (r *RunRecord) write(ev *Event) error {
	if ev.Pass.kind == KindSequential {
		return nil
	}
	e := RecordEntry{
		Seq: ev.Seq, Pass: ev.Info.Name, Depth: ev.Depth, Why: ev.Why.String(),
		PhaseBefore: ev.PhaseBefore.String(), PhaseAfter: ev.PhaseAfter.String(),
		Changed: ev.Changed, DurationNS: int64(ev.Duration),
		SizeBefore: r.sizes.of(ev.Before), SizeAfter: r.sizes.of(ev.After),
		HashBefore: fmt.Sprintf("%016x", ev.HashBefore), HashAfter: fmt.Sprintf("%016x", ev.HashAfter),
	}
	if ev.Err != nil {
		e.Error = ev.Err.Error()
		e.PhaseAfter, e.HashAfter = "", ""
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(r.W, "%s\n", b)
	return err
}

// Summary collects one row per pass of the pipeline (ran or skipped and
// why, changed, size delta, time) and renders them as a table (Table),
// available after the run.
type Summary struct {
	BaseInstrument
	rows  []summaryRow
	sizes sizer
}

type summaryRow struct {
	name    string
	depth   int
	why     Reason
	ran     bool
	failed  bool
	changed bool
	delta   int
	dur     string
	stats   []Stat
}

func (*Summary) Name() string { return "summary" }

func (s *Summary) EnterContext(*PassContext) error {
	s.rows = nil
	return nil
}

func (s *Summary) PassSkipped(ev *Event) error {
	s.rows = append(s.rows, summaryRow{name: ev.Info.Name, depth: ev.Depth, why: ev.Why})
	return nil
}

func (s *Summary) AfterPass(ev *Event) error {
	if ev.Pass.kind == KindSequential {
		return nil
	}
	s.rows = append(s.rows, summaryRow{name: ev.Info.Name, depth: ev.Depth, why: ev.Why, ran: true,
		changed: ev.Changed, delta: s.sizes.of(ev.After) - s.sizes.of(ev.Before), dur: ms(ev.Duration), stats: ev.Stats})
	return nil
}

func (s *Summary) AfterPassFailed(ev *Event) error {
	if ev.Pass.kind == KindSequential {
		return nil
	}
	s.rows = append(s.rows, summaryRow{name: ev.Info.Name, depth: ev.Depth, why: ev.Why, ran: true, failed: true, dur: ms(ev.Duration)})
	return nil
}

// Table renders the summary.
func (s *Summary) Table() string {
	header := []string{"pass", "status", "why", "changed", "size", "time"}
	rows := [][]string{header}
	for _, r := range s.rows {
		status, changed, delta := "skipped", "-", "-"
		if r.ran {
			status = "ran"
			changed = "no"
			if r.changed {
				changed = "yes"
			}
			delta = fmt.Sprintf("%+d", r.delta)
		}
		if r.failed {
			status, changed, delta = "FAILED", "-", "-"
		}
		dur := r.dur
		if dur == "" {
			dur = "-"
		}
		rows = append(rows, []string{strings.Repeat("  ", r.depth) + r.name, status, r.why.String(), changed, delta, dur})
	}
	widths := make([]int, len(header))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len(c))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, c := range row {
			if i == len(row)-1 {
				fmt.Fprintf(&b, "%*s", widths[i], c)
			} else if i >= 3 {
				fmt.Fprintf(&b, "%*s  ", widths[i], c)
			} else {
				fmt.Fprintf(&b, "%-*s  ", widths[i], c)
			}
		}
		b.WriteByte('\n')
	}
	for _, r := range s.rows {
		if len(r.stats) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s:", r.name)
		for _, st := range r.stats {
			fmt.Fprintf(&b, " %s=%d", st.Name, st.Value)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Bisect runs only the first Limit optional passes and skips the rest,
// printing LLVM opt-bisect lines. Required, AlwaysRun and prerequisite
// passes are never counted or skipped.
type Bisect struct {
	BaseInstrument
	Limit int
	W     io.Writer
	n     int
}

func (*Bisect) ChangeBlind() {}
func (*Bisect) InputBlind()  {}

func (*Bisect) Name() string { return "bisect" }

func (b *Bisect) EnterContext(*PassContext) error {
	b.n = 0
	return nil
}

func (b *Bisect) ShouldRun(ev *Event) (bool, error) {
	b.n++
	run := b.n <= b.Limit
	verb := "running"
	if !run {
		verb = "NOT running"
	}
	_, err := fmt.Fprintf(b.W, "BISECT: %s pass (%d) %s\n", verb, b.n, ev.Info.Name)
	return run, err
}
