package ir

import "github.com/phasec/phasec/internal/ptrmap"

// Mutator rewrites Relax IR bottom-up, copy-on-write: a node is rebuilt only
// when one of its children changed, so a Mutator whose hooks change nothing
// returns the very same node and allocates nothing. Hooks are plain function
// fields, all optional; a zero Mutator is the identity.
//
//	m := &ir.Mutator{PostExpr: func(e ir.Expr) ir.Expr {
//		if c, ok := e.(*ir.Call); ok && c.Op == op.NullValue { ... return replacement }
//		return e
//	}}
//	f2 := m.Function(f) // f2 == f when nothing matched
//
// Rebuilt nodes have no struct info (unless KeepStructInfo is set), so the
// result must be re-normalized (NormalizeFunction) before it is used; for
// rewrites that need to emit new bindings, use Rewriter instead.
//
// A SeqExpr's bindings are visited in a loop, never by recursion, so
// functions of any length are safe; recursion follows expression nesting.
type Mutator struct {
	// PreExpr is called before an expression's children are visited. A
	// non-nil result replaces e as is: its children are not visited and
	// PostExpr is not called on it. Return nil to proceed normally.
	PreExpr func(e Expr) Expr
	// PostExpr is called after e's children were rewritten (e is the
	// possibly rebuilt node) and returns the replacement, or e itself.
	// It sees variable uses too (a *Var in operand position).
	PostExpr func(e Expr) Expr
	// DefVar maps a variable at its definition (function parameter or
	// binding var). When it returns a different var, later uses of the old
	// var (in the same traversal) are replaced by the new one.
	DefVar func(v *Var) *Var
	// Binding is called after a binding's value (and var) were rewritten,
	// with the possibly rebuilt binding; it returns the replacement, or
	// nil to drop the binding.
	Binding func(b Binding) Binding
	// StructInfo rewrites annotation struct info: function return info,
	// MatchCast targets and call sinfo_args. (Variable struct info is
	// changed through DefVar.)
	StructInfo func(s StructInfo) StructInfo
	// KeepStructInfo copies the old node's struct info onto a rebuilt node,
	// for rewrites known not to change any type (renaming, substituting a
	// var by one of identical info).
	KeepStructInfo bool

	// remap maps each var DefVar replaced to its replacement: a ptrmap,
	// whose locality-keeping slots keep the lookups of a large function
	// in cache where a Go map's random hashing misses on every use.
	remap ptrmap.Map[Var, *Var]
}

// Expr rewrites an expression.
func (m *Mutator) Expr(e Expr) Expr {
	if e == nil {
		return nil
	}
	if m.PreExpr != nil {
		if r := m.PreExpr(e); r != nil {
			return r
		}
	}
	out := e
	switch e := e.(type) {
	case *Var:
		if n, ok := m.remap.Get(e); ok {
			out = n
		}
	case *Tuple:
		if fields, ch := m.exprs(e.Fields); ch {
			n := &Tuple{Fields: fields}
			m.inherit(&n.exprBase, &e.exprBase)
			out = n
		}
	case *TupleGetItem:
		if t := m.Expr(e.Tuple); t != e.Tuple {
			n := &TupleGetItem{Tuple: t, Index: e.Index}
			m.inherit(&n.exprBase, &e.exprBase)
			out = n
		}
	case *Call:
		op := m.Expr(e.Op)
		args, ach := m.exprs(e.Args)
		sargs, sch := m.sinfos(e.SInfoArgs)
		if op != e.Op || ach || sch {
			n := &Call{Op: op, Args: args, Attrs: e.Attrs, SInfoArgs: sargs}
			m.inherit(&n.exprBase, &e.exprBase)
			out = n
		}
	case *If:
		c, t, f := m.Expr(e.Cond), m.Expr(e.Then), m.Expr(e.Else)
		if c != e.Cond || t != e.Then || f != e.Else {
			n := &If{Cond: c, Then: t, Else: f}
			m.inherit(&n.exprBase, &e.exprBase)
			out = n
		}
	case *SeqExpr:
		out = m.seq(e)
	case *Function:
		out = m.Function(e)
	}
	if m.PostExpr != nil {
		out = m.PostExpr(out)
	}
	return out
}

func (m *Mutator) inherit(n, old *exprBase) {
	n.span = old.span
	if m.KeepStructInfo {
		n.sinfo = old.sinfo
	}
}

func (m *Mutator) exprs(in []Expr) ([]Expr, bool) { return mapList(in, m.Expr) }

func (m *Mutator) sinfo(s StructInfo) StructInfo {
	if m.StructInfo == nil || s == nil {
		return s
	}
	return m.StructInfo(s)
}

func (m *Mutator) sinfos(in []StructInfo) ([]StructInfo, bool) {
	if m.StructInfo == nil {
		return in, false
	}
	return mapList(in, m.StructInfo)
}

// defVar applies DefVar at a definition and records the remapping.
func (m *Mutator) defVar(v *Var) *Var {
	if m.DefVar == nil {
		return v
	}
	n := m.DefVar(v)
	if n != v && n != nil {
		m.remap.Set(v, n)
		return n
	}
	return v
}

// Function rewrites a function: parameters (DefVar), body, return info.
func (m *Mutator) Function(f *Function) *Function {
	params, pch := mapList(f.Params, m.defVar)
	body := m.Expr(f.Body)
	ret := m.sinfo(f.Ret)
	if !pch && body == f.Body && ret == f.Ret {
		return f
	}
	sameSig := !pch && ret == f.Ret
	n := &Function{Params: params, Body: body, Ret: ret, Pure: f.Pure, Attrs: f.Attrs}
	n.span = f.span
	if m.KeepStructInfo && sameSig {
		n.sinfo = f.sinfo
	}
	return n
}

func (m *Mutator) seq(s *SeqExpr) Expr {
	// A rewritten block left without bindings is dropped.
	blocks, bch := mapFilterList(s.Blocks, m.Block, hasBindings)
	body := m.Expr(s.Body)
	if !bch && body == s.Body {
		return s
	}
	n := &SeqExpr{Blocks: blocks, Body: body}
	m.inherit(&n.exprBase, &s.exprBase)
	return n
}

// Block rewrites the bindings of a block in order (iteratively).
func (m *Mutator) Block(blk *BindingBlock) *BindingBlock {
	binds, ch := mapFilterList(blk.Bindings, m.Bind, isBinding)
	if !ch {
		return blk
	}
	return &BindingBlock{Bindings: binds, Dataflow: blk.Dataflow, span: blk.span}
}

func hasBindings(blk *BindingBlock) bool { return len(blk.Bindings) > 0 }

// isBinding is false for a binding the Binding hook dropped (nil).
func isBinding(b Binding) bool { return b != nil }

// Bind rewrites one binding (its value, var and, for MatchCast, target
// info), then applies the Binding hook. It may return nil (dropped).
func (m *Mutator) Bind(bind Binding) Binding {
	out := bind
	switch b := bind.(type) {
	case *VarBinding:
		val := m.Expr(b.Value)
		v := m.defVar(b.Var)
		if val != b.Value || v != b.Var {
			n := &VarBinding{Var: v, Value: val}
			n.span = b.span
			out = n
		}
	case *MatchCast:
		val := m.Expr(b.Value)
		v := m.defVar(b.Var)
		si := m.sinfo(b.SInfo)
		if val != b.Value || v != b.Var || si != b.SInfo {
			n := &MatchCast{Var: v, Value: val, SInfo: si}
			n.span = b.span
			out = n
		}
	}
	if m.Binding != nil {
		out = m.Binding(out)
	}
	return out
}

// Module applies the mutator to every Relax function of mod; it returns mod
// itself when nothing changed, else a clone with the changed functions.
func (m *Mutator) Module(mod *Module) *Module {
	var out *Module
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		if n := m.Function(f); n != f {
			if out == nil {
				out = mod.Clone()
			}
			out.Set(name, n)
		}
	}
	if out == nil {
		return mod
	}
	return out
}
