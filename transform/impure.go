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
