package ir

import "math"

// Integer constant semantics shared by the simplifier and the prover.
//
// Integer values of every width are held as int64 in their *signed view*:
// an intN or uintN value is sign-extended from N bits (uint64 keeps its bit
// pattern). Sums and products are computed modulo 2^N, so the polynomial
// identities the canonical form relies on hold for wrapping arithmetic.
// Constants are converted back to the stored form of their type (zero
// extended for unsigned types) only when an IntImm is built.

// wrapInt reduces v to the signed view of an integer of type t.
func wrapInt(t DataType, v int64) int64 {
	if t.IsBool() {
		return b2i(v != 0)
	}
	bits := uint(t.Bits)
	if bits == 0 || bits >= 64 {
		return v
	}
	shift := 64 - bits
	return v << shift >> shift
}

// storedInt converts a signed-view value into the value an IntImm of type t
// stores: zero-extended for unsigned types narrower than 64 bits, 0/1 for
// bool.
func storedInt(t DataType, v int64) int64 {
	switch {
	case t.IsBool():
		if v != 0 {
			return 1
		}
		return 0
	case t.IsUInt() && t.Bits < 64:
		return int64(uint64(v) & (1<<t.Bits - 1))
	}
	return wrapInt(t, v)
}

// makeInt builds the IntImm of type t for the signed-view value v.
func makeInt(t DataType, v int64) *IntImm { return NewInt(t, storedInt(t, v)) }

// floorDivInt is floor division (rounds toward negative infinity). b != 0.
func floorDivInt(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// floorModInt is the remainder of floorDivInt; it has the sign of b. b != 0.
func floorModInt(a, b int64) int64 {
	r := a % b
	if r != 0 && ((r < 0) != (b < 0)) {
		r += b
	}
	return r
}

// gcd returns the greatest common divisor of |a| and |b| (gcd(0, 0) = 0).
func gcd(a, b int64) int64 {
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// foldIntBinary folds op over two integer constants of type t (signed
// view). ok is false when the result is undefined (division by zero).
// Comparisons and logical operators return 0 or 1.
func foldIntBinary(op BinaryOp, t DataType, a, b int64) (v int64, ok bool) {
	if t.IsUInt() {
		return foldUintBinary(op, t, unsignedView(t, a), unsignedView(t, b))
	}
	switch op {
	case OpAdd:
		return wrapInt(t, a+b), true
	case OpSub:
		return wrapInt(t, a-b), true
	case OpMul:
		return wrapInt(t, a*b), true
	case OpDiv, OpMod, OpFloorDiv, OpFloorMod:
		if b == 0 {
			return 0, false
		}
		if b == -1 { // avoid the MinInt64 / -1 trap; results wrap like the hardware would
			if op == OpDiv || op == OpFloorDiv {
				return wrapInt(t, -a), true
			}
			return 0, true
		}
		switch op {
		case OpDiv:
			return a / b, true
		case OpMod:
			return a % b, true
		case OpFloorDiv:
			return floorDivInt(a, b), true
		default:
			return floorModInt(a, b), true
		}
	case OpMin:
		return min(a, b), true
	case OpMax:
		return max(a, b), true
	case OpAnd:
		return b2i(a != 0 && b != 0), true
	case OpOr:
		return b2i(a != 0 || b != 0), true
	}
	if r, ok := compareConsts(op, a, b); ok {
		return b2i(r), true
	}
	return 0, false
}

func foldUintBinary(op BinaryOp, t DataType, a, b uint64) (int64, bool) {
	res := func(v uint64) (int64, bool) { return wrapInt(t, int64(v)), true }
	switch op {
	case OpAdd:
		return res(a + b)
	case OpSub:
		return res(a - b)
	case OpMul:
		return res(a * b)
	case OpDiv, OpFloorDiv, OpMod, OpFloorMod:
		if b == 0 {
			return 0, false
		}
		if op == OpDiv || op == OpFloorDiv {
			return res(a / b)
		}
		return res(a % b)
	case OpMin:
		return res(min(a, b))
	case OpMax:
		return res(max(a, b))
	case OpAnd:
		return b2i(a != 0 && b != 0), true
	case OpOr:
		return b2i(a != 0 || b != 0), true
	}
	if r, ok := compareConsts(op, a, b); ok {
		return b2i(r), true
	}
	return 0, false
}

// foldFloatBinary folds op over two float constants of type t, rounding
// arithmetic results to t's precision. Only float32 and float64 are folded:
// other widths would need their own rounding.
func foldFloatBinary(op BinaryOp, t DataType, a, b float64) (PrimExpr, bool) {
	if t.Code != CodeFloat || (t.Bits != 32 && t.Bits != 64) {
		return nil, false
	}
	round := func(v float64) PrimExpr {
		if t.Bits == 32 {
			v = float64(float32(v))
		}
		return NewFloat(t, v)
	}
	switch op {
	case OpAdd:
		return round(a + b), true
	case OpSub:
		return round(a - b), true
	case OpMul:
		return round(a * b), true
	case OpDiv:
		return round(a / b), true
	case OpMin:
		if math.IsNaN(a) || math.IsNaN(b) {
			return nil, false
		}
		return round(math.Min(a, b)), true
	case OpMax:
		if math.IsNaN(a) || math.IsNaN(b) {
			return nil, false
		}
		return round(math.Max(a, b)), true
	}
	if r, ok := compareConsts(op, a, b); ok {
		return NewBool(r), true
	}
	return nil, false
}

// compareConsts folds a comparison operator (==, !=, <, <=, >, >=) over two
// constants; ok is false for any other operator.
func compareConsts[T int64 | uint64 | float64](op BinaryOp, a, b T) (res, ok bool) {
	switch op {
	case OpEQ:
		return a == b, true
	case OpNE:
		return a != b, true
	case OpLT:
		return a < b, true
	case OpLE:
		return a <= b, true
	case OpGT:
		return a > b, true
	case OpGE:
		return a >= b, true
	}
	return false, false
}

// castConst converts constant c to type t. ok is false for conversions the
// simplifier leaves alone (to or from handles, vectors, odd float widths).
func castConst(c PrimExpr, t DataType) (PrimExpr, bool) {
	if !t.IsScalar() {
		return nil, false
	}
	switch c := c.(type) {
	case *IntImm:
		// v is the mathematical value (unsigned sources read unsigned).
		v := wrapInt(c.Type, c.Value)
		unsigned := c.Type.IsUInt()
		if unsigned {
			v = int64(unsignedView(c.Type, c.Value))
		}
		switch {
		case t.IsBool():
			return NewBool(v != 0), true
		case t.IsInteger():
			return makeInt(t, wrapInt(t, v)), true
		case t.Code == CodeFloat && (t.Bits == 32 || t.Bits == 64):
			f := float64(v)
			if unsigned {
				f = float64(uint64(v))
			}
			if t.Bits == 32 {
				f = float64(float32(f))
			}
			return NewFloat(t, f), true
		}
	case *FloatImm:
		switch {
		case t.IsBool():
			return NewBool(c.Value != 0), true
		case t.IsInteger():
			if math.IsNaN(c.Value) || math.IsInf(c.Value, 0) || math.Abs(c.Value) >= 1<<63 {
				return nil, false
			}
			return makeInt(t, wrapInt(t, int64(c.Value))), true
		case t.Code == CodeFloat && (t.Bits == 32 || t.Bits == 64):
			f := c.Value
			if t.Bits == 32 {
				f = float64(float32(f))
			}
			return NewFloat(t, f), true
		}
	}
	return nil, false
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// intConst returns the signed-view value of an integer or bool constant.
func intConst(e PrimExpr) (int64, bool) {
	c, ok := e.(*IntImm)
	if !ok {
		return 0, false
	}
	return wrapInt(c.Type, c.Value), true
}
