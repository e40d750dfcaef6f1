package ir

import (
	"strconv"
	"strings"
)

// FormatStructInfo prints s as TVMScript (R.Tensor((n, 4), dtype="float32")).
//
// The forms are exactly those of TVM v0.23's printer
// (src/script/printer/relax/struct_info.cc), which fixes argument order:
//
//	R.Object
//	R.Prim("int64")             R.Prim(value=n)
//	R.Shape([n, 4])             R.Shape(ndim=3)          R.Shape(ndim=-1)
//	R.Tensor((n, 4), dtype="float32")   R.Tensor((n, 4))   R.Tensor(s, dtype="float32")
//	R.Tensor(dtype="float32", ndim=2)   R.Tensor(ndim=2)   R.Tensor(dtype="float32")
//	R.Tensor
//	R.Tuple(A, B)               R.Tuple(A)               R.Tuple
//	R.Callable((A, B), R, True) R.Callable((), R.Object, False)
//	R.Callable()  R.Callable(ret=R, purity=False)        (opaque)
//
// Note that for a tensor of unknown shape the printer puts dtype before
// ndim (the reference's "R.Tensor(ndim=2, dtype=...)" is an accepted input
// spelling, not what TVM prints), and an unknown-rank shape prints as
// R.Shape(ndim=-1), not bare R.Shape. Dimensions are printed with FormatPrim;
// name names symbolic variables (nil: their Name). Shape vars used as a
// tensor's shape print by their Name.
func FormatStructInfo(s StructInfo, name func(*PrimVar) string) string {
	return FormatStructInfoWith(s, name, nil)
}

// FormatStructInfoWith is FormatStructInfo with a namer for Relax vars (a
// tensor's shape var); a nil namer uses Var.Name.
func FormatStructInfoWith(s StructInfo, prim func(*PrimVar) string, rvar func(*Var) string) string {
	var b strings.Builder
	p := sinfoPrinter{b: &b, prim: prim, rvar: rvar}
	p.print(s)
	return b.String()
}

type sinfoPrinter struct {
	b    *strings.Builder
	prim func(*PrimVar) string
	rvar func(*Var) string
}

func (p *sinfoPrinter) dims(vals []PrimExpr) {
	for i, v := range vals {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(FormatPrim(v, p.prim))
	}
}

func (p *sinfoPrinter) print(s StructInfo) {
	b := p.b
	switch x := s.(type) {
	case nil:
		b.WriteString("None")
	case *ObjectInfo:
		b.WriteString("R.Object")
	case *PrimInfo:
		if x.Value != nil {
			b.WriteString("R.Prim(value=")
			b.WriteString(FormatPrim(x.Value, p.prim))
			b.WriteString(")")
		} else {
			b.WriteString("R.Prim(")
			b.WriteString(strconv.Quote(x.DType.String()))
			b.WriteString(")")
		}
	case *ShapeInfo:
		if x.Known() {
			b.WriteString("R.Shape([")
			p.dims(x.Values)
			b.WriteString("])")
		} else {
			b.WriteString("R.Shape(ndim=")
			b.WriteString(strconv.Itoa(x.NDim))
			b.WriteString(")")
		}
	case *TensorInfo:
		var args []string
		switch sh := x.Shape.(type) {
		case *ShapeExpr:
			var t strings.Builder
			q := sinfoPrinter{b: &t, prim: p.prim, rvar: p.rvar}
			t.WriteString("(")
			q.dims(sh.Values)
			if len(sh.Values) == 1 {
				t.WriteString(",")
			}
			t.WriteString(")")
			args = append(args, t.String())
		case *Var:
			args = append(args, p.varName(sh))
		case nil:
		default:
			args = append(args, FormatExpr(sh, p.rvar))
		}
		if !x.DType.IsVoid() {
			args = append(args, "dtype="+strconv.Quote(x.DType.String()))
		}
		if x.Shape == nil && x.NDim >= 0 {
			args = append(args, "ndim="+strconv.Itoa(x.NDim))
		}
		b.WriteString("R.Tensor")
		if len(args) > 0 {
			b.WriteString("(")
			b.WriteString(strings.Join(args, ", "))
			b.WriteString(")")
		}
	case *TupleInfo:
		b.WriteString("R.Tuple")
		if len(x.Fields) > 0 {
			b.WriteString("(")
			p.list(x.Fields)
			b.WriteString(")")
		}
	case *FuncInfo:
		b.WriteString("R.Callable(")
		if x.Opaque {
			sep := ""
			if _, obj := x.Ret.(*ObjectInfo); x.Ret != nil && !obj {
				b.WriteString("ret=")
				p.print(x.Ret)
				sep = ", "
			}
			if !x.Pure {
				b.WriteString(sep)
				b.WriteString("purity=False")
			}
			b.WriteString(")")
			return
		}
		b.WriteString("(")
		p.list(x.Params)
		if len(x.Params) == 1 {
			b.WriteString(",")
		}
		b.WriteString("), ")
		ret := x.Ret
		if ret == nil {
			ret = Object()
		}
		p.print(ret)
		if x.Pure {
			b.WriteString(", True)")
		} else {
			b.WriteString(", False)")
		}
	default:
		b.WriteString("<unknown struct info>")
	}
}

func (p *sinfoPrinter) list(l []StructInfo) {
	for i, f := range l {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.print(f)
	}
}

func (p *sinfoPrinter) varName(v *Var) string {
	if p.rvar != nil {
		return p.rvar(v)
	}
	return v.Name
}

func (s *ObjectInfo) String() string { return FormatStructInfo(s, nil) }
func (s *PrimInfo) String() string   { return FormatStructInfo(s, nil) }
func (s *ShapeInfo) String() string  { return FormatStructInfo(s, nil) }
func (s *TensorInfo) String() string { return FormatStructInfo(s, nil) }
func (s *TupleInfo) String() string  { return FormatStructInfo(s, nil) }
func (s *FuncInfo) String() string   { return FormatStructInfo(s, nil) }
