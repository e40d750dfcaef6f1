// Package wellformed checks the structural rules of Relax modules and the
// invariants of each phase.
package wellformed

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// STUB owned by the checker helper. Signatures are the contract.

// Check checks the structural rules and, when p is not phase.None, the
// invariants of phase p. It returns every violation, sorted and de-duplicated.
func Check(mod *ir.Module, p phase.Phase) diag.List { return nil }

// CheckProperties checks the structural rules plus the given properties.
func CheckProperties(mod *ir.Module, props phase.Set) diag.List { return nil }

// Infer returns the set of properties mod's content satisfies.
func Infer(mod *ir.Module) phase.Set { return 0 }
