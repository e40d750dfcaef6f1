package op

import (
	"fmt"
	"math"
	"strconv"

	"github.com/phasec/phasec/ir"
)

// Legalization: how each op lowers to a TIR PrimFunc that LegalizeOps
// (package lower) calls through R.call_tir. The generated code follows
// what TVM's legalizations (python/tvm/relax/transform/legalize_ops/*.py,
// through topi's te.compute) print: a private PrimFunc named after the op,
// one block per stage named T_<op> (or compute, as topi names it), the
// output loops as a T.grid with T.axis.remap, T.reads / T.writes of the
// elements a block touches, and reductions with T.init. Symbolic
// dimensions become the PrimFunc's own variables, bound from its buffers'
// shapes (T.handle parameters with T.match_buffer).

// LegalizeFunc builds the kernel of call into k. The call's tensor
// arguments and result have known (possibly symbolic) shapes. It returns
// ErrNotLegalizable (wrapped or not) to leave the call alone, or another
// error for an invalid call.
type LegalizeFunc func(k *Kernel, call *ir.Call) error

// ErrNotLegalizable says a call has no legalization in its current form
// (an unknown shape or a symbolic scalar, say); LegalizeOps leaves it.
var ErrNotLegalizable = fmt.Errorf("not legalizable")

// Kernel builds the PrimFunc of one legalized call.
type Kernel struct {
	// Name is the PrimFunc's name hint (the op's name by default).
	Name string
	// Emit, when set (LegalizeOps sets it), lets a legalization emit
	// bindings before the call that replaces the op; nil where that is
	// not possible.
	Emit Emitter
	// Result, when set, is the struct info of the call_tir that replaces
	// the op (the op's own when nil): a legalization that computes the
	// output shape at run time names it here (TVM's match_cast shape
	// variables).
	Result ir.StructInfo
	// Forward, when a legalization sets it, replaces the call instead of
	// a kernel: an op that computes one of its arguments unchanged
	// legalizes into that argument, as TVM's legalize functions may
	// return any expression (the checkpoint markers return call.args[0]).
	Forward ir.Expr
	call    *ir.Call

	params []*ir.PrimVar
	bufs   map[*ir.PrimVar]*ir.Buffer
	// Args are the call_tir arguments, one per input buffer.
	Args []ir.Expr
	// sym maps the Relax symbolic variables of the call's shapes to the
	// kernel's own variables of the same name.
	sym      map[*ir.PrimVar]*ir.PrimVar
	symOrder []*ir.PrimVar
	stmts    []ir.Stmt
	allocs   []*ir.Buffer
	names    map[string]int
}

// Emitter emits the bindings of a legalization that needs more than one
// kernel or a run-time shape, as TVM's legalize functions use bb.emit,
// bb.match_cast and bb.call_te (python/tvm/relax/transform/legalize_ops/).
// The bindings land before the binding of the call being legalized.
type Emitter interface {
	// CallTIR adds sub's PrimFunc to the module (named and deduplicated as
	// every legalized kernel) and returns the R.call_tir of it, of struct
	// info out, not yet emitted.
	CallTIR(sub *Kernel, out ir.StructInfo) (ir.Expr, error)
	// Emit binds value to a fresh variable named name.
	Emit(value ir.Expr, name string) *ir.Var
	// EmitMatchCast binds R.match_cast(value, s) to a fresh variable.
	EmitMatchCast(value ir.Expr, s ir.StructInfo, name string) *ir.Var
}

// NewKernel starts the kernel of call, named after its op.
func NewKernel(call *ir.Call) *Kernel {
	name := "kernel"
	if o, ok := call.Op.(*ir.Op); ok {
		name = o.Name[len("relax."):]
		if i := lastDot(name); i >= 0 {
			name = name[i+1:]
		}
	}
	return &Kernel{Name: name, call: call, bufs: map[*ir.PrimVar]*ir.Buffer{},
		sym: map[*ir.PrimVar]*ir.PrimVar{}, names: map[string]int{}}
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

// fresh returns name, or name with a numeric suffix if already used.
func (k *Kernel) fresh(name string) string {
	n := k.names[name]
	k.names[name] = n + 1
	if n == 0 {
		return name
	}
	return name + strconv.Itoa(n)
}

// Dim translates a Relax dimension into the kernel's variables.
func (k *Kernel) Dim(e ir.PrimExpr) ir.PrimExpr {
	m := map[*ir.PrimVar]ir.PrimExpr{}
	for _, v := range FreeVars(e) {
		t, ok := k.sym[v]
		if !ok {
			t = ir.NewPrimVar(v.Name, v.Type)
			k.sym[v] = t
			k.symOrder = append(k.symOrder, v)
		}
		m[v] = t
	}
	if len(m) == 0 {
		return e
	}
	return ir.SubstitutePrim(e, m)
}

// Dims translates a list of Relax dimensions.
func (k *Kernel) Dims(ds []ir.PrimExpr) []ir.PrimExpr {
	out := make([]ir.PrimExpr, len(ds))
	for i, d := range ds {
		out[i] = k.Dim(d)
	}
	return out
}

// knownTensor returns the struct info of argument i when it is a tensor of
// known shape and dtype.
func knownTensor(e ir.Expr) (*ir.TensorInfo, []ir.PrimExpr, bool) {
	t, ok := argStructInfo(e).(*ir.TensorInfo)
	if !ok || t.DType.IsVoid() {
		return nil, nil, false
	}
	dims, ok := t.Dims()
	return t, dims, ok
}

// Input adds a buffer parameter for tensor argument e (Relax expression)
// and returns it with its (kernel) dimensions.
func (k *Kernel) Input(e ir.Expr, name string) (*ir.Buffer, error) {
	t, dims, ok := knownTensor(e)
	if !ok {
		return nil, ErrNotLegalizable
	}
	buf := k.param(name, t.DType, k.Dims(dims))
	k.Args = append(k.Args, e)
	return buf, nil
}

// Output adds the output buffer parameter, shaped like the call's result.
func (k *Kernel) Output(name string) (*ir.Buffer, error) {
	t, dims, ok := knownTensorInfo(k.call.StructInfo())
	if !ok {
		return nil, ErrNotLegalizable
	}
	return k.param(name, t.DType, k.Dims(dims)), nil
}

// OutputOf adds an output buffer parameter of the given struct info (for
// ops with several outputs).
func (k *Kernel) OutputOf(name string, s ir.StructInfo) (*ir.Buffer, error) {
	t, dims, ok := knownTensorInfo(s)
	if !ok {
		return nil, ErrNotLegalizable
	}
	return k.param(name, t.DType, k.Dims(dims)), nil
}

func knownTensorInfo(s ir.StructInfo) (*ir.TensorInfo, []ir.PrimExpr, bool) {
	t, ok := s.(*ir.TensorInfo)
	if !ok || t.DType.IsVoid() {
		return nil, nil, false
	}
	dims, ok := t.Dims()
	return t, dims, ok
}

func (k *Kernel) param(name string, dt ir.DataType, dims []ir.PrimExpr) *ir.Buffer {
	name = k.fresh(name)
	buf := ir.NewBuffer(name, dims, dt)
	p := ir.NewPrimVar("var_"+name, ir.Handle)
	k.params = append(k.params, p)
	k.bufs[p] = buf
	return buf
}

// Alloc declares an intermediate buffer (T.alloc_buffer in the root block).
func (k *Kernel) Alloc(name string, dt ir.DataType, dims []ir.PrimExpr) *ir.Buffer {
	buf := ir.NewBuffer(k.fresh(name), dims, dt)
	k.allocs = append(k.allocs, buf)
	return buf
}

// loopVars returns fresh loop variables prefix0, prefix1, ... and their
// block variables v_prefix0, ...
func (k *Kernel) loopVars(prefix string, n int) (loops, vars []*ir.PrimVar) {
	for i := 0; i < n; i++ {
		name := prefix + strconv.Itoa(i)
		if prefix == "k" && n == 1 {
			name = "k"
		}
		loops = append(loops, ir.NewPrimVar(name, ir.Int64))
		vars = append(vars, ir.NewPrimVar("v_"+name, ir.Int64))
	}
	return loops, vars
}

func exprs(vs []*ir.PrimVar) []ir.PrimExpr {
	out := make([]ir.PrimExpr, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// Compute emits a spatial block over out's shape: out[v...] = f(v...).
// prefix names the loops ("ax" for topi's broadcast ops, "i" for
// te.compute's default).
func (k *Kernel) Compute(block string, out *ir.Buffer, prefix string, f func(v []ir.PrimExpr) ir.PrimExpr) {
	k.Reduce(block, out, prefix, nil, nil, func(s, _ []ir.PrimExpr, _ ir.PrimExpr) ir.PrimExpr { return f(s) })
}

// Reduce emits a block with spatial loops over out's shape followed by
// reduction loops over reduce: with T.init() out[s] = init, then
// out[s] = update(s, r, out[s]). With no reduce extents it is a spatial
// block and update's accumulator is nil.
func (k *Kernel) Reduce(block string, out *ir.Buffer, prefix string, reduce []ir.PrimExpr, init ir.PrimExpr,
	update func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr) {
	sLoops, sVars := k.loopVars(prefix, len(out.Shape))
	var rLoops, rVars []*ir.PrimVar
	if len(reduce) > 0 {
		rp := "k"
		if prefix == "ax" {
			rp = "k"
		}
		rLoops, rVars = k.loopVars(rp, len(reduce))
	}
	s := exprs(sVars)
	store := &ir.BufferLoad{Buffer: out, Indices: s}
	var acc ir.PrimExpr
	if len(reduce) > 0 {
		acc = store
	}
	value := update(s, exprs(rVars), acc)
	b := &ir.Block{Name: block}
	for i, v := range sVars {
		b.IterVars = append(b.IterVars, &ir.IterVar{Var: v, Dom: ir.Range{Min: ir.I64(0), Extent: out.Shape[i]}})
	}
	for i, v := range rVars {
		b.IterVars = append(b.IterVars, &ir.IterVar{Var: v, Dom: ir.Range{Min: ir.I64(0), Extent: reduce[i]}, Kind: ir.IterReduce})
	}
	b.Writes = []ir.BufferRegion{pointRegion(out, s)}
	if len(reduce) > 0 {
		b.Init = &ir.BufferStore{Buffer: out, Indices: s, Value: init}
	}
	b.Reads = readRegions(out, value)
	b.Body = &ir.BufferStore{Buffer: out, Indices: s, Value: value}
	var body ir.Stmt = &ir.BlockRealize{IterValues: exprs(append(append([]*ir.PrimVar{}, sLoops...), rLoops...)), Block: b}
	loops := append(append([]*ir.PrimVar{}, sLoops...), rLoops...)
	extents := append(append([]ir.PrimExpr{}, out.Shape...), reduce...)
	for i := len(loops) - 1; i >= 0; i-- {
		body = &ir.For{Var: loops[i], Min: ir.I64(0), Extent: extents[i], Body: body}
	}
	k.stmts = append(k.stmts, body)
}

// pointRegion is buf[idx...], one element per block instance.
func pointRegion(buf *ir.Buffer, idx []ir.PrimExpr) ir.BufferRegion {
	r := ir.BufferRegion{Buffer: buf, Region: make([]ir.Range, len(idx))}
	for i, x := range idx {
		r.Region[i] = ir.Range{Min: x, Extent: ir.I64(1)}
	}
	return r
}

// readRegions lists the elements values load, in first-load order,
// excluding the block's own output (a reduction's accumulator).
func readRegions(out *ir.Buffer, values ...ir.PrimExpr) []ir.BufferRegion {
	var regions []ir.BufferRegion
	seen := map[string]bool{}
	stack := make([]ir.PrimExpr, 0, len(values))
	for i := len(values) - 1; i >= 0; i-- {
		stack = append(stack, values[i])
	}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch e := e.(type) {
		case *ir.BufferLoad:
			if e.Buffer != out {
				key := fmt.Sprintf("%p%s", e.Buffer, ir.FormatTIR(&ir.BufferLoad{Buffer: e.Buffer, Indices: e.Indices}, nil))
				if !seen[key] {
					seen[key] = true
					regions = append(regions, pointRegion(e.Buffer, e.Indices))
				}
			}
			for i := len(e.Indices) - 1; i >= 0; i-- {
				stack = append(stack, e.Indices[i])
			}
		case *ir.Binary:
			stack = append(stack, e.B, e.A)
		case *ir.Not:
			stack = append(stack, e.A)
		case *ir.Cast:
			stack = append(stack, e.Value)
		case *ir.Select:
			stack = append(stack, e.False, e.True, e.Cond)
		case *ir.PrimCall:
			for i := len(e.Args) - 1; i >= 0; i-- {
				stack = append(stack, e.Args[i])
			}
		}
	}
	return regions
}

// Finish returns the PrimFunc and the tir_vars the call must pass: the
// symbolic variables no buffer shape binds by itself become trailing int64
// parameters.
func (k *Kernel) Finish() (*ir.PrimFunc, []ir.PrimExpr) {
	bound := map[*ir.PrimVar]bool{}
	for _, p := range k.params {
		buf := k.bufs[p]
		if buf == nil { // a scalar operand (Operand on a PrimValue argument)
			continue
		}
		for _, d := range buf.Shape {
			if v, ok := d.(*ir.PrimVar); ok {
				bound[v] = true
			}
		}
	}
	params := append([]*ir.PrimVar{}, k.params...)
	var tirVars []ir.PrimExpr
	for _, rv := range k.symOrder {
		if tv := k.sym[rv]; !bound[tv] {
			params = append(params, tv)
			tirVars = append(tirVars, rv)
		}
	}
	var body ir.Stmt
	if len(k.stmts) == 1 {
		body = k.stmts[0]
	} else {
		body = &ir.SeqStmt{Stmts: k.stmts}
	}
	if len(k.allocs) > 0 {
		body = &ir.BlockRealize{Block: &ir.Block{Name: "root", AllocBuffers: k.allocs, Body: body}}
	}
	return &ir.PrimFunc{Params: params, BufferMap: k.bufs, Body: body, Attrs: ir.Attrs{ir.AttrNoAlias: true}}, tirVars
}

// FreeVars lists the variables of e in first-occurrence order.
func FreeVars(e ir.PrimExpr) []*ir.PrimVar {
	var out []*ir.PrimVar
	seen := map[*ir.PrimVar]bool{}
	ir.VisitPrimVars(e, func(v *ir.PrimVar) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	})
	return out
}

// Load is buf[idx...].
func Load(buf *ir.Buffer, idx []ir.PrimExpr) ir.PrimExpr {
	return &ir.BufferLoad{Buffer: buf, Indices: idx}
}

// broadcastIndex indexes an input of shape in inside an output loop nest
// with block variables v (right-aligned): a dimension that is the constant
// 1 where the output's is not reads index 0.
func broadcastIndex(in, out []ir.PrimExpr, v []ir.PrimExpr) []ir.PrimExpr {
	idx := make([]ir.PrimExpr, len(in))
	off := len(out) - len(in)
	for i, d := range in {
		if n, ok := ir.IntValue(d); ok && n == 1 {
			if m, ok := ir.IntValue(out[off+i]); !ok || m != 1 {
				idx[i] = ir.I64(0)
				continue
			}
		}
		idx[i] = v[off+i]
	}
	return idx
}

// constOf is the constant v of dtype dt.
func constOf(dt ir.DataType, v float64) ir.PrimExpr {
	if dt.IsFloat() {
		return ir.NewFloat(dt, v)
	}
	if dt.IsBool() {
		return ir.NewBool(v != 0)
	}
	return ir.NewInt(dt, int64(v))
}

// intrinsic is T.name(args...) of dtype dt.
func intrinsic(name string, dt ir.DataType, args ...ir.PrimExpr) ir.PrimExpr {
	return &ir.PrimCall{Op: name, Args: args, Type: dt}
}

// castTo converts e to dt (e itself when it already has that dtype).
func castTo(dt ir.DataType, e ir.PrimExpr) ir.PrimExpr {
	if e.DType() == dt {
		return e
	}
	if c, ok := e.(*ir.IntImm); ok && !c.Type.IsBool() {
		return constOf(dt, float64(c.Value)) // folded, as the parser folds T.Cast of a literal
	}
	return &ir.Cast{Type: dt, Value: e}
}

// Operand adds argument e as an elementwise operand: a tensor buffer, or a
// scalar (R.prim_value or an R.Prim variable) as a scalar parameter. It
// returns a function giving the operand's value at output block variables
// v of the output shape out (broadcasting tensors).
func (k *Kernel) Operand(e ir.Expr, name string, out []ir.PrimExpr) (func(v []ir.PrimExpr) ir.PrimExpr, error) {
	if p, ok := argStructInfo(e).(*ir.PrimInfo); ok {
		if p.DType.IsVoid() {
			return nil, ErrNotLegalizable
		}
		var val ir.PrimExpr
		if pv, ok := e.(*ir.PrimValue); ok {
			val = k.Dim(pv.Value)
		} else {
			sp := ir.NewPrimVar(k.fresh(name), p.DType)
			k.params = append(k.params, sp)
			k.Args = append(k.Args, e)
			val = sp
		}
		return func([]ir.PrimExpr) ir.PrimExpr { return val }, nil
	}
	buf, err := k.Input(e, name)
	if err != nil {
		return nil, err
	}
	return func(v []ir.PrimExpr) ir.PrimExpr { return Load(buf, broadcastIndex(buf.Shape, out, v)) }, nil
}

// limitValue is the least (or greatest) value of dtype dt, the identity of
// max (min) reductions, as T.min_value / T.max_value.
func limitValue(dt ir.DataType, least bool) ir.PrimExpr {
	switch {
	case dt.IsFloat():
		v := math.MaxFloat64
		switch {
		case dt.Code == ir.CodeBFloat:
			v = 3.3895313892515355e38
		case dt.Bits == 16:
			v = 65504
		case dt.Bits == 32:
			v = math.MaxFloat32
		}
		if least {
			v = -v
		}
		return ir.NewFloat(dt, v)
	case dt.IsBool():
		return ir.NewBool(!least)
	case dt.IsUInt():
		if least {
			return ir.NewInt(dt, 0)
		}
		if dt.Bits >= 64 {
			return ir.NewInt(dt, -1) // all bits set
		}
		return ir.NewInt(dt, int64(uint64(1)<<dt.Bits-1))
	}
	if least {
		return ir.NewInt(dt, -1<<(dt.Bits-1))
	}
	return ir.NewInt(dt, 1<<(dt.Bits-1)-1)
}

// reduceIndex builds the index into a tensor of rank n whose dimensions
// reduced[i] are reduced, from spatial block variables s (the output's;
// with keepdims, the reduced dimensions are in s too and skipped) and
// reduction variables r.
func reduceIndex(reduced []bool, keep bool, s, r []ir.PrimExpr) []ir.PrimExpr {
	idx := make([]ir.PrimExpr, len(reduced))
	si, ri := 0, 0
	for i, red := range reduced {
		if red {
			idx[i] = r[ri]
			ri++
			if keep {
				si++
			}
			continue
		}
		idx[i] = s[si]
		si++
	}
	return idx
}

// reducedAxes resolves axis attributes against rank n (nil or absent: all).
func reducedAxes(op *ir.Op, axes []int64, all bool, n int) ([]bool, error) {
	reduced := make([]bool, n)
	for i := range reduced {
		reduced[i] = all
	}
	for _, a := range axes {
		i, err := normAxisEval(op, a, n)
		if err != nil {
			return nil, err
		}
		reduced[i] = true
	}
	return reduced, nil
}

// ravelIndex is the row-major flat position of index idx in shape.
func ravelIndex(idx, shape []ir.PrimExpr) ir.PrimExpr {
	var flat ir.PrimExpr = ir.I64(0)
	for i, x := range idx {
		flat = ir.Add(ir.Mul(flat, shape[i]), x)
	}
	return ir.Simplify(flat)
}

// unravelIndex is the index of row-major flat position flat in shape
// (topi's UnravelIndex).
func unravelIndex(flat ir.PrimExpr, shape []ir.PrimExpr) []ir.PrimExpr {
	idx := make([]ir.PrimExpr, len(shape))
	var stride ir.PrimExpr = ir.I64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		idx[i] = ir.Simplify(ir.FloorMod(ir.FloorDiv(flat, stride), shape[i]))
		stride = ir.Mul(stride, shape[i])
	}
	return idx
}

// Flatten reshapes a into a fresh one-dimensional intermediate buffer
// (a T_reshape block, as topi.reshape(data, (prod(shape),)) prints in the
// axis=None forms TVM's legalizations build) and returns it.
func (k *Kernel) Flatten(a *ir.Buffer) *ir.Buffer {
	flat := k.Alloc("T_reshape", a.DType, []ir.PrimExpr{ir.Simplify(shapeProduct(a.Shape))})
	k.Compute(flat.Name, flat, "ax", func(v []ir.PrimExpr) ir.PrimExpr {
		return Load(a, unravelIndex(v[0], a.Shape))
	})
	return flat
}
