package wellformed

import (
	"slices"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// sinfo checks the variables struct info mentions. In definition mode (a
// parameter annotation or a match_cast target) a symbolic variable standing
// alone as a dimension or prim value, and a shape Var standing as a tensor's
// shape, are defined there; everything else must already be in scope. As in
// TVM, all definitions of a site come before its uses, so (n * 2, n) is fine.
func (c *checker) sinfo(s ir.StructInfo, def bool, span diag.Span) {
	if def {
		c.defineIn(s)
	}
	c.useIn(s, span)
}

// defineIn defines the variables s binds at a definition site: symbolic
// variables standing alone as a dimension or prim value, and a shape Var
// standing as a tensor's shape, anywhere in s, including a callable's
// parameters and return (TVM's WellFormedChecker visits all of them in its
// match-var-def mode).
func (c *checker) defineIn(s ir.StructInfo) {
	switch s := s.(type) {
	case *ir.PrimInfo:
		c.defineDim(s.Value)
	case *ir.ShapeInfo:
		for _, v := range s.Values {
			c.defineDim(v)
		}
	case *ir.TensorInfo:
		switch sh := s.Shape.(type) {
		case *ir.ShapeExpr:
			for _, v := range sh.Values {
				c.defineDim(v)
			}
		case *ir.Var:
			if c.lookupVar(sh) == nil {
				c.defineVar(sh, false)
			}
		}
	case *ir.TupleInfo:
		for _, f := range s.Fields {
			c.defineIn(f)
		}
	case *ir.FuncInfo:
		if !s.Opaque {
			for _, p := range s.Params {
				c.defineIn(p)
			}
		}
		c.defineIn(s.Ret)
	}
}

func (c *checker) defineDim(e ir.PrimExpr) {
	if v, ok := e.(*ir.PrimVar); ok && !c.symVisible(v) {
		c.defineSym(v)
	}
}

// useIn checks that every variable s mentions is in scope.
func (c *checker) useIn(s ir.StructInfo, span diag.Span) {
	switch s := s.(type) {
	case nil, *ir.ObjectInfo:
	case *ir.PrimInfo:
		if s.Value != nil {
			c.prim(s.Value, span)
		}
	case *ir.ShapeInfo:
		for _, v := range s.Values {
			c.prim(v, span)
		}
	case *ir.TensorInfo:
		switch sh := s.Shape.(type) {
		case nil:
		case *ir.ShapeExpr:
			for _, v := range sh.Values {
				c.prim(v, span)
			}
		case *ir.Var:
			c.useVar(sh)
		default:
			c.report(ruleMalformed, span, "tensor shape is a %T; it must be R.shape or a shape variable", sh)
		}
	case *ir.TupleInfo:
		for _, f := range s.Fields {
			c.useIn(f, span)
		}
	case *ir.FuncInfo:
		// As in TVM's WellFormedChecker (VisitStructInfo_ of
		// FuncStructInfoNode): a callable's parameter annotations are a
		// definition site, never checked as uses, and what they define
		// stays defined in the enclosing scope, not only for the callable's
		// own return type.
		if !s.Opaque {
			for _, p := range s.Params {
				c.defineIn(p)
			}
		}
		c.useIn(s.Ret, span)
	}
}

// prim checks that every symbolic variable a PrimExpr uses is in scope.
func (c *checker) prim(e ir.PrimExpr, span diag.Span) {
	switch e := e.(type) {
	case *ir.PrimVar:
		if !c.symVisible(e) && !slices.Contains(c.symReported, e) {
			c.symReported = append(c.symReported, e)
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
