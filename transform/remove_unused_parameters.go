package transform

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// RemoveUnusedParameters is TVM's relax.transform.RemoveUnusedParameters
// (src/relax/transform/remove_unused_parameters.cc, a module pass at opt
// level 0).
//
// A private Relax function (no global_symbol) loses the parameters its body
// does not use, and every call to it passes only the remaining arguments.
// A removed parameter may have been what defined symbolic variables the
// body still uses: each such variable, when no kept parameter defines it,
// becomes a new trailing parameter param_<name>: R.Prim(value=<name>), and
// call sites pass R.prim_value(<what their arguments bind it to>). A
// function whose calls changed then drops the bindings that only fed the
// removed arguments (TVM's RemoveAllUnused, see removeAllUnused).
//
// Unlike TVM, a private function also referenced other than as a callee
// (passed as a value) keeps its signature: TVM would change it and leave the
// reference with the old one.
var RemoveUnusedParameters = passes.Define(passes.Info{
	Name:     "RemoveUnusedParameters",
	Doc:      "remove the parameters private functions do not use, and their arguments at every call",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it reads parameter and argument struct info to carry symbolic variables and rewrites call bindings",
	},
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return removeUnusedParameters(mod)
}))

// DiagSymVarNotInferred: a call to a function whose unused parameter defined
// a symbolic variable gives no value for it.
var DiagSymVarNotInferred = optCodes.Define("OPT050", "a call's arguments do not determine a symbolic variable a removed parameter defined")

// paramUpdate is how one callee changes: which parameters stay and which
// symbolic variables become new trailing parameters.
type paramUpdate struct {
	old    []*ir.Var
	keep   []bool
	symVar []*ir.PrimVar
}

func removeUnusedParameters(mod *ir.Module) (*ir.Module, error) {
	nonCallee := globalsUsedAsValues(mod)
	updates := map[string]*paramUpdate{}
	var out *ir.Module
	for name, bf := range mod.Functions() {
		f, ok := bf.(*ir.Function)
		if !ok || ir.IsPublic(f) || nonCallee[name] {
			continue
		}
		nf, up := analyzeCallee(f)
		if up == nil {
			continue
		}
		if out == nil {
			out = mod.Clone()
		}
		updates[name] = up
		out.Set(name, nf)
	}
	if out == nil {
		return mod, nil
	}
	var errs diag.List
	m := &ir.Mutator{PostExpr: func(e ir.Expr) ir.Expr {
		c, ok := e.(*ir.Call)
		if !ok {
			return e
		}
		gv, ok := c.Op.(*ir.GlobalVar)
		if !ok || updates[gv.Name] == nil {
			return e
		}
		up := updates[gv.Name]
		if len(c.Args) != len(up.old) {
			return e // the well-formedness checker reports arity mismatches
		}
		var args []ir.Expr
		for i, a := range c.Args {
			if up.keep[i] {
				args = append(args, a)
			}
		}
		if len(up.symVar) > 0 {
			bound := inferSymVarMap(up.old, c.Args)
			for _, v := range up.symVar {
				val, ok := bound[v]
				if !ok {
					errs.Add(c.Span(), DiagSymVarNotInferred,
						"call to %s: its arguments do not determine the symbolic variable %s, which the removed parameters of %[1]s defined",
						gv.Name, v.Name)
					continue
				}
				args = append(args, ir.NewPrimValue(val))
			}
		}
		n := &ir.Call{Op: ir.NewGlobalVar(gv.Name), Args: args, Attrs: c.Attrs, SInfoArgs: c.SInfoArgs}
		n.SetSpan(c.Span())
		return n
	}}
	// Callers are rewritten in the module that already holds the new
	// callees (which may call each other), as TVM does.
	changed := map[string]*ir.Function{}
	for name, bf := range out.Functions() {
		f, ok := bf.(*ir.Function)
		if !ok {
			continue
		}
		nf := m.Function(f)
		if nf == f {
			continue
		}
		changed[name] = nf
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	for name, nf := range changed {
		// As TVM's CallSiteMutator: a changed function drops the
		// bindings that only fed removed arguments (local functions'
		// bindings included: the use-def walk covers them).
		nf = removeAllUnused(out, nf)
		norm, ds := ir.NormalizeFunction(out, nf)
		if err := ds.Err(); err != nil {
			return nil, err
		}
		out.Set(name, norm)
	}
	return out, nil
}

// analyzeCallee is TVM's AnalyzeCallee: f without its unused parameters,
// plus a parameter per symbolic variable the body uses that no kept
// parameter defines; nil when f uses every parameter.
func analyzeCallee(f *ir.Function) (*ir.Function, *paramUpdate) {
	used := usedVars(f.Body, f.Params)
	if len(used) == len(f.Params) {
		return f, nil
	}
	up := &paramUpdate{old: f.Params, keep: make([]bool, len(f.Params))}
	var params []*ir.Var
	defined := map[*ir.PrimVar]bool{}
	for i, p := range f.Params {
		if used[p] {
			up.keep[i] = true
			params = append(params, p)
			for _, v := range ir.DefinableSymVars(p.StructInfo()) {
				defined[v] = true
			}
		}
	}
	for _, v := range freeSymVars(f.Body) {
		if !defined[v] {
			up.symVar = append(up.symVar, v)
			params = append(params, ir.NewVar("param_"+v.Name, ir.PrimInfoOf(v)))
		}
	}
	if params == nil {
		params = []*ir.Var{}
	}
	nf := &ir.Function{Params: params, Body: f.Body, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	nf.SetSpan(f.Span())
	// The body is unchanged and normalized: only the signature is new.
	nf.SetStructInfo(ir.FuncInfoOf(nf))
	return nf, up
}

// globalsUsedAsValues returns the names of the functions referenced other
// than as the callee of a call.
func globalsUsedAsValues(mod *ir.Module) map[string]bool {
	out := map[string]bool{}
	for _, bf := range mod.Functions() {
		f, ok := bf.(*ir.Function)
		if !ok {
			continue
		}
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			switch e := e.(type) {
			case *ir.Call:
				if _, ok := e.Op.(*ir.GlobalVar); ok {
					for _, a := range e.Args {
						ir.Inspect(a, func(x ir.Expr) bool {
							if gv, ok := x.(*ir.GlobalVar); ok {
								out[gv.Name] = true
							}
							return true
						})
					}
					return false
				}
			case *ir.GlobalVar:
				out[e.Name] = true
			}
			return true
		})
	}
	return out
}
