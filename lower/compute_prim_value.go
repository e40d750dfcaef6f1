package lower

import (
	"strconv"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// ComputePrimValue is TVM's src/relax/transform/compute_prim_value.cc
// (see ComputePrimValues).
var ComputePrimValue = passes.Define(passes.Info{
	Name:     "ComputePrimValue",
	Doc:      "compute composite R.prim_value expressions in generated host PrimFuncs (compute_symbolic_expr)",
	OptLevel: 0,
	// A call to a PrimFunc is impure to phasec (a kernel writes its
	// outputs), so the calls it adds need purity checking relaxed and no
	// dataflow block around them.
	Requires: map[phase.Property]string{
		phase.Normalized:    "it replaces PrimValues in bindings by calls, which normal form then binds",
		phase.NoDataflow:    "the PrimFunc calls it emits are impure to phasec and may not sit in dataflow blocks",
		phase.PurityRelaxed: "it inserts impure PrimFunc calls into pure functions",
	},
	// It runs between LowerRuntimeBuiltin and VMShapeLower, and the
	// PrimFunc calls it adds are legal for code generation.
	Preserves: phase.Of(phase.BuiltinsLowered),
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	out, n, errs := ComputePrimValues(mod)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	env.Stat("computed_prim_values", int64(n))
	return out, nil
}))

// ComputePrimValues replaces every R.prim_value whose value is neither an
// integer constant nor a bare symbolic variable, such as
// R.prim_value(n * 2 + 1), by a call to a generated host PrimFunc
// compute_symbolic_expr (compute_symbolic_expr1, ... for further distinct
// expressions; structurally equal ones share a function) that takes the
// expression's variables as scalars, in first-occurrence order, and returns
// it through T.ret:
//
//	@T.prim_func(private=True)
//	def compute_symbolic_expr(n: T.int64) -> T.int64:
//	    T.func_attr({"tir.is_host_func": True})
//	    T.ret(n * T.int64(2) + T.int64(1))
//
//	y = cls.compute_symbolic_expr(R.prim_value(n))
//
// Afterwards every PrimValue is a constant or a bare variable, which is
// what VMShapeLower can load from the shape heap. As in TVM, a float
// constant is not an integer constant and is computed too. It returns the
// number of PrimValues replaced.
//
//	phasec opt --passes ComputePrimValue testdata/passes/ComputePrimValue/composite.tvms
func ComputePrimValues(mod *ir.Module) (*ir.Module, int, diag.List) {
	out := mod.Clone()
	adder := newFuncAdder(out, false)
	rw := ir.NewRewriter(out)
	n := 0
	rw.PostExpr = func(_ *ir.Rewriter, e ir.Expr) ir.Expr {
		pv, ok := e.(*ir.PrimValue)
		if !ok || !needsCompute(pv.Value) {
			return e
		}
		n++
		// The canonical form is what the printer shows, so the generated
		// function is the same for a parsed module and one a pass built.
		value := ir.Simplify(pv.Value)
		vars := ir.PrimVarsIn(value)
		params := make([]*ir.PrimVar, len(vars))
		renew := make(map[*ir.PrimVar]ir.PrimExpr, len(vars))
		args := make([]ir.Expr, len(vars))
		for i, v := range vars {
			params[i] = ir.NewPrimVar(v.Name, v.Type)
			renew[v] = params[i]
			args[i] = ir.NewPrimValue(v)
		}
		dt := value.DType()
		pf := &ir.PrimFunc{
			Params: params,
			Body:   &ir.Evaluate{Value: &ir.PrimCall{Op: "ret", Args: []ir.PrimExpr{ir.SubstitutePrim(value, renew)}, Type: dt}},
			Ret:    dt,
			Attrs:  ir.Attrs{attrIsHostFunc: true},
		}
		name := adder.add(pf, "compute_symbolic_expr")
		c := ir.NewCall(ir.NewGlobalVar(name), args...)
		c.SetSpan(pv.Span())
		return c
	}
	for _, name := range mod.Names() {
		fn := mod.Func(name)
		if fn == nil || !hasComputedPrimValue(fn) {
			continue
		}
		out.Set(name, rw.Function(fn))
	}
	errs := rw.B.Diagnostics()
	errs.Sort()
	return out, n, errs
}

func needsCompute(v ir.PrimExpr) bool {
	switch v.(type) {
	case *ir.IntImm, *ir.PrimVar:
		return false
	}
	return true
}

// hasComputedPrimValue reports whether fn holds a PrimValue to compute, so
// that functions without one are not re-emitted.
func hasComputedPrimValue(fn *ir.Function) bool {
	found := false
	ir.Inspect(fn.Body, func(e ir.Expr) bool {
		if pv, ok := e.(*ir.PrimValue); ok && needsCompute(pv.Value) {
			found = true
		}
		return !found
	})
	return found
}

// funcAdder adds generated PrimFuncs to a module as TVM's
// BlockBuilder::AddFunction does: a function structurally equal to one
// added before (or, with dedupExisting, to one already in the module) is
// reused; otherwise it gets the name hint, or the hint with the smallest
// numeric suffix 1, 2, ... not yet taken.
type funcAdder struct {
	mod           *ir.Module
	dedupExisting bool
	byHash        map[uint64][]string
	next          map[string]int
}

func newFuncAdder(mod *ir.Module, dedupExisting bool) *funcAdder {
	return &funcAdder{mod: mod, dedupExisting: dedupExisting, next: map[string]int{}}
}

func (a *funcAdder) add(f *ir.PrimFunc, hint string) string {
	if a.byHash == nil {
		a.byHash = map[uint64][]string{}
		if a.dedupExisting {
			for name, g := range a.mod.Functions() {
				if pf, ok := g.(*ir.PrimFunc); ok {
					h := ir.StructuralHash(pf)
					a.byHash[h] = append(a.byHash[h], name)
				}
			}
		}
	}
	h := ir.StructuralHash(f)
	for _, name := range a.byHash[h] {
		if g, ok := a.mod.Lookup(name); ok && ir.StructuralEqual(g, f, ir.EqualOptions{}) {
			return name
		}
	}
	name := hint
	for {
		if i := a.next[hint]; i > 0 {
			name = hint + strconv.Itoa(i)
		}
		a.next[hint]++
		if _, taken := a.mod.Lookup(name); !taken {
			break
		}
	}
	a.mod.Set(name, f)
	a.byHash[h] = append(a.byHash[h], name)
	return name
}
