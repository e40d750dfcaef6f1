package ir

import "github.com/phasec/phasec/diag"

// PrimExpr is a TIR scalar expression. The same nodes serve as Relax symbolic
// shape arithmetic (int64 expressions over PrimVars) and as the expressions
// of TIR kernels (loads, intrinsics, floats).
//
// PrimExpr nodes are immutable once built: share them freely, and build new
// ones instead of editing. PrimVar identity is the pointer, never the name.
type PrimExpr interface {
	// DType is the scalar type the expression evaluates to.
	DType() DataType
	Span() diag.Span
	primExpr()
}

type primBase struct{ span diag.Span }

func (b *primBase) Span() diag.Span     { return b.span }
func (b *primBase) SetSpan(s diag.Span) { b.span = s }
func (*primBase) primExpr()             {}

// IntImm is an integer or boolean constant of any width.
type IntImm struct {
	primBase
	Type  DataType
	Value int64
}

func (e *IntImm) DType() DataType { return e.Type }

// unsignedView returns the value of a signed-view uintN constant.
func unsignedView(t DataType, v int64) uint64 {
	if t.Bits >= 64 {
		return uint64(v)
	}
	return uint64(v) & (1<<t.Bits - 1)
}

// FloatImm is a floating-point constant.
type FloatImm struct {
	primBase
	Type  DataType
	Value float64
}

func (e *FloatImm) DType() DataType { return e.Type }

// PrimStr is a TIR string literal (an argument of T.evaluate-style calls).
type PrimStr struct {
	primBase
	Value string
}

func (e *PrimStr) DType() DataType { return Handle }

// PrimVar is a TIR variable: a symbolic shape variable (int64), a loop or
// block iteration variable, a scalar parameter, or a handle parameter.
type PrimVar struct {
	primBase
	Name string // a hint only; identity is the pointer
	Type DataType
}

func (e *PrimVar) DType() DataType { return e.Type }

// BinaryOp enumerates the binary operators of PrimExpr.
type BinaryOp uint8

const (
	OpAdd BinaryOp = iota
	OpSub
	OpMul
	OpDiv      // truncating division for ints (TIR Div); true division for floats
	OpMod      // truncating remainder
	OpFloorDiv // floor division
	OpFloorMod // floor modulo (sign of the divisor)
	OpMin
	OpMax
	OpEQ
	OpNE
	OpLT
	OpLE
	OpGT
	OpGE
	OpAnd
	OpOr
	numBinaryOps
)

var binaryOpNames = [...]string{
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%",
	OpFloorDiv: "//", OpFloorMod: "%", OpMin: "T.min", OpMax: "T.max",
	OpEQ: "==", OpNE: "!=", OpLT: "<", OpLE: "<=", OpGT: ">", OpGE: ">=",
	OpAnd: "and", OpOr: "or",
}

// String is the operator as TVMScript spells it (infix symbol or T.fn).
func (op BinaryOp) String() string { return binaryOpNames[op] }

// IsCompare reports whether op yields a boolean from two operands.
func (op BinaryOp) IsCompare() bool { return op >= OpEQ && op <= OpGE }

// IsLogical reports whether op is "and" or "or".
func (op BinaryOp) IsLogical() bool { return op == OpAnd || op == OpOr }

// Binary is a binary arithmetic, comparison or logical expression. Build
// it with NewBinary (or Add, Sub, ...), which records its type so DType is
// O(1); a Binary literal is still correct but computes its type on demand.
type Binary struct {
	primBase
	Op   BinaryOp
	A, B PrimExpr
	dt   DataType // set by NewBinary; Void in a literal (computed by DType)
}

// DType is the recorded type, or for a Binary literal the type of its left
// operand (Bool of the same lanes for comparisons and logical operators).
func (e *Binary) DType() DataType {
	if !e.dt.IsVoid() {
		return e.dt
	}
	return binaryDType(e.Op, e.A)
}

// binaryDType is the type of op applied to a left operand a. It follows the
// left spine iteratively through untyped literals of arithmetic operators,
// so a long left-nested chain never recurses.
func binaryDType(op BinaryOp, a PrimExpr) DataType {
	for !op.IsCompare() && !op.IsLogical() {
		b, ok := a.(*Binary)
		if !ok || !b.dt.IsVoid() {
			break
		}
		op, a = b.Op, b.A
	}
	if a == nil {
		return Void
	}
	if op.IsCompare() || op.IsLogical() {
		return Bool.WithLanes(int(max(a.DType().Lanes, 1)))
	}
	return a.DType()
}

// Not is logical negation.
type Not struct {
	primBase
	A PrimExpr
}

func (e *Not) DType() DataType { return e.A.DType() }

// Select evaluates both arms and picks one (T.Select).
type Select struct {
	primBase
	Cond, True, False PrimExpr
}

func (e *Select) DType() DataType { return e.True.DType() }

// Cast converts Value to Type (T.Cast).
type Cast struct {
	primBase
	Type  DataType
	Value PrimExpr
}

func (e *Cast) DType() DataType { return e.Type }

// PrimCall calls a TIR intrinsic such as T.exp or T.if_then_else. Op is the
// intrinsic's registered name without the "T." prefix ("exp").
type PrimCall struct {
	primBase
	Op   string
	Args []PrimExpr
	Type DataType
}

func (e *PrimCall) DType() DataType { return e.Type }

// BufferLoad reads one element of a buffer, or a vector of them when the
// last index is a vector (A[T.Ramp(0, 1, 4)]).
type BufferLoad struct {
	primBase
	Buffer  *Buffer
	Indices []PrimExpr
}

// DType is the buffer's element type, widened as TVM's
// BufferLoadNode::LegalizeDType does (src/tir/ir/expr.cc): a last index of
// n lanes loads n elements, so float32 read at T.Ramp(0, 1, 4) is
// float32x4.
func (e *BufferLoad) DType() DataType {
	t := e.Buffer.DType
	if n := len(e.Indices); n > 0 && e.Indices[n-1] != nil {
		if l := e.Indices[n-1].DType().Lanes; l > 1 {
			return t.WithLanes(int(max(t.Lanes, 1)) * int(l))
		}
	}
	return t
}

// Constructors. They carry no span; the parser sets spans with SetSpan.

// NewInt returns an integer constant of type t.
func NewInt(t DataType, v int64) *IntImm { return &IntImm{Type: t, Value: v} }

// I64 returns an int64 constant, the type of every Relax shape dimension.
func I64(v int64) *IntImm { return &IntImm{Type: Int64, Value: v} }

// NewFloat returns a float constant of type t.
func NewFloat(t DataType, v float64) *FloatImm { return &FloatImm{Type: t, Value: v} }

// NewBool returns a boolean constant.
func NewBool(v bool) *IntImm {
	if v {
		return &IntImm{Type: Bool, Value: 1}
	}
	return &IntImm{Type: Bool, Value: 0}
}

// NewPrimVar returns a fresh variable. Two calls with the same name give two
// distinct variables.
func NewPrimVar(name string, t DataType) *PrimVar { return &PrimVar{Name: name, Type: t} }

// SymVar returns a fresh int64 symbolic shape variable.
func SymVar(name string) *PrimVar { return NewPrimVar(name, Int64) }

// NewBinary builds a binary expression without simplifying it.
func NewBinary(op BinaryOp, a, b PrimExpr) *Binary {
	return &Binary{Op: op, A: a, B: b, dt: binaryDType(op, a)}
}

// Add, Sub, Mul, FloorDiv, FloorMod, Min and Max build unsimplified nodes.
func Add(a, b PrimExpr) PrimExpr      { return NewBinary(OpAdd, a, b) }
func Sub(a, b PrimExpr) PrimExpr      { return NewBinary(OpSub, a, b) }
func Mul(a, b PrimExpr) PrimExpr      { return NewBinary(OpMul, a, b) }
func FloorDiv(a, b PrimExpr) PrimExpr { return NewBinary(OpFloorDiv, a, b) }
func FloorMod(a, b PrimExpr) PrimExpr { return NewBinary(OpFloorMod, a, b) }
func Min(a, b PrimExpr) PrimExpr      { return NewBinary(OpMin, a, b) }
func Max(a, b PrimExpr) PrimExpr      { return NewBinary(OpMax, a, b) }

// IntValue returns the value of an integer constant.
func IntValue(e PrimExpr) (int64, bool) {
	if c, ok := e.(*IntImm); ok {
		return c.Value, true
	}
	return 0, false
}
