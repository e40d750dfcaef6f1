// Package wellformed checks the structural rules of Relax modules and the
// invariants of each phase.
//
// The rules are data: Rules returns the catalogue, each rule with a stable
// code (WF001...), the property it decides (phase.WellFormed for the
// structural rules of TVM's src/relax/analysis/well_formed.cc, which hold
// in every phase) and a hint naming the pass or barrier that establishes
// it.
//
// One walk decides everything. Check, CheckProperties and Infer share it:
// the first two report every violation of the selected rules as a
// diagnostic (sorted and de-duplicated), Infer collects the set of
// properties whose rules all hold. The walk iterates over bindings (its
// depth grows only with expression nesting) and keeps scoping state in
// slices indexed by dense per-check variable IDs, so its cost is linear in
// the size of the module.
//
// PrimFuncs get the checks of TVM's tir::VerifyWellFormed, which TVM's
// parser runs next to relax.analysis.well_formed (tir.go). What the walk
// does not check: the struct info of intermediate expressions beyond its
// presence (binding variables, call annotations and sinfo_args are
// checked).
package wellformed

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// Check checks the structural rules and, when p is not phase.None, the
// invariants of phase p. It returns every violation, sorted and de-duplicated.
func Check(mod *ir.Module, p phase.Phase) diag.List {
	c := newChecker(mod, p.Invariants(), p, false)
	c.run()
	return c.diags.Dedup()
}

// CheckProperties checks the structural rules plus the given properties.
func CheckProperties(mod *ir.Module, props phase.Set) diag.List {
	c := newChecker(mod, props, phase.None, false)
	c.run()
	return c.diags.Dedup()
}

// Infer returns the set of properties mod's content satisfies.
// phase.WellFormed is in the set exactly when no structural rule is violated.
func Infer(mod *ir.Module) phase.Set {
	all := phase.Of(phase.Properties()...)
	c := newChecker(mod, all, phase.None, true)
	c.run()
	return all.Minus(c.violated)
}

// CheckRecorded checks mod against the phase recorded in its attributes (the
// recorded phase is a claim to verify). It returns the phase it checked,
// phase.None when the module records none or an invalid one (reported).
func CheckRecorded(mod *ir.Module) (phase.Phase, diag.List) {
	p, err := phase.Recorded(mod)
	if err != nil {
		p = phase.None
	}
	return p, Check(mod, p)
}
