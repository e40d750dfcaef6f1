package wellformed

import (
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
)

// Scoping state with dense IDs. Every Relax Var and symbolic PrimVar gets an
// index into a slice the first time the checker meets it; after that a use
// costs one table lookup (ptrmap.Map) and a slice access, and popping a
// scope walks only the variables the scope defined. The tables are built once per check and never
// shrink: a variable that went out of scope keeps its ID, so a second
// definition anywhere in the module is still caught (SSA by identity).

// varState is where a Relax variable stands at the current program point.
type varState uint8

const (
	varInScope    varState = iota + 1
	varOutOfScope          // its scope (function, If branch) has ended
	varDropped             // a dataflow var whose block has ended
)

type varInfo struct {
	state    varState
	param    bool
	dataflow bool // a dataflow var: it ends with its dataflow block
	// constBound: the variable is bound to a Constant, directly or through
	// aliases and match_casts (so a kernel writing it writes the constant
	// pool).
	constBound bool
}

// symInfo is the scope state of a symbolic variable. A symbolic variable is
// visible only inside the function (frame) that defines it.
type symInfo struct {
	inScope bool
	frame   int32
}

// symSave records the state a symbolic definition replaced, restored when the
// defining scope ends (a nested function may re-define an outer variable
// through its own parameters).
type symSave struct {
	id   int32
	prev symInfo
}

type scopes struct {
	varID    ptrmap.Map[ir.Var, int32]
	vars     []varInfo
	varStack []int32 // variables in definition order, popped per scope

	symID    ptrmap.Map[ir.PrimVar, int32]
	syms     []symInfo
	symStack []symSave

	frame     int32 // the current function's frame number
	nextFrame int32
}

// newScopes returns empty scopes with room for about nvars variables, so a
// large module's walk does not rehash the ID map while it grows (a growing
// map costs both the rehashing and the garbage of every outgrown table).
func newScopes(nvars int) scopes {
	s := scopes{
		vars:     make([]varInfo, 0, nvars),
		varStack: make([]int32, 0, nvars),
	}
	s.varID.Reserve(nvars)
	return s
}

// mark is a scope boundary: the lengths of both definition stacks.
type mark struct{ vars, syms int }

func (s *scopes) mark() mark { return mark{len(s.varStack), len(s.symStack)} }

// pop ends every definition made since m.
func (s *scopes) pop(m mark) {
	for _, id := range s.varStack[m.vars:] {
		if s.vars[id].state == varInScope {
			s.vars[id].state = varOutOfScope
		}
	}
	s.varStack = s.varStack[:m.vars]
	for i := len(s.symStack) - 1; i >= m.syms; i-- {
		sv := s.symStack[i]
		s.syms[sv.id] = sv.prev
	}
	s.symStack = s.symStack[:m.syms]
}

// lookupVar returns the variable's info, or nil if it was never defined.
func (s *scopes) lookupVar(v *ir.Var) *varInfo {
	id, ok := s.varID.Get(v)
	if !ok {
		return nil
	}
	return &s.vars[id]
}

// defineVar brings v into scope and returns its ID. redefined reports that v
// was already defined somewhere (a violation the caller reports); prev is
// then its info before this definition.
func (s *scopes) defineVar(v *ir.Var, param bool) (id int32, prev varInfo, redefined bool) {
	id, redefined = s.varID.GetOrSet(v, int32(len(s.vars)))
	if redefined {
		prev = s.vars[id]
	} else {
		s.vars = append(s.vars, varInfo{})
	}
	s.vars[id] = varInfo{state: varInScope, param: param, dataflow: v.Dataflow}
	s.varStack = append(s.varStack, id)
	return id, prev, redefined
}

// dropDataflow ends the dataflow variables defined since m (the end of a
// dataflow block); the block's outputs stay in scope.
func (s *scopes) dropDataflow(m mark) {
	for _, id := range s.varStack[m.vars:] {
		if info := &s.vars[id]; info.state == varInScope && info.dataflow {
			info.state = varDropped
		}
	}
}

// enterFunction starts a fresh symbolic frame and returns the one to restore.
func (s *scopes) enterFunction() (outer int32) {
	outer = s.frame
	s.nextFrame++
	s.frame = s.nextFrame
	return outer
}

// symVisible reports whether v is defined in the current function and scope.
func (s *scopes) symVisible(v *ir.PrimVar) bool {
	id, ok := s.symID.Get(v)
	return ok && s.syms[id].inScope && s.syms[id].frame == s.frame
}

// defineSym makes v visible in the current scope.
func (s *scopes) defineSym(v *ir.PrimVar) {
	id, ok := s.symID.GetOrSet(v, int32(len(s.syms)))
	if !ok {
		s.syms = append(s.syms, symInfo{})
	}
	s.symStack = append(s.symStack, symSave{id: id, prev: s.syms[id]})
	s.syms[id] = symInfo{inScope: true, frame: s.frame}
}

// symProblem explains why v is not visible ("" when it is).
func (s *scopes) symProblem(v *ir.PrimVar) string {
	id, ok := s.symID.Get(v)
	switch {
	case !ok:
		return "is used before it is defined"
	case !s.syms[id].inScope:
		return "is used outside the branch or function that defines it"
	case s.syms[id].frame != s.frame:
		return "is defined in an enclosing function; a nested function must bind it through its own parameters"
	}
	return ""
}

// countVars estimates how many variables a check of mod defines: the
// parameters and top-level bindings of its Relax functions. Nested scopes
// (If branches, local functions) are not counted; they grow the tables.
func countVars(mod *ir.Module) int {
	n := 0
	for _, f := range mod.Functions() {
		fn, ok := f.(*ir.Function)
		if !ok {
			continue
		}
		n += len(fn.Params)
		if seq, ok := fn.Body.(*ir.SeqExpr); ok {
			for _, b := range seq.Blocks {
				if b != nil {
					n += len(b.Bindings)
				}
			}
		}
	}
	return n
}
