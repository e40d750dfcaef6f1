package printer

import (
	"fmt"
	"math"
	"strconv"

	"github.com/phasec/phasec/ir"
)

// Attribute values, literals and constants.

// attrDict writes attrs as a Python dict with sorted keys, skipping skip.
func (p *printer) attrDict(attrs ir.Attrs, skip string) {
	p.byte('{')
	first := true
	for _, k := range attrs.Keys() {
		if k == skip {
			continue
		}
		if !first {
			p.str(", ")
		}
		first = false
		p.quote(k)
		p.str(": ")
		p.attrValue(attrs[k])
	}
	p.byte('}')
}

// attrValue writes one attribute value (see ir.Attrs for the value types).
func (p *printer) attrValue(v any) {
	switch x := v.(type) {
	case nil:
		p.str("None")
	case bool:
		p.bool(x)
	case int64:
		p.out = strconv.AppendInt(p.out, x, 10)
	case int:
		p.out = strconv.AppendInt(p.out, int64(x), 10)
	case int32:
		p.out = strconv.AppendInt(p.out, int64(x), 10)
	case float64:
		p.float(x)
	case float32:
		p.float(float64(x))
	case string:
		p.quote(x)
	case ir.Verbatim:
		p.str(string(x))
	case *ir.Target:
		// TVM prints a target as its exported configuration
		// (Target::Export, include/tvm/target/target.h) under T.target.
		p.str("T.target(")
		p.attrDict(x.Config, "")
		p.byte(')')
	case *ir.IndexMap:
		p.str("T.index_map(")
		p.str(x.Lambda(p.relaxPrimName))
		p.byte(')')
	case ir.DataType:
		if x.IsVoid() {
			p.str(`"void"`) // DataType.String() spells Void as ""
		} else {
			p.quote(x.String())
		}
	case ir.PrimExpr:
		if p.tir != nil {
			p.tirPrim(x)
		} else {
			p.relaxPrim(x)
		}
	case ir.StructInfo:
		p.sinfo(x)
	case ir.Expr:
		p.expr(x)
	case []any:
		p.byte('[')
		for i, e := range x {
			if i > 0 {
				p.str(", ")
			}
			p.attrValue(e)
		}
		p.byte(']')
	case []int64:
		p.byte('[')
		for i, e := range x {
			if i > 0 {
				p.str(", ")
			}
			p.out = strconv.AppendInt(p.out, e, 10)
		}
		p.byte(']')
	case []string:
		p.byte('[')
		for i, e := range x {
			if i > 0 {
				p.str(", ")
			}
			p.quote(e)
		}
		p.byte(']')
	case *ir.VDevice:
		p.quote(ir.VDeviceRef(p.mod.VDevices, x))
	case ir.Attrs:
		p.attrDict(x, "")
	case map[string]any:
		p.attrDict(ir.Attrs(x), "")
	default:
		p.quote(fmt.Sprint(v))
	}
}

func (p *printer) bool(b bool) {
	if b {
		p.str("True")
	} else {
		p.str("False")
	}
}

// float writes v as TVM's printer writes a float literal (see
// ir.AppendFloatLiteral: "1.0", "0.10000000000000001"; a float32 value
// widened to double). Non-finite values print as float("inf") /
// float("nan"), which Python reads back.
func (p *printer) float(v float64) {
	switch {
	case math.IsNaN(v):
		p.str(`float("nan")`)
		return
	case math.IsInf(v, 1):
		p.str(`float("inf")`)
		return
	case math.IsInf(v, -1):
		p.str(`-float("inf")`)
		return
	}
	p.out = ir.AppendFloatLiteral(p.out, v)
}

// constant writes R.const(value, "dtype"); a tensor constant's value is a
// nested list (see the package note on the metadata section).
func (p *printer) constant(c *ir.Constant) {
	if isMetaConstant(c) {
		p.metaRef(c)
		return
	}
	d := c.Data
	p.str("R.const(")
	if d == nil {
		p.str("None)")
		return
	}
	if len(d.Shape) == 0 {
		p.scalar(d, 0)
	} else {
		idx := 0
		p.nestedList(d, 0, &idx)
	}
	p.str(", ")
	p.quote(d.DType.String())
	p.byte(')')
}

func (p *printer) nestedList(d *ir.NDArray, dim int, idx *int) {
	p.byte('[')
	for i := int64(0); i < d.Shape[dim]; i++ {
		if i > 0 {
			p.str(", ")
		}
		if dim == len(d.Shape)-1 {
			p.scalar(d, *idx)
			*idx++
		} else {
			p.nestedList(d, dim+1, idx)
		}
	}
	p.byte(']')
}

func (p *printer) scalar(d *ir.NDArray, i int) {
	switch t := d.DType; {
	case t.IsFloat():
		p.float(d.Float(i))
	case t.IsBool():
		p.bool(d.Int(i) != 0)
	case t.IsUInt():
		p.out = strconv.AppendUint(p.out, uint64(d.Int(i)), 10)
	default:
		p.out = strconv.AppendInt(p.out, d.Int(i), 10)
	}
}
