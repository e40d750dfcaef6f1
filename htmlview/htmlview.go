// Package htmlview writes one self-contained HTML page that shows a pass
// pipeline at work, in the spirit of the Go compiler's GOSSAFUNC view
// (`phasec opt --html out.html`, also on build): one column per executed
// pass, grouped under the pipeline step (barrier) that ran it and the phase
// that step reaches, the IR after each pass with the lines it changed
// highlighted, unchanged passes collapsed, the pass's time and the
// properties its contract established, and for each Relax function a
// drawing of its dataflow (ops as nodes, values as edges, fusion groups as
// boxes) as inline SVG.
//
// Invariants: the page needs nothing but itself (no network, no external
// script or style); its content is a function of the run (no timestamps
// beyond the pass times, no map order), so two runs of the same pipeline
// differ only in the times; every piece of module text is escaped.
//
// The Recorder is a passes.Instrument: install it in a PassContext, run the
// pipeline, then call WriteHTML. It keeps each changed module's text, not
// the module, so its memory is the printed pipeline's.
package htmlview

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax/printer"
)

// Recorder records a pipeline run for the page.
type Recorder struct {
	passes.BaseInstrument
	// Title heads the page (the input file's name, say).
	Title string
	// Print renders a module; nil means printer.Print.
	Print passes.Printer

	input   *column
	columns []*column
	// step is the top-level pipeline step (a barrier, or a pass given
	// alone) the next pass belongs to.
	step       string
	stepPhase  phase.Phase
	lastModule *ir.Module
	lastText   string
}

// column is one pass's view.
type column struct {
	Pass        string
	Step        string
	Phase       phase.Phase
	Changed     bool
	Duration    time.Duration
	Established phase.Set
	Err         string
	lines       []line
	graphs      []graph
}

// line is one line of printed IR; Changed marks a line the pass inserted
// or rewrote (a line absent from the previous column's text).
type line struct {
	Text    string
	Changed bool
}

func (*Recorder) Name() string { return "html" }

// EnterContext resets the recorder, so one Recorder serves one run.
func (r *Recorder) EnterContext(*passes.PassContext) error {
	r.input, r.columns, r.step, r.lastModule, r.lastText = nil, nil, "", nil, ""
	return nil
}

func (r *Recorder) text(m *ir.Module) string {
	if m != r.lastModule {
		if r.Print != nil {
			r.lastText = r.Print(m)
		} else {
			r.lastText = printer.Print(m)
		}
		r.lastModule = m
	}
	return r.lastText
}

func (r *Recorder) BeforePass(ev *passes.Event) error {
	if ev.Depth == 0 {
		r.step = ev.Info.Name
	}
	if ev.Pass.Kind() == passes.KindSequential || r.input != nil {
		return nil
	}
	r.input = &column{Pass: "input", Step: "input", Phase: ev.PhaseBefore}
	r.input.lines, r.input.graphs = plainLines(r.text(ev.Before)), graphs(ev.Before)
	return nil
}

func (r *Recorder) AfterPass(ev *passes.Event) error {
	if ev.Depth == 0 {
		r.stepPhase = ev.PhaseAfter
		for _, c := range r.columns {
			if c.Step == ev.Info.Name && c.Phase == phase.None {
				c.Phase = ev.PhaseAfter
			}
		}
	}
	if ev.Pass.Kind() == passes.KindSequential {
		return nil
	}
	c := &column{Pass: ev.Info.Name, Step: r.step, Changed: ev.Changed, Duration: ev.Duration,
		Established: ev.PropsAfter.Minus(ev.PropsBefore)}
	if ev.Depth == 0 {
		c.Phase = ev.PhaseAfter
	}
	prev := r.previous()
	if !ev.Changed {
		c.lines, c.graphs = unchangedLines(prev.lines), prev.graphs
	} else {
		c.lines, c.graphs = diffLines(prev.lines, r.text(ev.After)), graphs(ev.After)
	}
	r.columns = append(r.columns, c)
	return nil
}

func (r *Recorder) AfterPassFailed(ev *passes.Event) error {
	if ev.Pass.Kind() == passes.KindSequential {
		return nil
	}
	prev := r.previous()
	r.columns = append(r.columns, &column{Pass: ev.Info.Name, Step: r.step, Err: fmt.Sprint(ev.Err),
		lines: unchangedLines(prev.lines), graphs: prev.graphs})
	return nil
}

func (r *Recorder) previous() *column {
	if len(r.columns) > 0 {
		return r.columns[len(r.columns)-1]
	}
	if r.input == nil {
		return &column{}
	}
	return r.input
}

func plainLines(text string) []line {
	ls := strings.Split(strings.TrimRight(text, "\n"), "\n")
	out := make([]line, len(ls))
	for i, l := range ls {
		out[i] = line{Text: l}
	}
	return out
}

func unchangedLines(prev []line) []line {
	out := make([]line, len(prev))
	for i, l := range prev {
		out[i] = line{Text: l.Text}
	}
	return out
}

// diffLines marks the lines of text that the previous text lacks.
func diffLines(prev []line, text string) []line {
	cur := plainLines(text)
	old := make([]string, len(prev))
	for i, l := range prev {
		old[i] = l.Text
	}
	now := make([]string, len(cur))
	for i, l := range cur {
		now[i] = l.Text
	}
	j := 0
	for _, op := range passes.LineEdits(old, now) {
		switch op {
		case ' ':
			j++
		case '+':
			cur[j].Changed = true
			j++
		}
	}
	return cur
}

// WriteHTML writes the page of the recorded run.
func (r *Recorder) WriteHTML(w io.Writer) error {
	cols := r.columns
	if r.input != nil {
		cols = append([]*column{r.input}, cols...)
	}
	var groups []group
	for _, c := range cols {
		if n := len(groups); n > 0 && groups[n-1].Step == c.Step {
			groups[n-1].Columns = append(groups[n-1].Columns, c.view())
			continue
		}
		groups = append(groups, group{Step: c.Step, Phase: c.Phase, Columns: []columnView{c.view()}})
	}
	for i := range groups {
		for _, c := range groups[i].Columns {
			if c.Phase != phase.None {
				groups[i].Phase = c.Phase
			}
		}
	}
	return page.Execute(w, pageData{Title: r.Title, Groups: groups, Passes: len(r.columns)})
}

type pageData struct {
	Title  string
	Groups []group
	Passes int
}

type group struct {
	Step    string
	Phase   phase.Phase
	Columns []columnView
}

type columnView struct {
	Pass, Err   string
	Phase       phase.Phase
	Input       bool
	Changed     bool
	Duration    string
	Established []string
	ChangedN    int
	Lines       []line
	Graphs      []template.HTML
}

func (c *column) view() columnView {
	v := columnView{Pass: c.Pass, Err: c.Err, Phase: c.Phase, Input: c.Step == "input", Changed: c.Changed,
		Lines: c.lines}
	if !v.Input {
		v.Duration = formatDuration(c.Duration)
	}
	for _, p := range c.Established.List() {
		v.Established = append(v.Established, p.String())
	}
	for _, l := range c.lines {
		if l.Changed {
			v.ChangedN++
		}
	}
	for _, g := range c.graphs {
		v.Graphs = append(v.Graphs, template.HTML(g.svg()))
	}
	return v
}

func formatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
}
