package op

import (
	"math"

	"github.com/phasec/phasec/ir"
)

// Elementwise unary tensor ops. The result has the operand's shape and
// dtype (bool for the is* predicates); the transcendental ones require a
// float (or unknown) dtype. Each op's semantics is a float64 function (and,
// for ops defined on integers, an int64 one), rounded once to the dtype.

var (
	Exp      = unary("relax.exp", "x", "Elementwise e**x.", math.Exp, nil, tirIntrinsic("exp"))
	Log      = unary("relax.log", "x", "Elementwise natural logarithm.", math.Log, nil, tirIntrinsic("log"))
	Sqrt     = unary("relax.sqrt", "x", "Elementwise square root.", math.Sqrt, nil, tirIntrinsic("sqrt"))
	Rsqrt    = unary("relax.rsqrt", "x", "Elementwise reciprocal square root.", func(x float64) float64 { return 1 / math.Sqrt(x) }, nil, tirIntrinsic("rsqrt"))
	Tanh     = unary("relax.tanh", "x", "Elementwise hyperbolic tangent.", math.Tanh, nil, tirIntrinsic("tanh"))
	Sigmoid  = unary("relax.sigmoid", "x", "Elementwise logistic sigmoid.", sigmoid, nil, tirIntrinsic("sigmoid"))
	Sin      = unary("relax.sin", "x", "Elementwise sine.", math.Sin, nil, tirIntrinsic("sin"))
	Cos      = unary("relax.cos", "x", "Elementwise cosine.", math.Cos, nil, tirIntrinsic("cos"))
	Tan      = unary("relax.tan", "x", "Elementwise tangent.", math.Tan, nil, tirIntrinsic("tan"))
	Asin     = unary("relax.asin", "x", "Elementwise arcsine.", math.Asin, nil, tirIntrinsic("asin"))
	Acos     = unary("relax.acos", "x", "Elementwise arccosine.", math.Acos, nil, tirIntrinsic("acos"))
	Atan     = unary("relax.atan", "x", "Elementwise arctangent.", math.Atan, nil, tirIntrinsic("atan"))
	Sinh     = unary("relax.sinh", "x", "Elementwise hyperbolic sine.", math.Sinh, nil, tirIntrinsic("sinh"))
	Cosh     = unary("relax.cosh", "x", "Elementwise hyperbolic cosine.", math.Cosh, nil, tirIntrinsic("cosh"))
	Asinh    = unary("relax.asinh", "x", "Elementwise inverse hyperbolic sine.", math.Asinh, nil, tirIntrinsic("asinh"))
	Acosh    = unary("relax.acosh", "x", "Elementwise inverse hyperbolic cosine.", math.Acosh, nil, tirIntrinsic("acosh"))
	Atanh    = unary("relax.atanh", "x", "Elementwise inverse hyperbolic tangent.", math.Atanh, nil, tirIntrinsic("atanh"))
	Erf      = unary("relax.erf", "x", "Elementwise Gauss error function.", math.Erf, nil, tirIntrinsic("erf"))
	Negative = unary("relax.negative", "x", "Elementwise negation.", func(x float64) float64 { return -x }, func(x int64) int64 { return -x }, func(x ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpSub, constOf(x.DType(), 0), x) })
	Abs      = unary("relax.abs", "x", "Elementwise absolute value.", math.Abs, func(x int64) int64 { return max(x, -x) }, tirAbs)
	Floor    = unary("relax.floor", "x", "Elementwise floor.", math.Floor, identity, tirIntrinsic("floor"))
	Ceil     = unary("relax.ceil", "x", "Elementwise ceiling.", math.Ceil, identity, tirIntrinsic("ceil"))
	Round    = unary("relax.round", "x", "Elementwise rounding to nearest, ties to even.", math.RoundToEven, identity, tirIntrinsic("round"))
	Trunc    = unary("relax.trunc", "x", "Elementwise truncation toward zero.", math.Trunc, identity, tirIntrinsic("trunc"))
	Sign     = unary("relax.sign", "x", "Elementwise sign (-1, 0 or 1).", signF, func(x int64) int64 { return int64(cmpInt(x, 0)) }, tirSign)
	Square   = unary("relax.square", "x", "Elementwise x * x.", func(x float64) float64 { return x * x }, func(x int64) int64 { return x * x }, func(x ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpMul, x, x) })
	Relu     = unary("relax.nn.relu", "data", "Elementwise max(x, 0).", func(x float64) float64 { return math.Max(x, 0) }, func(x int64) int64 { return max(x, 0) }, func(x ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpMax, x, constOf(x.DType(), 0)) })
	Gelu     = unary("relax.nn.gelu", "data", "Elementwise Gaussian error linear unit (erf form).", gelu, nil, tirGelu)
	GeluTanh = unary("relax.nn.gelu_tanh", "data", "Elementwise Gaussian error linear unit (tanh approximation).", geluTanh, nil, tirGeluTanh)
	Silu     = unary("relax.nn.silu", "data", "Elementwise x * sigmoid(x).", func(x float64) float64 { return x * sigmoid(x) }, nil, func(x ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpMul, x, intrinsic("sigmoid", x.DType(), x)) })

	// The predicates yield bool.
	IsNaN    = unaryPred("relax.isnan", "Elementwise test for NaN; bool result.", math.IsNaN, func(x ir.PrimExpr) ir.PrimExpr { return intrinsic("isnan", ir.Bool, x) })
	IsInf    = unaryPred("relax.isinf", "Elementwise test for an infinity; bool result.", func(x float64) bool { return math.IsInf(x, 0) }, func(x ir.PrimExpr) ir.PrimExpr { return intrinsic("isinf", ir.Bool, x) })
	IsFinite = unaryPred("relax.isfinite", "Elementwise test for a finite value; bool result.", func(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }, func(x ir.PrimExpr) ir.PrimExpr { return intrinsic("isfinite", ir.Bool, x) })

	// LogicalNot and BitwiseNot are defined on bools and integers.
	LogicalNot = unaryInt("relax.logical_not", "Elementwise logical negation of a bool tensor.", true, func(x int64) int64 { return 1 - x }, func(x ir.PrimExpr) ir.PrimExpr { return &ir.Not{A: x} })
	BitwiseNot = unaryInt("relax.bitwise_not", "Elementwise bitwise complement of an integer tensor.", false, func(x int64) int64 { return ^x }, func(x ir.PrimExpr) ir.PrimExpr { return intrinsic("bitwise_not", x.DType(), x) })
)

func identity(x int64) int64 { return x }

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// gelu is x * Φ(x), the form topi uses: x * (0.5 + erf(x / sqrt 2) * 0.5).
func gelu(x float64) float64 { return x * (0.5 + math.Erf(x*math.Sqrt2/2)*0.5) }

// geluTanh is 0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x³))).
func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func signF(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // 0, -0 and NaN stay
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// unary registers an elementwise op; fi nil means floats only.
func unary(name, param, doc string, ff func(float64) float64, fi func(int64) int64, tir func(x ir.PrimExpr) ir.PrimExpr) *ir.Op {
	op := newUnaryOp(name, param, doc, fi == nil)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		if fi == nil && !x.dt.IsFloat() {
			return nil, opErrorf(op, "%s must be a float tensor, got %s", param, x.dt)
		}
		out := newArray(x.dt, x.shape)
		for k := range out.size() {
			if x.f != nil {
				out.setFloat(k, ff(x.f[k]))
			} else {
				out.setInt(k, fi(x.i[k]))
			}
		}
		return result(out, isScalarArg(args[0]))
	}
	return Define(Def{Op: op, Eval: eval, Legalize: unaryLegalize(tir), Layout: layoutUnary, MixedPrecision: mixedFollow})
}

// unaryPred registers a float predicate with a bool result (integers give
// false: they are never NaN or infinite, and always finite).
func unaryPred(name, doc string, pred func(float64) bool, tir func(x ir.PrimExpr) ir.PrimExpr) *ir.Op {
	op := newUnaryOpDType(name, "x", doc, false, ir.Bool)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		out := newArray(ir.Bool, x.shape)
		for k := range out.size() {
			v := false
			if x.f != nil {
				v = pred(x.f[k])
			} else {
				v = pred(float64(x.i[k]))
			}
			if v {
				out.i[k] = 1
			}
		}
		return result(out, isScalarArg(args[0]))
	}
	return Define(Def{Op: op, Eval: eval, Legalize: unaryLegalize(tir), Layout: layoutUnary, MixedPrecision: mixedFollow})
}

// unaryInt registers an op on integers (boolOnly: on bools).
func unaryInt(name, doc string, boolOnly bool, f func(int64) int64, tir func(x ir.PrimExpr) ir.PrimExpr) *ir.Op {
	op := newUnaryOp(name, "x", doc, false)
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if !t.DType.IsVoid() && (t.DType.IsFloat() || (boolOnly && !t.DType.IsBool())) {
			want := "an integer or bool"
			if boolOnly {
				want = "a bool"
			}
			return nil, opErrorf(op, "x must be %s tensor, got %s", want, t.DType)
		}
		return t, nil
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		if x.f != nil {
			return nil, opErrorf(op, "x must be an integer or bool tensor, got %s", x.dt)
		}
		out := newArray(x.dt, x.shape)
		for k := range out.size() {
			out.setInt(k, f(x.i[k]))
		}
		return result(out, isScalarArg(args[0]))
	}
	return Define(Def{Op: op, Eval: eval, Legalize: unaryLegalize(tir), Layout: layoutUnary, MixedPrecision: mixedFollow})
}

func newUnaryOp(name, param, doc string, floatOnly bool) *ir.Op {
	return newUnaryOpDType(name, param, doc, floatOnly, ir.Void)
}

// newUnaryOpDType is newUnaryOp whose result dtype is outDType (Void: the
// operand's).
func newUnaryOpDType(name, param, doc string, floatOnly bool, outDType ir.DataType) *ir.Op {
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Pattern: ir.PatternElemWise,
		Params: []ir.Param{{Name: param, Kind: ir.ArgExpr}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		t, err := firstTensorArg(op, call)
		if err != nil {
			return nil, err
		}
		if floatOnly {
			if err := requireFloat(op, t.DType); err != nil {
				return nil, err
			}
		}
		if !outDType.IsVoid() {
			return withDType(t, outDType), nil
		}
		return t, nil
	}
	return op
}

// --- legalization -------------------------------------------------------------

// tirAbs is fabs on floats, max(x, -x) on integers.
func tirAbs(x ir.PrimExpr) ir.PrimExpr {
	if x.DType().IsFloat() {
		return intrinsic("fabs", x.DType(), x)
	}
	return ir.NewBinary(ir.OpMax, x, ir.NewBinary(ir.OpSub, constOf(x.DType(), 0), x))
}

// tirSign is topi.sign: 1, -1 or 0.
func tirSign(x ir.PrimExpr) ir.PrimExpr {
	dt := x.DType()
	zero := constOf(dt, 0)
	return &ir.Select{Cond: ir.NewBinary(ir.OpLT, zero, x), True: constOf(dt, 1),
		False: &ir.Select{Cond: ir.NewBinary(ir.OpLT, x, zero), True: constOf(dt, -1), False: zero}}
}

// tirGelu is topi's x * (0.5 + erf(x * sqrt(1/2)) * 0.5).
func tirGelu(x ir.PrimExpr) ir.PrimExpr {
	dt := x.DType()
	// x * (0.5 + erf(x * sqrt(1/2)) * 0.5), topi's form.
	e := intrinsic("erf", dt, ir.NewBinary(ir.OpMul, x, constOf(dt, math.Sqrt2/2)))
	return ir.NewBinary(ir.OpMul, x, ir.NewBinary(ir.OpAdd, constOf(dt, 0.5), ir.NewBinary(ir.OpMul, e, constOf(dt, 0.5))))
}

// tirGeluTanh is 0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x³))).
func tirGeluTanh(x ir.PrimExpr) ir.PrimExpr {
	dt := x.DType()
	cube := ir.NewBinary(ir.OpMul, ir.NewBinary(ir.OpMul, x, x), x)
	inner := ir.NewBinary(ir.OpMul, constOf(dt, math.Sqrt(2/math.Pi)), ir.NewBinary(ir.OpAdd, x, ir.NewBinary(ir.OpMul, constOf(dt, 0.044715), cube)))
	return ir.NewBinary(ir.OpMul, ir.NewBinary(ir.OpMul, constOf(dt, 0.5), x), ir.NewBinary(ir.OpAdd, constOf(dt, 1), intrinsic("tanh", dt, inner)))
}

// tirIntrinsic is the one-operand intrinsic name.
func tirIntrinsic(name string) func(x ir.PrimExpr) ir.PrimExpr {
	return func(x ir.PrimExpr) ir.PrimExpr { return intrinsic(name, x.DType(), x) }
}

// unaryLegalize is topi's form of the op computing tir: block "compute",
// loops i0...
func unaryLegalize(tir func(x ir.PrimExpr) ir.PrimExpr) LegalizeFunc {
	return func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		out, err := k.Output("compute")
		if err != nil {
			return err
		}
		k.Compute("compute", out, "i", func(v []ir.PrimExpr) ir.PrimExpr { return castTo(out.DType, tir(Load(a, v))) })
		return nil
	}
}

// --- clip and leakyrelu: unary ops with parameters ----------------------------

var (
	// Clip is R.clip(x, min, max): min(max(x, min), max), the bounds given
	// as scalars (R.prim_value).
	Clip = Define(newClipOp())
	// LeakyRelu is R.nn.leakyrelu(data, alpha=0.01): x if x > 0 else alpha * x.
	LeakyRelu = Define(newLeakyReluOp())
)

func newClipOp() Def {
	op := newUnaryOp("relax.clip", "x", "Elementwise clamp of x to [min, max].", false)
	op.Params = append(op.Params, ir.Param{Name: "min", Kind: ir.ArgPrimValue}, ir.Param{Name: "max", Kind: ir.ArgPrimValue})
	infer := op.Infer
	op.Infer = func(ctx *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if err := opCheckArity(op, call); err != nil {
			return nil, err
		}
		for i := 1; i <= 2; i++ {
			if _, ok := argStructInfo(call.Args[i]).(*ir.PrimInfo); !ok {
				return nil, opErrorf(op, "%s must be a scalar, got %s", opArgName(op, i), sinfoKind(argStructInfo(call.Args[i])))
			}
		}
		return infer(ctx, call)
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		lo, ok1 := args[1].(Prim)
		hi, ok2 := args[2].(Prim)
		if !ok1 || !ok2 {
			return nil, opErrorf(op, "min and max must be scalars")
		}
		out := newArray(x.dt, x.shape)
		for k := range out.size() {
			if x.f != nil {
				out.setFloat(k, math.Min(math.Max(x.f[k], lo.Float()), hi.Float()))
			} else {
				out.setInt(k, min(max(x.i[k], primInt(lo)), primInt(hi)))
			}
		}
		return result(out, isScalarArg(args[0]))
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		var bounds [2]ir.PrimExpr
		for i := range bounds {
			pv, ok := call.Args[i+1].(*ir.PrimValue)
			if !ok {
				return ErrNotLegalizable
			}
			bounds[i] = castTo(a.DType, k.Dim(pv.Value))
		}
		out, err := k.Output("compute")
		if err != nil {
			return err
		}
		k.Compute("compute", out, "i", func(v []ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpMin, ir.NewBinary(ir.OpMax, Load(a, v), bounds[0]), bounds[1])
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutUnary}
}

// primInt reads a scalar as an integer (floats truncate).
func primInt(p Prim) int64 {
	if p.DType.IsFloat() {
		return castFloatToInt(ir.Int64, p.F)
	}
	return p.I
}

func newLeakyReluOp() Def {
	op := newUnaryOp("relax.nn.leakyrelu", "data", "Elementwise x if x > 0 else alpha * x.", true)
	op.Params = append(op.Params, ir.Param{Name: "alpha", Kind: ir.AttrFloat, Default: 0.01})
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		x, err := argArray(op, args, 0)
		if err != nil {
			return nil, err
		}
		if x.f == nil {
			return nil, opErrorf(op, "data must be a float tensor, got %s", x.dt)
		}
		alpha, _ := opAttr(op, call, "alpha").(float64)
		out := newArray(x.dt, x.shape)
		for k := range out.size() {
			v := x.f[k]
			if v <= 0 {
				v = roundFloat(x.dt, alpha) * v
			}
			out.setFloat(k, v)
		}
		return result(out, false)
	}
	legalize := func(k *Kernel, call *ir.Call) error {
		a, err := k.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		alpha, _ := opAttr(op, call, "alpha").(float64)
		out, err := k.Output("compute")
		if err != nil {
			return err
		}
		k.Compute("compute", out, "i", func(v []ir.PrimExpr) ir.PrimExpr {
			x := Load(a, v)
			return &ir.Select{Cond: ir.NewBinary(ir.OpGT, x, constOf(a.DType, 0)), True: x,
				False: ir.NewBinary(ir.OpMul, x, constOf(a.DType, alpha))}
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize, Layout: layoutUnary}
}
