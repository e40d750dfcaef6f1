package transform

import (
	"fmt"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// codeNoEntry reports an entry_functions name the module does not define.
var codeNoEntry = optCodes.Define("OPT040", "DeadCodeElimination: an entry function named in entry_functions is not in the module")

// DeadCodeElimination is TVM's src/relax/transform/dead_code_elimination.cc:
// it removes the functions no entry function reaches, then the bindings
// whose values nothing uses, then the functions only those bindings called.
//
// Entry functions are those named by entry_functions plus every function
// with external linkage (a global_symbol; TVMScript gives one to every
// function not declared private) and every extern function. A function is
// reached when an entry function or a reached function names it (a call, or
// any other mention of its GlobalVar such as call_tir's callee). When a
// reached function names a function the module lacks, the call graph cannot
// be traced and no function is removed.
//
// A binding is removed when its var is unused: not used by the function's
// results, by a match_cast, inside a nested function, or by a binding that
// is itself used; a binding whose value calls something impure always
// counts as used. match_cast bindings are never removed. Blocks left empty
// disappear and neighbours of the same kind merge, as TVM's normalizer does.
var DeadCodeElimination = passes.Define(passes.Info{
	Name:     "DeadCodeElimination",
	Doc:      "remove unused bindings (pure values only) and the functions no entry function reaches",
	OptLevel: 1,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it decides liveness per binding, which needs A-normal form (every use is a var)",
	},
	Options: []passes.Option{{
		Name: "entry_functions", Type: passes.Strings, Default: []string{},
		Doc: "functions kept as roots besides the public (global_symbol) and extern ones",
	}},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return EliminateDeadCode(mod, env.Options().Strings("entry_functions"))
}))

// EliminateDeadCode is the work of DeadCodeElimination: mod without the
// functions and bindings nothing uses, or mod itself when there are none.
// It fails, changing nothing, when an entry name is not a function of mod.
func EliminateDeadCode(mod *ir.Module, entryNames []string) (*ir.Module, error) {
	names := mod.Names()
	var errs diag.List
	entries := map[string]bool{}
	for _, n := range entryNames {
		if _, ok := mod.Lookup(n); !ok {
			d := errs.Add(diag.Span{File: mod.Source}, codeNoEntry, "DeadCodeElimination: entry function %q is not in the module", n)
			if c := diag.Closest(n, names); c != "" {
				d.Msg += fmt.Sprintf(" (did you mean %q?)", c)
			}
			continue
		}
		entries[n] = true
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for _, n := range names {
		f, _ := mod.Lookup(n)
		if _, ext := f.(*ir.ExternFunc); ext || ir.IsPublic(f) {
			entries[n] = true
		}
	}

	out := removeUnreachable(mod, entries)
	var changed *ir.Module
	for _, n := range out.Names() {
		f := out.Func(n)
		if f == nil {
			continue
		}
		if nf := removeUnusedBindings(out, f); nf != f {
			if changed == nil {
				changed = out.Clone()
			}
			changed.Set(n, nf)
		}
	}
	if changed != nil {
		out = changed
	}
	return removeUnreachable(out, entries), nil
}

// removeUnreachable returns mod without the functions no entry reaches, or
// mod itself when every function is reached or the call graph leaves the
// module (TVM's RemoveUnusedFunctions).
func removeUnreachable(mod *ir.Module, entries map[string]bool) *ir.Module {
	reached := make(map[string]bool, len(entries))
	var work []string
	for _, n := range mod.Names() { // sorted: a deterministic walk
		if entries[n] {
			reached[n] = true
			work = append(work, n)
		}
	}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		f, ok := mod.Lookup(n)
		if !ok {
			return mod // a callee outside the module: the graph cannot be traced
		}
		rf, ok := f.(*ir.Function)
		if !ok {
			continue // PrimFuncs and extern functions name no Relax function
		}
		ir.Inspect(rf, func(e ir.Expr) bool {
			if gv, ok := e.(*ir.GlobalVar); ok && !reached[gv.Name] {
				reached[gv.Name] = true
				work = append(work, gv.Name)
			}
			return true
		})
	}
	if len(reached) >= mod.Len() {
		return mod
	}
	out := mod.Clone()
	for _, n := range mod.Names() {
		if !reached[n] {
			out.Remove(n)
		}
	}
	return out
}

// removeUnusedBindings returns f without its unused bindings (TVM's
// RemoveAllUnused, src/relax/ir/binding_rewrite.cc), or f itself.
func removeUnusedBindings(mod *ir.Module, f *ir.Function) *ir.Function {
	l := &liveness{mod: mod, live: map[*ir.Var]bool{}}
	l.uses(f, true)
	if l.dead == 0 {
		return f
	}
	m := &ir.Mutator{
		KeepStructInfo: true,
		Binding: func(b ir.Binding) ir.Binding {
			if vb, ok := b.(*ir.VarBinding); ok && !l.live[vb.Var] {
				return nil
			}
			return b
		},
		PostExpr: mergeBlocks,
	}
	return m.Function(f)
}

// liveness finds the live vars of a function by TVM's use rule (UDChain,
// src/relax/analysis/udchain.cc): a use is charged to the innermost
// enclosing var binding, its user; a use with no user (a result, a
// match_cast value outside any var binding, a nested function's result)
// makes the var live, and so does an impure bound value; a var is live
// when a live user uses it.
//
// Every user of a var comes after it (in its scope or nested in a later
// binding), so one backward sweep over each binding list decides: when a
// binding is reached, every use of its var was seen. A local function is
// swept before its own binding is decided, as it may use itself.
type liveness struct {
	mod  *ir.Module
	live map[*ir.Var]bool
	dead int // var bindings found dead
}

// uses records the uses in e; live says whether e's user is live (a root
// use is a live one).
func (l *liveness) uses(e ir.Expr, live bool) {
	switch e := e.(type) {
	case *ir.Var:
		if live {
			l.live[e] = true
		}
	case *ir.Tuple:
		for _, f := range e.Fields {
			l.uses(f, live)
		}
	case *ir.TupleGetItem:
		l.uses(e.Tuple, live)
	case *ir.Call:
		l.uses(e.Op, live)
		for _, a := range e.Args {
			l.uses(a, live)
		}
	case *ir.If:
		l.uses(e.Cond, live)
		l.uses(e.Then, live)
		l.uses(e.Else, live)
	case *ir.SeqExpr:
		l.seq(e, live)
	case *ir.Function:
		l.uses(e.Body, true) // uses inside a nested function have no user
	}
}

// seq sweeps a scope backwards; live says whether its user is live.
func (l *liveness) seq(s *ir.SeqExpr, live bool) {
	l.uses(s.Body, live)
	for i := len(s.Blocks) - 1; i >= 0; i-- {
		binds := s.Blocks[i].Bindings
		for j := len(binds) - 1; j >= 0; j-- {
			switch b := binds[j].(type) {
			case *ir.VarBinding:
				fn, isFunc := b.Value.(*ir.Function)
				if isFunc {
					l.uses(fn, true)
				}
				if !l.live[b.Var] && containsImpureCall(l.mod, b.Value) {
					l.live[b.Var] = true
				}
				if !l.live[b.Var] {
					l.dead++
				}
				if !isFunc {
					l.uses(b.Value, l.live[b.Var])
				}
			case *ir.MatchCast:
				l.uses(b.Value, live)
			}
		}
	}
}
