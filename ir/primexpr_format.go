package ir

import (
	"math"
	"strconv"
	"strings"
)

// PrimFormat prints PrimExprs as TVMScript with Python precedence and the
// minimal parentheses: a child is parenthesized when it binds more loosely
// than its parent, or equally loosely on the right of a left-associative
// operator. Comparisons are parenthesized on both sides, because Python
// would read `a < b < c` as a chained comparison.
type PrimFormat struct {
	// VarName names variables; nil uses PrimVar.Name.
	VarName func(*PrimVar) string
	// BufferName names buffers in loads; nil uses Buffer.Name.
	BufferName func(*Buffer) string
	// BareInt is the one integer type whose literals print without a
	// constructor: Int64 for Relax shapes, Int32 for TIR bodies. Other
	// integer literals print as T.int64(3), bools as True/False, floats as
	// T.float32(0.5) (see AppendFloatLiteral: TVM's printer's float form).
	BareInt DataType
}

// FormatPrim prints e as a Relax shape expression: int64 literals bare
// (`n * 2 + 1`, `T.max(n - m, 1)`, `n // 2`). name==nil uses PrimVar.Name.
func FormatPrim(e PrimExpr, name func(*PrimVar) string) string {
	return PrimFormat{VarName: name, BareInt: Int64}.Format(e)
}

// FormatTIR prints e as a TIR body expression, where int32 literals are bare
// and every other literal carries its type (`T.int64(3)`, `T.float32(0.0)`).
func FormatTIR(e PrimExpr, name func(*PrimVar) string) string {
	return PrimFormat{VarName: name, BareInt: Int32}.Format(e)
}

// Format prints e.
func (f PrimFormat) Format(e PrimExpr) string {
	var sb strings.Builder
	f.write(&sb, e)
	return sb.String()
}

// Python precedence levels, loosest first.
const (
	precLowest = iota
	precOr
	precAnd
	precNot
	precCompare
	precAdd
	precMul
	precUnary
	precAtom
)

func binaryPrec(op BinaryOp) int {
	switch op {
	case OpOr:
		return precOr
	case OpAnd:
		return precAnd
	case OpEQ, OpNE, OpLT, OpLE, OpGT, OpGE:
		return precCompare
	case OpAdd, OpSub:
		return precAdd
	case OpMul, OpDiv, OpMod, OpFloorDiv, OpFloorMod:
		return precMul
	}
	return precAtom // T.min / T.max calls
}

// printPrec is the precedence of e as printed by f.
func (f PrimFormat) printPrec(e PrimExpr) int {
	switch e := e.(type) {
	case *Binary:
		if f.binaryCall(e) != "" {
			return precAtom
		}
		return binaryPrec(e.Op)
	case *Not:
		return precNot
	case *IntImm:
		if e.Type == f.BareInt && e.Value < 0 {
			return precUnary
		}
	}
	return precAtom
}

// binaryCall returns the T.* function a binary node prints as, or "" when
// it prints as an infix operator.
func (f PrimFormat) binaryCall(e *Binary) string {
	switch e.Op {
	case OpMin:
		return "T.min"
	case OpMax:
		return "T.max"
	case OpDiv:
		if !e.A.DType().IsFloat() {
			return "T.truncdiv"
		}
	case OpMod:
		return "T.truncmod"
	}
	return ""
}

var infixNames = [...]string{
	OpAdd: " + ", OpSub: " - ", OpMul: " * ", OpDiv: " / ", OpFloorDiv: " // ",
	OpFloorMod: " % ", OpEQ: " == ", OpNE: " != ", OpLT: " < ", OpLE: " <= ",
	OpGT: " > ", OpGE: " >= ", OpAnd: " and ", OpOr: " or ",
}

func (f PrimFormat) child(sb *strings.Builder, e PrimExpr, parentPrec int, parenEqual bool) {
	p := f.printPrec(e)
	if p < parentPrec || (parenEqual && p == parentPrec) {
		sb.WriteByte('(')
		f.write(sb, e)
		sb.WriteByte(')')
		return
	}
	f.write(sb, e)
}

func (f PrimFormat) call(sb *strings.Builder, fn string, args ...PrimExpr) {
	sb.WriteString(fn)
	sb.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			sb.WriteString(", ")
		}
		f.write(sb, a)
	}
	sb.WriteByte(')')
}

func (f PrimFormat) write(sb *strings.Builder, e PrimExpr) {
	switch e := e.(type) {
	case nil:
		sb.WriteString("None")
	case *IntImm:
		f.writeInt(sb, e)
	case *FloatImm:
		sb.WriteString("T.")
		sb.WriteString(e.Type.String())
		sb.WriteByte('(')
		sb.WriteString(formatFloatLiteral(e.Value))
		sb.WriteByte(')')
	case *PrimStr:
		sb.WriteString(strconv.Quote(e.Value))
	case *PrimVar:
		if f.VarName != nil {
			sb.WriteString(f.VarName(e))
		} else {
			sb.WriteString(e.Name)
		}
	case *Binary:
		if fn := f.binaryCall(e); fn != "" {
			f.call(sb, fn, e.A, e.B)
			return
		}
		p := binaryPrec(e.Op)
		f.child(sb, e.A, p, p == precCompare)
		sb.WriteString(infixNames[e.Op])
		f.child(sb, e.B, p, true)
	case *Not:
		sb.WriteString("not ")
		f.child(sb, e.A, precNot, false)
	case *Select:
		f.call(sb, "T.Select", e.Cond, e.True, e.False)
	case *Cast:
		sb.WriteString(`T.Cast("`)
		sb.WriteString(e.Type.String())
		sb.WriteString(`", `)
		f.write(sb, e.Value)
		sb.WriteByte(')')
	case *PrimCall:
		if e.Op == "Shuffle" && len(e.Args) == 2 {
			// TVM's Shuffle node: T.Shuffle([vectors], [indices]).
			sb.WriteString("T.Shuffle(")
			for i, l := range e.Args {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteByte('[')
				if t, ok := l.(*PrimCall); ok {
					for j, x := range t.Args {
						if j > 0 {
							sb.WriteString(", ")
						}
						f.write(sb, x)
					}
				}
				sb.WriteByte(']')
			}
			sb.WriteByte(')')
			return
		}
		if DTypeFirstCalls[e.Op] {
			// TVM prints the call's dtype as its first argument for ops
			// registered with TScriptDtypePrintLocation kFirst
			// (src/tir/op/builtin.cc): T.reinterpret("int32", x).
			sb.WriteString("T.")
			sb.WriteString(e.Op)
			sb.WriteString(`("`)
			sb.WriteString(e.Type.String())
			sb.WriteByte('"')
			for _, a := range e.Args {
				sb.WriteString(", ")
				f.write(sb, a)
			}
			sb.WriteByte(')')
			return
		}
		if DTypeLastCalls[e.Op] {
			// ... and last for kLast ops: T.tvm_struct_get(A, 0, 1, "int32").
			sb.WriteString("T.")
			sb.WriteString(e.Op)
			sb.WriteByte('(')
			for _, a := range e.Args {
				f.write(sb, a)
				sb.WriteString(", ")
			}
			sb.WriteByte('"')
			sb.WriteString(e.Type.String())
			sb.WriteString(`")`)
			return
		}
		f.call(sb, "T."+e.Op, e.Args...)
	case *BufferLoad:
		if f.BufferName != nil {
			sb.WriteString(f.BufferName(e.Buffer))
		} else {
			sb.WriteString(e.Buffer.Name)
		}
		sb.WriteByte('[')
		if len(e.Indices) == 0 {
			sb.WriteString("()")
		}
		for i, x := range e.Indices {
			if i > 0 {
				sb.WriteString(", ")
			}
			f.write(sb, x)
		}
		sb.WriteByte(']')
	default:
		sb.WriteString("<unknown PrimExpr>")
	}
}

func (f PrimFormat) writeInt(sb *strings.Builder, e *IntImm) {
	switch {
	case e.Type.IsBool():
		if e.Value != 0 {
			sb.WriteString("True")
		} else {
			sb.WriteString("False")
		}
	case e.Type == f.BareInt:
		sb.WriteString(strconv.FormatInt(e.Value, 10))
	default:
		sb.WriteString("T.")
		sb.WriteString(e.Type.String())
		sb.WriteByte('(')
		if e.Type.IsUInt() {
			sb.WriteString(strconv.FormatUint(unsignedView(e.Type, e.Value), 10))
		} else {
			sb.WriteString(strconv.FormatInt(e.Value, 10))
		}
		sb.WriteByte(')')
	}
}

// formatFloatLiteral spells v as TVM's printer does (C++ ostream with
// precision 17: "0", "0.5", "0.10000000000000001", "1e+20"), with
// non-finite values quoted ("inf", "-inf", "nan").
func formatFloatLiteral(v float64) string {
	switch {
	case math.IsNaN(v):
		return `"nan"`
	case math.IsInf(v, 1):
		return `"inf"`
	case math.IsInf(v, -1):
		return `"-inf"`
	}
	return string(AppendFloatLiteral(nil, v))
}

// AppendFloatLiteral appends a finite float as TVM v0.23's script printer
// writes a float literal (src/script/printer/doc_printer/python_doc_printer.cc):
// a value with no fractional part in fixed notation with one decimal
// ("0.0", "-340282346638528859811704183484516925440.0"), so that Python
// reads it back as a float; any other value with 17 significant digits, as
// C's %.17g ("0.10000000000000001", "1.0000000000000001e-05").
func AppendFloatLiteral(b []byte, v float64) []byte {
	if v == math.Trunc(v) {
		return strconv.AppendFloat(b, v, 'f', 1, 64)
	}
	return strconv.AppendFloat(b, v, 'g', 17, 64)
}

// DTypeFirstCalls are the PrimCall ops whose result type is written as a
// leading dtype string (T.reinterpret("int32", x)) but not kept in Args:
// TVM's ops with TScriptDtypePrintLocation kFirst whose Python builder
// takes the dtype first (python/tvm/kernel/op.py).
var DTypeFirstCalls = map[string]bool{
	"reinterpret": true, "vectorlow": true, "vectorhigh": true, "vectorcombine": true, "type_annotation": true,
	"ptx_mma": true, "ptx_mma_sp": true, "ptx_ldmatrix": true, "ptx_cp_async": true, "ptx_cp_async_bulk": true,
	"mma_store": true, "mma_fill": true, "get_active_lane_mask": true,
}

// DTypeLastCalls are the PrimCall ops whose result type is written as a
// trailing dtype string and not kept in Args: TVM's ops with
// TScriptDtypePrintLocation kLast (src/tir/op/builtin.cc), whose Python
// builder takes the dtype last.
var DTypeLastCalls = map[string]bool{"tvm_struct_get": true}

// String methods print the Relax-shape form (FormatPrim with PrimVar names).

func (e *IntImm) String() string     { return FormatPrim(e, nil) }
func (e *FloatImm) String() string   { return FormatPrim(e, nil) }
func (e *PrimStr) String() string    { return FormatPrim(e, nil) }
func (e *PrimVar) String() string    { return FormatPrim(e, nil) }
func (e *Binary) String() string     { return FormatPrim(e, nil) }
func (e *Not) String() string        { return FormatPrim(e, nil) }
func (e *Select) String() string     { return FormatPrim(e, nil) }
func (e *Cast) String() string       { return FormatPrim(e, nil) }
func (e *PrimCall) String() string   { return FormatPrim(e, nil) }
func (e *BufferLoad) String() string { return FormatPrim(e, nil) }
