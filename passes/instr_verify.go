package passes

import (
	"fmt"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// Checker checks a module against the phase it records and the properties
// the pass contracts claim hold; wellformed plugs in as
// func(m, _, props) { return wellformed.CheckProperties(m, props) }.
type Checker func(mod *ir.Module, ph phase.Phase, props phase.Set) diag.List

// VerifyEach runs Check after every pass that changed the module or
// claims a property its input was not known to have (a pass that
// establishes a property makes that claim even when it changes nothing:
// LegalizeOps{skip=...} on a module of skipped ops). A failure aborts the
// run, naming the pass and what it claimed.
type VerifyEach struct {
	BaseInstrument
	Check Checker
	// Checked counts the checks run (passes that change nothing and claim
	// nothing new are not checked).
	Checked int
}

func (*VerifyEach) InputBlind() {}

func (*VerifyEach) Name() string { return "verify-each" }

func (v *VerifyEach) AfterPass(ev *Event) error {
	if ev.Pass.kind == KindSequential || !ev.Changed && ev.PropsBefore.Contains(ev.PropsAfter) {
		return nil
	}
	v.Checked++
	errs := v.Check(ev.After, ev.PhaseAfter, ev.PropsAfter)
	if errs.HasErrors() {
		return fmt.Errorf("module broken after pass %s (phase %v, claimed %v):\n%v", ev.Info.Name, ev.PhaseAfter, ev.PropsAfter, errs)
	}
	return nil
}

// ImmutableInput fails the run when a pass mutated the module it was given:
// it snapshots the input's function table and attributes before the pass
// and compares them, and its structural hash, afterwards (TVM's
// testing.immutable_module). Snapshots are kept per pass execution, so a
// pass running nested passes (a barrier) is checked against its own input.
type ImmutableInput struct {
	BaseInstrument
	snaps map[*Event]snapshot
}

type snapshot struct {
	funcs map[string]ir.BaseFunc
	attrs int
}

func (*ImmutableInput) Name() string { return "immutable-input" }

func (im *ImmutableInput) BeforePass(ev *Event) error {
	if ev.Pass.kind == KindSequential {
		return nil
	}
	snap := snapshot{funcs: map[string]ir.BaseFunc{}, attrs: len(ev.Before.Attrs)}
	for name, f := range ev.Before.Functions() {
		snap.funcs[name] = f
	}
	if im.snaps == nil {
		im.snaps = map[*Event]snapshot{}
	}
	im.snaps[ev] = snap
	return nil
}

func (im *ImmutableInput) AfterPass(ev *Event) error { return im.compare(ev) }

func (im *ImmutableInput) AfterPassFailed(ev *Event) error { return im.compare(ev) }

func (im *ImmutableInput) compare(ev *Event) error {
	snap, ok := im.snaps[ev]
	if ev.Pass.kind == KindSequential || !ok {
		return nil
	}
	delete(im.snaps, ev)
	mutated := ev.Before.Len() != len(snap.funcs) || len(ev.Before.Attrs) != snap.attrs
	for name, f := range ev.Before.Functions() {
		if snap.funcs[name] != f {
			mutated = true
		}
	}
	if !mutated && ev.Hashed && hashModule(ev.Before) != ev.HashBefore {
		mutated = true
	}
	if mutated {
		return fmt.Errorf("pass %s mutated its input module", ev.Info.Name)
	}
	return nil
}
