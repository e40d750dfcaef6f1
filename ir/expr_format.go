package ir

import (
	"strconv"
	"strings"
)

// FormatExpr prints e compactly on one line, in TVMScript spelling where
// there is one: leaves as R.shape([8]), R.prim_value(1), R.str("x"),
// R.dtype("float32"), R.const(1, "float32") (non-scalar constants as
// R.const(<(2, 3) float32>)), variables by name, globals as cls.f, op calls
// as R.add(x, y), tuples as (a, b), projections as x[0]. Function bodies and
// If branches are summarized, not printed. It is meant for messages (Diff,
// diagnostics), not for round-tripping; use the syntax package for that.
//
// names names Relax variables (nil: Var.Name).
func FormatExpr(e Expr, names func(*Var) string) string {
	var b strings.Builder
	f := exprFormatter{b: &b, names: names}
	f.expr(e)
	return b.String()
}

type exprFormatter struct {
	b     *strings.Builder
	names func(*Var) string
}

func (f *exprFormatter) varName(v *Var) string {
	if f.names != nil {
		return f.names(v)
	}
	return v.Name
}

func (f *exprFormatter) prims(vals []PrimExpr) {
	for i, v := range vals {
		if i > 0 {
			f.b.WriteString(", ")
		}
		f.b.WriteString(FormatPrim(v, nil))
	}
}

func (f *exprFormatter) exprs(l []Expr) {
	for i, x := range l {
		if i > 0 {
			f.b.WriteString(", ")
		}
		f.expr(x)
	}
}

func (f *exprFormatter) expr(e Expr) {
	b := f.b
	switch x := e.(type) {
	case nil:
		b.WriteString("None")
	case *Var:
		b.WriteString(f.varName(x))
	case *GlobalVar:
		b.WriteString("cls.")
		b.WriteString(x.Name)
	case *ExternFunc:
		b.WriteString("R.ExternFunc(")
		b.WriteString(strconv.Quote(x.Symbol))
		b.WriteString(")")
	case *Op:
		b.WriteString(opScriptName(x))
	case *Constant:
		b.WriteString(formatConstant(x.Data))
	case *ShapeExpr:
		b.WriteString("R.shape([")
		f.prims(x.Values)
		b.WriteString("])")
	case *PrimValue:
		b.WriteString("R.prim_value(")
		b.WriteString(FormatPrim(x.Value, nil))
		b.WriteString(")")
	case *StringImm:
		b.WriteString("R.str(")
		b.WriteString(strconv.Quote(x.Value))
		b.WriteString(")")
	case *DataTypeImm:
		b.WriteString("R.dtype(")
		b.WriteString(strconv.Quote(x.Value.String()))
		b.WriteString(")")
	case *Tuple:
		b.WriteString("(")
		f.exprs(x.Fields)
		if len(x.Fields) == 1 {
			b.WriteString(",")
		}
		b.WriteString(")")
	case *TupleGetItem:
		f.expr(x.Tuple)
		b.WriteString("[")
		b.WriteString(strconv.Itoa(x.Index))
		b.WriteString("]")
	case *Call:
		f.call(x)
	case *If:
		b.WriteString("R.If(")
		f.expr(x.Cond)
		b.WriteString(", ...)")
	case *SeqExpr:
		b.WriteString("R.SeqExpr(")
		n := 0
		for _, blk := range x.Blocks {
			n += len(blk.Bindings)
		}
		b.WriteString(strconv.Itoa(n))
		b.WriteString(" bindings, ")
		f.expr(x.Body)
		b.WriteString(")")
	case *Function:
		b.WriteString("R.function(")
		for i, p := range x.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.varName(p))
		}
		b.WriteString(")")
	default:
		b.WriteString("<unknown expr>")
	}
}

func (f *exprFormatter) call(c *Call) {
	b := f.b
	args := c.Args
	switch op := c.Op.(type) {
	case *Op:
		b.WriteString(opScriptName(op))
	case *ExternFunc:
		b.WriteString("R.call_packed(")
		b.WriteString(strconv.Quote(op.Symbol))
		if len(args) > 0 {
			b.WriteString(", ")
		}
		f.exprs(args)
		f.callTail(c, "sinfo_args")
		b.WriteString(")")
		return
	default:
		f.expr(c.Op)
	}
	b.WriteString("(")
	f.exprs(args)
	kw := "sinfo_args"
	if op, ok := c.Op.(*Op); ok && op.SInfoArgs == OutSInfo {
		kw = "out_sinfo"
	}
	f.callTail(c, kw)
	b.WriteString(")")
}

// callTail prints the call's attributes and struct info arguments as
// keywords.
func (f *exprFormatter) callTail(c *Call, sinfoKw string) {
	b := f.b
	sep := ", "
	if len(c.Args) == 0 {
		sep = ""
	}
	for _, k := range c.Attrs.Keys() {
		b.WriteString(sep)
		sep = ", "
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(FormatAttrValue(c.Attrs[k]))
	}
	if len(c.SInfoArgs) > 0 {
		b.WriteString(sep)
		b.WriteString(sinfoKw)
		b.WriteString("=")
		if len(c.SInfoArgs) == 1 && sinfoKw == "out_sinfo" {
			b.WriteString(FormatStructInfoWith(c.SInfoArgs[0], nil, f.names))
			return
		}
		b.WriteString("(")
		for i, s := range c.SInfoArgs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(FormatStructInfoWith(s, nil, f.names))
		}
		if len(c.SInfoArgs) == 1 {
			b.WriteString(",")
		}
		b.WriteString(")")
	}
}

// opScriptName is the TVMScript spelling of a registered op: "relax.nn.relu"
// is R.nn.relu.
func opScriptName(op *Op) string {
	if rest, ok := strings.CutPrefix(op.Name, "relax."); ok {
		return "R." + rest
	}
	return op.Name
}

func formatConstant(a *NDArray) string {
	if a == nil {
		return "R.const(None)"
	}
	if len(a.Shape) == 0 && len(a.Data) >= a.DType.Bytes() {
		var v string
		switch {
		case a.DType.IsFloat():
			v = strconv.FormatFloat(a.Float(0), 'g', -1, 64)
		case a.DType.IsBool():
			v = "False"
			if a.Int(0) != 0 {
				v = "True"
			}
		default:
			v = strconv.FormatInt(a.Int(0), 10)
		}
		return "R.const(" + v + ", " + strconv.Quote(a.DType.String()) + ")"
	}
	dims := make([]string, len(a.Shape))
	for i, d := range a.Shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	shape := "(" + strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	return "R.const(<" + shape + ") " + a.DType.String() + ">)"
}

// FormatAttrValue prints an attribute value as TVMScript: strings quoted,
// booleans True/False, lists in brackets, dictionaries in braces.
func FormatAttrValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEnN") {
			s += ".0"
		}
		return s
	case string:
		return strconv.Quote(x)
	case DataType:
		return strconv.Quote(x.String())
	case PrimExpr:
		return FormatPrim(x, nil)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = FormatAttrValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case Attrs:
		parts := make([]string, 0, len(x))
		for _, k := range x.Keys() {
			parts = append(parts, strconv.Quote(k)+": "+FormatAttrValue(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case StructInfo:
		return FormatStructInfo(x, nil)
	case Expr:
		return FormatExpr(x, nil)
	case *IndexMap:
		return x.String()
	case *Target:
		return "T.target(" + FormatAttrValue(x.Config) + ")"
	}
	return "<unknown attr value>"
}
