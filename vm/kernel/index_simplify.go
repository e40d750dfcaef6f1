package kernel

import "github.com/phasec/phasec/ir"

// simplifyIndices rewrites the indices of f's copies (a store of a plain
// load: reshapes, transposes) that divide or take a remainder (FloorDiv,
// FloorMod, Div, Mod) into their canonical form under the constant
// ranges of the loop and block iteration variables (ir.Analyzer). Legalized reshapes index their input as
// (i + (j*64 + k) // 768) % 128, which with j < 12 and k < 64 is just i:
// after simplification the fused reshape and transpose nests FuseTIR
// writes have affine indices, so they run as vector copies instead of
// element gathers with two divisions each. The rewrite keeps every
// statement in place (schedules address loops by position) and changes
// nothing when no such index exists. Only indices that lose every
// division are replaced: the others keep the form their own matchers
// (adaptive pooling's start and end) recognise.
func simplifyIndices(f *ir.PrimFunc) *ir.PrimFunc {
	a := ir.NewAnalyzer()
	seen := map[*ir.PrimVar]bool{}
	bound := func(v *ir.PrimVar, first, ext ir.PrimExpr) {
		lo, ok1 := constI(first)
		n, ok2 := constI(ext)
		if !ok1 || !ok2 || n < 1 {
			return
		}
		hi := lo + n - 1
		if seen[v] { // a variable bound twice: the union of its ranges
			l, h := a.VarBounds(v)
			lo, hi = min(lo, l), max(hi, h)
		}
		seen[v] = true
		a.SetBounds(v, lo, hi)
	}
	divides := false
	ir.WalkStmt(f.Body, &ir.StmtVisitor{
		Stmt: func(s ir.Stmt) bool {
			switch s := s.(type) {
			case *ir.For:
				bound(s.Var, s.Min, s.Extent)
			case *ir.Block:
				for _, iv := range s.IterVars {
					bound(iv.Var, iv.Dom.Min, iv.Dom.Extent)
				}
			}
			return true
		},
		Prim: func(e ir.PrimExpr) bool {
			if b, ok := e.(*ir.Binary); ok && isDivision(b.Op) {
				divides = true
			}
			return !divides
		},
	})
	if !divides {
		return f
	}
	m := &ir.TIRMutator{PostStmt: func(s ir.Stmt) ir.Stmt {
		st, ok := s.(*ir.BufferStore)
		if !ok {
			return s
		}
		l, ok := st.Value.(*ir.BufferLoad)
		if !ok {
			return s
		}
		var idx []ir.PrimExpr
		for d, x := range l.Indices {
			if !hasDivision(x) {
				continue
			}
			if y := a.Simplify(x); y != x && !hasDivision(y) {
				if idx == nil {
					idx = append([]ir.PrimExpr(nil), l.Indices...)
				}
				idx[d] = y
			}
		}
		if idx == nil {
			return s
		}
		n := *st
		n.Value = &ir.BufferLoad{Buffer: l.Buffer, Indices: idx}
		return &n
	}}
	return m.PrimFunc(f)
}

func isDivision(op ir.BinaryOp) bool {
	return op == ir.OpFloorDiv || op == ir.OpFloorMod || op == ir.OpDiv || op == ir.OpMod
}

func hasDivision(e ir.PrimExpr) bool {
	found := false
	ir.InspectPrim(e, func(x ir.PrimExpr) bool {
		if b, ok := x.(*ir.Binary); ok && isDivision(b.Op) {
			found = true
		}
		return !found
	})
	return found
}
