package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
)

// A direct interpreter of TIR PrimFuncs: statements are walked as written,
// variables live in a map, every buffer access is bounds-checked, and each
// arithmetic result is rounded or wrapped to its dtype, so a float32 kernel
// computes in float32 as compiled code would. It is the oracle for the fast
// kernels of vm/kernel, not a replacement for them.

// scalar is a TIR value: integers and bools in i, floats in f.
type scalar struct {
	i int64
	f float64
}

// tirFrame is one PrimFunc activation.
type tirFrame struct {
	ctx  context.Context // nil: never cancelled
	name string
	vars map[*ir.PrimVar]scalar
	bufs map[*ir.Buffer]*tensor.Tensor
	// ret is the value of the T.ret that ended the call (returned is set).
	ret      scalar
	returned bool
}

// errReturned unwinds the statement walk after a T.ret.
var errReturned = errors.New("T.ret")

// TIRArg is an argument of a PrimFunc call: a tensor for a buffer
// parameter, a scalar for a scalar one.
type TIRArg struct {
	T *tensor.Tensor
	P op.Prim
}

// RunPrimFunc calls f on args (inputs and outputs in parameter order),
// binding the symbolic variables of the buffers' shapes from the tensors.
func RunPrimFunc(f *ir.PrimFunc, name string, args []TIRArg) error {
	_, err := runPrimFunc(nil, f, name, args)
	return err
}

// runPrimFunc runs f and returns the value of its T.ret, converted to f.Ret
// (the zero Prim when f returns nothing).
func runPrimFunc(ctx context.Context, f *ir.PrimFunc, name string, args []TIRArg) (op.Prim, error) {
	fr := &tirFrame{ctx: ctx, name: name, vars: map[*ir.PrimVar]scalar{}, bufs: map[*ir.Buffer]*tensor.Tensor{}}
	if err := fr.run(f, args); err != nil {
		return op.Prim{}, err
	}
	if f.Ret.IsVoid() {
		return op.Prim{}, nil
	}
	if !fr.returned {
		return op.Prim{}, fmt.Errorf("PrimFunc %s returns %s but ended without T.ret", name, f.Ret)
	}
	if f.Ret.IsFloat() {
		return op.Prim{DType: f.Ret, F: fr.ret.f}, nil
	}
	return op.Prim{DType: f.Ret, I: fr.ret.i}, nil
}

func (fr *tirFrame) run(f *ir.PrimFunc, args []TIRArg) error {
	name := fr.name
	if len(args) != len(f.Params) {
		return fmt.Errorf("PrimFunc %s takes %d parameters, got %d arguments", name, len(f.Params), len(args))
	}
	type check struct {
		buf *ir.Buffer
		dim int
		got int64
	}
	var checks []check
	for i, p := range f.Params {
		buf := f.BufferMap[p]
		if buf == nil {
			if args[i].T != nil {
				return fmt.Errorf("PrimFunc %s parameter %s is a scalar, got a tensor", name, p.Name)
			}
			fr.vars[p] = primScalar(args[i].P, p.Type)
			continue
		}
		t := args[i].T
		if t == nil {
			return fmt.Errorf("PrimFunc %s parameter %s is buffer %s, got a scalar", name, p.Name, buf.Name)
		}
		if dt := op.IRDType(t.DType); dt != buf.DType {
			return fmt.Errorf("PrimFunc %s buffer %s has dtype %s, got a %s tensor", name, buf.Name, buf.DType, dt)
		}
		if len(t.Shape) != len(buf.Shape) {
			return fmt.Errorf("PrimFunc %s buffer %s has rank %d, got a tensor of rank %d", name, buf.Name, len(buf.Shape), len(t.Shape))
		}
		fr.bufs[buf] = t
		for d, e := range buf.Shape {
			if v, ok := e.(*ir.PrimVar); ok {
				if _, bound := fr.vars[v]; !bound {
					fr.vars[v] = scalar{i: t.Shape[d]}
					continue
				}
			}
			checks = append(checks, check{buf, d, t.Shape[d]})
		}
	}
	for _, c := range checks {
		want, err := fr.expr(c.buf.Shape[c.dim])
		if err != nil {
			return err
		}
		if want.i != c.got {
			return fmt.Errorf("PrimFunc %s buffer %s dimension %d is %d, got %d", name, c.buf.Name, c.dim, want.i, c.got)
		}
	}
	if f.Body == nil {
		return nil
	}
	if err := fr.stmt(f.Body); err != errReturned {
		return err
	}
	return nil
}

func primScalar(p op.Prim, dt ir.DataType) scalar {
	if dt.IsFloat() {
		return scalar{f: p.Float()}
	}
	if p.DType.IsFloat() {
		return scalar{i: int64(p.F)}
	}
	return scalar{i: p.I}
}

func (fr *tirFrame) errorf(format string, args ...any) error {
	return fmt.Errorf("PrimFunc %s: %s", fr.name, fmt.Sprintf(format, args...))
}

func (fr *tirFrame) stmt(s ir.Stmt) error {
	switch s := s.(type) {
	case *ir.SeqStmt:
		for _, x := range s.Stmts {
			if err := fr.stmt(x); err != nil {
				return err
			}
		}
		return nil
	case *ir.For:
		lo, err := fr.expr(s.Min)
		if err != nil {
			return err
		}
		n, err := fr.expr(s.Extent)
		if err != nil {
			return err
		}
		for i := lo.i; i < lo.i+n.i; i++ {
			if fr.ctx != nil && (i-lo.i)&1023 == 0 && fr.ctx.Err() != nil {
				return fr.errorf("%v", fr.ctx.Err())
			}
			fr.vars[s.Var] = scalar{i: i}
			if err := fr.stmt(s.Body); err != nil {
				return err
			}
		}
		delete(fr.vars, s.Var)
		return nil
	case *ir.BufferStore:
		t, k, err := fr.element(s.Buffer, s.Indices)
		if err != nil {
			return err
		}
		v, err := fr.expr(s.Value)
		if err != nil {
			return err
		}
		store(t, k, s.Value.DType(), v)
		return nil
	case *ir.IfThenElse:
		c, err := fr.expr(s.Cond)
		if err != nil {
			return err
		}
		if c.i != 0 {
			return fr.stmt(s.Then)
		}
		if s.Else != nil {
			return fr.stmt(s.Else)
		}
		return nil
	case *ir.While:
		for n := 0; ; n++ {
			if fr.ctx != nil && n&1023 == 0 && fr.ctx.Err() != nil {
				return fr.errorf("%v", fr.ctx.Err())
			}
			c, err := fr.expr(s.Cond)
			if err != nil {
				return err
			}
			if c.i == 0 {
				return nil
			}
			if err := fr.stmt(s.Body); err != nil {
				return err
			}
		}
	case *ir.LetStmt:
		v, err := fr.expr(s.Value)
		if err != nil {
			return err
		}
		fr.vars[s.Var] = v
		return fr.stmt(s.Body)
	case *ir.Evaluate:
		if call, ok := s.Value.(*ir.PrimCall); ok && call.Op == "ret" && len(call.Args) == 1 {
			v, err := fr.expr(call.Args[0])
			if err != nil {
				return err
			}
			fr.ret, fr.returned = v, true
			return errReturned
		}
		_, err := fr.expr(s.Value)
		return err
	case *ir.AttrStmt:
		return fr.errorf("lowered TIR (%s) is not supported by the evaluator", attrStmtForm(s))
	case *ir.BlockRealize:
		return fr.block(s)
	case *ir.Block:
		return fr.blockBody(s, false)
	case nil:
		return nil
	}
	return fr.errorf("unsupported statement %T", s)
}

// block binds the iteration variables, checks the predicate, and runs the
// init statement on the first iteration of every reduction variable.
func (fr *tirFrame) block(r *ir.BlockRealize) error {
	b := r.Block
	if len(b.MatchBuffers) > 0 {
		return fr.errorf("T.match_buffer in block %s is not supported by the evaluator", b.Name)
	}
	if len(r.IterValues) != len(b.IterVars) {
		return fr.errorf("block %s binds %d of %d iteration variables", b.Name, len(r.IterValues), len(b.IterVars))
	}
	vals := make([]scalar, len(r.IterValues))
	for i, e := range r.IterValues {
		v, err := fr.expr(e)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	if r.Predicate != nil {
		p, err := fr.expr(r.Predicate)
		if err != nil {
			return err
		}
		if p.i == 0 {
			return nil
		}
	}
	first := true
	for i, iv := range b.IterVars {
		fr.vars[iv.Var] = vals[i]
		lo, err := fr.expr(iv.Dom.Min)
		if err != nil {
			return err
		}
		n, err := fr.expr(iv.Dom.Extent)
		if err != nil {
			return err
		}
		if vals[i].i < lo.i || vals[i].i >= lo.i+n.i {
			return fr.errorf("block %s: %s = %d is outside its domain [%d, %d)", b.Name, iv.Var.Name, vals[i].i, lo.i, lo.i+n.i)
		}
		if iv.Kind == ir.IterReduce && vals[i].i != lo.i {
			first = false
		}
	}
	return fr.blockBody(b, first)
}

func (fr *tirFrame) blockBody(b *ir.Block, first bool) error {
	for _, buf := range b.AllocBuffers {
		shape := make([]int64, len(buf.Shape))
		for d, e := range buf.Shape {
			v, err := fr.expr(e)
			if err != nil {
				return err
			}
			shape[d] = v.i
		}
		dt, err := op.TensorDType(buf.DType)
		if err != nil {
			return fr.errorf("buffer %s: %v", buf.Name, err)
		}
		if err := op.CheckSize(shape); err != nil {
			return fr.errorf("buffer %s: %v", buf.Name, err)
		}
		t, err := tensor.NewChecked(dt, shape)
		if err != nil {
			return fr.errorf("buffer %s: %v", buf.Name, err)
		}
		fr.bufs[buf] = t
	}
	if b.Init != nil && first {
		if err := fr.stmt(b.Init); err != nil {
			return err
		}
	}
	return fr.stmt(b.Body)
}

// element resolves a buffer access to its tensor and flat index.
func (fr *tirFrame) element(buf *ir.Buffer, indices []ir.PrimExpr) (*tensor.Tensor, int, error) {
	t := fr.bufs[buf]
	if t == nil {
		return nil, 0, fr.errorf("buffer %s is not bound", buf.Name)
	}
	if !buf.CompactLayout() {
		return nil, 0, fr.errorf("buffer %s has strides or an element offset, which the evaluator does not support", buf.Name)
	}
	if len(indices) != len(t.Shape) {
		return nil, 0, fr.errorf("buffer %s has rank %d but is indexed with %d indices", buf.Name, len(t.Shape), len(indices))
	}
	k := int64(0)
	for d, e := range indices {
		v, err := fr.expr(e)
		if err != nil {
			return nil, 0, err
		}
		if v.i < 0 || v.i >= t.Shape[d] {
			return nil, 0, fr.errorf("buffer %s index %d is %d, out of range [0, %d)", buf.Name, d, v.i, t.Shape[d])
		}
		k = k*t.Shape[d] + v.i
	}
	return t, int(k), nil
}

func (fr *tirFrame) expr(e ir.PrimExpr) (scalar, error) {
	switch e := e.(type) {
	case *ir.IntImm:
		return scalar{i: e.Value}, nil
	case *ir.FloatImm:
		return scalar{f: op.PrimFloat(e.Type, e.Value).F}, nil
	case *ir.PrimVar:
		v, ok := fr.vars[e]
		if !ok {
			return scalar{}, fr.errorf("variable %s is not bound", e.Name)
		}
		return v, nil
	case *ir.BufferLoad:
		t, k, err := fr.element(e.Buffer, e.Indices)
		if err != nil {
			return scalar{}, err
		}
		return load(t, k), nil
	case *ir.Binary:
		a, err := fr.expr(e.A)
		if err != nil {
			return scalar{}, err
		}
		if e.Op == ir.OpAnd && a.i == 0 || e.Op == ir.OpOr && a.i != 0 {
			return a, nil // short-circuit, as C does
		}
		b, err := fr.expr(e.B)
		if err != nil {
			return scalar{}, err
		}
		v, err := binaryOp(e.Op, e.A.DType(), e.DType(), a, b)
		if err != nil {
			return scalar{}, fr.errorf("%v", err)
		}
		return v, nil
	case *ir.Not:
		a, err := fr.expr(e.A)
		if err != nil {
			return scalar{}, err
		}
		return scalar{i: b2i(a.i == 0)}, nil
	case *ir.Select:
		c, err := fr.expr(e.Cond)
		if err != nil {
			return scalar{}, err
		}
		t, err := fr.expr(e.True)
		if err != nil {
			return scalar{}, err
		}
		f, err := fr.expr(e.False)
		if err != nil {
			return scalar{}, err
		}
		if c.i != 0 {
			return t, nil
		}
		return f, nil
	case *ir.Cast:
		v, err := fr.expr(e.Value)
		if err != nil {
			return scalar{}, err
		}
		return convert(v, e.Value.DType(), e.Type), nil
	case *ir.PrimCall:
		return fr.call(e)
	}
	return scalar{}, fr.errorf("unsupported expression %T", e)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// convert casts v from dtype from to dtype to.
func convert(v scalar, from, to ir.DataType) scalar {
	switch {
	case to.IsBool() && from.IsFloat():
		return scalar{i: b2i(v.f != 0)}
	case from.IsFloat() && to.IsFloat():
		return scalar{f: op.PrimFloat(to, v.f).F}
	case from.IsFloat():
		return scalar{i: op.PrimInt(to, int64FromFloat(v.f)).I}
	case to.IsFloat():
		x := float64(v.i)
		if from.IsUInt() {
			x = float64(uint64(v.i))
		}
		return scalar{f: op.PrimFloat(to, x).F}
	case to.IsBool():
		return scalar{i: b2i(v.i != 0)}
	}
	return scalar{i: op.PrimInt(to, v.i).I}
}

func int64FromFloat(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// binaryOp applies a TIR binary operator to operands of dtype in, giving
// dtype out.
func binaryOp(o ir.BinaryOp, in, out ir.DataType, a, b scalar) (scalar, error) {
	if o.IsCompare() {
		var c int
		switch {
		case in.IsFloat():
			if math.IsNaN(a.f) || math.IsNaN(b.f) {
				return scalar{i: b2i(o == ir.OpNE)}, nil
			}
			c = cmp(a.f < b.f, a.f > b.f)
		case in.IsUInt():
			c = cmp(uint64(a.i) < uint64(b.i), uint64(a.i) > uint64(b.i))
		default:
			c = cmp(a.i < b.i, a.i > b.i)
		}
		r := map[ir.BinaryOp]bool{ir.OpEQ: c == 0, ir.OpNE: c != 0, ir.OpLT: c < 0, ir.OpLE: c <= 0, ir.OpGT: c > 0, ir.OpGE: c >= 0}[o]
		return scalar{i: b2i(r)}, nil
	}
	if o == ir.OpAnd || o == ir.OpOr {
		if o == ir.OpAnd {
			return scalar{i: b2i(a.i != 0 && b.i != 0)}, nil
		}
		return scalar{i: b2i(a.i != 0 || b.i != 0)}, nil
	}
	if out.IsFloat() {
		x, y := a.f, b.f
		var r float64
		switch o {
		case ir.OpAdd:
			r = x + y
		case ir.OpSub:
			r = x - y
		case ir.OpMul:
			r = x * y
		case ir.OpDiv:
			r = x / y
		case ir.OpMod:
			r = math.Mod(x, y)
		case ir.OpFloorDiv:
			r = math.Floor(x / y)
		case ir.OpFloorMod:
			r = x - math.Floor(x/y)*y
		case ir.OpMin:
			r = math.Min(x, y)
		case ir.OpMax:
			r = math.Max(x, y)
		default:
			return scalar{}, fmt.Errorf("operator %s on %s", o, out)
		}
		return scalar{f: op.PrimFloat(out, r).F}, nil
	}
	x, y := a.i, b.i
	var r int64
	switch o {
	case ir.OpAdd:
		r = x + y
	case ir.OpSub:
		r = x - y
	case ir.OpMul:
		r = x * y
	case ir.OpDiv, ir.OpMod, ir.OpFloorDiv, ir.OpFloorMod:
		if y == 0 {
			return scalar{}, fmt.Errorf("integer division by zero")
		}
		q, m := x/y, x%y
		if y == -1 {
			q, m = -x, 0
		}
		switch o {
		case ir.OpDiv:
			r = q
		case ir.OpMod:
			r = m
		case ir.OpFloorDiv:
			if m != 0 && (m < 0) != (y < 0) {
				q--
			}
			r = q
		default:
			if m != 0 && (m < 0) != (y < 0) {
				m += y
			}
			r = m
		}
	case ir.OpMin:
		r = min(x, y)
		if in.IsUInt() && uint64(y) < uint64(x) {
			r = y
		}
	case ir.OpMax:
		r = max(x, y)
		if in.IsUInt() && uint64(y) > uint64(x) {
			r = y
		}
	default:
		return scalar{}, fmt.Errorf("operator %s on %s", o, out)
	}
	return scalar{i: op.PrimInt(out, r).I}, nil
}

func cmp(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

var floatIntrinsics = map[string]func(float64) float64{
	"exp": math.Exp, "exp2": math.Exp2, "exp10": func(x float64) float64 { return math.Pow(10, x) },
	"log": math.Log, "log2": math.Log2, "log10": math.Log10, "log1p": math.Log1p,
	"sqrt": math.Sqrt, "rsqrt": func(x float64) float64 { return 1 / math.Sqrt(x) },
	"tanh": math.Tanh, "sigmoid": func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	"fabs": math.Abs, "floor": math.Floor, "ceil": math.Ceil, "round": math.RoundToEven,
	"nearbyint": math.RoundToEven, "trunc": math.Trunc, "sin": math.Sin, "cos": math.Cos,
	"tan": math.Tan, "asin": math.Asin, "acos": math.Acos, "atan": math.Atan, "sinh": math.Sinh,
	"cosh": math.Cosh, "asinh": math.Asinh, "acosh": math.Acosh, "atanh": math.Atanh, "erf": math.Erf,
}

var float2Intrinsics = map[string]func(a, b float64) float64{
	"pow": math.Pow, "atan2": math.Atan2, "fmod": math.Mod, "hypot": math.Hypot, "copysign": math.Copysign,
}

func (fr *tirFrame) call(e *ir.PrimCall) (scalar, error) {
	if e.Op == "if_then_else" { // evaluates only the branch taken
		c, err := fr.expr(e.Args[0])
		if err != nil {
			return scalar{}, err
		}
		if c.i != 0 {
			return fr.expr(e.Args[1])
		}
		return fr.expr(e.Args[2])
	}
	args := make([]scalar, len(e.Args))
	for i, a := range e.Args {
		v, err := fr.expr(a)
		if err != nil {
			return scalar{}, err
		}
		args[i] = v
	}
	in := ir.Void
	if len(e.Args) > 0 {
		in = e.Args[0].DType()
	}
	if f, ok := floatIntrinsics[e.Op]; ok && len(args) == 1 {
		if !in.IsFloat() {
			if e.Op == "fabs" || e.Op == "floor" || e.Op == "ceil" || e.Op == "round" || e.Op == "trunc" || e.Op == "nearbyint" {
				if e.Op == "fabs" {
					return scalar{i: op.PrimInt(e.Type, max(args[0].i, -args[0].i)).I}, nil
				}
				return args[0], nil
			}
			return scalar{}, fr.errorf("T.%s of a %s value", e.Op, in)
		}
		return scalar{f: op.PrimFloat(e.Type, f(args[0].f)).F}, nil
	}
	if f, ok := float2Intrinsics[e.Op]; ok && len(args) == 2 && in.IsFloat() {
		return scalar{f: op.PrimFloat(e.Type, f(args[0].f, args[1].f)).F}, nil
	}
	switch e.Op {
	case "abs":
		if in.IsFloat() {
			return scalar{f: math.Abs(args[0].f)}, nil
		}
		return scalar{i: op.PrimInt(e.Type, max(args[0].i, -args[0].i)).I}, nil
	case "isnan":
		return scalar{i: b2i(in.IsFloat() && math.IsNaN(args[0].f))}, nil
	case "isinf":
		return scalar{i: b2i(in.IsFloat() && math.IsInf(args[0].f, 0))}, nil
	case "isfinite":
		return scalar{i: b2i(!in.IsFloat() || !(math.IsInf(args[0].f, 0) || math.IsNaN(args[0].f)))}, nil
	case "likely":
		return args[0], nil
	case "bitwise_and":
		return scalar{i: op.PrimInt(e.Type, args[0].i&args[1].i).I}, nil
	case "bitwise_or":
		return scalar{i: op.PrimInt(e.Type, args[0].i|args[1].i).I}, nil
	case "bitwise_xor":
		return scalar{i: op.PrimInt(e.Type, args[0].i^args[1].i).I}, nil
	case "bitwise_not":
		return scalar{i: op.PrimInt(e.Type, ^args[0].i).I}, nil
	case "shift_left":
		if args[1].i < 0 || args[1].i >= 64 {
			return scalar{}, nil
		}
		return scalar{i: op.PrimInt(e.Type, args[0].i<<uint(args[1].i)).I}, nil
	case "shift_right":
		if args[1].i < 0 || args[1].i >= 64 {
			return scalar{i: b2i(args[0].i < 0) * -1}, nil
		}
		return scalar{i: op.PrimInt(e.Type, args[0].i>>uint(args[1].i)).I}, nil
	case "pow":
		return scalar{i: op.PrimInt(e.Type, int64(math.Pow(float64(args[0].i), float64(args[1].i)))).I}, nil
	}
	return scalar{}, fr.errorf("unsupported intrinsic T.%s", e.Op)
}

// load reads element k of t.
func load(t *tensor.Tensor, k int) scalar {
	switch t.DType {
	case tensor.Float32:
		return scalar{f: float64(tensor.Data[float32](t)[k])}
	case tensor.Float64:
		return scalar{f: tensor.Data[float64](t)[k]}
	case tensor.Float16, tensor.BFloat16:
		return scalar{f: t.Float64At(k)}
	case tensor.Int64:
		return scalar{i: tensor.Data[int64](t)[k]}
	case tensor.Uint64:
		return scalar{i: int64(tensor.Data[uint64](t)[k])}
	}
	return scalar{i: int64(t.Float64At(k))}
}

// store writes v (computed in dtype from) into element k of t.
func store(t *tensor.Tensor, k int, from ir.DataType, v scalar) {
	to := op.IRDType(t.DType)
	v = convert(v, from, to)
	switch t.DType {
	case tensor.Float32:
		tensor.Data[float32](t)[k] = float32(v.f)
	case tensor.Float64:
		tensor.Data[float64](t)[k] = v.f
	case tensor.Float16, tensor.BFloat16:
		t.SetFloat64(k, v.f)
	case tensor.Int64:
		tensor.Data[int64](t)[k] = v.i
	case tensor.Uint64:
		tensor.Data[uint64](t)[k] = uint64(v.i)
	default:
		t.SetFloat64(k, float64(v.i))
	}
}

// attrStmtForm names an AttrStmt as TVMScript writes it, for messages.
func attrStmtForm(s *ir.AttrStmt) string {
	if s.Thread != nil {
		return "T.launch_thread(" + strconv.Quote(s.Tag) + ", ...)"
	}
	return "T.attr(..., " + strconv.Quote(s.Key) + ", ...)"
}
