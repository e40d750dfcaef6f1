package kernel

import (
	"math"
	"math/bits"

	"github.com/phasec/phasec/ir"
)

// Scalar closures. Integers and booleans evaluate to int64 (booleans 0/1,
// narrower integers kept wrapped to their width, unsigned values
// zero-extended); floats evaluate to float64 rounded to their dtype's
// precision.
type (
	iexpr func(fr *frame) int64
	fexpr func(fr *frame) float64
)

// isFloatType reports whether dt evaluates as an fexpr.
func isFloatType(dt ir.DataType) bool { return dt.IsFloat() }

// wrapInt returns the function that brings an int64 result back into dt's
// range, or nil when none is needed (int64, uint64 bit patterns).
func wrapInt(dt ir.DataType) func(int64) int64 {
	switch {
	case dt.IsBool():
		return func(v int64) int64 {
			if v != 0 {
				return 1
			}
			return 0
		}
	case dt.IsInt():
		switch dt.Bits {
		case 8:
			return func(v int64) int64 { return int64(int8(v)) }
		case 16:
			return func(v int64) int64 { return int64(int16(v)) }
		case 32:
			return func(v int64) int64 { return int64(int32(v)) }
		}
	case dt.IsUInt():
		switch dt.Bits {
		case 1:
			return func(v int64) int64 { return v & 1 }
		case 8:
			return func(v int64) int64 { return int64(uint8(v)) }
		case 16:
			return func(v int64) int64 { return int64(uint16(v)) }
		case 32:
			return func(v int64) int64 { return int64(uint32(v)) }
		}
	}
	return nil
}

// wrapValue applies wrapInt(dt) to one value (compile-time folding).
func wrapValue(dt ir.DataType, v int64) int64 {
	if w := wrapInt(dt); w != nil {
		return w(v)
	}
	return v
}

// roundFloat returns the rounding of a float64 to dt's precision.
func roundFloat(dt ir.DataType) func(float64) float64 {
	switch {
	case dt.Code == ir.CodeBFloat:
		return func(v float64) float64 { return float64(bf16ToF32(f32ToBF16(float32(v)))) }
	case dt.Bits == 16:
		return func(v float64) float64 { return float64(f16ToF32(f32ToF16(float32(v)))) }
	case dt.Bits == 32:
		return func(v float64) float64 { return float64(float32(v)) }
	}
	return nil
}

func roundValue(dt ir.DataType, v float64) float64 {
	if r := roundFloat(dt); r != nil {
		return r(v)
	}
	return v
}

// choose is T.Select / T.if_then_else: t when cond holds, else f (only
// the chosen operand is evaluated, which guarded loads rely on).
func choose[T int64 | float64](cond iexpr, t, f func(*frame) T) func(*frame) T {
	return func(fr *frame) T {
		if cond(fr) != 0 {
			return t(fr)
		}
		return f(fr)
	}
}

// compileI compiles an integer or boolean expression.
func (c *compiler) compileI(e ir.PrimExpr) iexpr {
	dt := e.DType()
	if isFloatType(dt) || dt.IsHandle() || dt.IsVoid() || dt.Lanes > 1 {
		c.fail(e, "expected an integer or boolean expression, found %s", typeName(dt))
	}
	switch e := e.(type) {
	case *ir.IntImm:
		v := wrapValue(e.Type, e.Value)
		return func(*frame) int64 { return v }
	case *ir.PrimVar:
		slot := c.intVar(e)
		return func(fr *frame) int64 { return fr.ints[slot] }
	case *ir.Binary:
		return c.binaryI(e)
	case *ir.Not:
		a := c.compileI(e.A)
		return func(fr *frame) int64 { return a(fr) ^ 1 }
	case *ir.Select:
		return choose(c.compileI(e.Cond), c.compileI(e.True), c.compileI(e.False))
	case *ir.Cast:
		return c.castI(e)
	case *ir.BufferLoad:
		return c.loadI(e)
	case *ir.PrimCall:
		return c.callI(e)
	}
	c.fail(e, "unsupported expression %T in a kernel", e)
	return nil
}

// compileF compiles a float expression.
func (c *compiler) compileF(e ir.PrimExpr) fexpr {
	dt := e.DType()
	if !isFloatType(dt) || dt.Lanes > 1 {
		c.fail(e, "expected a float expression, found %s", typeName(dt))
	}
	switch e := e.(type) {
	case *ir.FloatImm:
		v := roundValue(e.Type, e.Value)
		return func(*frame) float64 { return v }
	case *ir.PrimVar:
		slot := c.fltVar(e)
		return func(fr *frame) float64 { return fr.flts[slot] }
	case *ir.Binary:
		return c.binaryF(e)
	case *ir.Select:
		return choose(c.compileI(e.Cond), c.compileF(e.True), c.compileF(e.False))
	case *ir.Cast:
		return c.castF(e)
	case *ir.BufferLoad:
		return c.loadF(e)
	case *ir.PrimCall:
		return c.callF(e)
	}
	c.fail(e, "unsupported expression %T in a kernel", e)
	return nil
}

func typeName(dt ir.DataType) string {
	if dt.IsVoid() {
		return "void"
	}
	return dt.String()
}

// constI reports the value of an integer constant expression.
func constI(e ir.PrimExpr) (int64, bool) {
	if v, ok := e.(*ir.IntImm); ok {
		return wrapValue(v.Type, v.Value), true
	}
	return 0, false
}

func (c *compiler) binaryI(e *ir.Binary) iexpr {
	at := e.A.DType()
	if e.Op.IsCompare() {
		if isFloatType(at) {
			a, b := c.compileF(e.A), c.compileF(e.B)
			return cmpF(e.Op, a, b)
		}
		a, b := c.compileI(e.A), c.compileI(e.B)
		if at.IsUInt() && at.Bits == 64 {
			return cmpU(e.Op, a, b)
		}
		if k, ok := constI(e.B); ok {
			return cmpIConst(e.Op, a, k)
		}
		return cmpI(e.Op, a, b)
	}
	a, b := c.compileI(e.A), c.compileI(e.B)
	switch e.Op {
	case ir.OpAnd:
		return func(fr *frame) int64 {
			if a(fr) != 0 && b(fr) != 0 {
				return 1
			}
			return 0
		}
	case ir.OpOr:
		return func(fr *frame) int64 {
			if a(fr) != 0 || b(fr) != 0 {
				return 1
			}
			return 0
		}
	}
	dt := e.DType()
	w := wrapInt(dt)
	unsigned := dt.IsUInt()
	var f iexpr
	if k, ok := constI(e.B); ok && (e.Op == ir.OpAdd || e.Op == ir.OpMul || e.Op == ir.OpSub) {
		switch e.Op {
		case ir.OpAdd:
			f = func(fr *frame) int64 { return a(fr) + k }
		case ir.OpSub:
			f = func(fr *frame) int64 { return a(fr) - k }
		case ir.OpMul:
			f = func(fr *frame) int64 { return a(fr) * k }
		}
	} else {
		op := intBinop(e.Op, unsigned)
		if op == nil {
			c.fail(e, "unsupported integer operator %s", e.Op)
		}
		switch e.Op {
		case ir.OpAdd:
			f = func(fr *frame) int64 { return a(fr) + b(fr) }
		case ir.OpSub:
			f = func(fr *frame) int64 { return a(fr) - b(fr) }
		case ir.OpMul:
			f = func(fr *frame) int64 { return a(fr) * b(fr) }
		default:
			f = func(fr *frame) int64 { return op(a(fr), b(fr)) }
		}
	}
	if w == nil {
		return f
	}
	return func(fr *frame) int64 { return w(f(fr)) }
}

// intBinop is the arithmetic of an integer operator with TIR semantics.
// Division by zero panics in Go; Call turns the panic into an error.
func intBinop(op ir.BinaryOp, unsigned bool) func(a, b int64) int64 {
	if unsigned {
		switch op {
		case ir.OpDiv, ir.OpFloorDiv:
			return func(a, b int64) int64 { return int64(uint64(a) / uint64(b)) }
		case ir.OpMod, ir.OpFloorMod:
			return func(a, b int64) int64 { return int64(uint64(a) % uint64(b)) }
		case ir.OpMin:
			return func(a, b int64) int64 { return int64(min(uint64(a), uint64(b))) }
		case ir.OpMax:
			return func(a, b int64) int64 { return int64(max(uint64(a), uint64(b))) }
		}
	}
	switch op {
	case ir.OpAdd:
		return func(a, b int64) int64 { return a + b }
	case ir.OpSub:
		return func(a, b int64) int64 { return a - b }
	case ir.OpMul:
		return func(a, b int64) int64 { return a * b }
	case ir.OpDiv:
		return func(a, b int64) int64 { return a / b }
	case ir.OpMod:
		return func(a, b int64) int64 { return a % b }
	case ir.OpFloorDiv:
		return floorDiv
	case ir.OpFloorMod:
		return floorMod
	case ir.OpMin:
		return func(a, b int64) int64 { return min(a, b) }
	case ir.OpMax:
		return func(a, b int64) int64 { return max(a, b) }
	}
	return nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	r := a % b
	if r != 0 && ((r < 0) != (b < 0)) {
		r += b
	}
	return r
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cmpI(op ir.BinaryOp, a, b iexpr) iexpr {
	switch op {
	case ir.OpEQ:
		return func(fr *frame) int64 { return b2i(a(fr) == b(fr)) }
	case ir.OpNE:
		return func(fr *frame) int64 { return b2i(a(fr) != b(fr)) }
	case ir.OpLT:
		return func(fr *frame) int64 { return b2i(a(fr) < b(fr)) }
	case ir.OpLE:
		return func(fr *frame) int64 { return b2i(a(fr) <= b(fr)) }
	case ir.OpGT:
		return func(fr *frame) int64 { return b2i(a(fr) > b(fr)) }
	default:
		return func(fr *frame) int64 { return b2i(a(fr) >= b(fr)) }
	}
}

func cmpIConst(op ir.BinaryOp, a iexpr, k int64) iexpr {
	switch op {
	case ir.OpEQ:
		return func(fr *frame) int64 { return b2i(a(fr) == k) }
	case ir.OpNE:
		return func(fr *frame) int64 { return b2i(a(fr) != k) }
	case ir.OpLT:
		return func(fr *frame) int64 { return b2i(a(fr) < k) }
	case ir.OpLE:
		return func(fr *frame) int64 { return b2i(a(fr) <= k) }
	case ir.OpGT:
		return func(fr *frame) int64 { return b2i(a(fr) > k) }
	default:
		return func(fr *frame) int64 { return b2i(a(fr) >= k) }
	}
}

func cmpU(op ir.BinaryOp, a, b iexpr) iexpr {
	switch op {
	case ir.OpEQ:
		return func(fr *frame) int64 { return b2i(a(fr) == b(fr)) }
	case ir.OpNE:
		return func(fr *frame) int64 { return b2i(a(fr) != b(fr)) }
	case ir.OpLT:
		return func(fr *frame) int64 { return b2i(uint64(a(fr)) < uint64(b(fr))) }
	case ir.OpLE:
		return func(fr *frame) int64 { return b2i(uint64(a(fr)) <= uint64(b(fr))) }
	case ir.OpGT:
		return func(fr *frame) int64 { return b2i(uint64(a(fr)) > uint64(b(fr))) }
	default:
		return func(fr *frame) int64 { return b2i(uint64(a(fr)) >= uint64(b(fr))) }
	}
}

func cmpF(op ir.BinaryOp, a, b fexpr) iexpr {
	switch op {
	case ir.OpEQ:
		return func(fr *frame) int64 { return b2i(a(fr) == b(fr)) }
	case ir.OpNE:
		return func(fr *frame) int64 { return b2i(a(fr) != b(fr)) }
	case ir.OpLT:
		return func(fr *frame) int64 { return b2i(a(fr) < b(fr)) }
	case ir.OpLE:
		return func(fr *frame) int64 { return b2i(a(fr) <= b(fr)) }
	case ir.OpGT:
		return func(fr *frame) int64 { return b2i(a(fr) > b(fr)) }
	default:
		return func(fr *frame) int64 { return b2i(a(fr) >= b(fr)) }
	}
}

// floatBinop is the arithmetic of a float operator before rounding.
func floatBinop(op ir.BinaryOp) func(a, b float64) float64 {
	switch op {
	case ir.OpAdd:
		return func(a, b float64) float64 { return a + b }
	case ir.OpSub:
		return func(a, b float64) float64 { return a - b }
	case ir.OpMul:
		return func(a, b float64) float64 { return a * b }
	case ir.OpDiv:
		return func(a, b float64) float64 { return a / b }
	case ir.OpMod:
		return math.Mod
	case ir.OpFloorDiv:
		return func(a, b float64) float64 { return math.Floor(a / b) }
	case ir.OpFloorMod:
		return func(a, b float64) float64 { return a - math.Floor(a/b)*b }
	case ir.OpMin:
		return func(a, b float64) float64 { return min(a, b) }
	case ir.OpMax:
		return func(a, b float64) float64 { return max(a, b) }
	}
	return nil
}

func (c *compiler) binaryF(e *ir.Binary) fexpr {
	a, b := c.compileF(e.A), c.compileF(e.B)
	op := floatBinop(e.Op)
	if op == nil {
		c.fail(e, "unsupported float operator %s", e.Op)
	}
	r := roundFloat(e.DType())
	if r == nil { // float64
		switch e.Op {
		case ir.OpAdd:
			return func(fr *frame) float64 { return a(fr) + b(fr) }
		case ir.OpMul:
			return func(fr *frame) float64 { return a(fr) * b(fr) }
		}
		return func(fr *frame) float64 { return op(a(fr), b(fr)) }
	}
	if e.DType().Bits == 32 {
		switch e.Op {
		case ir.OpAdd:
			return func(fr *frame) float64 { return float64(float32(a(fr) + b(fr))) }
		case ir.OpSub:
			return func(fr *frame) float64 { return float64(float32(a(fr) - b(fr))) }
		case ir.OpMul:
			return func(fr *frame) float64 { return float64(float32(a(fr) * b(fr))) }
		case ir.OpDiv:
			return func(fr *frame) float64 { return float64(float32(a(fr) / b(fr))) }
		}
	}
	return func(fr *frame) float64 { return r(op(a(fr), b(fr))) }
}

// castI compiles a cast to an integer or boolean type.
func (c *compiler) castI(e *ir.Cast) iexpr {
	to := e.Type
	from := e.Value.DType()
	if isFloatType(from) {
		v := c.compileF(e.Value)
		switch {
		case to.IsBool():
			return func(fr *frame) int64 { return b2i(v(fr) != 0) }
		case to.IsUInt() && to.Bits == 64:
			return func(fr *frame) int64 { return int64(uint64(v(fr))) }
		}
		w := wrapInt(to)
		if w == nil {
			return func(fr *frame) int64 { return int64(v(fr)) }
		}
		return func(fr *frame) int64 { return w(int64(v(fr))) }
	}
	v := c.compileI(e.Value)
	if to.IsBool() {
		return func(fr *frame) int64 { return b2i(v(fr) != 0) }
	}
	w := wrapInt(to)
	if w == nil {
		return v
	}
	return func(fr *frame) int64 { return w(v(fr)) }
}

// castF compiles a cast to a float type.
func (c *compiler) castF(e *ir.Cast) fexpr {
	r := roundFloat(e.Type)
	from := e.Value.DType()
	var f fexpr
	switch {
	case isFloatType(from):
		f = c.compileF(e.Value)
	case from.IsUInt() && from.Bits == 64:
		v := c.compileI(e.Value)
		f = func(fr *frame) float64 { return float64(uint64(v(fr))) }
	default:
		v := c.compileI(e.Value)
		f = func(fr *frame) float64 { return float64(v(fr)) }
	}
	if r == nil {
		return f
	}
	return func(fr *frame) float64 { return r(f(fr)) }
}

// unaryMath lists the float intrinsics of one argument.
var unaryMath = map[string]func(float64) float64{
	"exp":   math.Exp,
	"exp2":  math.Exp2,
	"exp10": func(x float64) float64 { return math.Pow(10, x) },
	"log":   math.Log, "log2": math.Log2, "log10": math.Log10, "log1p": math.Log1p,
	"sqrt":  math.Sqrt,
	"rsqrt": func(x float64) float64 { return 1 / math.Sqrt(x) },
	"tanh":  math.Tanh,
	"sigmoid": func(x float64) float64 {
		return 1 / (1 + math.Exp(-x))
	},
	"fabs": math.Abs, "abs": math.Abs, "floor": math.Floor, "ceil": math.Ceil,
	"round": math.RoundToEven, "nearbyint": math.RoundToEven, "trunc": math.Trunc,
	"sin": math.Sin, "cos": math.Cos, "tan": math.Tan, "asin": math.Asin, "acos": math.Acos,
	"atan": math.Atan, "sinh": math.Sinh, "cosh": math.Cosh, "asinh": math.Asinh,
	"acosh": math.Acosh, "atanh": math.Atanh, "erf": math.Erf,
}

// binaryMath lists the float intrinsics of two arguments.
var binaryMath = map[string]func(float64, float64) float64{
	"pow": math.Pow, "atan2": math.Atan2, "fmod": math.Mod, "hypot": math.Hypot,
	"copysign": math.Copysign,
}

func (c *compiler) callF(e *ir.PrimCall) fexpr {
	r := roundFloat(e.Type)
	round := func(f fexpr) fexpr {
		if r == nil {
			return f
		}
		return func(fr *frame) float64 { return r(f(fr)) }
	}
	switch e.Op {
	case "if_then_else":
		c.arity(e, 3)
		return choose(c.compileI(e.Args[0]), c.compileF(e.Args[1]), c.compileF(e.Args[2]))
	case "likely":
		c.arity(e, 1)
		return c.compileF(e.Args[0])
	case "reinterpret":
		c.arity(e, 1)
		v := c.compileI(e.Args[0])
		switch {
		case e.Type.Bits == 32 && e.Args[0].DType().Bits == 32:
			return func(fr *frame) float64 { return float64(math.Float32frombits(uint32(v(fr)))) }
		case e.Type.Bits == 64 && e.Args[0].DType().Bits == 64:
			return func(fr *frame) float64 { return math.Float64frombits(uint64(v(fr))) }
		}
		c.fail(e, "unsupported T.reinterpret from %s to %s", e.Args[0].DType(), e.Type)
	}
	if fn, ok := unaryMath[e.Op]; ok {
		c.arity(e, 1)
		a := c.compileF(e.Args[0])
		return round(func(fr *frame) float64 { return fn(a(fr)) })
	}
	if fn, ok := binaryMath[e.Op]; ok {
		c.arity(e, 2)
		a, b := c.compileF(e.Args[0]), c.compileF(e.Args[1])
		return round(func(fr *frame) float64 { return fn(a(fr), b(fr)) })
	}
	c.fail(e, "unsupported intrinsic T.%s on %s", e.Op, typeName(e.Type))
	return nil
}

func (c *compiler) callI(e *ir.PrimCall) iexpr {
	w := wrapInt(e.Type)
	wrap := func(f iexpr) iexpr {
		if w == nil {
			return f
		}
		return func(fr *frame) int64 { return w(f(fr)) }
	}
	switch e.Op {
	case "if_then_else":
		c.arity(e, 3)
		return choose(c.compileI(e.Args[0]), c.compileI(e.Args[1]), c.compileI(e.Args[2]))
	case "likely":
		c.arity(e, 1)
		return c.compileI(e.Args[0])
	case "isnan", "isinf", "isfinite":
		c.arity(e, 1)
		if !isFloatType(e.Args[0].DType()) {
			// Integers are never NaN or infinite.
			v := b2i(e.Op == "isfinite")
			return func(*frame) int64 { return v }
		}
		a := c.compileF(e.Args[0])
		switch e.Op {
		case "isnan":
			return func(fr *frame) int64 { return b2i(math.IsNaN(a(fr))) }
		case "isinf":
			return func(fr *frame) int64 { return b2i(math.IsInf(a(fr), 0)) }
		}
		return func(fr *frame) int64 { x := a(fr); return b2i(!math.IsNaN(x) && !math.IsInf(x, 0)) }
	case "reinterpret":
		c.arity(e, 1)
		from := e.Args[0].DType()
		if isFloatType(from) {
			a := c.compileF(e.Args[0])
			switch {
			case from.Bits == 32 && e.Type.Bits == 32:
				return wrap(func(fr *frame) int64 { return int64(math.Float32bits(float32(a(fr)))) })
			case from.Bits == 64 && e.Type.Bits == 64:
				return func(fr *frame) int64 { return int64(math.Float64bits(a(fr))) }
			}
			c.fail(e, "unsupported T.reinterpret from %s to %s", from, e.Type)
		}
		return wrap(c.compileI(e.Args[0]))
	}
	if len(e.Args) == 0 {
		c.fail(e, "unsupported intrinsic T.%s", e.Op)
	}
	unsigned := e.Type.IsUInt()
	switch e.Op {
	case "abs":
		c.arity(e, 1)
		a := c.compileI(e.Args[0])
		if unsigned {
			return a
		}
		return wrap(func(fr *frame) int64 {
			x := a(fr)
			if x < 0 {
				return -x
			}
			return x
		})
	case "bitwise_not":
		c.arity(e, 1)
		a := c.compileI(e.Args[0])
		if e.Type.IsBool() {
			return func(fr *frame) int64 { return a(fr) ^ 1 }
		}
		return wrap(func(fr *frame) int64 { return ^a(fr) })
	case "popcount":
		c.arity(e, 1)
		a := c.compileI(e.Args[0])
		mask := bitMask(e.Type)
		return func(fr *frame) int64 { return int64(bits.OnesCount64(uint64(a(fr)) & mask)) }
	case "clz":
		c.arity(e, 1)
		a := c.compileI(e.Args[0])
		mask, width := bitMask(e.Type), int64(e.Type.Bits)
		return func(fr *frame) int64 { return int64(bits.LeadingZeros64(uint64(a(fr))&mask)) - (64 - width) }
	}
	if len(e.Args) != 2 {
		c.fail(e, "unsupported intrinsic T.%s on %s", e.Op, typeName(e.Type))
	}
	a, b := c.compileI(e.Args[0]), c.compileI(e.Args[1])
	switch e.Op {
	case "bitwise_and":
		return func(fr *frame) int64 { return a(fr) & b(fr) }
	case "bitwise_or":
		return func(fr *frame) int64 { return a(fr) | b(fr) }
	case "bitwise_xor":
		return func(fr *frame) int64 { return a(fr) ^ b(fr) }
	case "shift_left":
		return wrap(func(fr *frame) int64 { return a(fr) << uint64(b(fr)&63) })
	case "shift_right":
		if unsigned {
			return func(fr *frame) int64 { return int64(uint64(a(fr)) >> uint64(b(fr)&63)) }
		}
		return func(fr *frame) int64 { return a(fr) >> uint64(b(fr)&63) }
	}
	c.fail(e, "unsupported intrinsic T.%s on %s", e.Op, typeName(e.Type))
	return nil
}

func bitMask(dt ir.DataType) uint64 {
	if dt.Bits >= 64 {
		return ^uint64(0)
	}
	return uint64(1)<<dt.Bits - 1
}

func (c *compiler) arity(e *ir.PrimCall, n int) {
	if len(e.Args) != n {
		c.fail(e, "T.%s takes %d arguments, found %d", e.Op, n, len(e.Args))
	}
}
