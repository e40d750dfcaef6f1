// Package eval is phasec's reference evaluator: it runs a Relax module
// directly, at any phase from Ingest through Lower, as the numeric oracle
// every later stage is checked against.
//
// It is written for obvious correctness, not speed. High-level ops compute
// through the evaluation in their op record (op.Def.Eval, in package op
// next to their inference);
// call_tir and direct PrimFunc calls run through a plain TIR interpreter
// (tir.go); call_dps_packed and packed calls go to Go functions registered
// on the Machine. Closures capture their defining scope; symbolic shape
// variables are bound from the arguments' shapes, in parameter order, and
// by match_cast, and every later use of a variable is checked against its
// binding, so a mismatched input is reported with the parameter and the
// dimension.
//
// Invariants: the module is normalized (every expression has struct info,
// calls are in ANF); values are op.Value; an error is returned, never a
// panic, for bad inputs or failing run-time checks (R.assert_op, a
// match_cast that does not hold, an out-of-bounds buffer access).
package eval

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
)

// PackedFunc is a Go function callable through R.call_packed and
// R.call_pure_packed (and an ExternFunc callee).
type PackedFunc func(args []op.Value) (op.Value, error)

// DPSFunc is a Go function callable through R.call_dps_packed: it writes
// its results into outs, which the caller allocated.
type DPSFunc func(args []op.Value, outs []*tensor.Tensor) error

// Closure is a function value: a Relax function with the scope it was
// defined in and the values bound to its leading parameters by
// make_closure... (captured values bind its trailing parameters, as
// LambdaLift appends them).
type Closure struct {
	Name     string
	Fn       *ir.Function
	scope    *frame
	Captured []op.Value
}

// PrimFuncRef is a PrimFunc used as a value (the callee of call_tir).
type PrimFuncRef struct {
	Name string
	Fn   *ir.PrimFunc
}

// PackedRef is an extern function used as a value.
type PackedRef struct{ Symbol string }

// Storage is the value of R.memory.alloc_storage / R.vm.alloc_storage.
type Storage struct{ S *tensor.Storage }

// Machine evaluates functions of one module.
type Machine struct {
	mod    *ir.Module
	packed map[string]PackedFunc
	dps    map[string]DPSFunc
	// Out receives R.print output (nil: discarded).
	Out interface{ Write([]byte) (int, error) }
	// Ctx, when set, cancels a long evaluation (checked between bindings
	// and every 1024 iterations of a TIR loop).
	Ctx context.Context
	// MaxDepth bounds nested Relax calls (0: 10000), so runaway recursion
	// is an error instead of a stack overflow.
	MaxDepth int

	depth int
}

// New returns a Machine for mod with the standard packed functions.
func New(mod *ir.Module) *Machine {
	m := &Machine{mod: mod, packed: map[string]PackedFunc{}, dps: map[string]DPSFunc{}}
	registerBuiltins(m)
	return m
}

// Register makes f callable as a packed function called name.
func (m *Machine) Register(name string, f PackedFunc) { m.packed[name] = f }

// RegisterDPS makes f callable through R.call_dps_packed as name.
func (m *Machine) RegisterDPS(name string, f DPSFunc) { m.dps[name] = f }

// Error is an evaluation failure, positioned at the binding or call that
// failed when it has a span.
type Error struct {
	Span diag.Span
	Func string
	Msg  string
}

func (e *Error) Error() string {
	pos := ""
	if e.Span.File != "" || e.Span.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d: ", e.Span.File, e.Span.Line, e.Span.Col)
	}
	return fmt.Sprintf("%sin %s: %s", pos, e.Func, e.Msg)
}

// Call evaluates the global Relax function name on args.
func (m *Machine) Call(name string, args ...op.Value) (op.Value, error) {
	f := m.mod.Func(name)
	if f == nil {
		return nil, fmt.Errorf("no Relax function named %s in the module", name)
	}
	return m.apply(&Closure{Name: name, Fn: f}, args)
}

// Closed evaluates e, an expression that refers to no variable (a call of
// an op on constants, shapes, prim values and dtypes, say), exactly as the
// Machine evaluates it inside a function. FoldConstant (package transform)
// computes the calls it folds through it.
func (m *Machine) Closed(e ir.Expr) (op.Value, error) {
	return m.expr(newFrame("<constant>", nil), e)
}

// frame is a scope: Relax variables and symbolic shape variables, with the
// scope it is nested in (for local functions).
type frame struct {
	fn     string
	parent *frame
	vars   map[*ir.Var]op.Value
	sym    map[*ir.PrimVar]scalar
}

func newFrame(fn string, parent *frame) *frame {
	return &frame{fn: fn, parent: parent, vars: map[*ir.Var]op.Value{}, sym: map[*ir.PrimVar]scalar{}}
}

func (f *frame) lookup(v *ir.Var) (op.Value, bool) {
	for s := f; s != nil; s = s.parent {
		if x, ok := s.vars[v]; ok {
			return x, true
		}
	}
	return nil, false
}

// symbols returns every symbolic binding visible from f (innermost wins).
func (f *frame) symbols() map[*ir.PrimVar]scalar {
	if f.parent == nil {
		return f.sym
	}
	out := map[*ir.PrimVar]scalar{}
	var chain []*frame
	for s := f; s != nil; s = s.parent {
		chain = append(chain, s)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for k, v := range chain[i].sym {
			out[k] = v
		}
	}
	return out
}

// prim evaluates a symbolic expression in f.
func (f *frame) prim(e ir.PrimExpr) (scalar, error) {
	fr := &tirFrame{name: f.fn, vars: f.symbols()}
	return fr.expr(e)
}

func (f *frame) errorf(span diag.Span, format string, args ...any) error {
	return &Error{Span: span, Func: f.fn, Msg: fmt.Sprintf(format, args...)}
}

// wrap positions err at span unless it already carries a position.
func (f *frame) wrap(span diag.Span, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Span: span, Func: f.fn, Msg: err.Error()}
}

// apply calls a closure on args.
func (m *Machine) apply(c *Closure, args []op.Value) (op.Value, error) {
	limit := m.MaxDepth
	if limit == 0 {
		limit = 10000
	}
	if m.depth >= limit {
		return nil, &Error{Func: c.Name, Msg: fmt.Sprintf("more than %d nested calls", limit)}
	}
	m.depth++
	defer func() { m.depth-- }()
	args = append(append([]op.Value{}, args...), c.Captured...)
	fn := c.Fn
	f := newFrame(c.Name, c.scope)
	if len(args) != len(fn.Params) {
		return nil, f.errorf(fn.Span(), "takes %d arguments, got %d", len(fn.Params), len(args))
	}
	var deferred []deferredCheck
	for i, p := range fn.Params {
		d, err := m.bind(f, args[i], p.StructInfo(), "parameter "+p.Name)
		if err != nil {
			return nil, f.wrap(p.Span(), err)
		}
		deferred = append(deferred, d...)
		f.vars[p] = args[i]
	}
	if err := f.check(deferred); err != nil {
		return nil, f.wrap(fn.Span(), err)
	}
	out, err := m.expr(f, fn.Body)
	if err != nil {
		return nil, err
	}
	if fn.Ret != nil {
		d, err := m.bind(f, out, fn.Ret, "the result")
		if err == nil {
			err = f.check(d)
		}
		if err != nil {
			return nil, f.wrap(fn.Span(), err)
		}
	}
	return out, nil
}

func (m *Machine) seq(f *frame, s *ir.SeqExpr) (op.Value, error) {
	for _, b := range s.Blocks {
		for _, bd := range b.Bindings {
			if m.Ctx != nil && m.Ctx.Err() != nil {
				return nil, f.wrap(bd.Span(), m.Ctx.Err())
			}
			switch bd := bd.(type) {
			case *ir.VarBinding:
				v, err := m.expr(f, bd.Value)
				if err != nil {
					return nil, f.wrap(bd.Span(), err)
				}
				f.vars[bd.Var] = v
			case *ir.MatchCast:
				v, err := m.expr(f, bd.Value)
				if err != nil {
					return nil, f.wrap(bd.Span(), err)
				}
				d, err := m.bind(f, v, bd.SInfo, "match_cast of "+bd.Var.Name)
				if err == nil {
					err = f.check(d)
				}
				if err != nil {
					return nil, f.wrap(bd.Span(), err)
				}
				f.vars[bd.Var] = v
			}
		}
	}
	return m.expr(f, s.Body)
}

func (m *Machine) expr(f *frame, e ir.Expr) (op.Value, error) {
	switch e := e.(type) {
	case *ir.Var:
		v, ok := f.lookup(e)
		if !ok {
			return nil, f.errorf(e.Span(), "variable %s is not bound", e.Name)
		}
		return v, nil
	case *ir.Constant:
		return constant(e.Data)
	case *ir.ShapeExpr:
		s := make(op.Shape, len(e.Values))
		for i, d := range e.Values {
			v, err := f.prim(d)
			if err != nil {
				return nil, f.wrap(e.Span(), err)
			}
			s[i] = v.i
		}
		return s, nil
	case *ir.PrimValue:
		v, err := f.prim(e.Value)
		if err != nil {
			return nil, f.wrap(e.Span(), err)
		}
		return primValue(e.Value.DType(), v), nil
	case *ir.StringImm:
		return op.Str(e.Value), nil
	case *ir.DataTypeImm:
		return op.DTypeValue(e.Value), nil
	case *ir.Tuple:
		t := make(op.Tuple, len(e.Fields))
		for i, x := range e.Fields {
			v, err := m.expr(f, x)
			if err != nil {
				return nil, err
			}
			t[i] = v
		}
		return t, nil
	case *ir.TupleGetItem:
		v, err := m.expr(f, e.Tuple)
		if err != nil {
			return nil, err
		}
		t, ok := v.(op.Tuple)
		if !ok || e.Index < 0 || e.Index >= len(t) {
			return nil, f.errorf(e.Span(), "cannot take field %d of %s", e.Index, op.KindOf(v))
		}
		return t[e.Index], nil
	case *ir.SeqExpr:
		return m.seq(f, e)
	case *ir.If:
		c, err := m.expr(f, e.Cond)
		if err != nil {
			return nil, err
		}
		b, err := truth(c)
		if err != nil {
			return nil, f.wrap(e.Span(), fmt.Errorf("if condition: %v", err))
		}
		if b {
			return m.expr(f, e.Then)
		}
		return m.expr(f, e.Else)
	case *ir.Function:
		return &Closure{Name: f.fn + ".<local>", Fn: e, scope: f}, nil
	case *ir.GlobalVar:
		return m.global(f, e)
	case *ir.ExternFunc:
		return PackedRef{Symbol: e.Symbol}, nil
	case *ir.Call:
		return m.call(f, e)
	case *ir.Op:
		return nil, f.errorf(e.Span(), "op %s used as a value", ir.OpPath(e))
	}
	return nil, f.errorf(e.Span(), "cannot evaluate %T", e)
}

func (m *Machine) global(f *frame, g *ir.GlobalVar) (op.Value, error) {
	fn, ok := m.mod.Lookup(g.Name)
	if !ok {
		return nil, f.errorf(g.Span(), "no function named %s in the module", g.Name)
	}
	switch fn := fn.(type) {
	case *ir.Function:
		return &Closure{Name: g.Name, Fn: fn}, nil
	case *ir.PrimFunc:
		return &PrimFuncRef{Name: g.Name, Fn: fn}, nil
	}
	return nil, f.errorf(g.Span(), "%s is not a function", g.Name)
}

// truth reads a bool scalar (a rank-0 tensor or a prim value).
func truth(v op.Value) (bool, error) {
	switch x := v.(type) {
	case op.Prim:
		if x.DType.IsFloat() {
			return x.F != 0, nil
		}
		return x.I != 0, nil
	case *tensor.Tensor:
		if x.NumElements() != 1 || len(x.Shape) != 0 {
			return false, fmt.Errorf("expected a scalar, got a tensor %s", x)
		}
		return x.Float64At(0) != 0, nil
	}
	return false, fmt.Errorf("expected a bool scalar, got %s", op.KindOf(v))
}

func primValue(dt ir.DataType, v scalar) op.Prim {
	if dt.IsFloat() {
		return op.Prim{DType: dt, F: v.f}
	}
	return op.Prim{DType: dt, I: v.i}
}

// constant copies an NDArray into a fresh tensor.
func constant(a *ir.NDArray) (op.Value, error) {
	dt, err := op.TensorDType(a.DType)
	if err != nil {
		return nil, err
	}
	t, err := tensor.NewChecked(dt, a.Shape)
	if err != nil {
		return nil, err
	}
	if len(a.Data) != len(t.Bytes()) {
		return nil, fmt.Errorf("constant of shape %v has %d bytes, want %d", a.Shape, len(a.Data), len(t.Bytes()))
	}
	copy(t.Bytes(), a.Data)
	return t, nil
}

// call evaluates a call by its callee.
func (m *Machine) call(f *frame, c *ir.Call) (op.Value, error) {
	if o, ok := c.Op.(*ir.Op); ok {
		return m.callOp(f, o, c)
	}
	callee, err := m.expr(f, c.Op)
	if err != nil {
		return nil, err
	}
	args, err := m.args(f, c.Args)
	if err != nil {
		return nil, err
	}
	v, err := m.invoke(f, callee, args, c)
	if err != nil {
		return nil, f.wrap(c.Span(), err)
	}
	return v, nil
}

func (m *Machine) args(f *frame, es []ir.Expr) ([]op.Value, error) {
	out := make([]op.Value, len(es))
	for i, e := range es {
		v, err := m.expr(f, e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// invoke calls a function value: a closure, a PrimFunc in destination
// passing style (the Lower phase's direct kernel calls; the outputs are
// among args), or a packed function.
func (m *Machine) invoke(f *frame, callee op.Value, args []op.Value, c *ir.Call) (op.Value, error) {
	switch fn := callee.(type) {
	case *Closure:
		return m.apply(fn, args)
	case *PrimFuncRef:
		targs, err := tirArgs(args)
		if err != nil {
			return nil, fmt.Errorf("calling %s: %v", fn.Name, err)
		}
		ret, err := runPrimFunc(m.Ctx, fn.Fn, fn.Name, targs)
		if err != nil || fn.Fn.Ret.IsVoid() {
			return op.Tuple{}, err
		}
		return ret, nil
	case PackedRef:
		p, ok := m.packed[fn.Symbol]
		if !ok {
			return nil, fmt.Errorf("no packed function %q is registered", fn.Symbol)
		}
		return p(args)
	}
	return nil, fmt.Errorf("cannot call %s", op.KindOf(callee))
}

// tirArgs converts values to PrimFunc arguments.
func tirArgs(args []op.Value) ([]TIRArg, error) {
	out := make([]TIRArg, len(args))
	for i, a := range args {
		switch x := a.(type) {
		case *tensor.Tensor:
			out[i].T = x
		case op.Prim:
			out[i].P = x
		default:
			return nil, fmt.Errorf("argument %d is %s, not a tensor or scalar", i, op.KindOf(a))
		}
	}
	return out, nil
}

// allocOutputs allocates the tensors an out_sinfo list describes.
func allocOutputs(f *frame, outs []ir.StructInfo) ([]*tensor.Tensor, error) {
	if len(outs) == 1 {
		if t, ok := outs[0].(*ir.TupleInfo); ok {
			outs = t.Fields
		}
	}
	res := make([]*tensor.Tensor, len(outs))
	for i, s := range outs {
		ti, ok := s.(*ir.TensorInfo)
		if !ok {
			return nil, fmt.Errorf("out_sinfo %d is not a tensor", i)
		}
		dims, ok := ti.Dims()
		if !ok {
			return nil, fmt.Errorf("out_sinfo %d has no known shape", i)
		}
		shape := make([]int64, len(dims))
		for d, e := range dims {
			v, err := f.prim(e)
			if err != nil {
				return nil, err
			}
			shape[d] = v.i
		}
		t, err := newTensor(ti.DType, shape)
		if err != nil {
			return nil, fmt.Errorf("out_sinfo %d: %v", i, err)
		}
		res[i] = t
	}
	return res, nil
}

func newTensor(dt ir.DataType, shape []int64) (*tensor.Tensor, error) {
	if err := op.CheckSize(shape); err != nil {
		return nil, err
	}
	tdt, err := op.TensorDType(dt)
	if err != nil {
		return nil, err
	}
	return tensor.NewChecked(tdt, shape)
}

func outputsValue(outs []*tensor.Tensor) op.Value {
	if len(outs) == 1 {
		return outs[0]
	}
	t := make(op.Tuple, len(outs))
	for i, o := range outs {
		t[i] = o
	}
	return t
}

// argList flattens the argument-list operand of a call_tir-style call.
func argList(v op.Value) []op.Value {
	if t, ok := v.(op.Tuple); ok {
		return t
	}
	return []op.Value{v}
}

// callOp evaluates a call of an op: the call family, closures, memory and
// printing here, every other op through its op record's Eval.
func (m *Machine) callOp(f *frame, o *ir.Op, c *ir.Call) (op.Value, error) {
	args, err := m.args(f, c.Args)
	if err != nil {
		return nil, err
	}
	v, err := m.callOpValues(f, o, c, args)
	if err != nil {
		return nil, f.wrap(c.Span(), err)
	}
	return v, nil
}

func (m *Machine) callOpValues(f *frame, o *ir.Op, c *ir.Call, args []op.Value) (op.Value, error) {
	switch o {
	case op.CallTIR, op.CallTIRInplace:
		ref, ok := args[0].(*PrimFuncRef)
		if !ok {
			return nil, fmt.Errorf("%s: callee is %s, not a PrimFunc", ir.OpPath(o), op.KindOf(args[0]))
		}
		outs, err := allocOutputs(f, c.SInfoArgs)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", ir.OpPath(o), err)
		}
		ins := argList(args[1])
		fresh := outs
		if o == op.CallTIRInplace {
			idx, _ := ir.AttrAsInts(c.Attrs["inplace_indices"])
			fresh = nil
			for j, k := range idx {
				if k >= 0 && int(k) < len(ins) {
					t, ok := ins[k].(*tensor.Tensor)
					if !ok {
						return nil, fmt.Errorf("%s: argument %d is not a tensor", ir.OpPath(o), k)
					}
					outs[j] = t
				} else {
					fresh = append(fresh, outs[j])
				}
			}
		}
		all := append([]op.Value{}, ins...)
		for _, t := range fresh {
			all = append(all, t)
		}
		if len(args) > 2 {
			s, ok := args[2].(op.Shape)
			if !ok {
				return nil, fmt.Errorf("%s: tir_vars is %s, not a shape", ir.OpPath(o), op.KindOf(args[2]))
			}
			for _, d := range s {
				all = append(all, op.Prim{DType: ir.Int64, I: d})
			}
		}
		targs, err := tirArgs(all)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", ir.OpPath(o), err)
		}
		if _, err := runPrimFunc(m.Ctx, ref.Fn, ref.Name, targs); err != nil {
			return nil, err
		}
		return outputsValue(outs), nil
	case op.CallDPSPacked:
		ref, ok := args[0].(PackedRef)
		if !ok {
			return nil, fmt.Errorf("R.call_dps_packed: callee is %s", op.KindOf(args[0]))
		}
		fn, ok := m.dps[ref.Symbol]
		if !ok {
			return nil, fmt.Errorf("R.call_dps_packed: no function %q is registered", ref.Symbol)
		}
		outs, err := allocOutputs(f, c.SInfoArgs)
		if err != nil {
			return nil, fmt.Errorf("R.call_dps_packed: %v", err)
		}
		if err := fn(argList(args[1]), outs); err != nil {
			return nil, fmt.Errorf("%s: %v", ref.Symbol, err)
		}
		return outputsValue(outs), nil
	case op.CallPacked, op.CallPurePacked, op.CallInplacePacked:
		return m.invoke(f, args[0], args[1:], c)
	case op.CallBuiltinWithCtx:
		return m.invoke(f, args[0], argList(args[1]), c)
	case op.MakeClosure:
		fn, ok := args[0].(*Closure)
		if !ok {
			return nil, fmt.Errorf("R.make_closure: %s is not a Relax function", op.KindOf(args[0]))
		}
		cl := *fn
		cl.Captured = append(append([]op.Value{}, fn.Captured...), argList(args[1])...)
		return &cl, nil
	case op.InvokeClosure, op.InvokePureClosure:
		return m.invoke(f, args[0], argList(args[1]), c)
	case op.Print:
		if m.Out != nil {
			var parts []string
			for _, a := range args {
				parts = append(parts, format(a))
			}
			fmt.Fprintln(m.Out, strings.Join(parts, " "))
		}
		return op.Tuple{}, nil
	case op.Assert:
		ok, err := truth(args[0])
		if err != nil {
			return nil, fmt.Errorf("R.assert_op: %v", err)
		}
		if !ok {
			msg, _ := c.Attrs["format"].(string)
			if msg == "" {
				msg = "assertion failed"
			}
			return nil, fmt.Errorf("R.assert_op: %s", msg)
		}
		return op.Tuple{}, nil
	case op.BuiltinAllocTensor:
		return allocTensorOp(args[0], args[1])
	case op.MemAllocStorage, op.VMAllocStorage:
		s, ok := args[0].(op.Shape)
		if !ok || len(s) != 1 || s[0] < 0 {
			return nil, fmt.Errorf("%s: size must be a 1-D shape, got %s", ir.OpPath(o), op.KindOf(args[0]))
		}
		if s[0] > op.MaxElements*8 {
			return nil, fmt.Errorf("%s: %d bytes exceed the evaluator's limit of %d", ir.OpPath(o), s[0], op.MaxElements*8)
		}
		return &Storage{S: tensor.NewStorage(s[0])}, nil
	case op.MemAllocTensor, op.VMAllocTensor:
		st, ok := args[0].(*Storage)
		if !ok {
			return nil, fmt.Errorf("%s: storage is %s", ir.OpPath(o), op.KindOf(args[0]))
		}
		off, ok1 := args[1].(op.Prim)
		shape, ok2 := args[2].(op.Shape)
		dt, ok3 := args[3].(op.DTypeValue)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("%s: expected (storage, offset, shape, dtype)", ir.OpPath(o))
		}
		tdt, err := op.TensorDType(ir.DataType(dt))
		if err != nil {
			return nil, err
		}
		return tensor.View(st.S, off.I, tdt, shape)
	case op.MemKillStorage, op.MemKillTensor, op.VMKillObject:
		return op.Tuple{}, nil
	case op.VMCallTIRDyn:
		ref, ok := args[0].(*PrimFuncRef)
		if !ok {
			return nil, fmt.Errorf("R.vm.call_tir_dyn: callee is %s", op.KindOf(args[0]))
		}
		flat := argList(args[1])
		var all []op.Value
		for i, a := range flat {
			if s, ok := a.(op.Shape); ok && i == len(flat)-1 {
				for _, d := range s {
					all = append(all, op.Prim{DType: ir.Int64, I: d})
				}
				continue
			}
			all = append(all, a)
		}
		targs, err := tirArgs(all)
		if err != nil {
			return nil, err
		}
		_, err = runPrimFunc(m.Ctx, ref.Fn, ref.Name, targs)
		return op.Tuple{}, err
	}
	d, ok := op.DefOf(o)
	if !ok || d.Eval == nil {
		return nil, fmt.Errorf("%s has no evaluation", ir.OpPath(o))
	}
	return d.Eval(c, args)
}

func allocTensorOp(shapeV, dtV op.Value) (op.Value, error) {
	shape, ok := shapeV.(op.Shape)
	if !ok {
		return nil, fmt.Errorf("R.builtin.alloc_tensor: shape is %s", op.KindOf(shapeV))
	}
	dt, ok := dtV.(op.DTypeValue)
	if !ok {
		return nil, fmt.Errorf("R.builtin.alloc_tensor: dtype is %s", op.KindOf(dtV))
	}
	return newTensor(ir.DataType(dt), shape)
}

// format renders a value for R.print.
func format(v op.Value) string {
	switch x := v.(type) {
	case *tensor.Tensor:
		n := int(x.NumElements())
		parts := make([]string, 0, min(n, 16))
		for i := 0; i < n && i < 16; i++ {
			parts = append(parts, fmt.Sprint(x.Float64At(i)))
		}
		if n > 16 {
			parts = append(parts, "...")
		}
		return x.String() + "[" + strings.Join(parts, ", ") + "]"
	case op.Str:
		return string(x)
	case op.Prim:
		if x.DType.IsFloat() {
			return fmt.Sprint(x.F)
		}
		return fmt.Sprint(x.I)
	case op.Shape:
		return fmt.Sprint([]int64(x))
	case op.Tuple:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = format(e)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return op.KindOf(v)
}
