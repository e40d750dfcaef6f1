package kernel

import "github.com/phasec/phasec/ir"

// affine is an index expression over a nest's variables:
// sum coef[v]*var_v + c, plus at most one group term gmul*(var_gv // gdiv)
// (the input channel of a grouped convolution: oc // (O/groups) * (I/groups)).
type affine struct {
	coef       []int64
	c          int64
	gv         int // -1 without a group term
	gdiv, gmul int64
}

// affineOf analyses e; ok is false for anything else (other variables,
// loads, non-constant products). Index expressions are shallow, so the
// recursion is bounded by the expression, not the program.
func (n *nest) affineOf(e ir.PrimExpr) (affine, bool) {
	f := affine{coef: make([]int64, len(n.vars)), gv: -1}
	switch e := e.(type) {
	case *ir.PrimVar:
		v := n.varIndex(e)
		if v < 0 {
			return f, false
		}
		f.coef[v] = 1
		return f, true
	case *ir.IntImm:
		f.c = e.Value
		return f, true
	case *ir.Binary:
		switch e.Op {
		case ir.OpAdd, ir.OpSub:
			a, ok := n.affineOf(e.A)
			if !ok {
				return f, false
			}
			b, ok := n.affineOf(e.B)
			if !ok {
				return f, false
			}
			sign := int64(1)
			if e.Op == ir.OpSub {
				sign = -1
			}
			if a.gv >= 0 && b.gv >= 0 {
				return f, false
			}
			for i := range f.coef {
				f.coef[i] = a.coef[i] + sign*b.coef[i]
			}
			f.c = a.c + sign*b.c
			f.gv, f.gdiv, f.gmul = a.gv, a.gdiv, a.gmul
			if b.gv >= 0 {
				f.gv, f.gdiv, f.gmul = b.gv, b.gdiv, sign*b.gmul
			}
			return f, true
		case ir.OpMul:
			x, k := e.A, e.B
			kv, ok := constI(k)
			if !ok {
				x, k = e.B, e.A
				if kv, ok = constI(k); !ok {
					return f, false
				}
			}
			a, ok := n.affineOf(x)
			if !ok {
				return f, false
			}
			for i := range a.coef {
				a.coef[i] *= kv
			}
			a.c *= kv
			a.gmul *= kv
			return a, true
		case ir.OpFloorDiv:
			k, ok := constI(e.B)
			if !ok || k <= 0 {
				return f, false
			}
			a, ok := n.affineOf(e.A)
			if !ok || k == 1 {
				return a, ok
			}
			// Only var // k (a grouped channel).
			if a.gv >= 0 || a.c != 0 {
				return f, false
			}
			v := -1
			for i, x := range a.coef {
				if x == 0 {
					continue
				}
				if x != 1 || v >= 0 {
					return f, false
				}
				v = i
			}
			if v < 0 {
				return f, false
			}
			f.gv, f.gdiv, f.gmul = v, k, 1
			return f, true
		}
	}
	return f, false
}
