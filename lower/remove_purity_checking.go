package lower

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// RemovePurityChecking is TVM's src/relax/transform/remove_purity_checking.cc.
var RemovePurityChecking = passes.Define(passes.Info{
	Name:     "RemovePurityChecking",
	Doc:      "mark pure functions relax.force_pure and unwrap the pure overrides (call_pure_packed, call_inplace_packed, invoke_pure_closure)",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized: "it rewrites calls in bindings and assumes A-normal form",
		phase.NoDataflow: "unwrapped impure calls (call_packed, invoke_closure) are illegal inside dataflow blocks (WF007)",
	},
	Establishes: phase.Of(phase.PurityRelaxed),
}, passes.Functions(func(_ *passes.Env, _ *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	return removePurityChecking(f), nil
}).InParallel())

// removePurityChecking returns f with relax.force_pure set on it and on
// every pure local function, R.call_pure_packed(f, a...) replaced by the
// impure packed call R.call_packed(f, a...) (same sinfo_args; TVM's direct
// ExternFunc call) and R.invoke_pure_closure by
// R.invoke_closure. Struct info is unchanged: the unwrapped calls return
// what their sinfo_args declare, as before. f itself is returned when
// nothing changes.
func removePurityChecking(f *ir.Function) *ir.Function {
	m := &ir.Mutator{
		KeepStructInfo: true,
		PostExpr: func(e ir.Expr) ir.Expr {
			switch e := e.(type) {
			case *ir.Call:
				return unwrapPureCall(e)
			case *ir.Function:
				return forcePure(e)
			}
			return e
		},
	}
	return forcePure(m.Function(f))
}

// unwrapPureCall replaces a pure override by the call it wraps.
func unwrapPureCall(c *ir.Call) ir.Expr {
	var n *ir.Call
	switch c.Op {
	case op.CallPurePacked, op.CallInplacePacked:
		if len(c.Args) == 0 {
			return c // malformed; the checker reports it
		}
		// op(f, a...) becomes the direct call f(a...), as in TVM; with f an
		// ExternFunc it prints as R.call_packed. The in-place contract was
		// only for the purity checker: the direct call writes the same
		// arguments.
		n = &ir.Call{Op: c.Args[0], Args: c.Args[1:], SInfoArgs: c.SInfoArgs}
	case op.InvokePureClosure:
		n = &ir.Call{Op: op.InvokeClosure, Args: c.Args, Attrs: c.Attrs, SInfoArgs: c.SInfoArgs}
	default:
		return c
	}
	n.SetSpan(c.Span())
	n.SetStructInfo(c.StructInfo())
	return n
}

// forcePure sets relax.force_pure on a pure function that lacks it.
func forcePure(f *ir.Function) *ir.Function {
	if !f.Pure {
		return f
	}
	if forced, _ := f.Attrs.Bool(ir.AttrForcePure); forced {
		return f
	}
	n := *f
	n.Attrs = f.Attrs.With(ir.AttrForcePure, true)
	return &n
}
