package onnx

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// Ops phasec registers without a Go name in package op.
var (
	opGatherElements  = ir.MustOp("relax.gather_elements")
	opScatterElements = ir.MustOp("relax.scatter_elements")
	opScatterND       = ir.MustOp("relax.scatter_nd")
	opEinsum          = ir.MustOp("relax.einsum")
	opResize2D        = ir.MustOp("relax.image.resize2d")
	opFlip            = ir.MustOp("relax.flip")
	opPRelu           = ir.MustOp("relax.nn.prelu")
)

// converters maps each supported ONNX op type of the default domain to
// its converter (TVM's _get_convert_map).
var converters map[string]converter

func init() {
	converters = map[string]converter{}
	unaries := map[string]*ir.Op{
		"Abs": op.Abs, "Acos": op.Acos, "Acosh": op.Acosh, "Asin": op.Asin, "Asinh": op.Asinh,
		"Atan": op.Atan, "Atanh": op.Atanh, "Ceil": op.Ceil, "Cos": op.Cos, "Cosh": op.Cosh,
		"Erf": op.Erf, "Exp": op.Exp, "Floor": op.Floor, "Log": op.Log, "Neg": op.Negative,
		"Not": op.LogicalNot, "Relu": op.Relu, "Round": op.Round, "Sigmoid": op.Sigmoid,
		"Sign": op.Sign, "Sin": op.Sin, "Sinh": op.Sinh, "Sqrt": op.Sqrt, "Tan": op.Tan,
		"Tanh": op.Tanh, "IsNaN": op.IsNaN, "BitwiseNot": op.BitwiseNot,
	}
	for name, o := range unaries {
		converters[name] = unaryConverter(o)
	}
	binaries := map[string]*ir.Op{
		"Add": op.Add, "Sub": op.Subtract, "Mul": op.Multiply,
		"Equal": op.Equal, "Greater": op.Greater, "Less": op.Less,
		"GreaterOrEqual": op.GreaterEqual, "LessOrEqual": op.LessEqual,
		"And": op.LogicalAnd, "Or": op.LogicalOr, "Xor": op.LogicalXor,
		"BitwiseAnd": op.BitwiseAnd, "BitwiseOr": op.BitwiseOr, "BitwiseXor": op.BitwiseXor,
	}
	for name, o := range binaries {
		converters[name] = binaryConverter(o)
	}
	for name, f := range map[string]converter{
		"Div": convertDiv, "Pow": convertPow, "Mod": convertMod, "BitShift": convertBitShift,
		"Max": variadic(op.Maximum), "Min": variadic(op.Minimum), "Sum": variadic(op.Add), "Mean": convertMean,
		"Identity": convertIdentity, "Reciprocal": convertReciprocal, "IsInf": convertIsInf,
		"Softplus": convertSoftplus, "Softsign": convertSoftsign, "Elu": convertElu, "Selu": convertSelu,
		"Celu": convertCelu, "LeakyRelu": convertLeakyRelu, "ThresholdedRelu": convertThresholdedRelu,
		"HardSigmoid": convertHardSigmoid, "HardSwish": convertHardSwish, "Mish": convertMish,
		"Gelu": convertGelu, "PRelu": convertPRelu, "Shrink": convertShrink, "Clip": convertClip,
		"Where": convertWhere, "Cast": convertCast, "CastLike": convertCastLike,
		"MatMul": convertMatMul, "Gemm": convertGemm, "Einsum": convertEinsum,
		"Softmax": softmaxConverter(op.Softmax), "LogSoftmax": softmaxConverter(op.LogSoftmax),
		"Hardmax":   convertHardmax,
		"ReduceSum": reduceConverter("sum"), "ReduceMean": reduceConverter("mean"),
		"ReduceMax": reduceConverter("max"), "ReduceMin": reduceConverter("min"),
		"ReduceProd": reduceConverter("prod"), "ReduceL1": reduceConverter("l1"),
		"ReduceL2": reduceConverter("l2"), "ReduceLogSum": reduceConverter("logsum"),
		"ReduceLogSumExp": reduceConverter("logsumexp"), "ReduceSumSquare": reduceConverter("sumsquare"),
		"ArgMax": argConverter(op.Argmax), "ArgMin": argConverter(op.Argmin),
		"CumSum": convertCumSum, "TopK": convertTopK,
		"QuantizeLinear": convertQuantize, "DequantizeLinear": convertDequantize,
	} {
		converters[name] = f
	}
	registerNN()
	registerManip()
	registerLoss()
	registerMore()
	registerExtra()
	registerRNN()
	registerDFT()
}

func unaryConverter(o *ir.Op) converter {
	return func(c *nodeCtx) ([]ir.Expr, error) {
		x, err := c.arg(0)
		if err != nil {
			return nil, err
		}
		return one(c.emitOp(o, nil, x))
	}
}

func binaryConverter(o *ir.Op) converter {
	return func(c *nodeCtx) ([]ir.Expr, error) {
		a, err := c.arg(0)
		if err != nil {
			return nil, err
		}
		b, err := c.arg(1)
		if err != nil {
			return nil, err
		}
		if b, err = c.legacyBroadcast(b); err != nil {
			return nil, err
		}
		c.symArith(c.node.GetOpType())
		return one(c.emitOp(o, nil, a, b))
	}
}

// legacyBroadcast aligns b for the broadcast=1 of opsets before 7: with
// an axis, b's dimensions match a's from that axis on, so b gets trailing
// unit dimensions; without one, NumPy's suffix alignment applies as is.
func (c *nodeCtx) legacyBroadcast(b ir.Expr) (ir.Expr, error) {
	if c.opset >= 7 || c.attrInt("broadcast", 0) != 1 || c.attrs["axis"] == nil {
		return b, nil
	}
	ra, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	bd, err := c.dims(1)
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(c.attrInt("axis", 0), ra)
	if err != nil {
		return nil, err
	}
	pad := ra - axis - len(bd)
	if pad < 0 {
		return nil, fmt.Errorf("B of rank %d does not fit A of rank %d from axis %d", len(bd), ra, axis)
	}
	if pad == 0 {
		return b, nil
	}
	dims := append([]ir.PrimExpr{}, bd...)
	for range pad {
		dims = append(dims, ir.I64(1))
	}
	return c.emitOp(op.Reshape, nil, b, shapeExpr(dims)), nil
}

// variadic folds Max, Min and Sum over their inputs, left to right.
func variadic(o *ir.Op) converter {
	return func(c *nodeCtx) ([]ir.Expr, error) {
		acc, err := c.arg(0)
		if err != nil {
			return nil, err
		}
		for i := 1; i < len(c.in); i++ {
			x, err := c.arg(i)
			if err != nil {
				return nil, err
			}
			acc = c.emitOp(o, nil, acc, x)
		}
		return one(acc)
	}
}

func convertMean(c *nodeCtx) ([]ir.Expr, error) {
	sum, err := variadic(op.Add)(c)
	if err != nil {
		return nil, err
	}
	n := scalarConst(float64(len(c.in)), dtypeOf(sum[0]))
	return one(c.emitOp(op.Divide, nil, sum[0], n))
}

// convertDiv: integer division truncates toward zero in ONNX (C
// semantics); for unsigned types that is floor division.
func convertDiv(c *nodeCtx) ([]ir.Expr, error) {
	a, b := c.in[0], c.in[1]
	if a == nil || b == nil {
		return nil, fmt.Errorf("Div needs two inputs")
	}
	dt := dtypeOf(a)
	c.symArith("Div")
	if dt.IsInt() {
		// trunc(a / b) = sign(a*b) * (|a| // |b|)
		q := c.emitOp(op.FloorDivide, nil, c.emitOp(op.Abs, nil, a), c.emitOp(op.Abs, nil, b))
		neg := c.emitOp(op.LogicalXor, nil, c.emitOp(op.Less, nil, a, scalarConst(0, dt)), c.emitOp(op.Less, nil, b, scalarConst(0, dt)))
		return one(c.emitOp(op.Where, nil, neg, c.emitOp(op.Negative, nil, q), q))
	}
	if dt.IsUInt() {
		return one(c.emitOp(op.FloorDivide, nil, a, b))
	}
	return one(c.emitOp(op.Divide, nil, a, b))
}

func convertPow(c *nodeCtx) ([]ir.Expr, error) {
	a, b := c.in[0], c.in[1]
	if a == nil || b == nil {
		return nil, fmt.Errorf("Pow needs two inputs")
	}
	if !isFloat(a) {
		// Integer bases: compute in float64, as TVM's power over ints.
		dt := dtypeOf(a)
		r := c.emitOp(op.Power, nil, c.castTo(a, ir.Float64), c.castTo(b, ir.Float64))
		return one(c.castTo(c.emitOp(op.Round, nil, r), dt))
	}
	return one(c.emitOp(op.Power, nil, a, c.castTo(b, dtypeOf(a))))
}

// convertMod: fmod=1 is C's fmod (the sign of the dividend), fmod=0 the
// floor modulo (the sign of the divisor), as TVM maps them to mod and
// floor_mod.
func convertMod(c *nodeCtx) ([]ir.Expr, error) {
	a, b := c.in[0], c.in[1]
	if a == nil || b == nil {
		return nil, fmt.Errorf("Mod needs two inputs")
	}
	if c.attrInt("fmod", 0) == 1 {
		return one(c.emitOp(op.Mod, nil, a, b))
	}
	if isFloat(a) {
		return nil, fmt.Errorf("fmod must be 1 for floating-point inputs")
	}
	return one(c.emitOp(op.FloorMod, nil, a, b))
}

func convertBitShift(c *nodeCtx) ([]ir.Expr, error) {
	a, b := c.in[0], c.in[1]
	if a == nil || b == nil {
		return nil, fmt.Errorf("BitShift needs two inputs")
	}
	switch c.attrString("direction", "") {
	case "LEFT":
		return one(c.emitOp(op.LeftShift, nil, a, b))
	case "RIGHT":
		return one(c.emitOp(op.RightShift, nil, a, b))
	}
	return nil, fmt.Errorf("direction must be LEFT or RIGHT")
}

func convertIdentity(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	c.propagateSym()
	return one(x)
}

func convertReciprocal(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(op.Divide, nil, scalarConst(1, dtypeOf(x)), x))
}

func convertIsInf(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	pos, neg := c.attrInt("detect_positive", 1) == 1, c.attrInt("detect_negative", 1) == 1
	inf := c.emitOp(op.IsInf, nil, x)
	dt := dtypeOf(x)
	switch {
	case pos && neg:
		return one(inf)
	case pos:
		return one(c.emitOp(op.LogicalAnd, nil, inf, c.emitOp(op.Greater, nil, x, scalarConst(0, dt))))
	case neg:
		return one(c.emitOp(op.LogicalAnd, nil, inf, c.emitOp(op.Less, nil, x, scalarConst(0, dt))))
	}
	return one(c.emitOp(op.Less, nil, x, x)) // all false
}

// Activations, composed as TVM's converters compose them.

func (c *nodeCtx) floatArg() (ir.Expr, ir.DataType, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, ir.Void, err
	}
	return x, dtypeOf(x), nil
}

func convertSoftplus(c *nodeCtx) ([]ir.Expr, error) {
	x, dt, err := c.floatArg()
	if err != nil {
		return nil, err
	}
	// log(exp(x) + 1), computed as max(x, 0) + log(1 + exp(-|x|)) to stay finite.
	pos := c.emitOp(op.Maximum, nil, x, scalarConst(0, dt))
	e := c.emitOp(op.Exp, nil, c.emitOp(op.Negative, nil, c.emitOp(op.Abs, nil, x)))
	return one(c.emitOp(op.Add, nil, pos, c.emitOp(op.Log, nil, c.emitOp(op.Add, nil, e, scalarConst(1, dt)))))
}

func convertSoftsign(c *nodeCtx) ([]ir.Expr, error) {
	x, dt, err := c.floatArg()
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(op.Divide, nil, x, c.emitOp(op.Add, nil, c.emitOp(op.Abs, nil, x), scalarConst(1, dt))))
}

// expm1Where is alpha * (exp(x) - 1) where x <= 0, else x times scale.
func (c *nodeCtx) elu(x ir.Expr, dt ir.DataType, alpha, scale float64) ir.Expr {
	neg := c.emitOp(op.Multiply, nil, scalarConst(alpha, dt), c.emitOp(op.Subtract, nil, c.emitOp(op.Exp, nil, x), scalarConst(1, dt)))
	cond := c.emitOp(op.Greater, nil, x, scalarConst(0, dt))
	out := c.emitOp(op.Where, nil, cond, x, neg)
	if scale != 1 {
		out = c.emitOp(op.Multiply, nil, out, scalarConst(scale, dt))
	}
	return out
}

func convertElu(c *nodeCtx) ([]ir.Expr, error) {
	x, dt, err := c.floatArg()
	if err != nil {
		return nil, err
	}
	return one(c.elu(x, dt, c.attrFloat("alpha", 1), 1))
}

func convertSelu(c *nodeCtx) ([]ir.Expr, error) {
	x, dt, err := c.floatArg()
	if err != nil {
		return nil, err
	}
	return one(c.elu(x, dt, c.attrFloat("alpha", 1.67326319217681884765625), c.attrFloat("gamma", 1.05070102214813232421875)))
}

func convertCelu(c *nodeCtx) ([]ir.Expr, error) {
	x, dt, err := c.floatArg()
	if err != nil {
		return nil, err
	}
	alpha := c.attrFloat("alpha", 1)
	// max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
	e := c.emitOp(op.Exp, nil, c.emitOp(op.Divide, nil, x, scalarConst(alpha, dt)))
	neg := c.emitOp(op.Multiply, nil, scalarConst(alpha, dt), c.emitOp(op.Subtract, nil, e, scalarConst(1, dt)))
	return one(c.emitOp(op.Add, nil, c.emitOp(op.Maximum, nil, x, scalarConst(0, dt)), c.emitOp(op.Minimum, nil, neg, scalarConst(0, dt))))
}

func convertLeakyRelu(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(op.LeakyRelu, ir.Attrs{"alpha": c.attrFloat("alpha", 0.01)}, x))
}

func convertThresholdedRelu(c *nodeCtx) ([]ir.Expr, error) {
	x, dt, err := c.floatArg()
	if err != nil {
		return nil, err
	}
	cond := c.emitOp(op.Greater, nil, x, scalarConst(c.attrFloat("alpha", 1), dt))
	return one(c.emitOp(op.Where, nil, cond, x, scalarConst(0, dt)))
}

func (c *nodeCtx) hardSigmoid(x ir.Expr, dt ir.DataType, alpha, beta float64) ir.Expr {
	lin := c.emitOp(op.Add, nil, c.emitOp(op.Multiply, nil, x, scalarConst(alpha, dt)), scalarConst(beta, dt))
	return c.emitOp(op.Clip, nil, lin, ir.NewPrimValue(ir.NewFloat(ir.Float64, 0)), ir.NewPrimValue(ir.NewFloat(ir.Float64, 1)))
}

func convertHardSigmoid(c *nodeCtx) ([]ir.Expr, error) {
	x, dt, err := c.floatArg()
	if err != nil {
		return nil, err
	}
	return one(c.hardSigmoid(x, dt, c.attrFloat("alpha", 0.2), c.attrFloat("beta", 0.5)))
}

func convertHardSwish(c *nodeCtx) ([]ir.Expr, error) {
	x, dt, err := c.floatArg()
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(op.Multiply, nil, x, c.hardSigmoid(x, dt, 1.0/6, 0.5)))
}

func convertMish(c *nodeCtx) ([]ir.Expr, error) {
	sp, err := convertSoftplus(c)
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(op.Multiply, nil, c.in[0], c.emitOp(op.Tanh, nil, sp[0])))
}

func convertGelu(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	switch c.attrString("approximate", "none") {
	case "none":
		return one(c.emitOp(op.Gelu, nil, x))
	case "tanh":
		return one(c.emitOp(op.GeluTanh, nil, x))
	}
	return nil, fmt.Errorf("approximate must be none or tanh")
}

// convertPRelu: slope broadcasts unidirectionally to x.
func convertPRelu(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	slope, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	// Before opset 7 a 1-D slope of the channels' length applies along
	// axis 1 (the legacy broadcast).
	if st, err := c.tinfo(1); err == nil && st.NDim == 1 && c.opset < 7 {
		if rank, err := c.rank(0); err == nil && rank > 2 {
			slope = c.alongAxis(slope, rank, 1)
		}
	}
	neg := c.emitOp(op.Multiply, nil, x, slope)
	cond := c.emitOp(op.Less, nil, x, scalarConst(0, dtypeOf(x)))
	return one(c.emitOp(op.Where, nil, cond, neg, x))
}

func convertShrink(c *nodeCtx) ([]ir.Expr, error) {
	x, dt, err := c.floatArg()
	if err != nil {
		return nil, err
	}
	lambd, bias := c.attrFloat("lambd", 0.5), c.attrFloat("bias", 0)
	lo := c.emitOp(op.Less, nil, x, scalarConst(-lambd, dt))
	hi := c.emitOp(op.Greater, nil, x, scalarConst(lambd, dt))
	plus := c.emitOp(op.Add, nil, x, scalarConst(bias, dt))
	minus := c.emitOp(op.Subtract, nil, x, scalarConst(bias, dt))
	zero := scalarConst(0, dt)
	return one(c.emitOp(op.Where, nil, lo, plus, c.emitOp(op.Where, nil, hi, minus, zero)))
}

// convertClip: bounds are attributes before opset 11, optional inputs
// after; a bound that is not a constant becomes maximum/minimum.
func convertClip(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	dt := dtypeOf(x)
	out := x
	if c.opset < 11 {
		lo, hi := c.attrFloat("min", -math.MaxFloat32), c.attrFloat("max", math.MaxFloat32)
		out = c.emitOp(op.Maximum, nil, out, scalarConst(lo, dt))
		return one(c.emitOp(op.Minimum, nil, out, scalarConst(hi, dt)))
	}
	if c.has(1) {
		out = c.emitOp(op.Maximum, nil, out, c.in[1])
	}
	if c.has(2) {
		out = c.emitOp(op.Minimum, nil, out, c.in[2])
	}
	return one(out)
}

func convertWhere(c *nodeCtx) ([]ir.Expr, error) {
	for i := range 3 {
		if !c.has(i) {
			return nil, fmt.Errorf("Where needs three inputs")
		}
	}
	return one(c.emitOp(op.Where, nil, c.in[0], c.in[1], c.in[2]))
}

func convertCast(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	to := int32(c.attrInt("to", 0))
	dt, ok := DType(to)
	if !ok {
		return nil, unsupported("cast to %s is not supported", dtypeName(to))
	}
	if dt.IsInt() && dt.Bits >= 32 {
		c.propagateSym()
	}
	return one(c.castTo(x, dt))
}

func convertCastLike(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	like, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	return one(c.castTo(x, dtypeOf(like)))
}

func convertMatMul(c *nodeCtx) ([]ir.Expr, error) {
	a, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	b, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	return one(c.emitOp(op.Matmul, nil, a, b))
}

// convertGemm: alpha * A' B' + beta * C, with A' and B' transposed by
// transA and transB (TVM's Gemm).
func convertGemm(c *nodeCtx) ([]ir.Expr, error) {
	a, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	b, err := c.arg(1)
	if err != nil {
		return nil, err
	}
	dt := dtypeOf(a)
	if c.attrInt("transA", 0) == 1 {
		a = c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts([]int{1, 0})}, a)
	}
	if c.attrInt("transB", 0) == 1 {
		b = c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts([]int{1, 0})}, b)
	}
	out := c.emitOp(op.Matmul, nil, a, b)
	if alpha := c.attrFloat("alpha", 1); alpha != 1 {
		out = c.emitOp(op.Multiply, nil, out, scalarConst(alpha, dt))
	}
	if c.has(2) {
		cc := c.in[2]
		if beta := c.attrFloat("beta", 1); beta != 1 {
			cc = c.emitOp(op.Multiply, nil, cc, scalarConst(beta, dt))
		}
		out = c.emitOp(op.Add, nil, out, cc)
	}
	return one(out)
}

func convertEinsum(c *nodeCtx) ([]ir.Expr, error) {
	eq := c.attrString("equation", "")
	if strings.Contains(eq, "...") {
		ranks := make([]int, len(c.in))
		for i := range ranks {
			r, err := c.rank(i)
			if err != nil {
				return nil, err
			}
			ranks[i] = r
		}
		var err error
		if eq, err = expandEllipsis(eq, ranks); err != nil {
			return nil, err
		}
	}
	return one(c.emitOp(opEinsum, ir.Attrs{"subscripts": eq}, ir.NewTuple(c.in...)))
}

// softmaxConverter: before opset 13 the input is coerced to 2-D at axis
// (default 1) and the op runs over the flattened trailing axes; from 13
// on it runs over one axis (default -1).
func softmaxConverter(o *ir.Op) converter {
	return func(c *nodeCtx) ([]ir.Expr, error) {
		x, err := c.arg(0)
		if err != nil {
			return nil, err
		}
		if c.opset >= 13 {
			return one(c.emitOp(o, ir.Attrs{"axis": c.attrInt("axis", -1)}, x))
		}
		rank, err := c.rank(0)
		if err != nil {
			return nil, err
		}
		axis, err := normAxis(c.attrInt("axis", 1), rank)
		if err != nil {
			return nil, err
		}
		if axis == rank-1 {
			return one(c.emitOp(o, ir.Attrs{"axis": int64(-1)}, x))
		}
		dims, err := c.dims(0)
		if err != nil {
			return nil, err
		}
		flat := c.emitOp(op.Reshape, nil, x, shapeExpr([]ir.PrimExpr{product(dims[:axis]), product(dims[axis:])}))
		out := c.emitOp(o, ir.Attrs{"axis": int64(-1)}, flat)
		return one(c.emitOp(op.Reshape, nil, out, shapeExpr(dims)))
	}
}

// convertHardmax: one_hot of argmax along axis (coerced to 2-D before
// opset 13, as softmax).
func convertHardmax(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	dims, err := c.dims(0)
	if err != nil {
		return nil, err
	}
	dt := dtypeOf(x)
	def := int64(-1)
	if c.opset < 13 {
		def = 1
	}
	axis, err := normAxis(c.attrInt("axis", def), rank)
	if err != nil {
		return nil, err
	}
	in := x
	if c.opset < 13 {
		in = c.emitOp(op.Reshape, nil, x, shapeExpr([]ir.PrimExpr{product(dims[:axis]), product(dims[axis:])}))
		axis = 1
	}
	inDims := dims
	if c.opset < 13 {
		inDims = []ir.PrimExpr{product(dims[:axis]), product(dims[axis:])}
	}
	depth, ok := ir.IntValue(inDims[axis])
	if !ok {
		return nil, unsupported("Hardmax over a symbolic axis")
	}
	am := c.emitOp(op.Argmax, ir.Attrs{"axis": int64(axis), "keepdims": false}, in)
	oh := c.emitOp(op.OneHot, ir.Attrs{"depth": depth, "axis": int64(axis)}, am,
		ir.NewPrimValue(ir.NewFloat(dt, 1)), ir.NewPrimValue(ir.NewFloat(dt, 0)))
	if c.opset < 13 {
		oh = c.emitOp(op.Reshape, nil, oh, shapeExpr(dims))
	}
	return one(oh)
}

// product multiplies dimension expressions.
func product(dims []ir.PrimExpr) ir.PrimExpr {
	var p ir.PrimExpr = ir.I64(1)
	all := int64(1)
	static := true
	for _, d := range dims {
		if v, ok := ir.IntValue(d); ok {
			all *= v
			continue
		}
		static = false
		p = ir.Mul(p, d)
	}
	if static {
		return ir.I64(all)
	}
	if all != 1 {
		p = ir.Mul(p, ir.I64(all))
	}
	return p
}

// reduceAxes returns a Reduce node's axes: the attribute before the
// opset that moved them to an input (13 for ReduceSum, 18 for the
// others), the input after; nil means all axes, unless
// noop_with_empty_axes makes the node an identity (ok false).
func (c *nodeCtx) reduceAxes(kind string) (axes []int64, identity bool, err error) {
	fromInput := c.opset >= 18 || kind == "sum" && c.opset >= 13
	if !fromInput {
		a, _ := c.attrInts("axes")
		return a, false, nil
	}
	if c.has(1) {
		if _, ok := c.constant(1); !ok {
			if n, err := c.vecLen(1); err == nil && n == 0 {
				return nil, c.attrInt("noop_with_empty_axes", 0) == 1, nil
			}
			return nil, false, errDynamicAxes
		}
		a, err := c.constInts(1)
		if err != nil {
			return nil, false, err
		}
		if len(a) > 0 {
			return a, false, nil
		}
	}
	return nil, c.attrInt("noop_with_empty_axes", 0) == 1, nil
}

// errDynamicAxes says a Reduce node's axes are known only at run time.
var errDynamicAxes = errors.New("axes known at run time")

func reduceConverter(kind string) converter {
	return func(c *nodeCtx) ([]ir.Expr, error) {
		x, err := c.arg(0)
		if err != nil {
			return nil, err
		}
		axes, identity, err := c.reduceAxes(kind)
		if err == errDynamicAxes {
			o, ok := map[string]*ir.Op{"sum": op.Sum, "mean": op.Mean, "max": op.Max, "min": op.Min, "prod": op.Prod}[kind]
			if !ok {
				return nil, c.notConstant(1)
			}
			return dynReduce(c, x, o, c.attrInt("keepdims", 1) == 1)
		}
		if err != nil {
			return nil, err
		}
		if identity {
			return one(x)
		}
		attrs := ir.Attrs{"keepdims": c.attrInt("keepdims", 1) == 1}
		if axes != nil {
			attrs["axis"] = anyInts(axes)
		}
		dt := dtypeOf(x)
		switch kind {
		case "sum":
			return one(c.emitOp(op.Sum, attrs, x))
		case "mean":
			return one(c.emitOp(op.Mean, attrs, x))
		case "max":
			return one(c.emitOp(op.Max, attrs, x))
		case "min":
			return one(c.emitOp(op.Min, attrs, x))
		case "prod":
			return one(c.emitOp(op.Prod, attrs, x))
		case "l1":
			return one(c.emitOp(op.Sum, attrs, c.emitOp(op.Abs, nil, x)))
		case "l2":
			sq := c.emitOp(op.Sum, attrs, c.emitOp(op.Multiply, nil, x, x))
			if !dt.IsFloat() {
				return one(c.castTo(c.emitOp(op.Sqrt, nil, c.castTo(sq, ir.Float32)), dt))
			}
			return one(c.emitOp(op.Sqrt, nil, sq))
		case "logsum":
			return one(c.emitOp(op.Log, nil, c.emitOp(op.Sum, attrs, x)))
		case "sumsquare":
			return one(c.emitOp(op.Sum, attrs, c.emitOp(op.Multiply, nil, x, x)))
		case "logsumexp":
			keep := ir.Attrs{"keepdims": true}
			if axes != nil {
				keep["axis"] = anyInts(axes)
			}
			m := c.emitOp(op.Max, keep, x)
			s := c.emitOp(op.Sum, attrs, c.emitOp(op.Exp, nil, c.emitOp(op.Subtract, nil, x, m)))
			mm := m
			if !attrs["keepdims"].(bool) {
				mm = c.emitOp(op.Max, attrs, x)
			}
			return one(c.emitOp(op.Add, nil, c.emitOp(op.Log, nil, s), mm))
		}
		return nil, fmt.Errorf("unknown reduction %s", kind)
	}
}

// argConverter: ArgMax/ArgMin return int64; select_last_index searches
// the flipped axis.
func argConverter(o *ir.Op) converter {
	return func(c *nodeCtx) ([]ir.Expr, error) {
		x, err := c.arg(0)
		if err != nil {
			return nil, err
		}
		axis := c.attrInt("axis", 0)
		keep := c.attrInt("keepdims", 1) == 1
		if c.attrInt("select_last_index", 0) == 1 {
			rank, err := c.rank(0)
			if err != nil {
				return nil, err
			}
			ax, err := normAxis(axis, rank)
			if err != nil {
				return nil, err
			}
			dims, err := c.dims(0)
			if err != nil {
				return nil, err
			}
			flipped := c.emitOp(opFlip, ir.Attrs{"axis": int64(ax)}, x)
			idx := c.castTo(c.emitOp(o, ir.Attrs{"axis": int64(ax), "keepdims": keep}, flipped), ir.Int64)
			n, ok := ir.IntValue(dims[ax])
			if !ok {
				return nil, unsupported("select_last_index over a symbolic axis")
			}
			return one(c.emitOp(op.Subtract, nil, scalarConst(float64(n-1), ir.Int64), idx))
		}
		return one(c.castTo(c.emitOp(o, ir.Attrs{"axis": axis, "keepdims": keep}, x), ir.Int64))
	}
}

// convertCumSum: the axis is an input; reverse flips before and after.
func convertCumSum(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	if _, ok := c.constant(1); !ok {
		return dynCumSum(c, x, rank, func(x ir.Expr, axis int) ir.Expr { return c.cumsumAlong(x, axis) })
	}
	ax, err := c.constInts(1)
	if err != nil {
		return nil, err
	}
	if len(ax) != 1 {
		return nil, fmt.Errorf("axis must be a scalar")
	}
	axis, err := normAxis(ax[0], rank)
	if err != nil {
		return nil, err
	}
	return one(c.cumsumAlong(x, axis))
}

// cumsumAlong is CumSum along axis with the node's reverse and exclusive.
func (c *nodeCtx) cumsumAlong(x ir.Expr, axis int) ir.Expr {
	rev := c.attrInt("reverse", 0) == 1
	if rev {
		x = c.emitOp(opFlip, ir.Attrs{"axis": int64(axis)}, x)
	}
	out := c.emitOp(op.Cumsum, ir.Attrs{"axis": int64(axis), "exclusive": c.attrInt("exclusive", 0) == 1}, x)
	if rev {
		out = c.emitOp(opFlip, ir.Attrs{"axis": int64(axis)}, out)
	}
	return out
}

func convertTopK(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	var k int64
	if c.opset < 10 {
		k = c.attrInt("k", 1)
	} else {
		if _, ok := c.constant(1); !ok {
			if c.attrInt("sorted", 1) != 1 {
				return nil, unsupported("TopK with sorted=0")
			}
			return dynTopK(c, x)
		}
		ks, err := c.constInts(1)
		if err != nil {
			return nil, err
		}
		if len(ks) != 1 {
			return nil, fmt.Errorf("k must be a scalar")
		}
		k = ks[0]
	}
	if c.attrInt("sorted", 1) != 1 {
		return nil, unsupported("TopK with sorted=0")
	}
	t := c.emitOp(op.TopK, ir.Attrs{"k": k, "axis": c.attrInt("axis", -1), "ret_type": "both",
		"largest": c.attrInt("largest", 1) == 1, "dtype": ir.Int64}, x)
	vals := c.imp.b.Emit(&ir.TupleGetItem{Tuple: t, Index: 0}, "lv")
	idx := c.imp.b.Emit(&ir.TupleGetItem{Tuple: t, Index: 1}, "lv")
	return []ir.Expr{vals, idx}, nil
}

// convertQuantize: saturate(round(x / scale) + zero_point), uint8 unless
// the zero point says otherwise; per-axis scales broadcast along axis.
func convertQuantize(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	scale, err := c.perAxis(1)
	if err != nil {
		return nil, err
	}
	out := ir.DataType(ir.UInt8)
	var zp ir.Expr = scalarConst(0, ir.Float32)
	if c.has(2) {
		out = dtypeOf(c.in[2])
		z, err := c.perAxis(2)
		if err != nil {
			return nil, err
		}
		zp = c.castTo(z, dtypeOf(x))
	}
	lo, hi := 0.0, 255.0
	switch out {
	case ir.Int8:
		lo, hi = -128, 127
	case ir.UInt16:
		hi = 65535
	case ir.Int16:
		lo, hi = -32768, 32767
	case ir.UInt8:
	default:
		return nil, unsupported("quantizing to %s", out)
	}
	q := c.emitOp(op.Round, nil, c.emitOp(op.Divide, nil, x, scale))
	q = c.emitOp(op.Add, nil, q, c.castTo(zp, dtypeOf(x)))
	q = c.emitOp(op.Clip, nil, q, ir.NewPrimValue(ir.NewFloat(ir.Float64, lo)), ir.NewPrimValue(ir.NewFloat(ir.Float64, hi)))
	return one(c.castTo(q, out))
}

func convertDequantize(c *nodeCtx) ([]ir.Expr, error) {
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	scale, err := c.perAxis(1)
	if err != nil {
		return nil, err
	}
	dt := dtypeOf(scale)
	v := c.castTo(x, dt)
	if c.has(2) {
		z, err := c.perAxis(2)
		if err != nil {
			return nil, err
		}
		v = c.emitOp(op.Subtract, nil, v, c.castTo(z, dt))
	}
	return one(c.emitOp(op.Multiply, nil, v, scale))
}

// perAxis reshapes a 1-D per-axis quantization parameter to broadcast
// along the node's axis of input 0.
func (c *nodeCtx) perAxis(i int) (ir.Expr, error) {
	p, err := c.arg(i)
	if err != nil {
		return nil, err
	}
	t, err := c.tinfo(i)
	if err != nil {
		return nil, err
	}
	if t.NDim == 0 {
		return p, nil
	}
	rank, err := c.rank(0)
	if err != nil {
		return nil, err
	}
	axis, err := normAxis(c.attrInt("axis", 1), rank)
	if err != nil {
		return nil, err
	}
	return c.alongAxis(p, rank, axis), nil
}

// alongAxis expands a 1-D x to rank dims, its one axis at axis.
func (c *nodeCtx) alongAxis(x ir.Expr, rank, axis int) ir.Expr {
	var axes []int
	for i := range rank {
		if i != axis {
			axes = append(axes, i)
		}
	}
	if len(axes) == 0 {
		return x
	}
	return c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts(axes)}, x)
}
