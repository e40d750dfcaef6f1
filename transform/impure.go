package transform

import "github.com/phasec/phasec/ir"

// isImpureCall reports whether call may have visible side effects, as TVM's
// IsImpureCall (src/relax/utils.cc): an op's purity, else the purity of the
// callee's function struct info. A callee whose info is unknown counts as
// impure.
func isImpureCall(mod *ir.Module, call *ir.Call) bool {
	var si ir.StructInfo
	switch f := call.Op.(type) {
	case *ir.Op:
		return !f.Pure
	case *ir.GlobalVar:
		si, _ = mod.GlobalInfo(f.Name)
	default:
		si = f.StructInfo()
	}
	fi, ok := si.(*ir.FuncInfo)
	return !ok || !fi.Pure
}

// containsImpureCall reports whether e calls something impure, not looking
// into the bodies of nested functions (an impure call there is the inner
// function's, not e's), as TVM's ContainsImpureCall
// (src/relax/analysis/analysis.cc).
func containsImpureCall(mod *ir.Module, e ir.Expr) bool {
	found := false
	ir.Inspect(e, func(x ir.Expr) bool {
		if found {
			return false
		}
		switch x := x.(type) {
		case *ir.Function:
			return false
		case *ir.Call:
			if isImpureCall(mod, x) {
				found = true
				return false
			}
		}
		return true
	})
	return found
}
