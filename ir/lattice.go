package ir

// STUB owned by the lattice helper. Signatures are the contract.

// BaseCheckResult grades StructInfoBaseCheck.
type BaseCheckResult uint8

const (
	FailL0 BaseCheckResult = iota // value sets cannot intersect
	FailL1                        // not a superset by static information
	FailL2                        // unprovable symbolic mismatch only
	Pass                          // provably a superset
)

// StructInfoBaseCheck grades whether base describes a superset of derived.
func StructInfoBaseCheck(base, derived StructInfo) BaseCheckResult { return Pass }

// IsBaseOf reports StructInfoBaseCheck(base, derived) == Pass.
func IsBaseOf(base, derived StructInfo) bool { return StructInfoBaseCheck(base, derived) == Pass }

// StructInfoLCA is the least upper bound of a and b.
func StructInfoLCA(a, b StructInfo) StructInfo { return Object() }

// EraseToWellDefined coarsens s so it mentions only symbolic variables for
// which primInScope is true and Relax vars for which varInScope is true
// (either callback may be nil, meaning "nothing is in scope").
func EraseToWellDefined(s StructInfo, primInScope func(*PrimVar) bool, varInScope func(*Var) bool) StructInfo {
	return s
}

// DeriveCallRetStructInfo computes the return info of calling a function of
// info f with call's arguments, binding f's symbolic parameters.
func DeriveCallRetStructInfo(f *FuncInfo, call *Call, ctx *InferCtx) (StructInfo, error) {
	return f.Ret, nil
}

// FormatStructInfo prints s as TVMScript (R.Tensor((n, 4), dtype="float32")).
func FormatStructInfo(s StructInfo, name func(*PrimVar) string) string { return "?" }
