package syntax

import (
	"strconv"

	"github.com/phasec/phasec/ir"
)

// Struct info and Relax-level symbolic expressions.
//
// The struct info forms are those of ir.FormatStructInfo (TVM's
// struct_info.cc printer); this writer differs only in how dimensions are
// spelled: symbolic variables take their unique printed names and are
// declared on first use, and in a signature a dimension mentioning one of the
// function's own symbolic variables is quoted ("n").

// sinfo writes s.
func (p *printer) sinfo(s ir.StructInfo) {
	switch x := s.(type) {
	case nil, *ir.ObjectInfo:
		p.str("R.Object")
	case *ir.PrimInfo:
		if x.Value != nil {
			p.str("R.Prim(value=")
			p.relaxPrim(x.Value)
		} else {
			p.str("R.Prim(")
			p.quote(x.DType.String())
		}
		p.byte(')')
	case *ir.ShapeInfo:
		if x.Known() {
			p.str("R.Shape([")
			p.relaxPrims(x.Values)
			p.str("])")
		} else {
			p.str("R.Shape(ndim=")
			p.out = strconv.AppendInt(p.out, int64(x.NDim), 10)
			p.byte(')')
		}
	case *ir.TensorInfo:
		p.str("R.Tensor")
		hasShape := x.Shape != nil
		hasDType := !x.DType.IsVoid()
		hasNDim := !hasShape && x.NDim >= 0
		if !hasShape && !hasDType && !hasNDim {
			return
		}
		p.byte('(')
		sep := false
		if hasShape {
			switch sh := x.Shape.(type) {
			case *ir.ShapeExpr:
				p.byte('(')
				p.relaxPrims(sh.Values)
				if len(sh.Values) == 1 {
					p.byte(',')
				}
				p.byte(')')
			default:
				p.expr(sh)
			}
			sep = true
		}
		if hasDType {
			if sep {
				p.str(", ")
			}
			p.str("dtype=")
			p.quote(x.DType.String())
			sep = true
		}
		if hasNDim {
			if sep {
				p.str(", ")
			}
			p.str("ndim=")
			p.out = strconv.AppendInt(p.out, int64(x.NDim), 10)
		}
		p.byte(')')
	case *ir.TupleInfo:
		p.str("R.Tuple")
		if len(x.Fields) > 0 {
			p.byte('(')
			p.sinfoList(x.Fields)
			p.byte(')')
		}
	case *ir.FuncInfo:
		p.str("R.Callable(")
		if x.Opaque {
			sep := false
			if _, obj := x.Ret.(*ir.ObjectInfo); x.Ret != nil && !obj {
				p.str("ret=")
				p.sinfo(x.Ret)
				sep = true
			}
			if !x.Pure {
				if sep {
					p.str(", ")
				}
				p.str("purity=False")
			}
			p.byte(')')
			return
		}
		p.byte('(')
		p.sinfoList(x.Params)
		if len(x.Params) == 1 {
			p.byte(',')
		}
		p.str("), ")
		p.sinfo(x.Ret)
		if x.Pure {
			p.str(", True)")
		} else {
			p.str(", False)")
		}
	default:
		p.str("R.Object")
	}
}

func (p *printer) sinfoList(l []ir.StructInfo) {
	for i, s := range l {
		if i > 0 {
			p.str(", ")
		}
		p.sinfo(s)
	}
}

func (p *printer) relaxPrims(l []ir.PrimExpr) {
	for i, e := range l {
		if i > 0 {
			p.str(", ")
		}
		p.relaxPrim(e)
	}
}

// relaxPrim writes a Relax-level PrimExpr (a shape dimension, a prim value)
// in canonical simplified form, int64 literals bare.
func (p *printer) relaxPrim(e ir.PrimExpr) {
	switch x := e.(type) {
	case *ir.IntImm:
		if x.Type == ir.Int64 {
			p.out = strconv.AppendInt(p.out, x.Value, 10)
			return
		}
	case *ir.PrimVar:
		p.sigOwn = false
		name := p.relaxPrimName(x)
		if p.sig && p.sigOwn {
			p.byte('"')
			p.str(name)
			p.byte('"')
		} else {
			p.str(name)
		}
		return
	}
	p.sigOwn = false
	s := ir.PrimFormat{VarName: p.relaxPrimNameFn, BareInt: ir.Int64}.Format(ir.Simplify(e))
	if p.sig && p.sigOwn {
		p.quote(s)
	} else {
		p.str(s)
	}
}
