package ir

// STUB owned by the equality helper. Signatures are the contract.

// EqualOptions tunes structural equality.
type EqualOptions struct {
	// MapFreeVars lets free variables (not defined inside the compared
	// nodes) on one side match free variables on the other, consistently.
	MapFreeVars bool
}

// StructuralEqual compares two IR values (*Module, BaseFunc, Expr,
// StructInfo, PrimExpr, Stmt, Binding, *BindingBlock) up to alpha-equivalence.
func StructuralEqual(a, b any, opts EqualOptions) bool { return Diff(a, b, opts) == nil }

// Mismatch describes the first difference found by Diff.
type Mismatch struct {
	Path        string // e.g. "main.body.blocks[0].bindings[3].value.args[1]"
	Left, Right string // the differing parts, printed
}

func (m *Mismatch) String() string { return m.Path + ": " + m.Left + " vs " + m.Right }

// Diff returns the first structural difference, or nil when equal.
func Diff(a, b any, opts EqualOptions) *Mismatch { return nil }

// StructuralHash hashes an IR value consistently with StructuralEqual
// (without free-variable mapping).
func StructuralHash(x any) uint64 { return 0 }
