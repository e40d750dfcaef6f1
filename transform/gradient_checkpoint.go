package transform

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// Gradient checkpointing, as TVM v0.23's gradient.cc (CheckpointCollector
// and CheckpointGenerator): R.grad.start_checkpoint(x) and
// R.grad.end_checkpoint(y) (package op) delimit stages whose values the
// backward pass does not read from the forward pass but recomputes from
// the stages' inputs, trading computation for memory that holds
// activations.
//
// While the forward bindings are copied, the markers are dropped (a marker
// var becomes the var it marks) and each var is classified: it is kept
// (TVM's "checkpointed") when it is a parameter, is marked by
// start_checkpoint, or is computed only from kept vars and
// end_checkpoint results. In the backward pass, a rule that reads a var
// that is not kept reads its recomputation instead, <var>_cp, emitted
// before the rule from the forward binding with its own operands kept or
// recomputed (each var recomputed once); the rule receives the call so
// rebuilt and, when the call's own result is not kept, its recomputation.
// Adjoints still flow to the forward vars. Recomputations no rule reads
// are removed with the other unused bindings.
//
// A function without markers keeps every var, and the backward pass reads
// the forward bindings as they are.

// checkpoints is the classification and the recomputations of one
// adjoint function.
type checkpoints struct {
	// marker says which forward vars (of the function differentiated) are
	// bound to a marker, and which.
	marker map[*ir.Var]*ir.Op
	// kept holds the adjoint function's vars the backward pass reads as
	// they are (TVM's checkpoints).
	kept map[*ir.Var]bool
	// bound is the value of each forward var of the adjoint function.
	bound map[*ir.Var]ir.Expr
	// read maps a forward var of the adjoint function to what the
	// backward pass reads for it: itself when kept, else its
	// recomputation once made.
	read map[*ir.Var]*ir.Var
}

// isCheckpointMarker: c is R.grad.start_checkpoint or R.grad.end_checkpoint.
func isCheckpointMarker(c *ir.Call) bool {
	return c.Op == op.StartCheckpoint || c.Op == op.EndCheckpoint
}

// newCheckpoints returns the checkpoint state of a function whose forward
// block is blk and whose adjoint takes params, or nil when blk has no
// marker: then every var is kept.
func newCheckpoints(blk *ir.BindingBlock, params []*ir.Var) *checkpoints {
	var cp *checkpoints
	for _, bind := range blk.Bindings {
		vb, ok := bind.(*ir.VarBinding)
		if !ok {
			continue
		}
		if c, ok := vb.Value.(*ir.Call); ok && isCheckpointMarker(c) {
			if cp == nil {
				cp = &checkpoints{marker: map[*ir.Var]*ir.Op{}, kept: map[*ir.Var]bool{},
					bound: map[*ir.Var]ir.Expr{}, read: map[*ir.Var]*ir.Var{}}
			}
			cp.marker[vb.Var] = c.Op.(*ir.Op)
		}
	}
	if cp != nil {
		for _, p := range params {
			cp.kept[p] = true
		}
	}
	return cp
}

// classify records the binding of forward var v (of the function
// differentiated) to value, copied as nv = nvalue into the adjoint
// function: nv is kept when every var value reads is kept or an
// end_checkpoint result (a start_checkpoint result is neither: what it
// starts is recomputed). lookup maps forward vars to the adjoint
// function's.
func (cp *checkpoints) classify(value ir.Expr, nv *ir.Var, nvalue ir.Expr, lookup func(*ir.Var) ir.Expr) {
	cp.bound[nv] = nvalue
	kept := true
	forEachVar(value, func(u *ir.Var) {
		switch cp.marker[u] {
		case op.EndCheckpoint:
		case op.StartCheckpoint:
			kept = false
		default:
			if l, ok := lookup(u).(*ir.Var); !ok || !cp.kept[l] {
				kept = false
			}
		}
	})
	if kept {
		cp.kept[nv] = true
	}
}

// mark records a start_checkpoint of target, the adjoint function's var
// the marker's argument became: a stage input, kept.
func (cp *checkpoints) mark(c *ir.Call, target *ir.Var) {
	if c.Op == op.StartCheckpoint {
		cp.kept[target] = true
	}
}

// alias records a binding the adjoint function adds for a marker (an
// output var bound to the dataflow var the marker's argument became): a
// forward binding, not kept.
func (cp *checkpoints) alias(nv *ir.Var, value ir.Expr) { cp.bound[nv] = value }

// update returns the var and the call a gradient rule reads for the
// forward binding v = c (TVM's CheckpointGenerator::UpdateBinding): c with
// its operands read through recomputation, and v itself when kept, else
// its recomputation, emitted through b if not made yet.
func (cp *checkpoints) update(b *ir.Builder, v *ir.Var, c *ir.Call) (*ir.Var, *ir.Call) {
	forEachVar(c, func(u *ir.Var) { cp.recompute(b, u) })
	call := c
	if n, ok := b.Normalize(cp.rebuild(c)).(*ir.Call); ok {
		call = n
	}
	if r, ok := cp.readOf(v); ok {
		return r, call
	}
	r := b.Emit(call, v.Name+"_cp")
	cp.read[v] = r
	return r, call
}

// readOf is what the backward pass reads for v so far.
func (cp *checkpoints) readOf(v *ir.Var) (*ir.Var, bool) {
	if r, ok := cp.read[v]; ok {
		return r, true
	}
	if _, isForward := cp.bound[v]; cp.kept[v] || !isForward {
		return v, true // kept, or not a forward binding's var (a parameter)
	}
	return nil, false
}

// recompute makes v readable, emitting the recomputations of v and of
// the vars its binding needs first, operands before users in the order
// TVM's recursive generator emits them. The walk keeps its own stack:
// a stage can be as long as the function.
func (cp *checkpoints) recompute(b *ir.Builder, v *ir.Var) {
	if _, ok := cp.readOf(v); ok {
		return
	}
	type frame struct {
		v    *ir.Var
		deps []*ir.Var
		next int
	}
	operands := func(v *ir.Var) []*ir.Var {
		var deps []*ir.Var
		forEachVar(cp.bound[v], func(u *ir.Var) { deps = append(deps, u) })
		return deps
	}
	stack := []frame{{v: v, deps: operands(v)}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(top.deps) {
			d := top.deps[top.next]
			top.next++
			if _, ok := cp.readOf(d); !ok {
				stack = append(stack, frame{v: d, deps: operands(d)})
			}
			continue
		}
		cp.read[top.v] = b.Emit(cp.rebuild(cp.bound[top.v]), top.v.Name+"_cp")
		stack = stack[:len(stack)-1]
	}
}

// rebuild is a fresh copy of a forward value with its operands read
// through recomputation (they are all readable). Calls, tuples and
// tuple-get-items are rebuilt even when no operand changed, so that no
// expression node is bound twice.
func (cp *checkpoints) rebuild(e ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.Var:
		if r, ok := cp.readOf(e); ok {
			return r
		}
	case *ir.Tuple:
		fields := make([]ir.Expr, len(e.Fields))
		for i, f := range e.Fields {
			fields[i] = cp.rebuild(f)
		}
		return ir.NewTuple(fields...)
	case *ir.TupleGetItem:
		return &ir.TupleGetItem{Tuple: cp.rebuild(e.Tuple), Index: e.Index}
	case *ir.Call:
		args := make([]ir.Expr, len(e.Args))
		for i, a := range e.Args {
			args[i] = cp.rebuild(a)
		}
		return &ir.Call{Op: cp.rebuild(e.Op), Args: args, Attrs: e.Attrs, SInfoArgs: e.SInfoArgs}
	}
	return e
}

// forEachVar calls f on each Relax var e reads, in the order TVM's
// ExprMutator visits them (callee, then arguments; fields in order).
// Bindings are in normal form, so the recursion follows the nesting of
// one value, not the length of the function.
func forEachVar(e ir.Expr, f func(*ir.Var)) {
	switch e := e.(type) {
	case *ir.Var:
		f(e)
	case *ir.Tuple:
		for _, x := range e.Fields {
			forEachVar(x, f)
		}
	case *ir.TupleGetItem:
		forEachVar(e.Tuple, f)
	case *ir.Call:
		forEachVar(e.Op, f)
		for _, a := range e.Args {
			forEachVar(a, f)
		}
	}
}
