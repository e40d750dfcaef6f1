package wellformed

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// sinfo checks the variables struct info mentions. In definition mode (a
// parameter annotation or a match_cast target) a symbolic variable standing
// alone as a dimension or prim value, and a shape Var standing as a tensor's
// shape, are defined there; everything else must already be in scope.
func (c *checker) sinfo(s ir.StructInfo, def bool, span diag.Span) {
	switch s := s.(type) {
	case nil, *ir.ObjectInfo:
	case *ir.PrimInfo:
		if s.Value != nil {
			c.dim(s.Value, def, span)
		}
	case *ir.ShapeInfo:
		for _, v := range s.Values {
			c.dim(v, def, span)
		}
	case *ir.TensorInfo:
		switch sh := s.Shape.(type) {
		case nil:
		case *ir.ShapeExpr:
			for _, v := range sh.Values {
				c.dim(v, def, span)
			}
		case *ir.Var:
			if def && c.lookupVar(sh) == nil {
				c.defineVar(sh, false)
			} else {
				c.useVar(sh)
			}
		default:
			c.report(ruleMalformed, span, "tensor shape is a %T; it must be R.shape or a shape variable", sh)
		}
	case *ir.TupleInfo:
		for _, f := range s.Fields {
			c.sinfo(f, def, span)
		}
	case *ir.FuncInfo:
		// A callable's parameter annotations define variables for its own
		// return type only.
		m := c.mark()
		if !s.Opaque {
			for _, p := range s.Params {
				c.sinfo(p, true, span)
			}
		}
		c.sinfo(s.Ret, false, span)
		c.scopes.pop(m)
	}
}

// dim checks one dimension (or prim value) of struct info.
func (c *checker) dim(e ir.PrimExpr, def bool, span diag.Span) {
	if v, ok := e.(*ir.PrimVar); ok && def {
		if !c.symVisible(v) {
			c.defineSym(v)
		}
		return
	}
	c.prim(e, span)
}

// prim checks that every symbolic variable a PrimExpr uses is in scope.
func (c *checker) prim(e ir.PrimExpr, span diag.Span) {
	switch e := e.(type) {
	case *ir.PrimVar:
		if !c.symVisible(e) {
			// e's own span is its declaration; report the use.
			c.report(ruleUndefinedSymVar, span, "symbolic variable %s %s", e.Name, c.symProblem(e))
		}
	case *ir.Binary:
		c.prim(e.A, span)
		c.prim(e.B, span)
	case *ir.Not:
		c.prim(e.A, span)
	case *ir.Select:
		c.prim(e.Cond, span)
		c.prim(e.True, span)
		c.prim(e.False, span)
	case *ir.Cast:
		c.prim(e.Value, span)
	case *ir.PrimCall:
		for _, a := range e.Args {
			c.prim(a, span)
		}
	case *ir.BufferLoad:
		for _, a := range e.Indices {
			c.prim(a, span)
		}
	}
}
