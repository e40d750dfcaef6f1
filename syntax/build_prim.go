package syntax

import (
	"math"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// TIR expressions: symbolic shape arithmetic in Relax, and kernel
// expressions (loads, intrinsics, constructors) in PrimFuncs.
//
// Typing follows TVM's operator overloading: an untyped literal adopts the
// type of the other operand (so i + 1 over an int64 loop variable is int64,
// and x * 2 over float32 is float32); two typed integer operands of
// different widths meet at the wider; an integer meets a float as the float.
// Untyped integer literals standing alone are int32 in TIR and int64 in
// Relax shapes (builder.intType).

// primInt64 converts a in the Relax (int64) context.
func (bd *builder) primInt64(a *ast) ir.PrimExpr {
	saved := bd.intType
	bd.intType = ir.Int64
	defer func() { bd.intType = saved }()
	return bd.prim(a)
}

func isLiteral(a *ast) bool {
	if a.Kind == aUnary && (a.Name == "-" || a.Name == "+") {
		a = a.X
	}
	return a.Kind == aInt || a.Kind == aFloat
}

// prim converts an expression to a PrimExpr.
func (bd *builder) prim(a *ast) ir.PrimExpr {
	e := bd.primNode(a)
	if s, ok := e.(interface{ SetSpan(diag.Span) }); ok && !e.Span().IsValid() {
		if _, isVar := e.(*ir.PrimVar); !isVar {
			s.SetSpan(a.Span)
		}
	}
	return e
}

func (bd *builder) primNode(a *ast) ir.PrimExpr {
	switch a.Kind {
	case aInt:
		return ir.NewInt(bd.intType, bd.number(a, false).(int64))
	case aFloat:
		return ir.NewFloat(ir.Float32, bd.number(a, false).(float64))
	case aStr:
		return &ir.PrimStr{Value: a.Text}
	case aConst:
		switch a.Text {
		case "True", "False":
			return ir.NewBool(a.Text == "True")
		}
		bd.fail(a.Span, "expected a scalar expression, found None")
	case aName:
		return bd.primName(a)
	case aIndex:
		if g := bd.loopGroup(a.X); g != nil {
			return bd.primName(bd.groupItem(a, g))
		}
		if buf := bd.shapeOf(a.X); buf != nil {
			return bd.shapeItem(a, buf)
		}
		return bd.bufferLoad(a)
	case aUnary:
		return bd.primUnary(a)
	case aBinary:
		return bd.primBinary(a)
	case aCall:
		return bd.primCall(a)
	case aAttr:
		// A buffer's data handle (A.data), as lowered TIR passes it to
		// builtins such as T.tvm_access_ptr.
		if a.X.Kind == aName && a.Name == "data" {
			if s := bd.lookup(a.X.Name); s != nil && s.buf != nil {
				return s.buf.Data
			}
		}
	}
	bd.fail(a.Span, "expected a scalar expression, found %s", a.describe())
	return nil
}

func (bd *builder) primName(a *ast) ir.PrimExpr {
	s := bd.lookup(a.Name)
	switch {
	case s == nil:
		what := "symbolic variable"
		if bd.tir != nil {
			what = "variable"
		}
		bd.fail(a.Span, "undefined %s %s%s", what, a.Name, didYouMean(a.Name, bd.visibleNames(), ""))
	case s.poison:
		bd.skip()
	case s.prim != nil:
		return s.prim
	case s.rare != nil && s.rare.meta != nil:
		return s.rare.meta
	case s.buf != nil:
		bd.fail(a.Span, "expected a scalar, found buffer %s (index it: %s[...])", a.Name, a.Name)
	case s.relax != nil:
		bd.fail(a.Span, "expected a symbolic (TIR) expression, found Relax variable %s", a.Name)
	}
	bd.fail(a.Span, "expected a scalar expression, found %s", a.Name)
	return nil
}

// bufferOf resolves the buffer named by a.
func (bd *builder) bufferOf(a *ast) *ir.Buffer {
	if a.Kind != aName {
		bd.fail(a.Span, "expected a buffer, found %s", a.describe())
	}
	s := bd.lookup(a.Name)
	switch {
	case s == nil:
		bd.fail(a.Span, "undefined buffer %s%s", a.Name, didYouMean(a.Name, bd.visibleNames(), ""))
	case s.poison:
		bd.skip()
	case s.buf == nil:
		bd.fail(a.Span, "expected a buffer, found %s", a.Name)
	}
	return s.buf
}

// indices converts buffer indices (no slices); A[()] has none.
func (bd *builder) indices(a *ast, buf *ir.Buffer) []ir.PrimExpr {
	items := a.Items
	if len(items) == 1 && items[0].Kind == aTuple {
		items = items[0].Items
	}
	if len(items) != len(buf.Shape) {
		bd.fail(a.Span, "buffer %s has %s, indexed with %d", buf.Name, plural(len(buf.Shape), "dimension"), len(items))
	}
	out := make([]ir.PrimExpr, len(items))
	for i, it := range items {
		if it.Kind == aSlice {
			bd.fail(it.Span, "expected an index, found a slice (slices are only allowed in T.reads/T.writes)")
		}
		out[i] = bd.prim(it)
	}
	return out
}

func (bd *builder) dimType(buf *ir.Buffer, i int) ir.DataType {
	if i < len(buf.Shape) {
		return buf.Shape[i].DType()
	}
	return bd.intType
}

func (bd *builder) bufferLoad(a *ast) ir.PrimExpr {
	buf := bd.bufferOf(a.X)
	return &ir.BufferLoad{Buffer: buf, Indices: bd.indices(a, buf)}
}

// adapt gives an untyped literal the type t.
func (bd *builder) adapt(e ir.PrimExpr, literal bool, t ir.DataType) ir.PrimExpr {
	if !literal || e.DType() == t || t.IsVoid() || t.IsHandle() {
		return e
	}
	switch c := e.(type) {
	case *ir.IntImm:
		if t.IsFloat() {
			return ir.NewFloat(t, float64(c.Value))
		}
		if t.IsInteger() || t.IsBool() {
			return ir.NewInt(t, c.Value)
		}
	case *ir.FloatImm:
		if t.IsFloat() {
			return ir.NewFloat(t, c.Value)
		}
	}
	return e
}

func (bd *builder) primUnary(a *ast) ir.PrimExpr {
	switch a.Name {
	case "+":
		return bd.prim(a.X)
	case "-":
		if a.X.Kind == aInt {
			return ir.NewInt(bd.intType, bd.number(a.X, true).(int64))
		}
		if a.X.Kind == aFloat {
			return ir.NewFloat(ir.Float32, bd.number(a.X, true).(float64))
		}
		x := bd.prim(a.X)
		return ir.Sub(zeroOf(x.DType()), x)
	case "not":
		return &ir.Not{A: bd.prim(a.X)}
	case "~":
		x := bd.prim(a.X)
		return &ir.PrimCall{Op: "bitwise_not", Args: []ir.PrimExpr{x}, Type: x.DType()}
	}
	bd.fail(a.Span, "unknown operator %s", a.Name)
	return nil
}

func zeroOf(t ir.DataType) ir.PrimExpr {
	if t.IsFloat() {
		return ir.NewFloat(t, 0)
	}
	return ir.NewInt(t, 0)
}

var primBinaryOps = map[string]ir.BinaryOp{
	"+": ir.OpAdd, "-": ir.OpSub, "*": ir.OpMul, "/": ir.OpDiv, "//": ir.OpFloorDiv, "%": ir.OpFloorMod,
	"==": ir.OpEQ, "!=": ir.OpNE, "<": ir.OpLT, "<=": ir.OpLE, ">": ir.OpGT, ">=": ir.OpGE,
	"and": ir.OpAnd, "or": ir.OpOr,
}

var primBitOps = map[string]string{
	"&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor", "<<": "shift_left", ">>": "shift_right", "**": "pow",
}

func (bd *builder) primBinary(a *ast) ir.PrimExpr {
	if isCompare(a.Name) && a.X.Kind == aBinary && isCompare(a.X.Name) && !a.X.Paren {
		bd.fail(a.Span, "chained comparisons (a < b < c) are not supported; write (a < b) and (b < c)")
	}
	x, y := bd.operands(a.X, a.Y)
	if op, ok := primBinaryOps[a.Name]; ok {
		return ir.NewBinary(op, x, y)
	}
	if name, ok := primBitOps[a.Name]; ok {
		return &ir.PrimCall{Op: name, Args: []ir.PrimExpr{x, y}, Type: x.DType()}
	}
	bd.fail(a.Span, "unknown operator %s", a.Name)
	return nil
}

func isCompare(op string) bool {
	switch op {
	case "==", "!=", "<", "<=", ">", ">=":
		return true
	}
	return false
}

// operands converts two operands and reconciles their types.
func (bd *builder) operands(xa, ya *ast) (ir.PrimExpr, ir.PrimExpr) {
	x, y := bd.prim(xa), bd.prim(ya)
	return bd.unify(x, y, isLiteral(xa), isLiteral(ya))
}

func (bd *builder) unify(x, y ir.PrimExpr, xLit, yLit bool) (ir.PrimExpr, ir.PrimExpr) {
	tx, ty := x.DType(), y.DType()
	if tx == ty {
		return x, y
	}
	if lx, ly := max(tx.Lanes, 1), max(ty.Lanes, 1); lx != ly && (lx == 1 || ly == 1) {
		// A scalar meeting a vector is broadcast to its lanes after the
		// element types are reconciled, as TVM's BinaryOpMatchTypes
		// (src/tir/op/op.cc) does: A[T.Ramp(0, 1, 4)] * 2.0 multiplies by
		// T.Broadcast(T.float32(2.0), 4).
		ex, ey := bd.unifyScalars(x, y, xLit, yLit)
		if lx == 1 {
			return broadcast(ex, int(ly)), ey
		}
		return ex, broadcast(ey, int(lx))
	}
	return bd.unifyScalars(x, y, xLit, yLit)
}

// broadcast is T.Broadcast(e, lanes), kept as the opaque vector call the
// parser builds for it.
func broadcast(e ir.PrimExpr, lanes int) ir.PrimExpr {
	return &ir.PrimCall{Op: "Broadcast", Args: []ir.PrimExpr{e, ir.NewInt(ir.Int32, int64(lanes))}, Type: e.DType().WithLanes(lanes)}
}

// unifyScalars reconciles the element types of x and y (their lanes are
// equal, or one is a scalar about to be broadcast).
func (bd *builder) unifyScalars(x, y ir.PrimExpr, xLit, yLit bool) (ir.PrimExpr, ir.PrimExpr) {
	tx, ty := x.DType(), y.DType()
	if tx.Element() == ty.Element() {
		return x, y
	}
	if max(tx.Lanes, 1) != max(ty.Lanes, 1) {
		// Only the element types are compared below.
		ex, ey := tx.Element(), ty.Element()
		switch {
		case xLit && !yLit:
			return bd.adapt(x, true, ey), y
		case yLit && !xLit:
			return x, bd.adapt(y, true, ex)
		}
		switch {
		case ex.IsFloat() && !ey.IsFloat(), ex.IsInteger() && ey.IsInteger() && ex.Bits > ey.Bits, ex.IsFloat() && ey.IsFloat() && ex.Bits > ey.Bits:
			return x, castTo(ex.WithLanes(int(max(ty.Lanes, 1))), y)
		case ey.IsFloat() && !ex.IsFloat(), ex.IsInteger() && ey.IsInteger() && ey.Bits > ex.Bits, ex.IsFloat() && ey.IsFloat() && ey.Bits > ex.Bits:
			return castTo(ey.WithLanes(int(max(tx.Lanes, 1))), x), y
		}
		return x, y
	}
	switch {
	case xLit && !yLit:
		return bd.adapt(x, true, ty), y
	case yLit && !xLit:
		return x, bd.adapt(y, true, tx)
	}
	switch {
	case tx.IsFloat() && !ty.IsFloat():
		return x, castTo(tx, y)
	case ty.IsFloat() && !tx.IsFloat():
		return castTo(ty, x), y
	case tx.IsInteger() && ty.IsInteger() && tx.Bits != ty.Bits:
		if tx.Bits > ty.Bits {
			return x, castTo(tx, y)
		}
		return castTo(ty, x), y
	case tx.IsFloat() && ty.IsFloat() && tx.Bits != ty.Bits:
		if tx.Bits > ty.Bits {
			return x, castTo(tx, y)
		}
		return castTo(ty, x), y
	}
	return x, y
}

func castTo(t ir.DataType, e ir.PrimExpr) ir.PrimExpr {
	switch c := e.(type) {
	case *ir.IntImm:
		if t.IsInteger() {
			return ir.NewInt(t, c.Value)
		}
		if t.IsFloat() {
			return ir.NewFloat(t, float64(c.Value))
		}
	case *ir.FloatImm:
		if t.IsFloat() {
			return ir.NewFloat(t, c.Value)
		}
	}
	return &ir.Cast{Type: t, Value: e}
}

// intrinsic describes a T.* function that becomes a PrimCall.
type intrinsic struct {
	arity int    // -1: any
	ret   string // "arg0": the first argument's type; "bool"; "arg1": the second's
}

var intrinsics = map[string]intrinsic{
	"exp": {1, "arg0"}, "exp2": {1, "arg0"}, "exp10": {1, "arg0"}, "log": {1, "arg0"}, "log2": {1, "arg0"},
	"log10": {1, "arg0"}, "log1p": {1, "arg0"}, "sqrt": {1, "arg0"}, "rsqrt": {1, "arg0"}, "tanh": {1, "arg0"},
	"sigmoid": {1, "arg0"}, "fabs": {1, "arg0"}, "abs": {1, "arg0"}, "floor": {1, "arg0"}, "ceil": {1, "arg0"},
	"round": {1, "arg0"}, "trunc": {1, "arg0"}, "nearbyint": {1, "arg0"}, "sin": {1, "arg0"}, "cos": {1, "arg0"},
	"tan": {1, "arg0"}, "asin": {1, "arg0"}, "acos": {1, "arg0"}, "atan": {1, "arg0"}, "sinh": {1, "arg0"},
	"cosh": {1, "arg0"}, "asinh": {1, "arg0"}, "acosh": {1, "arg0"}, "atanh": {1, "arg0"}, "erf": {1, "arg0"},
	"pow": {2, "arg0"}, "atan2": {2, "arg0"}, "fmod": {2, "arg0"}, "hypot": {2, "arg0"}, "copysign": {2, "arg0"},
	"isnan": {1, "bool"}, "isinf": {1, "bool"}, "isfinite": {1, "bool"}, "popcount": {1, "arg0"}, "clz": {1, "arg0"},
	"if_then_else": {3, "arg1"}, "likely": {1, "arg0"}, "bitwise_and": {2, "arg0"}, "bitwise_or": {2, "arg0"},
	"bitwise_xor": {2, "arg0"}, "bitwise_not": {1, "arg0"}, "shift_left": {2, "arg0"}, "shift_right": {2, "arg0"},
	"ret": {1, "arg0"},
}

// primFuncNames lists every T.* name primCall understands, for suggestions.
func primFuncNames() []string {
	out := []string{"T.Cast", "T.Select", "T.max", "T.min", "T.floordiv", "T.floormod", "T.truncdiv",
		"T.truncmod", "T.max_value", "T.min_value", "T.infinity", "T.evaluate", "T.reinterpret"}
	for k := range intrinsics {
		out = append(out, "T."+k)
	}
	for _, d := range knownDTypes {
		out = append(out, "T."+d)
	}
	return out
}

func (bd *builder) primCall(a *ast) ir.PrimExpr {
	callee := a.callee()
	name, ok := strings.CutPrefix(callee, "T.")
	if !ok {
		name, ok = strings.CutPrefix(callee, "tirx.")
	}
	if !ok {
		if callee == "" {
			callee = describeOrName(a.X)
		}
		bd.fail(a.X.Span, "expected a T.* function in a scalar expression, found %s", callee)
	}
	a = bd.dtypeKeyword(a, name)
	for i, kw := range a.Keywords {
		if kw != "" && !(kw == "dtype" && (name == "Cast" || opaqueIntrinsics[name] == "dtype")) {
			bd.fail(a.Items[i].Span, "unknown keyword %s in %s(...)", kw, callee)
		}
	}
	args := a.Items
	arity := func(n int) {
		if len(args) != n {
			bd.fail(a.Span, "%s takes %s, found %d", callee, plural(n, "argument"), len(args))
		}
	}
	switch name {
	case "IntImm", "FloatImm":
		// The IR node constructors T.IntImm("int64", 3), T.FloatImm("float32", 1.5).
		arity(2)
		dt := bd.dtypeLiteral(args[0])
		v, neg := args[1], false
		if v.Kind == aUnary && v.Name == "-" {
			v, neg = v.X, true
		}
		switch {
		case name == "IntImm" && v.Kind == aInt && (dt.IsInteger() || dt.IsBool()):
			n, _ := bd.number(v, neg).(int64)
			return ir.NewInt(dt, n)
		case name == "FloatImm" && (v.Kind == aInt || v.Kind == aFloat) && dt.IsFloat():
			var f float64
			switch x := bd.number(v, neg).(type) {
			case int64:
				f = float64(x)
			case float64:
				f = x
			}
			return ir.NewFloat(dt, f)
		}
		bd.fail(a.Span, "expected %s(dtype, literal) with a matching dtype", callee)
	case "Cast":
		// TVM's Cast node constructor (python/tvm/kernel/expr.py) folds
		// nothing: T.Cast("float32", T.float16(1.0)) stays a cast.
		arity(2)
		return &ir.Cast{Type: bd.dtypeLiteral(args[0]), Value: bd.prim(args[1])}
	case "reinterpret":
		arity(2)
		dt := bd.dtypeLiteral(args[0])
		return &ir.PrimCall{Op: "reinterpret", Args: []ir.PrimExpr{bd.prim(args[1])}, Type: dt}
	case "Select":
		arity(3)
		c := bd.prim(args[0])
		x, y := bd.operands(args[1], args[2])
		return &ir.Select{Cond: c, True: x, False: y}
	case "max", "min", "floordiv", "floormod", "truncdiv", "truncmod":
		arity(2)
		x, y := bd.operands(args[0], args[1])
		op := map[string]ir.BinaryOp{"max": ir.OpMax, "min": ir.OpMin, "floordiv": ir.OpFloorDiv,
			"floormod": ir.OpFloorMod, "truncdiv": ir.OpDiv, "truncmod": ir.OpMod}[name]
		return ir.NewBinary(op, x, y)
	case "Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Max", "Min",
		"EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or":
		// The IR node constructors (tvm.tir.Add(a, b), ...), which the
		// parser resolves as T.Add: the node the operator spells.
		arity(2)
		x, y := bd.operands(args[0], args[1])
		if op := constructorOps[name]; !op.IsLogical() || x.DType() == ir.Bool && y.DType() == ir.Bool {
			return ir.NewBinary(op, x, y)
		}
		bd.fail(a.Span, "T.%s takes two bool operands, found %s and %s", name, x.DType(), y.DType())
	case "Not":
		arity(1)
		x := bd.prim(args[0])
		if x.DType() != ir.Bool {
			bd.fail(args[0].Span, "T.Not takes a bool operand, found %s", x.DType())
		}
		return &ir.Not{A: x}
	case "StringImm":
		arity(1)
		if args[0].Kind != aStr {
			bd.fail(args[0].Span, "T.StringImm takes a string, found %s", args[0].describe())
		}
		return bd.prim(args[0])
	case "max_value", "min_value":
		arity(1)
		dt := bd.dtypeLiteral(args[0])
		return limitValue(dt, name == "max_value")
	case "infinity":
		// tvm::infinity (src/tir/op/op.cc): +inf of a float type, which
		// TVM prints as the constant T.float32("inf").
		arity(1)
		dt := bd.dtypeLiteral(args[0])
		if !dt.IsFloat() || !dt.IsScalar() {
			bd.fail(args[0].Span, "T.infinity needs a scalar float type, found %s", dt)
		}
		return ir.NewFloat(dt, math.Inf(1))
	case "if_then_else":
		arity(3)
		c := bd.prim(args[0])
		x, y := bd.operands(args[1], args[2])
		return &ir.PrimCall{Op: "if_then_else", Args: []ir.PrimExpr{c, x, y}, Type: x.DType()}
	}
	if dt, err := ir.ParseDataType(name); err == nil && name != "" && name != "void" && !dt.IsHandle() {
		if len(args) == 0 {
			bd.fail(a.Span, "%s() declares a symbolic variable; it is only allowed as \"n = %s()\"", callee, callee)
		}
		arity(1)
		return bd.typedValue(dt, args[0])
	}
	in, ok := intrinsics[name]
	if !ok {
		if ret, opaque := opaqueIntrinsics[name]; opaque {
			return bd.opaqueIntrinsic(a, name, ret)
		}
		bd.fail(a.X.Span, "unknown TIR function %s%s", callee, didYouMean(callee, primFuncNames(), ""))
	}
	if in.arity >= 0 {
		arity(in.arity)
	}
	ops := make([]ir.PrimExpr, len(args))
	for i, x := range args {
		ops[i] = bd.prim(x)
	}
	if len(ops) == 2 {
		ops[0], ops[1] = bd.unify(ops[0], ops[1], isLiteral(args[0]), isLiteral(args[1]))
	}
	var t ir.DataType
	switch in.ret {
	case "bool":
		t = ir.Bool
	case "arg1":
		t = ops[1].DType()
	default:
		t = ops[0].DType()
	}
	return &ir.PrimCall{Op: name, Args: ops, Type: t}
}

// typedValue converts T.float32(x): a literal becomes a constant of that
// type, another expression a cast when its type differs.
func (bd *builder) typedValue(dt ir.DataType, a *ast) ir.PrimExpr {
	x := a
	neg := false
	if x.Kind == aUnary && x.Name == "-" && (x.X.Kind == aInt || x.X.Kind == aFloat) {
		neg, x = true, x.X
	}
	switch x.Kind {
	case aInt, aFloat:
		v := bd.number(x, neg)
		switch {
		case dt.IsFloat():
			switch n := v.(type) {
			case int64:
				return ir.NewFloat(dt, float64(n))
			case float64:
				return ir.NewFloat(dt, n)
			}
		case dt.IsBool():
			n, isInt := v.(int64)
			if !isInt {
				bd.fail(a.Span, "expected an integer for T.bool, found %s", x.Text)
			}
			return ir.NewBool(n != 0)
		default:
			n, isInt := v.(int64)
			if !isInt {
				bd.fail(a.Span, "expected an integer for T.%s, found %s", dt, x.Text)
			}
			return ir.NewInt(dt, n)
		}
	case aConst:
		if x.Text == "True" || x.Text == "False" {
			if dt.IsBool() {
				return ir.NewBool(x.Text == "True")
			}
			b := int64(0)
			if x.Text == "True" {
				b = 1
			}
			return castTo(dt, ir.NewInt(ir.Int32, b))
		}
	case aStr:
		if dt.IsFloat() {
			var isFloat bool
			return ir.NewFloat(dt, bd.scalarLiteral(x, &isFloat))
		}
	}
	e := bd.prim(a)
	if e.DType() == dt {
		return e
	}
	return castTo(dt, e)
}

// limitValue is T.max_value / T.min_value of a type, as a constant.
func limitValue(dt ir.DataType, maximum bool) ir.PrimExpr {
	switch {
	case dt.IsFloat():
		var v float64
		switch dt.Bits {
		case 16:
			v = 65504
		case 32:
			v = math.MaxFloat32
		default:
			v = math.MaxFloat64
		}
		if !maximum {
			v = -v
		}
		return ir.NewFloat(dt, v)
	case dt.IsUInt():
		if !maximum {
			return ir.NewInt(dt, 0)
		}
		if dt.Bits >= 64 {
			return ir.NewInt(dt, -1)
		}
		return ir.NewInt(dt, int64(1)<<dt.Bits-1)
	case dt.IsBool():
		return ir.NewBool(maximum)
	}
	bits := max(int(dt.Bits), 1)
	if maximum {
		return ir.NewInt(dt, int64(uint64(1)<<(bits-1)-1))
	}
	return ir.NewInt(dt, -int64(uint64(1)<<(bits-1)))
}

// loopGroup returns the loop variables a name bound by "for iters in
// T.grid(...)" stands for, or nil.
func (bd *builder) loopGroup(a *ast) []*ast {
	if a.Kind != aName {
		return nil
	}
	if s := bd.lookup(a.Name); s != nil && s.rare != nil {
		return s.rare.group
	}
	return nil
}

// groupItem resolves iters[k] to the k-th loop variable's name.
func (bd *builder) groupItem(a *ast, g []*ast) *ast {
	if len(a.Items) != 1 || a.Items[0].Kind != aInt {
		bd.fail(a.Span, "expected %s[k] with an integer k", a.X.Name)
	}
	k, _ := bd.number(a.Items[0], false).(int64)
	if k < 0 || k >= int64(len(g)) {
		bd.fail(a.Items[0].Span, "index %d out of range: %s holds %d loop variables", k, a.X.Name, len(g))
	}
	return g[k]
}

// constructorOps are the binary IR node constructors T.Add, T.EQ, ... by
// name (python/tvm/kernel/expr.py).
var constructorOps = map[string]ir.BinaryOp{
	"Add": ir.OpAdd, "Sub": ir.OpSub, "Mul": ir.OpMul, "Div": ir.OpDiv, "Mod": ir.OpMod,
	"FloorDiv": ir.OpFloorDiv, "FloorMod": ir.OpFloorMod, "Max": ir.OpMax, "Min": ir.OpMin,
	"EQ": ir.OpEQ, "NE": ir.OpNE, "LT": ir.OpLT, "LE": ir.OpLE, "GT": ir.OpGT, "GE": ir.OpGE,
	"And": ir.OpAnd, "Or": ir.OpOr,
}
