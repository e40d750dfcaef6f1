package kernel_test

import (
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// refInterp is the obviously-correct evaluation the compiled kernels are
// tested against: a direct tree walk over the TIR with values in maps,
// bounds checked on every dimension, written from TIR's semantics without
// sharing code with the compiler.
type refInterp struct {
	vars map[*ir.PrimVar]refVal
	bufs map[*ir.Buffer]*refBuf
	ret  refVal
}

type refVal struct {
	i int64
	f float64
}

type refBuf struct {
	dt    ir.DataType
	shape []int64
	f     []float64 // float buffers (values already rounded to dt)
	i     []int64   // integer and bool buffers
}

type refError struct{ msg string }

func refFail(format string, args ...any) { panic(refError{fmt.Sprintf(format, args...)}) }

// runRef runs f on args; buffers are read from the argument tensors and the
// results written back into them.
func runRef(f *ir.PrimFunc, args []abi.Arg) (ret refVal, err error) {
	r := &refInterp{vars: map[*ir.PrimVar]refVal{}, bufs: map[*ir.Buffer]*refBuf{}}
	defer func() {
		if x := recover(); x != nil {
			e, ok := x.(refError)
			if !ok {
				panic(x)
			}
			err = fmt.Errorf("%s", e.msg)
		}
	}()
	if len(args) != len(f.Params) {
		return refVal{}, fmt.Errorf("want %d args", len(f.Params))
	}
	for i, p := range f.Params {
		b := f.BufferMap[p]
		if b == nil {
			if isF(p.Type) {
				r.vars[p] = refVal{f: roundTo(p.Type, args[i].F)}
			} else {
				r.vars[p] = refVal{i: wrapTo(p.Type, args[i].I)}
			}
			continue
		}
		t := args[i].T
		rb := &refBuf{dt: b.DType, shape: append([]int64(nil), t.Shape...)}
		n := int(t.NumElements())
		if isF(b.DType) {
			rb.f = make([]float64, n)
			for k := range n {
				rb.f[k] = t.Float64At(k)
			}
		} else {
			rb.i = make([]int64, n)
			for k := range n {
				rb.i[k] = intAt(t, k)
			}
		}
		r.bufs[b] = rb
		for d, e := range b.Shape {
			if v, ok := e.(*ir.PrimVar); ok {
				if _, bound := r.vars[v]; !bound {
					r.vars[v] = refVal{i: t.Shape[d]}
				}
			}
		}
	}
	for i, p := range f.Params {
		if b := f.BufferMap[p]; b != nil {
			for d, e := range b.Shape {
				if want := r.eval(e).i; want != args[i].T.Shape[d] {
					refFail("shape mismatch")
				}
			}
		}
	}
	r.exec(f.Body)
	for i, p := range f.Params {
		b := f.BufferMap[p]
		if b == nil {
			continue
		}
		rb, t := r.bufs[b], args[i].T
		for k := range int(t.NumElements()) {
			if isF(b.DType) {
				t.SetFloat64(k, rb.f[k])
			} else {
				setInt(t, k, rb.i[k])
			}
		}
	}
	return r.ret, nil
}

func isF(dt ir.DataType) bool { return dt.IsFloat() }

func intAt(t *tensor.Tensor, k int) int64 {
	switch t.DType {
	case tensor.Int64:
		return tensor.Data[int64](t)[k]
	case tensor.Uint64:
		return int64(tensor.Data[uint64](t)[k])
	}
	return int64(t.Float64At(k))
}

func setInt(t *tensor.Tensor, k int, v int64) {
	switch t.DType {
	case tensor.Int64:
		tensor.Data[int64](t)[k] = v
	case tensor.Uint64:
		tensor.Data[uint64](t)[k] = uint64(v)
	default:
		t.SetFloat64(k, float64(v))
	}
}

// wrapTo brings v into dt's range the way fixed-width arithmetic does.
func wrapTo(dt ir.DataType, v int64) int64 {
	if dt.IsBool() {
		if v != 0 {
			return 1
		}
		return 0
	}
	if dt.Bits >= 64 {
		return v
	}
	m := int64(1) << dt.Bits
	v = ((v % m) + m) % m // in [0, 2^bits)
	if dt.IsInt() && v >= m/2 {
		v -= m
	}
	return v
}

func roundTo(dt ir.DataType, v float64) float64 {
	switch {
	case dt.Code == ir.CodeBFloat:
		return float64(tensor.BF16FromFloat64(v).Float32())
	case dt.Bits == 16:
		return float64(tensor.F16FromFloat64(v).Float32())
	case dt.Bits == 32:
		return float64(float32(v))
	}
	return v
}

func (r *refInterp) exec(s ir.Stmt) {
	switch s := s.(type) {
	case nil:
	case *ir.SeqStmt:
		for _, x := range s.Stmts {
			r.exec(x)
		}
	case *ir.For:
		lo, n := r.eval(s.Min).i, r.eval(s.Extent).i
		for x := lo; x < lo+n; x++ {
			r.vars[s.Var] = refVal{i: x}
			r.exec(s.Body)
		}
	case *ir.BufferStore:
		b, off := r.elem(s.Buffer, s.Indices)
		v := r.eval(s.Value)
		if isF(b.dt) {
			b.f[off] = roundTo(b.dt, v.f)
		} else {
			b.i[off] = wrapTo(b.dt, v.i)
		}
	case *ir.IfThenElse:
		if r.eval(s.Cond).i != 0 {
			r.exec(s.Then)
		} else {
			r.exec(s.Else)
		}
	case *ir.Allocate:
		d, ok := ir.AllocatedDeclBuffer(s)
		if !ok {
			panic("ref: only T.decl_buffer allocations")
		}
		r.alloc(d.Buffer)
		r.exec(d.Body)
	case *ir.While:
		for r.eval(s.Cond).i != 0 {
			r.exec(s.Body)
		}
	case *ir.LetStmt:
		v := r.eval(s.Value)
		if isF(s.Var.Type) {
			v.f = roundTo(s.Var.Type, v.f)
		} else {
			v.i = wrapTo(s.Var.Type, v.i)
		}
		r.vars[s.Var] = v
		r.exec(s.Body)
	case *ir.Evaluate:
		if c, ok := s.Value.(*ir.PrimCall); ok && c.Op == "ret" {
			r.ret = r.eval(c.Args[0])
		}
	case *ir.BlockRealize:
		blk := s.Block
		for i, iv := range blk.IterVars {
			r.vars[iv.Var] = r.eval(s.IterValues[i])
		}
		if s.Predicate != nil && r.eval(s.Predicate).i == 0 {
			return
		}
		for _, b := range blk.AllocBuffers {
			r.alloc(b)
		}
		if blk.Init != nil {
			first := true
			for _, iv := range blk.IterVars {
				if iv.Kind == ir.IterReduce && r.vars[iv.Var].i != r.eval(iv.Dom.Min).i {
					first = false
				}
			}
			if first {
				r.exec(blk.Init)
			}
		}
		r.exec(blk.Body)
	default:
		refFail("ref: unsupported statement %T", s)
	}
}

func (r *refInterp) elem(b *ir.Buffer, idx []ir.PrimExpr) (*refBuf, int64) {
	rb := r.bufs[b]
	if rb == nil {
		refFail("ref: unknown buffer %s", b.Name)
	}
	off := int64(0)
	for d, e := range idx {
		i := r.eval(e).i
		if i < 0 || i >= rb.shape[d] {
			refFail("index %d out of bounds for dimension %d of %s", i, d, b.Name)
		}
		off = off*rb.shape[d] + i
	}
	return rb, off
}

func bv(b bool) refVal {
	if b {
		return refVal{i: 1}
	}
	return refVal{}
}

func (r *refInterp) eval(e ir.PrimExpr) refVal {
	switch e := e.(type) {
	case *ir.IntImm:
		return refVal{i: wrapTo(e.Type, e.Value)}
	case *ir.FloatImm:
		return refVal{f: roundTo(e.Type, e.Value)}
	case *ir.PrimVar:
		v, ok := r.vars[e]
		if !ok {
			refFail("ref: unbound %s", e.Name)
		}
		return v
	case *ir.BufferLoad:
		b, off := r.elem(e.Buffer, e.Indices)
		if isF(b.dt) {
			return refVal{f: b.f[off]}
		}
		return refVal{i: b.i[off]}
	case *ir.Not:
		return bv(r.eval(e.A).i == 0)
	case *ir.Select:
		c, t, f := r.eval(e.Cond), r.eval(e.True), r.eval(e.False)
		if c.i != 0 {
			return t
		}
		return f
	case *ir.Cast:
		v := r.eval(e.Value)
		from := e.Value.DType()
		switch {
		case isF(e.Type) && isF(from):
			return refVal{f: roundTo(e.Type, v.f)}
		case isF(e.Type):
			x := float64(v.i)
			if from.IsUInt() && from.Bits == 64 {
				x = float64(uint64(v.i))
			}
			return refVal{f: roundTo(e.Type, x)}
		case e.Type.IsBool() && isF(from):
			return bv(v.f != 0)
		case isF(from):
			if e.Type.IsUInt() && e.Type.Bits == 64 {
				return refVal{i: int64(uint64(v.f))}
			}
			return refVal{i: wrapTo(e.Type, int64(v.f))}
		}
		return refVal{i: wrapTo(e.Type, v.i)}
	case *ir.Binary:
		return r.binary(e)
	case *ir.PrimCall:
		return r.call(e)
	}
	refFail("ref: unsupported expression %T", e)
	return refVal{}
}

func (r *refInterp) binary(e *ir.Binary) refVal {
	a, b := r.eval(e.A), r.eval(e.B)
	at := e.A.DType()
	if e.Op == ir.OpAnd {
		return bv(a.i != 0 && b.i != 0)
	}
	if e.Op == ir.OpOr {
		return bv(a.i != 0 || b.i != 0)
	}
	if isF(at) {
		x, y := a.f, b.f
		if e.Op.IsCompare() {
			return bv(map[ir.BinaryOp]bool{ir.OpEQ: x == y, ir.OpNE: x != y, ir.OpLT: x < y, ir.OpLE: x <= y, ir.OpGT: x > y, ir.OpGE: x >= y}[e.Op])
		}
		var v float64
		switch e.Op {
		case ir.OpAdd:
			v = x + y
		case ir.OpSub:
			v = x - y
		case ir.OpMul:
			v = x * y
		case ir.OpDiv:
			v = x / y
		case ir.OpMod:
			v = math.Mod(x, y)
		case ir.OpFloorDiv:
			v = math.Floor(x / y)
		case ir.OpFloorMod:
			v = x - math.Floor(x/y)*y
		case ir.OpMin:
			v = math.Min(x, y)
			if math.IsNaN(x) || math.IsNaN(y) {
				v = math.NaN()
			}
		case ir.OpMax:
			v = math.Max(x, y)
			if math.IsNaN(x) || math.IsNaN(y) {
				v = math.NaN()
			}
		}
		return refVal{f: roundTo(e.DType(), v)}
	}
	x, y := a.i, b.i
	unsigned64 := at.IsUInt() && at.Bits == 64
	if e.Op.IsCompare() {
		if unsigned64 {
			ux, uy := uint64(x), uint64(y)
			return bv(map[ir.BinaryOp]bool{ir.OpEQ: ux == uy, ir.OpNE: ux != uy, ir.OpLT: ux < uy, ir.OpLE: ux <= uy, ir.OpGT: ux > uy, ir.OpGE: ux >= uy}[e.Op])
		}
		return bv(map[ir.BinaryOp]bool{ir.OpEQ: x == y, ir.OpNE: x != y, ir.OpLT: x < y, ir.OpLE: x <= y, ir.OpGT: x > y, ir.OpGE: x >= y}[e.Op])
	}
	if (e.Op == ir.OpDiv || e.Op == ir.OpMod || e.Op == ir.OpFloorDiv || e.Op == ir.OpFloorMod) && y == 0 {
		refFail("integer division by zero")
	}
	var v int64
	switch e.Op {
	case ir.OpAdd:
		v = x + y
	case ir.OpSub:
		v = x - y
	case ir.OpMul:
		v = x * y
	case ir.OpDiv, ir.OpMod, ir.OpFloorDiv, ir.OpFloorMod:
		if unsigned64 {
			ux, uy := uint64(x), uint64(y)
			if e.Op == ir.OpDiv || e.Op == ir.OpFloorDiv {
				v = int64(ux / uy)
			} else {
				v = int64(ux % uy)
			}
			break
		}
		// floormod from its definition: the remainder with the divisor's sign.
		fm := ((x % y) + y) % y
		switch e.Op {
		case ir.OpDiv:
			v = x / y
		case ir.OpMod:
			v = x - (x/y)*y
		case ir.OpFloorDiv:
			v = (x - fm) / y
		case ir.OpFloorMod:
			v = fm
		}
	case ir.OpMin, ir.OpMax:
		less := x < y
		if unsigned64 {
			less = uint64(x) < uint64(y)
		}
		if (e.Op == ir.OpMin) == less {
			v = x
		} else {
			v = y
		}
	}
	return refVal{i: wrapTo(e.DType(), v)}
}

// alloc gives a buffer fresh zeroed storage.
func (r *refInterp) alloc(b *ir.Buffer) {
	rb := &refBuf{dt: b.DType}
	n := int64(1)
	for _, d := range b.Shape {
		e := r.eval(d).i
		rb.shape = append(rb.shape, e)
		n *= e
	}
	if isF(b.DType) {
		rb.f = make([]float64, n)
	} else {
		rb.i = make([]int64, n)
	}
	r.bufs[b] = rb
}

func (r *refInterp) call(e *ir.PrimCall) refVal {
	switch e.Op {
	case "if_then_else":
		if r.eval(e.Args[0]).i != 0 {
			return r.eval(e.Args[1])
		}
		return r.eval(e.Args[2])
	case "likely":
		return r.eval(e.Args[0])
	case "reinterpret":
		// The bits of a 32- or 64-bit float as an integer, or back.
		from, x := e.Args[0].DType(), r.eval(e.Args[0])
		switch {
		case isF(from) && from.Bits == 32:
			return refVal{i: wrapTo(e.Type, int64(math.Float32bits(float32(x.f))))}
		case isF(from):
			return refVal{i: int64(math.Float64bits(x.f))}
		case isF(e.Type) && e.Type.Bits == 32:
			return refVal{f: float64(math.Float32frombits(uint32(x.i)))}
		case isF(e.Type):
			return refVal{f: math.Float64frombits(uint64(x.i))}
		}
		return refVal{i: wrapTo(e.Type, x.i)}
	case "isnan", "isinf", "isfinite":
		if !isF(e.Args[0].DType()) {
			return bv(e.Op == "isfinite")
		}
		x := r.eval(e.Args[0]).f
		switch e.Op {
		case "isnan":
			return bv(x != x)
		case "isinf":
			return bv(math.IsInf(x, 0))
		}
		return bv(x == x && !math.IsInf(x, 0))
	}
	if !isF(e.Type) {
		a := r.eval(e.Args[0]).i
		var v int64
		switch e.Op {
		case "abs":
			v = a
			if a < 0 && !e.Type.IsUInt() {
				v = -a
			}
		case "bitwise_and":
			v = a & r.eval(e.Args[1]).i
		case "bitwise_or":
			v = a | r.eval(e.Args[1]).i
		case "bitwise_xor":
			v = a ^ r.eval(e.Args[1]).i
		case "bitwise_not":
			v = ^a
		case "shift_left":
			v = a << uint64(r.eval(e.Args[1]).i)
		case "shift_right":
			v = a >> uint64(r.eval(e.Args[1]).i)
		default:
			refFail("ref: unsupported intrinsic %s", e.Op)
		}
		return refVal{i: wrapTo(e.Type, v)}
	}
	x := r.eval(e.Args[0]).f
	var v float64
	switch e.Op {
	case "exp":
		v = math.Exp(x)
	case "log":
		v = math.Log(x)
	case "sqrt":
		v = math.Sqrt(x)
	case "rsqrt":
		v = 1 / math.Sqrt(x)
	case "tanh":
		v = math.Tanh(x)
	case "sigmoid":
		v = 1 / (1 + math.Exp(-x))
	case "erf":
		v = math.Erf(x)
	case "fabs", "abs":
		v = math.Abs(x)
	case "floor":
		v = math.Floor(x)
	case "ceil":
		v = math.Ceil(x)
	case "round", "nearbyint":
		v = math.RoundToEven(x)
	case "trunc":
		v = math.Trunc(x)
	case "sin":
		v = math.Sin(x)
	case "cos":
		v = math.Cos(x)
	case "exp2":
		v = math.Exp2(x)
	case "log2":
		v = math.Log2(x)
	case "log1p":
		v = math.Log1p(x)
	case "pow":
		v = math.Pow(x, r.eval(e.Args[1]).f)
	case "atan2":
		v = math.Atan2(x, r.eval(e.Args[1]).f)
	default:
		refFail("ref: unsupported intrinsic %s", e.Op)
	}
	return refVal{f: roundTo(e.Type, v)}
}
