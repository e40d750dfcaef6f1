package syntax

// The builder's side of syntax error recovery (recover.go): a `pass` that
// stands in for a neutralized statement poisons the names the statement
// would have bound, so that their uses are skipped silently instead of
// reported as undefined, and it excuses the function it is in from having
// to end with a return (the return may be what was neutralized).

// neutralizedPass handles st if it is a pass put in place of broken text
// and reports whether it was. With outer set the names are poisoned in the
// enclosing scope too: the pass stands in a scope (a dataflow block, an if
// branch) whose names flow out of it.
func (bd *builder) neutralizedPass(st *stmtNode, outer bool) bool {
	if bd.neutral == nil || st.Simple == nil || !st.Simple.Pass {
		return false
	}
	names, ok := bd.neutral[st.Pos.Line]
	if !ok {
		return false
	}
	bd.neutralSeen++
	for _, n := range names {
		bd.define(n, &symbol{poison: true})
		if outer && bd.scope.parent != nil && n != "_" {
			bd.scope.parent.set(n, &symbol{poison: true})
		}
	}
	return true
}

// poisonedFunc reports whether a module function of that name was
// neutralized (its definition is poisoned in the module scope).
func (bd *builder) poisonedFunc(name string) bool {
	s := bd.scope
	for s.parent != nil {
		s = s.parent
	}
	sym := s.get(name)
	return sym != nil && sym.poison
}
