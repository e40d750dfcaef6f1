package ir

import "fmt"

// DeriveCallRetStructInfo computes the return info of calling a function of
// info f with call's arguments, binding f's symbolic parameters.
//
// Parameters are matched against the arguments' struct info in order. A
// symbolic variable standing alone as a parameter dimension (or as the value
// of an R.Prim parameter), or a shape var used as a parameter's tensor
// shape, is bound on its first occurrence; later occurrences are checked
// best effort. The bindings are substituted into f.Ret and whatever remains
// unbound is erased (EraseToWellDefined). An arity mismatch or an argument
// that statically cannot match its parameter (FailL0/FailL1) is an error;
// unprovable symbolic mismatches (FailL2) are left to run-time checks.
//
// Opaque functions return f.Derive(call) when Derive is set, else f.Ret.
func DeriveCallRetStructInfo(f *FuncInfo, call *Call, ctx *InferCtx) (StructInfo, error) {
	if f.Opaque {
		if f.Derive != nil {
			return f.Derive(call)
		}
		if f.Ret == nil {
			return Object(), nil
		}
		return f.Ret, nil
	}
	if len(f.Params) != len(call.Args) {
		return nil, fmt.Errorf("number of arguments and parameters mismatch: expected %d, given %d",
			len(f.Params), len(call.Args))
	}
	c := baseChecker{bind: true}
	for i, p := range f.Params {
		arg := call.Args[i].StructInfo()
		if arg == nil {
			arg = Object()
		}
		if r := c.check(p, arg); r == FailL0 || r == FailL1 {
			return nil, fmt.Errorf("argument %d type mismatch: expected %s, given %s",
				i, FormatStructInfo(p, nil), FormatStructInfo(arg, nil))
		}
	}
	ret := f.Ret
	if ret == nil {
		return Object(), nil
	}
	e := eraser{primMap: c.primBind, varMap: c.varBind}
	return e.erase(ret), nil
}
