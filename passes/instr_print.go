package passes

import (
	"fmt"
	"io"
	"slices"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax/printer"
)

// Printer renders a module as text; nil means printer.Print.
type Printer func(*ir.Module) string

func (p Printer) print(m *ir.Module) string {
	if p == nil {
		return printer.Print(m)
	}
	return p(m)
}

// PrintIR prints the module before and/or after passes: all passes when
// Passes is empty, else only the named ones. Sequentials are not printed.
type PrintIR struct {
	BaseInstrument
	W             io.Writer
	Before, After bool
	Passes        []string
	Print         Printer
}

func (*PrintIR) ChangeBlind() {}
func (*PrintIR) InputBlind()  {}

func (*PrintIR) Name() string { return "print-ir" }

func (p *PrintIR) selected(ev *Event) bool {
	return ev.Pass.kind != KindSequential && (len(p.Passes) == 0 || slices.Contains(p.Passes, ev.Info.Name))
}

func (p *PrintIR) BeforePass(ev *Event) error {
	if p.Before && p.selected(ev) {
		_, err := fmt.Fprintf(p.W, "// IR before %s (phase %v, %s)\n%s\n", ev.Info.Name, ev.PhaseBefore, ev.Why, p.Print.print(ev.Before))
		return err
	}
	return nil
}

func (p *PrintIR) AfterPass(ev *Event) error {
	if p.After && p.selected(ev) {
		_, err := fmt.Fprintf(p.W, "// IR after %s (phase %v)\n%s\n", ev.Info.Name, ev.PhaseAfter, p.Print.print(ev.After))
		return err
	}
	return nil
}

// PrintChanged prints the input module once, then after each pass either
// the new module (or, with Diff, a unified diff against the previous text)
// when the pass changed it, or a one-line "unchanged" note. Change is
// decided by structural hash, so an unchanged pass costs no printing.
type PrintChanged struct {
	BaseInstrument
	W     io.Writer
	Diff  bool
	Print Printer
	// last is the most recently printed module and its text.
	last     *ir.Module
	lastText string
	started  bool
}

func (*PrintChanged) Name() string { return "print-changed" }

func (p *PrintChanged) EnterContext(*PassContext) error {
	p.last, p.lastText, p.started = nil, "", false
	return nil
}

func (p *PrintChanged) text(m *ir.Module) string {
	if m != p.last {
		p.last, p.lastText = m, p.Print.print(m)
	}
	return p.lastText
}

func (p *PrintChanged) BeforePass(ev *Event) error {
	if p.started || ev.Pass.kind == KindSequential {
		return nil
	}
	p.started = true
	_, err := fmt.Fprintf(p.W, "// IR input (phase %v)\n%s\n", ev.PhaseBefore, p.text(ev.Before))
	return err
}

func (p *PrintChanged) AfterPass(ev *Event) error {
	if ev.Pass.kind == KindSequential {
		return nil
	}
	if !ev.Changed {
		_, err := fmt.Fprintf(p.W, "// IR after %s: unchanged\n", ev.Info.Name)
		return err
	}
	if !p.Diff {
		_, err := fmt.Fprintf(p.W, "// IR after %s (phase %v)\n%s\n", ev.Info.Name, ev.PhaseAfter, p.text(ev.After))
		return err
	}
	before := p.text(ev.Before)
	after := p.text(ev.After)
	d := UnifiedDiff("before "+ev.Info.Name, "after "+ev.Info.Name, before, after, 3)
	if d == "" {
		// Structurally different but printed the same (e.g. spans or
		// var identity): say so rather than print an empty diff.
		d = "(no textual difference)\n"
	}
	_, err := fmt.Fprintf(p.W, "// IR after %s (phase %v), diff:\n%s", ev.Info.Name, ev.PhaseAfter, d)
	return err
}
