package op

import (
	"errors"
	"math"

	"github.com/phasec/phasec/ir"
)

// Elementwise binary tensor ops with numpy broadcasting. Operands are
// tensors or scalars (R.Prim, treated as rank-0 tensors); both operands
// must have the same dtype when both are known; comparisons yield bool.
//
// The registry names follow R.<name>; Add is R.add because OpAdd is
// the PrimExpr binary operator.

var (
	Add = binary("relax.add", "Elementwise x1 + x2 with broadcasting.", addF, addI,
		tirBinary(ir.OpAdd))
	Subtract = binary("relax.subtract", "Elementwise x1 - x2 with broadcasting.", subF, subI,
		tirBinary(ir.OpSub))
	Multiply = binary("relax.multiply", "Elementwise x1 * x2 with broadcasting.", mulF, mulI,
		tirBinary(ir.OpMul))
	Divide = binary("relax.divide", "Elementwise x1 / x2 with broadcasting (integers: truncating, as TIR Div).", divF, truncDivI,
		tirBinary(ir.OpDiv))
	FloorDivide = binary("relax.floor_divide", "Elementwise floor(x1 / x2) with broadcasting.", floorDivF, floorDivI,
		tirFloatOr(func(a, b ir.PrimExpr) ir.PrimExpr { return intrinsic("floor", a.DType(), ir.NewBinary(ir.OpDiv, a, b)) }, tirBinary(ir.OpFloorDiv)))
	Mod = binary("relax.mod", "Elementwise remainder with the sign of x1 (truncating, as C fmod / TIR Mod).", math.Mod, truncModI,
		tirFloatOr(tirIntrinsic2("fmod"), tirBinary(ir.OpMod)))
	FloorMod = binary("relax.floor_mod", "Elementwise remainder with the sign of x2 (numpy mod).", floorModF, floorModI,
		tirBinary(ir.OpFloorMod))
	Power = binary("relax.power", "Elementwise x1 ** x2 with broadcasting.", math.Pow, powI,
		tirIntrinsic2("pow"))
	Maximum = binary("relax.maximum", "Elementwise max(x1, x2) with broadcasting.", maxF, func(a, b int64) (int64, error) { return max(a, b), nil },
		tirBinary(ir.OpMax))
	Minimum = binary("relax.minimum", "Elementwise min(x1, x2) with broadcasting.", minF, func(a, b int64) (int64, error) { return min(a, b), nil },
		tirBinary(ir.OpMin))

	Equal = compare("relax.equal", "Elementwise x1 == x2 with broadcasting; bool result.", func(c int) bool { return c == 0 },
		tirBinary(ir.OpEQ))
	NotEqual = compare("relax.not_equal", "Elementwise x1 != x2 with broadcasting; bool result.", func(c int) bool { return c != 0 },
		tirBinary(ir.OpNE))
	Less = compare("relax.less", "Elementwise x1 < x2 with broadcasting; bool result.", func(c int) bool { return c < 0 },
		tirBinary(ir.OpLT))
	LessEqual = compare("relax.less_equal", "Elementwise x1 <= x2 with broadcasting; bool result.", func(c int) bool { return c <= 0 },
		tirBinary(ir.OpLE))
	Greater = compare("relax.greater", "Elementwise x1 > x2 with broadcasting; bool result.", func(c int) bool { return c > 0 },
		tirBinary(ir.OpGT))
	GreaterEqual = compare("relax.greater_equal", "Elementwise x1 >= x2 with broadcasting; bool result.", func(c int) bool { return c >= 0 },
		tirBinary(ir.OpGE))

	// Logical and bitwise ops: integers and bools only.
	LogicalAnd = binaryInt("relax.logical_and", "Elementwise x1 and x2 of bool tensors.", func(a, b int64) (int64, error) { return a & b, nil },
		tirBinary(ir.OpAnd))
	LogicalOr = binaryInt("relax.logical_or", "Elementwise x1 or x2 of bool tensors.", func(a, b int64) (int64, error) { return a | b, nil },
		tirBinary(ir.OpOr))
	LogicalXor = binaryInt("relax.logical_xor", "Elementwise x1 xor x2 of bool tensors.", func(a, b int64) (int64, error) { return a ^ b, nil },
		func(a, b ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(ir.OpNE, a, b) })
	BitwiseAnd = binaryInt("relax.bitwise_and", "Elementwise bitwise and of integer tensors.", func(a, b int64) (int64, error) { return a & b, nil },
		tirIntrinsic2("bitwise_and"))
	BitwiseOr = binaryInt("relax.bitwise_or", "Elementwise bitwise or of integer tensors.", func(a, b int64) (int64, error) { return a | b, nil },
		tirIntrinsic2("bitwise_or"))
	BitwiseXor = binaryInt("relax.bitwise_xor", "Elementwise bitwise xor of integer tensors.", func(a, b int64) (int64, error) { return a ^ b, nil },
		tirIntrinsic2("bitwise_xor"))
	LeftShift = binaryInt("relax.left_shift", "Elementwise x1 << x2 of integer tensors.", shlI,
		tirIntrinsic2("shift_left"))
	RightShift = binaryInt("relax.right_shift", "Elementwise x1 >> x2 (arithmetic for signed) of integer tensors.", shrI,
		tirIntrinsic2("shift_right"))
)

// Float and integer semantics. Integer division and remainder by zero are
// errors (TIR leaves them undefined; numpy warns and returns 0).
func addF(a, b float64) float64 { return a + b }
func subF(a, b float64) float64 { return a - b }
func mulF(a, b float64) float64 { return a * b }
func divF(a, b float64) float64 { return a / b }
func maxF(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}
func minF(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}
func floorDivF(a, b float64) float64 { return math.Floor(a / b) }

// floorModF is a - floor(a / b) * b, TIR floormod on floats.
func floorModF(a, b float64) float64 { return a - math.Floor(a/b)*b }

func addI(a, b int64) (int64, error) { return a + b, nil }
func subI(a, b int64) (int64, error) { return a - b, nil }
func mulI(a, b int64) (int64, error) { return a * b, nil }

var errDivZero = errors.New("integer division by zero")

func truncDivI(a, b int64) (int64, error) {
	if b == 0 {
		return 0, errDivZero
	}
	if b == -1 {
		return -a, nil // MinInt64 / -1 wraps, as the hardware result would
	}
	return a / b, nil
}

func truncModI(a, b int64) (int64, error) {
	if b == 0 {
		return 0, errDivZero
	}
	if b == -1 {
		return 0, nil
	}
	return a % b, nil
}

func floorDivI(a, b int64) (int64, error) {
	q, err := truncDivI(a, b)
	if err != nil {
		return 0, err
	}
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q, nil
}

func floorModI(a, b int64) (int64, error) {
	r, err := truncModI(a, b)
	if err != nil {
		return 0, err
	}
	if r != 0 && ((r < 0) != (b < 0)) {
		r += b
	}
	return r, nil
}

// powI is integer exponentiation; a negative exponent gives 0 unless the
// base is 1 or -1 (the truncated real result).
func powI(a, b int64) (int64, error) {
	if b < 0 {
		switch a {
		case 1:
			return 1, nil
		case -1:
			if b%2 == 0 {
				return 1, nil
			}
			return -1, nil
		case 0:
			return 0, errDivZero
		}
		return 0, nil
	}
	r := int64(1)
	for ; b > 0; b >>= 1 {
		if b&1 == 1 {
			r *= a
		}
		a *= a
	}
	return r, nil
}

func shlI(a, b int64) (int64, error) {
	if b < 0 || b >= 64 {
		return 0, nil
	}
	return a << uint(b), nil
}

func shrI(a, b int64) (int64, error) {
	if b < 0 || b >= 64 {
		if a < 0 {
			return -1, nil
		}
		return 0, nil
	}
	return a >> uint(b), nil
}

// binary registers an arithmetic op.
func binary(name, doc string, ff func(a, b float64) float64, fi func(a, b int64) (int64, error), tir func(a, b ir.PrimExpr) ir.PrimExpr) *ir.Op {
	op := newBinaryOp(name, doc, false)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		a, b, err := binaryArgs(op, args)
		if err != nil {
			return nil, err
		}
		var ierr error
		out, err := elementwise(op, a.dt, []*array{a, b}, func(out *array, k int64, ks []int64) {
			if a.f != nil {
				out.setFloat(k, ff(a.f[ks[0]], b.f[ks[1]]))
				return
			}
			x, y := a.i[ks[0]], b.i[ks[1]]
			if a.dt.IsUInt() && a.dt.Bits == 64 {
				x, y = int64(uint64(x)), int64(uint64(y))
			}
			v, e := fi(x, y)
			if e != nil && ierr == nil {
				ierr = e
			}
			out.setInt(k, v)
		})
		if err != nil {
			return nil, err
		}
		if ierr != nil {
			return nil, opErrorf(op, "%v", ierr)
		}
		return result(out, isScalarArg(args[0]) && isScalarArg(args[1]))
	}
	return Define(Def{Op: op, Eval: eval, Legalize: binaryLegalize(tir), Layout: layoutBinary, MixedPrecision: mixedFollow})
}

// compare registers a comparison; test maps the three-way comparison of
// the operands to the result (NaN compares false except for !=).
func compare(name, doc string, test func(c int) bool, tir func(a, b ir.PrimExpr) ir.PrimExpr) *ir.Op {
	op := newBinaryOp(name, doc, true)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		a, b, err := binaryArgs(op, args)
		if err != nil {
			return nil, err
		}
		out, err := elementwise(op, ir.Bool, []*array{a, b}, func(out *array, k int64, ks []int64) {
			var c int
			if a.f != nil {
				x, y := a.f[ks[0]], b.f[ks[1]]
				if math.IsNaN(x) || math.IsNaN(y) {
					if test(1) && test(-1) { // not_equal
						out.i[k] = 1
					}
					return
				}
				c = cmpFloat(x, y)
			} else if a.dt.IsUInt() {
				c = cmpUint(uint64(a.i[ks[0]]), uint64(b.i[ks[1]]))
			} else {
				c = cmpInt(a.i[ks[0]], b.i[ks[1]])
			}
			if test(c) {
				out.i[k] = 1
			}
		})
		if err != nil {
			return nil, err
		}
		return result(out, isScalarArg(args[0]) && isScalarArg(args[1]))
	}
	return Define(Def{Op: op, Eval: eval, Legalize: binaryLegalize(tir), Layout: layoutBinary, MixedPrecision: mixedFollow})
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// binaryInt registers an op on integer or bool operands.
func binaryInt(name, doc string, fi func(a, b int64) (int64, error), tir func(a, b ir.PrimExpr) ir.PrimExpr) *ir.Op {
	op := newBinaryOp(name, doc, false)
	infer := op.Infer
	op.Infer = func(ctx *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		s, err := infer(ctx, call)
		if err != nil {
			return nil, err
		}
		if dt := sinfoDType(s); dt.IsFloat() {
			return nil, opErrorf(op, "operands must be integer or bool, got %s", dt)
		}
		return s, nil
	}
	eval := func(call *ir.Call, args []Value) (Value, error) {
		a, b, err := binaryArgs(op, args)
		if err != nil {
			return nil, err
		}
		if a.f != nil {
			return nil, opErrorf(op, "operands must be integer or bool, got %s", a.dt)
		}
		out, err := elementwise(op, a.dt, []*array{a, b}, func(out *array, k int64, ks []int64) {
			v, _ := fi(a.i[ks[0]], b.i[ks[1]])
			out.setInt(k, v)
		})
		if err != nil {
			return nil, err
		}
		return result(out, isScalarArg(args[0]) && isScalarArg(args[1]))
	}
	return Define(Def{Op: op, Eval: eval, Legalize: binaryLegalize(tir), Layout: layoutBinary, MixedPrecision: mixedFollow})
}

// sinfoDType is the dtype of a tensor or scalar struct info.
func sinfoDType(s ir.StructInfo) ir.DataType {
	switch s := s.(type) {
	case *ir.TensorInfo:
		return s.DType
	case *ir.PrimInfo:
		return s.DType
	}
	return ir.Void
}

// binaryArgs reads both operands and checks that their dtypes agree (TVM
// does not promote between tensor dtypes).
func binaryArgs(op *ir.Op, args []Value) (a, b *array, err error) {
	if a, err = argArray(op, args, 0); err != nil {
		return nil, nil, err
	}
	if b, err = argArray(op, args, 1); err != nil {
		return nil, nil, err
	}
	if a.dt != b.dt {
		return nil, nil, opErrorf(op, "data types %s and %s must be equal", a.dt, b.dt)
	}
	return a, b, nil
}

func newBinaryOp(name, doc string, compare bool) *ir.Op {
	op := &ir.Op{Name: name, Doc: doc, Pure: true, Category: ir.CatTensor, Pattern: ir.PatternBroadcast,
		Params: []ir.Param{{Name: "x1", Kind: ir.ArgExpr}, {Name: "x2", Kind: ir.ArgExpr}}}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return inferBinary(op, call, compare) }
	return op
}

// binaryOperand returns an operand as a tensor; scalars become rank-0
// tensors and are reported with isPrim.
func binaryOperand(op *ir.Op, call *ir.Call, i int) (t *ir.TensorInfo, isPrim bool, err error) {
	switch s := argStructInfo(call.Args[i]).(type) {
	case *ir.TensorInfo:
		return s, false, nil
	case *ir.PrimInfo:
		return ir.TensorInfoOf(s.DType), true, nil
	default:
		return nil, false, opErrorf(op, "%s must be a tensor or a scalar, got %s", opArgName(op, i), sinfoKind(s))
	}
}

func inferBinary(op *ir.Op, call *ir.Call, compare bool) (ir.StructInfo, error) {
	if err := opCheckArity(op, call); err != nil {
		return nil, err
	}
	a, aPrim, err := binaryOperand(op, call, 0)
	if err != nil {
		return nil, err
	}
	b, bPrim, err := binaryOperand(op, call, 1)
	if err != nil {
		return nil, err
	}
	dtype, err := unifyDType(op, a.DType, b.DType)
	if err != nil {
		return nil, err
	}
	if compare {
		dtype = ir.Bool
	}
	if aPrim && bPrim {
		return ir.NewPrimInfo(dtype), nil
	}
	if a.NDim < 0 || b.NDim < 0 {
		return ir.TensorInfoNDim(dtype, -1), nil
	}
	ndim := max(a.NDim, b.NDim)
	if a.Shape != nil && a.Shape == b.Shape {
		// The same shape value on both sides: keep it, even if symbolic.
		if a.DType == dtype && a.NDim == ndim && a.VDevice == nil {
			return a, nil
		}
		return &ir.TensorInfo{Shape: a.Shape, DType: dtype, NDim: ndim}, nil
	}
	da, okA := a.Dims()
	db, okB := b.Dims()
	if !okA || !okB {
		return ir.TensorInfoNDim(dtype, ndim), nil
	}
	var scratch [4]ir.PrimExpr
	dims, known, err := broadcastDims(op, da, db, scratch[:])
	if err != nil {
		return nil, err
	}
	if known && sameKnownTensor(a, dtype, dims) {
		return a, nil
	}
	return newTensor(dtype, dims, known, ndim), nil
}

// --- legalization -------------------------------------------------------------

// The TIR forms of the binary ops.

// tirBinary is the PrimExpr operator o.
func tirBinary(o ir.BinaryOp) func(a, b ir.PrimExpr) ir.PrimExpr {
	return func(a, b ir.PrimExpr) ir.PrimExpr { return ir.NewBinary(o, a, b) }
}

// tirIntrinsic2 calls the two-operand intrinsic name.
func tirIntrinsic2(name string) func(a, b ir.PrimExpr) ir.PrimExpr {
	return func(a, b ir.PrimExpr) ir.PrimExpr { return intrinsic(name, a.DType(), a, b) }
}

// tirFloatOr is float on float operands, integer otherwise.
func tirFloatOr(float, integer func(a, b ir.PrimExpr) ir.PrimExpr) func(a, b ir.PrimExpr) ir.PrimExpr {
	return func(a, b ir.PrimExpr) ir.PrimExpr {
		if a.DType().IsFloat() {
			return float(a, b)
		}
		return integer(a, b)
	}
}

// binaryLegalize is topi's broadcast form of the op computing tir: block
// and output T_<op>, loops ax0.., operands indexed with 0 along their
// broadcast dimensions.
func binaryLegalize(tir func(a, b ir.PrimExpr) ir.PrimExpr) LegalizeFunc {
	return func(k *Kernel, call *ir.Call) error {
		name := "T_" + opOf(call).Name[len("relax."):]
		_, outDims, ok := knownTensorInfo(call.StructInfo())
		if !ok {
			return ErrNotLegalizable
		}
		outDims = k.Dims(outDims)
		a, err := k.Operand(call.Args[0], "A", outDims)
		if err != nil {
			return err
		}
		b, err := k.Operand(call.Args[1], "B", outDims)
		if err != nil {
			return err
		}
		out, err := k.Output(name)
		if err != nil {
			return err
		}
		k.Compute(name, out, "ax", func(v []ir.PrimExpr) ir.PrimExpr { return castTo(out.DType, tir(a(v), b(v))) })
		return nil
	}
}
