package lower

import (
	"fmt"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// CallTIRRewrite is TVM's src/relax/transform/call_tir_rewrite.cc.
var CallTIRRewrite = passes.Define(passes.Info{
	Name:     "CallTIRRewrite",
	Doc:      "rewrite call_tir, call_tir_inplace and call_dps_packed into explicit output allocations and direct DPS calls",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized:    "it replaces whole bindings and needs every call_tir bound to a var",
		phase.NoDataflow:    "the direct kernel calls it emits are impure and may not sit in dataflow blocks",
		phase.PurityRelaxed: "it inserts impure calls (direct PrimFunc calls, vm.call_tir_dyn) into pure functions",
	},
	Establishes: phase.Of(phase.NoCallTIR, phase.ExplicitMemory),
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	out, errs := callTIRRewrite(mod)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// DiagUnknownOutputShape is reported for a DPS call whose output tensor has
// no known shape: there is nothing to allocate.
var DiagUnknownOutputShape = lowCodes.Define("LOW001", "a DPS call's output tensor has no known shape to allocate")

// DiagBadInplaceIndices is reported for a call_tir_inplace whose
// inplace_indices attribute is not a list of ints.
var DiagBadInplaceIndices = lowCodes.Define("LOW002", "a call_tir_inplace's inplace_indices is not a list of ints")

// callTIRRewrite switches every Relax function of mod to destination-passing
// style. For each binding v = call_tir(f, (args...), out_sinfo=outs) it
// emits, in order,
//
//	alloc  = R.builtin.alloc_tensor(shape, dtype, R.prim_value(0), R.str("global"))  # per output
//	_      = f(args..., alloc...)                        # or R.vm.call_tir_dyn(f, (args..., alloc..., tir_vars))
//	v      = alloc                                        # or (alloc, alloc1, ...)
//
// call_tir_inplace reuses the input argument inplace_indices[i] for output i
// instead of allocating (-1 allocates); only the allocated outputs are
// passed after the inputs, as the kernel writes the others in place.
// call_dps_packed calls its
// ExternFunc the same way. An output whose shape is unknown cannot be
// allocated and is reported (DiagUnknownOutputShape). The input module is
// not modified; functions without DPS calls are shared.
func callTIRRewrite(mod *ir.Module) (*ir.Module, diag.List) {
	rw := ir.NewRewriter(mod)
	leaves := &allocLeaves{}
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		c, ok := value.(*ir.Call)
		if !ok || !isDPSCall(c) {
			return false
		}
		if res := emitDPS(rw.B, leaves, c, bind.Span()); res != nil {
			rw.ReEmit(bind, res)
			return true
		}
		return false
	}
	return rw.Module(mod)
}

func isDPSCall(c *ir.Call) bool {
	return c.Op == op.CallTIR || c.Op == op.CallTIRInplace || c.Op == op.CallDPSPacked
}

// allocLeaves are the constant operands of the allocations, normalized
// once and shared by all of them (leaves are immutable): at a million
// bindings a copy per allocation costs about 300 MB.
type allocLeaves struct {
	global ir.Expr
	dtypes map[ir.DataType]ir.Expr
}

func (l *allocLeaves) scope(b *ir.Builder) ir.Expr {
	if l.global == nil {
		l.global = b.Normalize(ir.NewStringImm("global"))
	}
	return l.global
}

func (l *allocLeaves) dtype(b *ir.Builder, dt ir.DataType) ir.Expr {
	e, ok := l.dtypes[dt]
	if !ok {
		if l.dtypes == nil {
			l.dtypes = map[ir.DataType]ir.Expr{}
		}
		e = b.Normalize(ir.NewDataTypeImm(dt))
		l.dtypes[dt] = e
	}
	return e
}

// emitDPS emits the allocations and the direct call for c and returns what
// the original binding now binds, or nil (after reporting) when c cannot be
// rewritten.
func emitDPS(b *ir.Builder, leaves *allocLeaves, c *ir.Call, span diag.Span) ir.Expr {
	if len(c.Args) < 2 {
		return nil // malformed: the checker reports it
	}
	if c.Span().IsValid() {
		span = c.Span()
	}
	args := argFields(c.Args[1])
	var inplace []int64
	if c.Op == op.CallTIRInplace {
		idx, ok := c.Attrs.Ints("inplace_indices")
		if !ok {
			b.Errorf(span, DiagBadInplaceIndices, "R.call_tir_inplace: inplace_indices must be a list of ints")
			return nil
		}
		inplace = idx
	}
	outs := c.SInfoArgs
	if len(outs) == 1 {
		if t, ok := outs[0].(*ir.TupleInfo); ok {
			outs = t.Fields
		}
	}
	results := make([]ir.Expr, len(outs))
	var fresh []ir.Expr // the allocated outputs, passed after the inputs
	for i, o := range outs {
		if i < len(inplace) && inplace[i] >= 0 && int(inplace[i]) < len(args) {
			results[i] = args[inplace[i]]
			continue
		}
		t, ok := o.(*ir.TensorInfo)
		var shape ir.Expr
		if ok {
			if dims, known := t.Dims(); known {
				shape = ir.NewShapeExpr(dims...)
			} else if v, isVar := t.Shape.(*ir.Var); isVar {
				// A shape variable whose values are unknown
				// (R.Shape(ndim=1)) still names the runtime shape.
				shape = v
			}
		}
		if shape == nil {
			b.Errorf(span, DiagUnknownOutputShape, "%s: output %d has struct info %s without a known shape, so it cannot be allocated",
				opName(c), i, ir.FormatStructInfo(o, nil))
			return nil
		}
		var sinfo ir.StructInfo
		if se, isExpr := t.Shape.(*ir.ShapeExpr); isExpr && se.StructInfo() != nil && t.VDevice == nil {
			// The output's struct info is what alloc_tensor's inference
			// would build from its shape and dtype (op/memory.go): the
			// allocation shares it and its normalized shape instead of
			// building copies.
			shape, sinfo = se, t
		}
		alloc := &ir.Call{Op: op.BuiltinAllocTensor, Args: []ir.Expr{
			shape, leaves.dtype(b, t.DType), smallValue(0), leaves.scope(b),
		}}
		alloc.SetSpan(span)
		if sinfo != nil {
			alloc.SetStructInfo(sinfo)
		}
		results[i] = b.Emit(alloc, "alloc")
		fresh = append(fresh, results[i])
	}
	callArgs := append(append([]ir.Expr(nil), args...), fresh...)
	var call *ir.Call
	if len(c.Args) > 2 {
		call = &ir.Call{Op: op.VMCallTIRDyn, Args: []ir.Expr{c.Args[0], ir.NewTuple(append(callArgs, c.Args[2])...)}}
	} else if _, extern := c.Args[0].(*ir.ExternFunc); extern {
		// call_dps_packed becomes a direct call of the extern function
		// returning void (it prints as R.call_packed).
		call = &ir.Call{Op: c.Args[0], Args: callArgs, SInfoArgs: []ir.StructInfo{ir.VoidInfo()}}
	} else {
		call = &ir.Call{Op: c.Args[0], Args: callArgs}
	}
	call.SetSpan(span)
	b.Emit(call, "_")
	if len(results) == 1 {
		return results[0]
	}
	return ir.NewTuple(results...)
}

// argFields returns the elements of a DPS argument list (an in-line tuple
// once normalized; a bare value otherwise).
func argFields(e ir.Expr) []ir.Expr {
	if t, ok := e.(*ir.Tuple); ok {
		return t.Fields
	}
	return []ir.Expr{e}
}

func opName(c *ir.Call) string {
	if o, ok := c.Op.(*ir.Op); ok {
		return o.Name
	}
	return fmt.Sprint(c.Op)
}
