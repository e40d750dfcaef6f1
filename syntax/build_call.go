package syntax

import (
	"math"
	"strings"

	"github.com/phasec/phasec/ir"
)

// Calls in Relax expressions: the R.* value constructors, registered ops
// (with keyword-to-positional mapping, literal wrapping and defaults from the
// op's schema), module functions (cls.f(...)) and closures.

// relaxForms are the R.* names that are not ops.
var relaxForms = []string{
	"R.const", "R.shape", "R.prim_value", "R.str", "R.dtype", "R.tuple", "R.ExternFunc", "R.TupleGetItem", "R.ShapeExpr", "R.emit_with_sinfo",
	"R.match_cast", "R.output", "R.dataflow", "R.func_attr", "R.function",
}

func (bd *builder) relaxCall(a *ast) ir.Expr {
	callee := a.callee()
	switch callee {
	case "R.const":
		return bd.constant(a)
	case "R.shape":
		arg := bd.onlyArg(a, "values")
		return bd.shapeExpr(arg)
	case "R.prim_value":
		arg := bd.onlyArg(a, "value")
		return ir.NewPrimValue(bd.primInt64(arg))
	case "R.str":
		arg := bd.onlyArg(a, "value")
		if arg.Kind != aStr {
			bd.fail(arg.Span, "expected a string literal in R.str(...), found %s", arg.describe())
		}
		return ir.NewStringImm(arg.Text)
	case "R.dtype":
		arg := bd.onlyArg(a, "value")
		return ir.NewDataTypeImm(bd.dtypeLiteral(arg))
	case "R.tuple":
		fields := make([]ir.Expr, len(a.Items))
		for i, it := range a.Items {
			if a.Keywords[i] != "" {
				bd.fail(it.Span, "unknown keyword %s in R.tuple(...)", a.Keywords[i])
			}
			fields[i] = bd.relaxExpr(it)
		}
		return ir.NewTuple(fields...)
	case "R.ExternFunc":
		arg := bd.onlyArg(a, "global_symbol")
		if arg.Kind != aStr {
			bd.fail(arg.Span, "expected a string in R.ExternFunc(...), found %s", arg.describe())
		}
		return ir.NewExternFunc(arg.Text)
	case "R.TupleGetItem":
		// The IR node's constructor, R.TupleGetItem(tuple_value, index).
		args := bd.callArgs(a, "tuple_value", "index")
		if args.get("tuple_value") == nil || args.get("index") == nil {
			bd.fail(a.Span, "expected R.TupleGetItem(tuple_value, index)")
		}
		idx := args.get("index")
		if idx.Kind != aInt {
			bd.fail(idx.Span, "expected an integer index, found %s", idx.describe())
		}
		n, _ := bd.number(idx, false).(int64)
		g := &ir.TupleGetItem{Tuple: bd.relaxExpr(args.get("tuple_value")), Index: int(n)}
		g.SetSpan(a.Span)
		return g
	case "R.ShapeExpr":
		return bd.shapeExpr(bd.onlyArg(a, "values"))
	case "R.emit_with_sinfo":
		return bd.emitWithSInfo(a)
	case "R.to_vdevice":
		return bd.toVDevice(a)
	case "R.hint_on_device":
		return bd.hintOnDevice(a)
	case "R.match_cast":
		bd.fail(a.Span, "R.match_cast(...) must be the whole value of a binding (v = R.match_cast(x, sinfo))")
	case "R.output":
		bd.fail(a.Span, "R.output(...) is only allowed as a statement at the end of a dataflow block")
	case "R.dataflow", "R.func_attr", "R.function":
		bd.fail(a.Span, "%s(...) is not a value", callee)
	}
	switch {
	case strings.HasPrefix(callee, "R."):
		op, ok := bd.relaxOp(callee)
		if !ok && isStructInfoName(callee) {
			bd.fail(a.Span, "expected a Relax value, found the struct info %s(...)", callee)
		}
		if !ok && isTVMRelaxName(callee) {
			var declared ir.StructInfo
			if bd.declaredFor == a {
				declared = bd.declared
			}
			return bd.opaqueCall(a, callee, declared)
		}
		if !ok {
			bd.fail(a.X.Span, "unknown operator %s%s", callee, didYouMean(callee, opPaths(), ""))
		}
		return bd.opCall(op, a, callee)
	case strings.HasPrefix(callee, "T."):
		saved := bd.intType
		bd.intType = ir.Int64
		defer func() { bd.intType = saved }()
		return ir.NewPrimValue(bd.prim(a))
	}
	if a.X.Kind == aAttr && a.X.Name == "astype" && !bd.isModuleRef(a.X.X) {
		if root := rootName(a.X.X); root == nil || root.Name != "R" && root.Name != "T" {
			return bd.relaxCall(methodCall(a, "R.astype"))
		}
	}
	var fn ir.Expr
	switch {
	case a.X.Kind == aAttr && bd.isModuleRef(a.X.X):
		fn = bd.globalRef(a.X)
	case a.X.Kind == aName:
		s := bd.lookup(a.X.Name)
		if s == nil || s.relax == nil {
			if s != nil && s.poison {
				bd.skip()
			}
			if _, isFunc := bd.funcs[a.X.Name]; isFunc && s == nil {
				bd.fail(a.X.Span, "undefined function %s (call the module function as cls.%s(...))", a.X.Name, a.X.Name)
			}
			bd.fail(a.X.Span, "undefined function %s%s", a.X.Name, didYouMean(a.X.Name, bd.visibleNames(), ""))
		}
		fn = s.relax
	default:
		if a.X.Kind == aAttr {
			if root := rootName(a.X); root != nil && bd.lookup(root.Name) == nil && root.Name != "R" && root.Name != "T" {
				bd.undefined(root, "name")
			}
		}
		bd.fail(a.X.Span, "expected an operator (R.*), a module function (cls.f) or a local function to call, found %s", describeOrName(a.X))
	}
	args := make([]ir.Expr, len(a.Items))
	for i, it := range a.Items {
		if a.Keywords[i] != "" {
			bd.fail(it.Span, "unexpected keyword argument %s in a call of %s (functions take positional arguments)", a.Keywords[i], describeOrName(a.X))
		}
		args[i] = bd.relaxExpr(it)
	}
	return ir.NewCall(fn, args...)
}

func rootName(a *ast) *ast {
	for a.Kind == aAttr {
		a = a.X
	}
	if a.Kind == aName {
		return a
	}
	return nil
}

var opPathCache []string

// opPaths lists the TVMScript spelling of every registered op and value
// form, for suggestions.
func opPaths() []string {
	if opPathCache == nil || len(opPathCache) != len(ir.Ops())+len(relaxForms) {
		var out []string
		for _, op := range ir.Ops() {
			out = append(out, ir.OpPath(op))
		}
		opPathCache = append(out, relaxForms...)
	}
	return opPathCache
}

// onlyArg returns the single argument of a call (positional or by keyword).
func (bd *builder) onlyArg(a *ast, kw string) *ast {
	if len(a.Items) != 1 {
		bd.fail(a.Span, "%s takes 1 argument, found %d", a.callee(), len(a.Items))
	}
	if k := a.Keywords[0]; k != "" && k != kw {
		bd.fail(a.Items[0].Span, "unknown keyword %s in %s(...)%s", k, a.callee(), didYouMean(k, []string{kw}, ""))
	}
	return a.Items[0]
}

// shapeExpr converts [d0, d1, ...] (a list or tuple of int64 dimensions).
func (bd *builder) shapeExpr(a *ast) *ir.ShapeExpr {
	if a.Kind != aList && a.Kind != aTuple {
		bd.fail(a.Span, "expected a list of dimensions, found %s", a.describe())
	}
	dims := make([]ir.PrimExpr, len(a.Items))
	for i, it := range a.Items {
		dims[i] = bd.primInt64(it)
	}
	s := ir.NewShapeExpr(dims...)
	s.SetSpan(a.Span)
	return s
}

// dtypeLiteral parses a dtype string literal.
func (bd *builder) dtypeLiteral(a *ast) ir.DataType {
	if a.Kind != aStr {
		bd.fail(a.Span, "expected a dtype string such as \"float32\", found %s", a.describe())
	}
	dt, err := ir.ParseDataType(a.Text)
	if err != nil {
		bd.fail(a.Span, "unknown dtype %q%s", a.Text, didYouMean(a.Text, knownDTypes, ""))
	}
	return dt
}

var knownDTypes = []string{"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
	"float16", "float32", "float64", "bfloat16", "handle", "void"}

// constant converts R.const(value, dtype): a number or a nested list.
// Without a dtype, ints are int32 and floats float32 (TVM's rule).
func (bd *builder) constant(a *ast) *ir.Constant {
	var valueArg, dtypeArg *ast
	for i, it := range a.Items {
		switch kw := a.Keywords[i]; {
		case kw == "" && i == 0, kw == "value":
			valueArg = it
		case kw == "" && i == 1, kw == "dtype":
			dtypeArg = it
		default:
			if kw == "" {
				bd.fail(it.Span, "R.const takes at most 2 arguments (value, dtype), found %d", len(a.Items))
			}
			bd.fail(it.Span, "unknown keyword %s in R.const(...)%s", kw, didYouMean(kw, []string{"value", "dtype"}, ""))
		}
	}
	if valueArg == nil {
		bd.fail(a.Span, "missing required argument value of R.const")
	}
	var shape []int64
	var values []float64
	isFloat := false
	bd.constValues(valueArg, 0, &shape, &values, &isFloat)
	var dt ir.DataType
	switch {
	case dtypeArg != nil:
		dt = bd.dtypeLiteral(dtypeArg)
	case isFloat:
		dt = ir.Float32
	case valueArg.Kind == aConst:
		dt = ir.Bool
	default:
		dt = ir.Int32
	}
	if dt.IsVoid() || dt.IsHandle() {
		bd.fail(dtypeArg.Span, "expected a numeric dtype for R.const, found %q", dtypeArg.Text)
	}
	arr, err := ir.NewNDArray(dt, shape)
	if err != nil {
		bd.fail(valueArg.Span, "bad constant: %v", err)
	}
	if int64(len(values)) != arr.NumElements() {
		bd.fail(valueArg.Span, "ragged constant: %d values for shape %v", len(values), shape)
	}
	for i, v := range values {
		if dt.IsInteger() && v == math.Trunc(v) && math.Abs(v) < 1<<62 {
			arr.SetInt(i, int64(v))
		} else {
			arr.SetFloat(i, v)
		}
	}
	c := &ir.Constant{Data: arr}
	c.SetSpan(a.Span)
	return c
}

// constValues flattens a nested list literal, recording its shape from the
// first element at each depth.
func (bd *builder) constValues(a *ast, depth int, shape *[]int64, values *[]float64, isFloat *bool) {
	if depth > 32 {
		bd.fail(a.Span, "constant nested too deeply")
	}
	switch a.Kind {
	case aList, aTuple:
		if len(*shape) == depth {
			*shape = append(*shape, int64(len(a.Items)))
		} else if (*shape)[depth] != int64(len(a.Items)) {
			bd.fail(a.Span, "ragged constant: expected %d elements at depth %d, found %d", (*shape)[depth], depth, len(a.Items))
		}
		for _, it := range a.Items {
			bd.constValues(it, depth+1, shape, values, isFloat)
		}
		return
	}
	if depth != len(*shape) {
		bd.fail(a.Span, "ragged constant: expected a list at depth %d, found %s", depth, a.describe())
	}
	*values = append(*values, bd.scalarLiteral(a, isFloat))
}

// scalarLiteral reads a number, bool, or "inf"/"nan" string.
func (bd *builder) scalarLiteral(a *ast, isFloat *bool) float64 {
	neg := false
	if a.Kind == aUnary && a.Name == "-" {
		neg, a = true, a.X
	}
	var v float64
	switch a.Kind {
	case aInt:
		v = float64(bd.number(a, false).(int64))
	case aFloat:
		v, *isFloat = bd.number(a, false).(float64), true
	case aConst:
		if a.Text == "None" {
			bd.fail(a.Span, "expected a number, found None")
		}
		if a.Text == "True" {
			v = 1
		}
	case aStr:
		switch strings.ToLower(a.Text) {
		case "inf", "+inf", "infinity":
			v = math.Inf(1)
		case "-inf", "-infinity":
			v = math.Inf(-1)
		case "nan":
			v = math.NaN()
		default:
			bd.fail(a.Span, "expected a number, found string %q", a.Text)
		}
		*isFloat = true
	default:
		bd.fail(a.Span, "expected a number, found %s", a.describe())
	}
	if neg {
		v = -v
	}
	return v
}

// positionalSInfo is where TVM v0.23's signatures take the struct info
// of the result positionally (python/tvm/relax/op/base.py:
// call_tir(gvar, args, out_sinfo, tir_vars=None), call_tir_inplace(gvar,
// args, inplace_indices, out_sinfo, tir_vars=None), call_dps_packed(func,
// args, out_sinfo), invoke_closure(closure, args, sinfo_args), ...): the
// index among the positional arguments. The op schemas list out_sinfo and
// sinfo_args apart from the parameters; ops not here take them by keyword
// only (call_packed, call_pure_packed and call_builtin_with_ctx, whose
// sinfo_args follow *args or a bare *).
var positionalSInfo = map[string]int{
	"relax.call_tir":            2,
	"relax.call_tir_inplace":    3,
	"relax.call_tir_with_grad":  2,
	"relax.call_dps_packed":     2,
	"relax.call_py_func":        2,
	"relax.invoke_closure":      2,
	"relax.invoke_pure_closure": 2,
}

// relaxOp resolves an R.* callee to its operator; struct info names
// (R.Tensor, ...) resolve to none. A module calls few operators many times:
// each resolution is cached, which saves two map lookups and a string
// concatenation per call.
func (bd *builder) relaxOp(path string) (*ir.Op, bool) {
	c := &bd.ops[tailHash(path)%opSlots]
	if c.op != nil && c.path == path {
		return c.op, true
	}
	if isStructInfoName(path) {
		return nil, false
	}
	op, ok := ir.OpByPath(path)
	if ok {
		*c = cachedOp{path, op}
	}
	return op, ok
}

func isStructInfoName(path string) bool {
	_, ok := sinfoNames[strings.TrimPrefix(path, "R.")]
	return ok
}

const opSlots = 64

type cachedOp struct {
	path string
	op   *ir.Op
}

// opCall maps a call's arguments onto op's schema: positional arguments in
// order (a Variadic parameter takes the rest), keywords by parameter name,
// out_sinfo/sinfo_args (and the later spellings out_ty/ty_args) into
// SInfoArgs; literals wrapped per parameter kind; defaults filled in.
func (bd *builder) opCall(op *ir.Op, a *ast, path string) ir.Expr {
	params := op.Params
	var givenBuf [8]*ast // ops rarely take more: no allocation per call
	given := givenBuf[:0]
	if len(params) <= len(givenBuf) {
		given = givenBuf[:len(params)]
	} else {
		given = make([]*ast, len(params))
	}
	var variadic []*ast
	variadicAt := -1
	for i, p := range params {
		if p.Variadic {
			variadicAt = i
		}
	}
	// Most calls take at most two arguments: one allocation holds the call
	// and its arguments.
	cw := &callWithArgs{call: ir.Call{Op: op}}
	call := &cw.call
	pos := 0
	sawKeyword := false
	sinfoAt, hasSInfoAt := positionalSInfo[op.Name]
	for i, it := range a.Items {
		kw := a.Keywords[i]
		if kw == "" {
			if sawKeyword {
				bd.fail(it.Span, "positional argument after keyword arguments in %s(...)", path)
			}
			switch {
			case hasSInfoAt && i == sinfoAt:
				call.SInfoArgs = bd.sinfoList(it)
			case variadicAt >= 0 && pos >= variadicAt:
				variadic = append(variadic, it)
			case pos < len(params):
				given[pos] = it
				pos++
			default:
				bd.fail(it.Span, "%s takes at most %s, found %d", path, plural(len(params), "argument"), countPositional(a))
			}
			continue
		}
		sawKeyword = true
		switch kw {
		case "out_sinfo", "out_ty", "sinfo_args", "ty_args":
			want := "out_sinfo"
			if op.SInfoArgs == ir.SInfoArgsKw {
				want = "sinfo_args"
			}
			// sinfo_args on an op that takes none is what TVM prints for
			// a call built with R.emit_with_sinfo: kept as given.
			noneTaken := op.SInfoArgs == ir.NoSInfoArgs && kw != "sinfo_args" && kw != "ty_args"
			if noneTaken || op.SInfoArgs != ir.NoSInfoArgs && (want == "out_sinfo") != (kw == "out_sinfo" || kw == "out_ty") {
				bd.fail(it.Span, "unknown keyword %s in %s(...)%s", kw, path, didYouMean(kw, paramNames(op), ""))
			}
			call.SInfoArgs = bd.sinfoList(it)
			continue
		}
		j := op.ParamIndex(kw)
		if j < 0 || params[j].Variadic {
			bd.fail(it.Span, "unknown keyword %s in %s(...)%s", kw, path, didYouMean(kw, paramNames(op), ""))
		}
		if given[j] != nil {
			bd.fail(it.Span, "argument %s of %s given twice", kw, path)
		}
		given[j] = it
	}
	if op.SInfoArgs == ir.OutSInfo && call.SInfoArgs == nil {
		bd.fail(a.Span, "missing required argument out_sinfo of %s", path)
	}
	extern := op.ExternCalleeParam()
	omitted := ""
	if n := len(params) + len(variadic); n <= len(cw.args) {
		call.Args = cw.args[:0:n]
	} else {
		call.Args = make([]ir.Expr, 0, n)
	}
	for i, p := range params {
		if p.Variadic {
			for _, v := range variadic {
				call.Args = append(call.Args, bd.opArg(p, v, false))
			}
			continue
		}
		g := given[i]
		if p.Kind.IsAttr() {
			var val any
			switch {
			case g != nil:
				val = bd.attrArg(p, g, path)
			case p.Default != nil:
				val = p.Default
			case p.Optional:
				continue
			default:
				bd.fail(a.Span, "missing required argument %s of %s", p.Name, path)
			}
			if val == nil && p.Default == nil {
				continue // None: an absent optional attribute
			}
			// None for an attribute with another default (R.concat's
			// axis=None) stays an explicit None.
			if call.Attrs == nil {
				call.Attrs = ir.Attrs{}
			}
			call.Attrs[p.Name] = val
			continue
		}
		if g == nil {
			switch {
			case p.Default != nil:
				if omitted != "" {
					bd.fail(a.Span, "argument %s of %s must be given when %s is", omitted, path, p.Name)
				}
				call.Args = append(call.Args, p.NewDefaultArg())
			case p.Optional:
				if omitted == "" {
					omitted = p.Name
				}
			default:
				bd.fail(a.Span, "missing required argument %s of %s", p.Name, path)
			}
			continue
		}
		if omitted != "" {
			bd.fail(g.Span, "argument %s of %s must be given when %s is", omitted, path, p.Name)
		}
		call.Args = append(call.Args, bd.opArg(p, g, i == extern))
	}
	call.SetSpan(a.Span)
	return call
}

// callWithArgs lays out a call and the argument array of a short call in one
// allocation (opCall).
type callWithArgs struct {
	call ir.Call
	args [2]ir.Expr
}

func countPositional(a *ast) int {
	n := 0
	for _, k := range a.Keywords {
		if k == "" {
			n++
		}
	}
	return n
}

func paramNames(op *ir.Op) []string {
	out := make([]string, 0, len(op.Params)+1)
	for _, p := range op.Params {
		if !p.Variadic {
			out = append(out, p.Name)
		}
	}
	switch op.SInfoArgs {
	case ir.OutSInfo:
		out = append(out, "out_sinfo")
	case ir.SInfoArgsKw:
		out = append(out, "sinfo_args")
	}
	return out
}

// opArg converts an argument of parameter p, wrapping literals.
func (bd *builder) opArg(p ir.Param, a *ast, extern bool) ir.Expr {
	var e ir.Expr
	switch {
	case a.Kind == aStr && extern:
		e = ir.NewExternFunc(a.Text)
	case p.Kind == ir.ArgDType && a.Kind == aStr:
		e = ir.NewDataTypeImm(bd.dtypeLiteral(a))
	case p.Kind == ir.ArgStr && a.Kind == aStr:
		e = ir.NewStringImm(a.Text)
	case voidDefault(p) && (a.Kind == aTuple && len(a.Items) == 0 || a.Kind == aConst && a.Text == "None"):
		// () or None where the default is the void tuple (R.memory.view's
		// shape, dtype and offset): "not given", as the printer writes it.
		e = ir.NewTuple()
	case p.Kind == ir.ArgShape && (a.Kind == aTuple || a.Kind == aList):
		e = bd.shapeExpr(a)
	case p.Kind == ir.ArgPrimValue && bd.primOnly(a):
		e = ir.NewPrimValue(bd.primInt64(a))
	case p.Kind == ir.ArgPrimValue && a.Kind == aConst && a.Text != "None":
		e = ir.NewPrimValue(ir.NewBool(a.Text == "True"))
	case p.Kind == ir.ArgTuple && a.Kind == aList:
		fields := make([]ir.Expr, len(a.Items))
		for i, it := range a.Items {
			fields[i] = bd.relaxExpr(it)
		}
		e = ir.NewTuple(fields...)
	default:
		e = bd.relaxExpr(a)
	}
	setSpan(e, a)
	return e
}

// voidDefault reports whether p's default is the void tuple.
func voidDefault(p ir.Param) bool {
	t, ok := p.Default.(*ir.Tuple)
	return ok && len(t.Fields) == 0
}

// attrArg converts an attribute argument through the schema's coercion.
func (bd *builder) attrArg(p ir.Param, a *ast, path string) any {
	var raw any
	switch {
	case p.Kind == ir.AttrDType && a.Kind == aCall && a.callee() == "R.dtype":
		raw = bd.dtypeLiteral(bd.onlyArg(a, "value"))
	case p.Kind == ir.AttrStr && a.Kind == aCall && a.callee() == "R.str":
		raw = bd.onlyArg(a, "value").Text
	case p.Kind == ir.AttrInt && a.Kind == aCall && a.callee() == "R.prim_value":
		raw = bd.attrValue(bd.onlyArg(a, "value"))
	case p.Kind == ir.AttrAny && containsLambda(a):
		raw = bd.indexMap(a)
	default:
		raw = bd.attrValue(a)
	}
	v, err := p.CoerceAttr(raw)
	if err != nil {
		msg := err.Error()
		if p.Kind == ir.AttrDType {
			if s, ok := raw.(string); ok {
				bd.fail(a.Span, "unknown dtype %q in argument %s of %s%s", s, p.Name, path, didYouMean(s, knownDTypes, ""))
			}
		}
		bd.fail(a.Span, "argument %s of %s: expected %s, found %s (%s)", p.Name, path, attrKindName(p.Kind), a.describe(), msg)
	}
	return v
}

func attrKindName(k ir.ParamKind) string {
	switch k {
	case ir.AttrInt:
		return "an integer"
	case ir.AttrInts:
		return "a list of integers"
	case ir.AttrBool:
		return "True or False"
	case ir.AttrFloat:
		return "a number"
	case ir.AttrStr:
		return "a string"
	case ir.AttrDType:
		return "a dtype string"
	}
	return "a value"
}

// sinfoList converts out_sinfo / sinfo_args: one struct info or a list or
// tuple of them.
func (bd *builder) sinfoList(a *ast) []ir.StructInfo {
	if a.Kind == aList || (a.Kind == aTuple && !a.Paren) || a.Kind == aTuple {
		out := make([]ir.StructInfo, len(a.Items))
		for i, it := range a.Items {
			out[i] = bd.sinfo(it)
		}
		return out
	}
	return []ir.StructInfo{bd.sinfo(a)}
}

// emitWithSInfo converts R.emit_with_sinfo(op, args, sinfo_args): a call of
// the op registered under the name op ("relax.add") with explicit struct
// info arguments (python/tvm/script/ir_builder/relax/ir.py).
func (bd *builder) emitWithSInfo(a *ast) ir.Expr {
	args := bd.callArgs(a, "op", "args", "sinfo_args")
	name, list := args.get("op"), args.get("args")
	if name == nil || list == nil || name.Kind != aStr {
		bd.fail(a.Span, "expected R.emit_with_sinfo(\"op.name\", (args...), sinfo_args)")
	}
	op, ok := ir.LookupOp(name.Text)
	if !ok {
		bd.fail(name.Span, "unknown operator %q", name.Text)
	}
	call := &ir.Call{Op: op}
	if list.Kind != aTuple && list.Kind != aList {
		bd.fail(list.Span, "expected a tuple of arguments, found %s", list.describe())
	}
	for _, it := range list.Items {
		call.Args = append(call.Args, bd.relaxExpr(it))
	}
	if si := args.get("sinfo_args"); si != nil {
		call.SInfoArgs = bd.sinfoList(si)
	}
	call.SetSpan(a.Span)
	return call
}

// indexMap converts an index map attribute, lambda i, j: (j, i) or
// T.index_map(lambda ...), into an ir.IndexMap whose parameters are int64
// variables in scope only in its body.
func (bd *builder) indexMap(a *ast) *ir.IndexMap {
	if a.Kind == aCall && a.callee() == "T.index_map" {
		a = bd.onlyArg(a, "mapping")
	}
	if a.Kind != aLambda {
		bd.fail(a.Span, "expected an index map (lambda i, j: (j, i)), found %s", a.describe())
	}
	m := &ir.IndexMap{}
	bd.push()
	defer bd.pop()
	for _, it := range a.Items {
		v := ir.NewPrimVar(it.Name, ir.Int64)
		bd.define(it.Name, &symbol{prim: v})
		m.Params = append(m.Params, v)
	}
	body := []*ast{a.X}
	if a.X.Kind == aTuple || a.X.Kind == aList {
		body = a.X.Items
	}
	for _, r := range body {
		m.Results = append(m.Results, bd.primInt64(r))
	}
	return m
}

// methodCall rewrites the method call x.m(args...) a as the operator call
// op(x, args...): Relax expressions have TVM's ExprWithOp methods
// (python/tvm/relax/expr.py), of which x.astype(dtype) is R.astype(x,
// dtype).
func methodCall(a *ast, op string) *ast {
	recv := a.X.X
	dot := strings.LastIndexByte(op, '.')
	callee := &ast{Kind: aAttr, X: &ast{Kind: aName, Name: op[:dot], Span: a.X.Span}, Name: op[dot+1:], Text: op, Span: a.X.Span}
	items := append([]*ast{recv}, a.Items...)
	kws := append([]string{""}, a.Keywords...)
	return &ast{Kind: aCall, X: callee, Items: items, Keywords: kws, Span: a.Span}
}
