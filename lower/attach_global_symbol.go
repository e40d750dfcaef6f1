package lower

import (
	"fmt"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// AttachGlobalSymbol is TVM's src/relax/transform/attach_global_symbol.cc.
var AttachGlobalSymbol = passes.Define(passes.Info{
	Name:        "AttachGlobalSymbol",
	Doc:         "give every function a global_symbol: its name, with the module's system_lib_prefix for PrimFuncs",
	OptLevel:    0,
	Establishes: phase.Of(phase.GlobalSymbols),
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return attachGlobalSymbol(mod)
}))

// AttrSystemLibPrefix is the module attribute whose string value prefixes
// the symbols of PrimFuncs (TVM's "system_lib_prefix").
const AttrSystemLibPrefix = "system_lib_prefix"

// attachGlobalSymbol sets global_symbol on every function of mod: a Relax
// function's symbol is its name; a PrimFunc's is system_lib_prefix + name,
// and with a non-empty prefix the PrimFunc is renamed to its symbol and
// every reference to it updated, so that a function's symbol always equals
// its name (rule WF011). Existing symbols are overwritten, as in TVM
// v0.20: afterwards every function is public. It fails when two functions
// would end up with the same name (a prefixed name taken by a function
// that keeps it). mod itself is returned when
// every function already has its symbol.
func attachGlobalSymbol(mod *ir.Module) (*ir.Module, error) {
	prefix, _ := mod.Attrs.String(AttrSystemLibPrefix)
	// Every function's new symbol (= its final name) first, so that a
	// rename into a name another function is leaving is not a collision.
	updated := map[string]ir.BaseFunc{} // final name -> function with its symbol
	renames := map[string]string{}
	final := map[string]string{} // final name -> original name
	for name, f := range mod.Functions() {
		sym := name
		switch f := f.(type) {
		case *ir.Function:
			if s, _ := f.Attrs.String(ir.AttrGlobalSymbol); s != name {
				n := *f
				n.Attrs = f.Attrs.With(ir.AttrGlobalSymbol, name)
				updated[name] = &n
			}
		case *ir.PrimFunc:
			// Already symbolized (a second run must not prefix twice).
			if s, _ := f.Attrs.String(ir.AttrGlobalSymbol); s != name || !strings.HasPrefix(name, prefix) {
				sym = prefix + name
				n := *f
				n.Attrs = f.Attrs.With(ir.AttrGlobalSymbol, sym)
				updated[sym] = &n
				if sym != name {
					renames[name] = sym
				}
			}
		}
		if prev, taken := final[sym]; taken {
			a, b := prev, name
			if a > b {
				a, b = b, a
			}
			return nil, fmt.Errorf("functions %s and %s would both be named %s (system_lib_prefix %q)", a, b, sym, prefix)
		}
		final[sym] = name
	}
	if len(updated) == 0 {
		return mod, nil
	}
	out := mod.Clone()
	for name := range renames {
		out.Remove(name)
	}
	for name, f := range updated {
		out.Set(name, f)
	}
	if len(renames) == 0 {
		return out, nil
	}
	m := &ir.Mutator{
		KeepStructInfo: true,
		PostExpr: func(e ir.Expr) ir.Expr {
			gv, ok := e.(*ir.GlobalVar)
			if !ok {
				return e
			}
			to, ok := renames[gv.Name]
			if !ok {
				return e
			}
			n := ir.NewGlobalVar(to)
			n.SetSpan(gv.Span())
			n.SetStructInfo(gv.StructInfo())
			return n
		},
	}
	return m.Module(out), nil
}
