package transform

import (
	"fmt"
	"regexp"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// DecomposeOpsForInference is TVM's DecomposeOpsForInference
// (src/relax/transform/decompose_ops.cc): composite ops become the simple
// ops they are made of.
//
//	R.nn.batch_norm(x, gamma, beta, mean, var)  ->  ((x - mean) / sqrt(var + eps) * gamma + beta, mean, var)
//	    with mean, var, gamma, beta expanded to x's rank around axis
//	    (gamma without scale, beta without center)
//	R.tensor_to_shape(t)  ->  lv = R.call_pure_packed("vm.builtin.tensor_to_shape", t, sinfo_args=(R.Shape(ndim=n),))
//	                          y = R.match_cast(lv, R.Shape([x, x_1, ...]))   (n fresh symbolic variables)
//	                          R.shape([x, x_1, ...])
//
// The tensor_to_shape decomposition is the one later passes depend on:
// a shape computed from a tensor has no known dimensions, so an op taking
// it as its shape (R.reshape(x, R.tensor_to_shape(t))) has a result of
// unknown shape and LegalizeOps cannot legalize it; after the
// decomposition the shape is R.shape([x, x_1, ...]) over symbolic
// variables the match_cast defines, and the op legalizes into a kernel
// over them. TVM leaves that ordering implicit; here LegalizeOps' LOW030
// diagnostic names this pass when the unknown shape comes from
// R.tensor_to_shape. A tensor_to_shape of unknown rank is left alone (TVM
// would make an empty shape of it).
//
// The option func_name is TVM's: a regular expression the whole function
// name must match (ApplyPassToFunction); empty means every function.
var DecomposeOpsForInference = passes.Define(passes.Info{
	Name:     "DecomposeOpsForInference",
	Doc:      "decompose batch_norm and tensor_to_shape into simpler ops (tensor_to_shape's shape then has dimensions LegalizeOps can use)",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it replaces bindings of composite-op calls by the bindings of their parts and reads the arguments' struct info (rank, dtype)",
	},
	Options: []passes.Option{funcNameOption},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return decomposeModule(mod, env.Options().String("func_name"), false)
}))

// DecomposeOpsForTraining is TVM's DecomposeOpsForTraining
// (src/relax/transform/decompose_ops.cc): TVM's MutateOpsForTraining,
// then DecomposeOpsForInference. A batch_norm computes the batch's mean
// and variance over every axis but axis, normalizes with them, and
// returns as its moving statistics (1 - momentum) * moving + momentum *
// batch; a layer_norm becomes (x - mean(x)) / sqrt(variance(x) + eps) *
// gamma + beta over its axes (kept as one op at inference, where it is
// cheaper).
var DecomposeOpsForTraining = passes.Define(passes.Info{
	Name:     "DecomposeOpsForTraining",
	Doc:      "decompose batch_norm (computing batch statistics and updating the moving ones), layer_norm and tensor_to_shape into simpler ops",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it replaces bindings of composite-op calls by the bindings of their parts and reads the arguments' struct info (rank, dtype)",
	},
	Options: []passes.Option{funcNameOption},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return decomposeModule(mod, env.Options().String("func_name"), true)
}))

var funcNameOption = passes.Option{
	Name: "func_name", Type: passes.String, Default: "",
	Doc: "a regular expression whole function names must match to be transformed (TVM's ApplyPassToFunction); empty: every function",
}

// DiagFuncNameRegexp: a func_name option that is not a regular expression.
var DiagFuncNameRegexp = optCodes.Define("OPT210", "a func_name option that is not a regular expression")

// decomposeModule decomposes the ops of the functions whose names match
// funcName (every function when it is empty).
func decomposeModule(mod *ir.Module, funcName string, training bool) (*ir.Module, error) {
	var match *regexp.Regexp
	if funcName != "" {
		re, err := regexp.Compile("^(?:" + funcName + ")$")
		if err != nil {
			var errs diag.List
			errs.Add(diag.Span{}, DiagFuncNameRegexp, "func_name=%s is not a regular expression: %v", funcName, err)
			return nil, errs
		}
		match = re
	}
	out := mod
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil || match != nil && !match.MatchString(name) {
			continue
		}
		if skip, _ := f.Attrs.Bool(ir.AttrSkipOptimize); skip {
			continue
		}
		nf, errs := decomposeFunction(mod, f, training)
		if err := errs.Err(); err != nil {
			return nil, err
		}
		if nf != f {
			if out == mod {
				out = mod.Clone()
			}
			out.Set(name, nf)
		}
	}
	return out, nil
}

// decomposeFunction rewrites the composite-op bindings of f; f itself
// when it has none.
func decomposeFunction(mod *ir.Module, f *ir.Function, training bool) (*ir.Function, diag.List) {
	rw := ir.NewRewriter(mod)
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		vb, ok := bind.(*ir.VarBinding)
		if !ok {
			return false
		}
		c, ok := value.(*ir.Call)
		if !ok {
			return false
		}
		var out ir.Expr
		switch c.Op {
		case op.BatchNorm:
			if training {
				out = batchNormForTraining(rw.B, c)
			} else {
				out = decomposeBatchNorm(rw.B, c)
			}
		case op.LayerNorm:
			if training {
				out = decomposeLayerNorm(rw.B, c)
			}
		case op.TensorToShape:
			out = decomposeTensorToShape(rw.B, c)
		}
		if out == nil {
			return false
		}
		reEmitWithStructInfo(rw, vb, out)
		return true
	}
	nf := rw.Function(f)
	errs := rw.B.Diagnostics()
	errs.Sort()
	return nf, errs
}

// reEmitWithStructInfo binds value to bind's var, or to a fresh var of the
// same name when the value's struct info differs from the var's (TVM's
// ReEmitBinding gives the var the value's struct info: a shape whose
// dimensions became known is annotated with them).
func reEmitWithStructInfo(rw *ir.Rewriter, bind *ir.VarBinding, value ir.Expr) {
	b := rw.B
	nv := b.Normalize(value)
	v := bind.Var
	if s, ns := v.StructInfo(), nv.StructInfo(); s != nil && ns != nil && !ir.StructuralEqual(s, ns, ir.EqualOptions{}) {
		fresh := ir.NewVar(v.Name, ns)
		fresh.Dataflow = v.Dataflow
		fresh.SetSpan(v.Span())
		rw.Remap(v, fresh)
		v = fresh
	}
	b.EmitVar(v, nv, bind.Span())
}

// tensorArg is the struct info of a call argument when it is a tensor of
// known rank and dtype, the decompositions' precondition.
func tensorArg(c *ir.Call, i int) (*ir.TensorInfo, bool) {
	if i >= len(c.Args) {
		return nil, false
	}
	t, ok := c.Args[i].StructInfo().(*ir.TensorInfo)
	if !ok || t.NDim < 0 || t.DType.IsVoid() {
		return nil, false
	}
	return t, true
}

// normAttrAxis returns c's int attribute key as an axis in [0, ndim).
func normAttrAxis(c *ir.Call, key string, ndim int) (int, bool) {
	a, ok := c.Attrs.Int(key)
	if !ok || a < -int64(ndim) || a >= int64(ndim) {
		return 0, false
	}
	if a < 0 {
		a += int64(ndim)
	}
	return int(a), true
}

func call(o *ir.Op, attrs ir.Attrs, args ...ir.Expr) *ir.Call {
	return &ir.Call{Op: o, Args: args, Attrs: attrs}
}

// scalar is TVM's MakeConstantScalar: a rank-0 constant of dtype.
func scalar(v float64, dt ir.DataType) *ir.Constant {
	return &ir.Constant{Data: ir.NewScalarArray(dt, v)}
}

func axesAttr(axes []int) []any {
	out := make([]any, len(axes))
	for i, a := range axes {
		out[i] = int64(a)
	}
	return out
}

// expandAround is TVM's ExpandToMatchInput for one axis: x (of rank 1)
// expanded to rank ndim, its dimension at axis.
func expandAround(b *ir.Builder, x ir.Expr, ndim, axis int) *ir.Var {
	var axes []int
	for i := range ndim {
		if i != axis {
			axes = append(axes, i)
		}
	}
	return b.Emit(call(op.ExpandDims, ir.Attrs{"axis": axesAttr(axes)}, x), "lv")
}

// decomposeBatchNorm is TVM's DecomposeBatchNorm, emitting the parts in
// TVM's order and returning the tuple the call becomes; nil when the data
// has no known rank or dtype, or the call no valid axis.
func decomposeBatchNorm(b *ir.Builder, c *ir.Call) ir.Expr {
	x, ok := tensorArg(c, 0)
	if !ok || len(c.Args) != 5 {
		return nil
	}
	axis, ok := normAttrAxis(c, "axis", x.NDim)
	if !ok {
		return nil
	}
	eps, _ := floatAttr(c, "epsilon", 1e-5)
	data, gamma, beta, mean, variance := c.Args[0], c.Args[1], c.Args[2], c.Args[3], c.Args[4]
	m := expandAround(b, mean, x.NDim, axis)
	centered := b.Emit(call(op.Subtract, nil, data, m), "lv")
	v := expandAround(b, variance, x.NDim, axis)
	v = b.Emit(call(op.Add, nil, v, scalar(eps, x.DType)), "lv")
	v = b.Emit(call(op.Sqrt, nil, v), "lv")
	out := b.Emit(call(op.Divide, nil, centered, v), "lv")
	if boolAttr(c, "scale") {
		g := expandAround(b, gamma, x.NDim, axis)
		out = b.Emit(call(op.Multiply, nil, out, g), "lv")
	}
	if boolAttr(c, "center") {
		bt := expandAround(b, beta, x.NDim, axis)
		out = b.Emit(call(op.Add, nil, out, bt), "lv")
	}
	return ir.NewTuple(out, mean, variance)
}

// batchNormForTraining is TVM's MutateBatchNormForTraining followed by
// DecomposeBatchNorm of the batch_norm it leaves.
func batchNormForTraining(b *ir.Builder, c *ir.Call) ir.Expr {
	x, ok := tensorArg(c, 0)
	if !ok || len(c.Args) != 5 {
		return nil
	}
	axis, ok := normAttrAxis(c, "axis", x.NDim)
	if !ok {
		return nil
	}
	// TVM compares the axis as written with the dimensions; a negative
	// axis would reduce over every dimension, so it is normalized first.
	var reduce []int
	for i := range x.NDim {
		if i != axis {
			reduce = append(reduce, i)
		}
	}
	momentum, _ := floatAttr(c, "momentum", 0.1)
	data, movingMean, movingVar := c.Args[0], c.Args[3], c.Args[4]
	stats := ir.Attrs{"axis": axesAttr(reduce), "keepdims": false}
	mean := b.Emit(call(op.Mean, stats, data), "lv")
	variance := b.Emit(call(op.Variance, stats, data), "lv")
	inner := &ir.Call{Op: c.Op, Args: []ir.Expr{data, c.Args[1], c.Args[2], mean, variance}, Attrs: c.Attrs}
	tuple := decomposeBatchNorm(b, inner)
	if tuple == nil {
		return nil
	}
	t := b.Emit(tuple, "lv")
	res := b.Emit(&ir.TupleGetItem{Tuple: t, Index: 0}, "lv")
	update := func(moving, batch ir.Expr) *ir.Var {
		old := b.Emit(call(op.Multiply, nil, scalar(1-momentum, x.DType), moving), "lv")
		cur := b.Emit(call(op.Multiply, nil, scalar(momentum, x.DType), batch), "lv")
		return b.Emit(call(op.Add, nil, old, cur), "lv")
	}
	newMean := update(movingMean, mean)
	newVar := update(movingVar, variance)
	return ir.NewTuple(res, newMean, newVar)
}

// decomposeLayerNorm is TVM's DecomposeLayerNorm: the parts are emitted
// and the last op returned for the call's binding.
func decomposeLayerNorm(b *ir.Builder, c *ir.Call) ir.Expr {
	x, ok := tensorArg(c, 0)
	if !ok || len(c.Args) != 3 {
		return nil
	}
	axes, ok := c.Attrs["axes"]
	if !ok {
		return nil
	}
	eps, _ := floatAttr(c, "epsilon", 1e-5)
	data, gamma, beta := c.Args[0], c.Args[1], c.Args[2]
	stats := ir.Attrs{"axis": axes, "keepdims": true}
	mean := b.Emit(call(op.Mean, stats, data), "lv")
	centered := b.Emit(call(op.Subtract, nil, data, mean), "lv")
	v := b.Emit(call(op.Variance, stats, data), "lv")
	v = b.Emit(call(op.Add, nil, v, scalar(eps, x.DType)), "lv")
	v = b.Emit(call(op.Sqrt, nil, v), "lv")
	var out ir.Expr = call(op.Divide, nil, centered, v)
	if boolAttr(c, "scale") {
		out = call(op.Multiply, nil, b.Emit(out, "lv"), gamma)
	}
	if boolAttr(c, "center") {
		out = call(op.Add, nil, b.Emit(out, "lv"), beta)
	}
	return out
}

// decomposeTensorToShape is TVM's TensorToShape: the packed call, a
// match_cast defining one symbolic variable per dimension, and the shape
// over them. nil when the rank is unknown.
func decomposeTensorToShape(b *ir.Builder, c *ir.Call) ir.Expr {
	s, ok := b.Normalize(c).StructInfo().(*ir.ShapeInfo)
	if !ok || s.NDim < 0 {
		return nil
	}
	packed := &ir.Call{Op: op.CallPurePacked, Args: []ir.Expr{ir.NewExternFunc("vm.builtin.tensor_to_shape"), c.Args[0]},
		SInfoArgs: []ir.StructInfo{ir.ShapeInfoNDim(s.NDim)}}
	lv := b.Emit(packed, "lv")
	dims := make([]ir.PrimExpr, s.NDim)
	for i := range dims {
		dims[i] = ir.SymVar("x")
	}
	b.EmitMatchCast(lv, ir.ShapeInfoOf(dims...), "y")
	return ir.NewShapeExpr(dims...)
}

// floatAttr reads a float attribute (an int is converted), or def.
func floatAttr(c *ir.Call, key string, def float64) (float64, error) {
	switch v := c.Attrs[key].(type) {
	case nil:
		return def, nil
	case float64:
		return v, nil
	case int64:
		return float64(v), nil
	default:
		return def, fmt.Errorf("attribute %s is %T", key, v)
	}
}

// boolAttr reads scale or center, true (TVM's default) when absent.
func boolAttr(c *ir.Call, key string) bool {
	v, ok := c.Attrs.Bool(key)
	return v || !ok
}
