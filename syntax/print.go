package syntax

import "github.com/phasec/phasec/ir"

// STUB owned by the printer helper. Signature is the contract.

// Print returns the canonical TVMScript text of mod.
func Print(mod *ir.Module) string { return "" }
