package passes

import "github.com/phasec/phasec/ir"

// Size measures a module for run records and summaries: the number of Relax
// bindings (in all scopes, nested functions included) plus the number of
// TIR statements.
func Size(mod *ir.Module) int {
	n := 0
	for _, f := range mod.Functions() {
		switch f := f.(type) {
		case *ir.Function:
			n += exprSize(f)
		case *ir.PrimFunc:
			n += stmtSize(f.Body)
		}
	}
	return n
}

// exprSize counts bindings under e; it recurses on expression nesting and
// iterates over bindings.
func exprSize(e ir.Expr) int {
	switch e := e.(type) {
	case *ir.Function:
		return exprSize(e.Body)
	case *ir.SeqExpr:
		n := exprSize(e.Body)
		for _, b := range e.Blocks {
			n += len(b.Bindings)
			for _, bind := range b.Bindings {
				switch bind := bind.(type) {
				case *ir.VarBinding:
					n += exprSize(bind.Value)
				case *ir.MatchCast:
					n += exprSize(bind.Value)
				}
			}
		}
		return n
	case *ir.If:
		return exprSize(e.Cond) + exprSize(e.Then) + exprSize(e.Else)
	case *ir.Call:
		n := exprSize(e.Op)
		for _, a := range e.Args {
			n += exprSize(a)
		}
		return n
	case *ir.Tuple:
		n := 0
		for _, f := range e.Fields {
			n += exprSize(f)
		}
		return n
	case *ir.TupleGetItem:
		return exprSize(e.Tuple)
	}
	return 0
}

// stmtSize counts TIR statements; SeqStmt itself is not counted.
func stmtSize(s ir.Stmt) int {
	switch s := s.(type) {
	case nil:
		return 0
	case *ir.SeqStmt:
		n := 0
		for _, c := range s.Stmts {
			n += stmtSize(c)
		}
		return n
	case *ir.IfThenElse:
		return 1 + stmtSize(s.Then) + stmtSize(s.Else)
	case *ir.BlockRealize:
		n := 1
		if s.Block != nil {
			n += stmtSize(s.Block.Init) + stmtSize(s.Block.Body)
		}
		return n
	case *ir.Block:
		return 1 + stmtSize(s.Init) + stmtSize(s.Body)
	}
	if body, ok := ir.ScopeBody(s); ok {
		return 1 + stmtSize(body)
	}
	return 1
}
