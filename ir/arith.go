package ir

// STUB owned by the arithmetic helper: replace with the real simplifier and
// prover (ir/arith*.go, ir/prove*.go). Signatures are the contract.

// Simplify returns the canonical form of e.
func Simplify(e PrimExpr) PrimExpr { return e }

// CanProveEqual reports whether a and b are provably equal for every value
// of their variables.
func CanProveEqual(a, b PrimExpr) bool {
	if a == b {
		return true
	}
	x, ok1 := IntValue(a)
	y, ok2 := IntValue(b)
	return ok1 && ok2 && x == y
}

// SubstitutePrim replaces variables in e by the mapped expressions.
func SubstitutePrim(e PrimExpr, m map[*PrimVar]PrimExpr) PrimExpr { return e }

// PrimVarsIn returns the variables e mentions, in first-occurrence order.
func PrimVarsIn(e PrimExpr) []*PrimVar { return nil }

// FormatPrim prints e as TVMScript, naming variables with name (nil: use Name).
func FormatPrim(e PrimExpr, name func(*PrimVar) string) string { return "?" }
