package ir

import (
	"fmt"
	"strings"
)

// IndexMap is a TIR index map (TVM's tir::IndexMap, include/tvm/kernel/index_map.h):
// a function from the indices of one layout to those of another, written
// in TVMScript as T.index_map(lambda i, j: (j // 4, i, j % 4)). It is the
// index_map attribute of R.layout_transform. Params are int64 variables
// bound by the map itself; Results are expressions over them.
type IndexMap struct {
	Params  []*PrimVar
	Results []PrimExpr
}

// String writes the map as TVM prints it: T.index_map(lambda i, j: (j, i)).
func (m *IndexMap) String() string {
	return "T.index_map(" + m.Lambda(nil) + ")"
}

// Lambda writes the map as a Python lambda; name names variables other
// than the parameters (nil: their own names).
func (m *IndexMap) Lambda(name func(*PrimVar) string) string {
	var b strings.Builder
	b.WriteString("lambda ")
	own := make(map[*PrimVar]bool, len(m.Params))
	for i, p := range m.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name)
		own[p] = true
	}
	b.WriteString(": (")
	f := PrimFormat{BareInt: Int64, VarName: func(v *PrimVar) string {
		if own[v] || name == nil {
			return v.Name
		}
		return name(v)
	}}
	for i, r := range m.Results {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Format(r))
	}
	if len(m.Results) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// Apply substitutes idx for the parameters in the results.
func (m *IndexMap) Apply(idx []PrimExpr) []PrimExpr {
	sub := make(map[*PrimVar]PrimExpr, len(m.Params))
	for i, p := range m.Params {
		sub[p] = idx[i]
	}
	out := make([]PrimExpr, len(m.Results))
	for i, r := range m.Results {
		out[i] = SubstitutePrim(r, sub)
	}
	return out
}

// ApplyInts evaluates the map at integer indices, into out (len Results).
func (m *IndexMap) ApplyInts(idx []int64, out []int64) error {
	args := make([]PrimExpr, len(idx))
	for i, v := range idx {
		args[i] = I64(v)
	}
	for i, r := range m.Apply(args) {
		v, ok := IntValue(Simplify(r))
		if !ok {
			return fmt.Errorf("index map result %d (%s) is not an integer at %v", i, FormatPrim(m.Results[i], nil), idx)
		}
		out[i] = v
	}
	return nil
}

// MapShape returns the shape of a tensor of shape in after the map: for
// each result, the extent of the values it takes while each parameter
// ranges over [0, in[k]) (TVM's IndexMapNode::MapShape). A split that
// does not divide its dimension rounds up (i // 4 over 10 has extent 3),
// which is where layout_transform pads. Offsets are the least values the
// results take (0 for the usual maps). It fails for results outside the
// forms it bounds: parameters, constants, +, -, * and // by a positive
// constant, % by a positive constant, min, max.
func (m *IndexMap) MapShape(in []PrimExpr) (extents, offsets []PrimExpr, err error) {
	if len(in) != len(m.Params) {
		return nil, nil, fmt.Errorf("the index map takes %d indices, the tensor has rank %d", len(m.Params), len(in))
	}
	dom := make(map[*PrimVar]PrimExpr, len(in))
	for i, p := range m.Params {
		dom[p] = in[i]
	}
	for _, r := range m.Results {
		lo, ext, ok := indexRange(r, dom)
		if !ok {
			return nil, nil, fmt.Errorf("cannot infer the extent of index map result %s (it may use the parameters, constants, +, -, * by a constant, // and %% by a positive constant, min and max)", FormatPrim(r, nil))
		}
		extents = append(extents, Simplify(ext))
		offsets = append(offsets, Simplify(lo))
	}
	return extents, offsets, nil
}

// indexRange bounds e as [lo, lo + extent) when each parameter p of dom
// ranges over [0, dom[p]).
func indexRange(e PrimExpr, dom map[*PrimVar]PrimExpr) (lo, extent PrimExpr, ok bool) {
	one := I64(1)
	switch x := e.(type) {
	case *IntImm:
		return I64(x.Value), one, true
	case *PrimVar:
		d, ok := dom[x]
		if !ok {
			return x, one, true // a symbolic constant of the enclosing function
		}
		return I64(0), d, true
	case *Cast:
		return indexRange(x.Value, dom)
	case *Binary:
		alo, aext, ok1 := indexRange(x.A, dom)
		blo, bext, ok2 := indexRange(x.B, dom)
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		ahi, bhi := Sub(Add(alo, aext), one), Sub(Add(blo, bext), one)
		c, isConst := IntValue(x.B)
		switch x.Op {
		case OpAdd:
			return Add(alo, blo), Sub(Add(aext, bext), one), true
		case OpSub:
			return Sub(alo, bhi), Sub(Add(aext, bext), one), true
		case OpMul:
			if !isConst {
				return nil, nil, false
			}
			if c < 0 {
				return Mul(ahi, x.B), Add(Mul(Sub(aext, one), I64(-c)), one), true
			}
			return Mul(alo, x.B), Add(Mul(Sub(aext, one), x.B), one), true
		case OpFloorDiv:
			if !isConst || c <= 0 {
				return nil, nil, false
			}
			l := FloorDiv(alo, x.B)
			return l, Add(Sub(FloorDiv(ahi, x.B), l), one), true
		case OpFloorMod:
			if !isConst || c <= 0 {
				return nil, nil, false
			}
			// The dividend stays within one period from 0: the values it takes.
			if l, ok := IntValue(Simplify(alo)); ok && l == 0 {
				var a Analyzer
				if a.CanProve(NewBinary(OpLE, aext, x.B)) {
					return I64(0), aext, true
				}
			}
			return I64(0), x.B, true
		case OpMin:
			return Min(alo, blo), Add(Sub(Min(ahi, bhi), Min(alo, blo)), one), true
		case OpMax:
			l := Max(alo, blo)
			return l, Add(Sub(Max(ahi, bhi), l), one), true
		}
	}
	return nil, nil, false
}
