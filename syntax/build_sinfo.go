package syntax

import (
	"slices"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// Struct info expressions: R.Tensor, R.Shape, R.Prim, R.Tuple, R.Object
// (alias R.Any) and R.Callable, bare or called.

var sinfoNames = map[string]struct{}{
	"Tensor": {}, "Shape": {}, "Prim": {}, "Tuple": {}, "Object": {}, "Any": {}, "Callable": {},
}

var sinfoPaths = []string{"R.Tensor", "R.Shape", "R.Prim", "R.Tuple", "R.Object", "R.Any", "R.Callable"}

func (bd *builder) sinfo(a *ast) ir.StructInfo {
	if a.Kind == aAttr && a.Name == "struct_info" {
		// x.struct_info: an annotation may be any expression that evaluates
		// to struct info (TVM evaluates it in Python).
		return bd.relaxExpr(a.X).StructInfo()
	}
	name, args := "", (*ast)(nil)
	switch a.Kind {
	case aAttr, aName:
		name, _ = a.Dotted()
	case aCall:
		name, args = a.callee(), a
	case aConst:
		if a.Text == "None" {
			return ir.VoidInfo()
		}
	}
	switch name {
	case "R.Tensor":
		if args == nil {
			return ir.TensorInfoNDim(ir.Void, -1)
		}
		return bd.tensorInfo(args)
	case "R.Shape":
		if args == nil {
			return ir.ShapeInfoNDim(-1)
		}
		return bd.shapeInfo(args)
	case "R.Prim":
		if args == nil {
			bd.fail(a.Span, "expected R.Prim(dtype) or R.Prim(value=...), found bare R.Prim")
		}
		return bd.primInfo(args)
	case "R.Tuple":
		if args == nil {
			return ir.VoidInfo()
		}
		items := args.Items
		if len(items) == 1 && items[0].Kind == aList {
			items = items[0].Items
		}
		fields := make([]ir.StructInfo, len(items))
		for i, it := range items {
			if i < len(args.Keywords) && args.Keywords[i] != "" && len(args.Items) != 1 {
				bd.fail(it.Span, "unknown keyword %s in R.Tuple(...)", args.Keywords[i])
			}
			fields[i] = bd.sinfo(it)
		}
		return ir.NewTupleInfo(fields...)
	case "R.Object", "R.Any":
		if args != nil && len(args.Items) > 0 {
			bd.fail(a.Span, "%s takes no arguments", name)
		}
		return ir.Object()
	case "R.Callable":
		if args == nil {
			return ir.OpaqueFuncInfo(ir.Object(), false)
		}
		return bd.callableInfo(args)
	}
	if d := name; d != "" {
		bd.fail(a.Span, "unknown struct info %s%s", d, didYouMean(d, sinfoPaths, ""))
	}
	bd.fail(a.Span, "expected struct info (R.Tensor, R.Shape, R.Prim, R.Tuple, R.Object, R.Callable), found %s", a.describe())
	return nil
}

// callArgs binds a call's arguments to named parameters, positionally or by
// keyword, rejecting unknown keywords and extra arguments. The result lives
// on the caller's stack: the R.Tensor(...) annotations of a large module's
// bindings read their arguments without a map each.
func (bd *builder) callArgs(a *ast, names ...string) namedArgs {
	if len(names) > len(namedArgs{}.vals) {
		panic("syntax: callArgs: more parameter names than namedArgs holds") // internal invariant
	}
	out := namedArgs{names: names}
	for i, it := range a.Items {
		kw := a.Keywords[i]
		j := i
		if kw == "" {
			if i >= len(names) {
				bd.fail(it.Span, "%s takes at most %s, found %d", a.callee(), plural(len(names), "argument"), len(a.Items))
			}
			kw = names[i]
		} else if j = slices.Index(names, kw); j < 0 {
			bd.fail(it.Span, "unknown keyword %s in %s(...)%s", kw, a.callee(), didYouMean(kw, names, ""))
		}
		if out.vals[j] != nil {
			bd.fail(it.Span, "argument %s of %s given twice", kw, a.callee())
		}
		out.vals[j] = it
	}
	return out
}

// namedArgs is a call's arguments bound to parameter names by callArgs.
type namedArgs struct {
	names []string
	vals  [4]*ast // vals[i] is the argument of names[i], nil when absent
}

// get returns the argument given for the parameter name, or nil.
func (na namedArgs) get(name string) *ast {
	if i := slices.Index(na.names, name); i >= 0 {
		return na.vals[i]
	}
	return nil
}

func isNone(a *ast) bool { return a == nil || (a.Kind == aConst && a.Text == "None") }

func (bd *builder) tensorInfo(a *ast) ir.StructInfo {
	args := bd.callArgs(a, "shape", "dtype", "vdevice", "ndim")
	shape, dtypeArg := args.get("shape"), args.get("dtype")
	// R.Tensor("float32") / R.Tensor("float32", ndim=2): a lone string is the dtype.
	if shape != nil && shape.Kind == aStr && dtypeArg == nil {
		shape, dtypeArg = nil, shape
	}
	vdev := bd.vdeviceRef(args.get("vdevice"))
	dt := ir.Void
	if !isNone(dtypeArg) {
		dt = bd.dtypeLiteral(dtypeArg)
	}
	ndim := -1
	if n := args.get("ndim"); n != nil {
		ndim = bd.intLiteral(n)
		if ndim < -1 {
			bd.fail(n.Span, "expected ndim >= -1, found %d", ndim)
		}
	}
	t := bd.tensorShapeInfo(shape, dt, ndim, args.get("ndim"))
	t.VDevice = vdev
	return t
}

// tensorShapeInfo is the TensorInfo of a shape argument (nil, a shape
// variable or a tuple of dimensions), dtype and ndim.
func (bd *builder) tensorShapeInfo(shape *ast, dt ir.DataType, ndim int, ndimArg *ast) *ir.TensorInfo {
	if isNone(shape) {
		return ir.TensorInfoNDim(dt, ndim)
	}
	if shape.Kind == aName {
		if s := bd.lookup(shape.Name); s != nil && s.relax != nil {
			if _, ok := s.relax.StructInfo().(*ir.ShapeInfo); ok {
				si := s.relax.StructInfo().(*ir.ShapeInfo)
				return &ir.TensorInfo{Shape: s.relax, DType: dt, NDim: si.NDim}
			}
			bd.fail(shape.Span, "expected a shape variable as the tensor shape, %s is not a shape", shape.Name)
		}
	}
	dims := bd.dims(shape)
	if ndim >= 0 && ndim != len(dims) {
		bd.fail(ndimArg.Span, "ndim=%d contradicts the shape's %s", ndim, plural(len(dims), "dimension"))
	}
	return ir.TensorInfoOf(dt, dims...)
}

// dims converts a tuple or list of dimensions.
func (bd *builder) dims(a *ast) []ir.PrimExpr {
	if a.Kind != aTuple && a.Kind != aList {
		bd.fail(a.Span, "expected a tuple of dimensions such as (n, 4), found %s", a.describe())
	}
	out := make([]ir.PrimExpr, len(a.Items))
	for i, it := range a.Items {
		out[i] = bd.dim(it)
		// A shape annotation describes real extents: a constant negative
		// one (written, or folded from an overflowing expression) can hold
		// of no value.
		if v, ok := ir.IntValue(ir.Simplify(out[i])); ok && v < 0 {
			bd.fail(it.Span, "dimension %d is negative (%d): a shape's extents are at least 0", i, v)
		}
	}
	return out
}

// dim converts one int64 dimension: a literal, a symbolic variable, an
// expression, or a string holding one ("n", "n * 2"). In a signature or a
// match_cast a string naming an unknown variable defines it.
func (bd *builder) dim(a *ast) ir.PrimExpr {
	if a.Kind != aStr {
		return bd.primInt64(a)
	}
	root, err := parseExprString(bd.file, a.Text)
	if err != nil {
		bd.fail(a.Span, "expected a dimension expression in the string %q: %s", a.Text, syntaxDiagnostic(bd.file, err).Msg)
	}
	inner := bd.conv.expr(root)
	shiftSpans(inner, a.Span)
	if inner.Kind == aName && bd.lookup(inner.Name) == nil {
		if !bd.sigDefines {
			bd.fail(a.Span, "undefined symbolic variable %s (declare it with %s = T.int64())", inner.Name, inner.Name)
		}
		v := ir.SymVar(inner.Name)
		v.SetSpan(a.Span)
		bd.define(inner.Name, &symbol{prim: v})
		return v
	}
	return bd.primInt64(inner)
}

// shiftSpans moves spans parsed from a string's contents (line 1) to where
// the string is in the file.
func shiftSpans(a *ast, at diag.Span) {
	if a == nil {
		return
	}
	a.Span = diag.Span{File: at.File, Line: at.Line, Col: at.Col + a.Span.Col, EndLine: at.Line, EndCol: at.Col + a.Span.EndCol}
	shiftSpans(a.X, at)
	shiftSpans(a.Y, at)
	for _, it := range a.Items {
		shiftSpans(it, at)
	}
	for _, it := range a.Values {
		shiftSpans(it, at)
	}
}

func (bd *builder) intLiteral(a *ast) int {
	neg := false
	x := a
	if x.Kind == aUnary && x.Name == "-" {
		neg, x = true, x.X
	}
	if x.Kind != aInt {
		bd.fail(a.Span, "expected an integer literal, found %s", a.describe())
	}
	v := bd.number(x, neg).(int64)
	if v > 1<<30 || v < -(1<<30) {
		bd.fail(a.Span, "integer %d out of range", v)
	}
	return int(v)
}

func (bd *builder) shapeInfo(a *ast) ir.StructInfo {
	args := bd.callArgs(a, "values", "ndim")
	if v := args.get("values"); !isNone(v) {
		dims := bd.dims(v)
		if n := args.get("ndim"); n != nil && bd.intLiteral(n) != len(dims) {
			bd.fail(n.Span, "ndim contradicts the number of values")
		}
		return ir.ShapeInfoOf(dims...)
	}
	if n := args.get("ndim"); n != nil {
		return ir.ShapeInfoNDim(bd.intLiteral(n))
	}
	return ir.ShapeInfoNDim(-1)
}

func (bd *builder) primInfo(a *ast) ir.StructInfo {
	args := bd.callArgs(a, "dtype", "value")
	if v := args.get("value"); v != nil {
		val := bd.dim(v)
		if d := args.get("dtype"); d != nil {
			if dt := bd.dtypeLiteral(d); dt != val.DType() {
				bd.fail(d.Span, "R.Prim dtype %s contradicts the value's %s", dt, val.DType())
			}
		}
		return ir.PrimInfoOf(val)
	}
	d := args.get("dtype")
	if d == nil {
		bd.fail(a.Span, "missing required argument dtype of R.Prim")
	}
	return ir.NewPrimInfo(bd.dtypeLiteral(d))
}

func (bd *builder) callableInfo(a *ast) ir.StructInfo {
	args := bd.callArgs(a, "params", "ret", "purity", "derive_func")
	if d := args.get("derive_func"); d != nil {
		bd.fail(d.Span, "derive_func is not supported")
	}
	var ret ir.StructInfo = ir.Object()
	if r := args.get("ret"); r != nil {
		ret = bd.sinfo(r)
	}
	pure := true
	if p := args.get("purity"); p != nil {
		pure = bd.boolLiteral(p)
	}
	ps := args.get("params")
	if isNone(ps) {
		return ir.OpaqueFuncInfo(ret, pure)
	}
	if ps.Kind != aTuple && ps.Kind != aList {
		bd.fail(ps.Span, "expected a tuple of parameter struct infos, found %s", ps.describe())
	}
	params := make([]ir.StructInfo, len(ps.Items))
	for i, it := range ps.Items {
		params[i] = bd.sinfo(it)
	}
	return ir.NewFuncInfo(params, ret, pure)
}
