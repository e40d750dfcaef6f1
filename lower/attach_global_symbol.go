package lower

import (
	"fmt"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// AttachGlobalSymbolInfo declares AttachGlobalSymbol (§3.22).
var AttachGlobalSymbolInfo = passes.Info{
	Name:        "AttachGlobalSymbol",
	Doc:         "give every function a global_symbol: its name, with the module's system_lib_prefix for PrimFuncs",
	OptLevel:    0,
	Establishes: phase.Of(phase.GlobalSymbols),
}

// AttrSystemLibPrefix is the module attribute whose string value prefixes
// the symbols of PrimFuncs (TVM's "system_lib_prefix").
const AttrSystemLibPrefix = "system_lib_prefix"

func init() {
	passes.RegisterModulePass(AttachGlobalSymbolInfo, func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
		return AttachGlobalSymbol(mod)
	})
}

// AttachGlobalSymbol sets global_symbol on every function of mod: a Relax
// function's symbol is its name; a PrimFunc's is system_lib_prefix + name,
// and with a non-empty prefix the PrimFunc is renamed to its symbol and
// every reference to it updated, so that a function's symbol always equals
// its name (rule WF011). Existing symbols are overwritten, as in TVM
// v0.20: afterwards every function is public. It fails when a prefixed
// name collides with an existing function. mod itself is returned when
// every function already has its symbol.
func AttachGlobalSymbol(mod *ir.Module) (*ir.Module, error) {
	prefix, _ := mod.Attrs.String(AttrSystemLibPrefix)
	out := mod.Clone()
	changed := false
	renames := map[string]string{}
	for name, f := range mod.Functions() {
		switch f := f.(type) {
		case *ir.Function:
			if s, _ := f.Attrs.String(ir.AttrGlobalSymbol); s == name {
				continue
			}
			n := *f
			n.Attrs = f.Attrs.With(ir.AttrGlobalSymbol, name)
			out.Set(name, &n)
			changed = true
		case *ir.PrimFunc:
			sym := prefix + name
			// Already symbolized (a second run must not prefix twice).
			if s, _ := f.Attrs.String(ir.AttrGlobalSymbol); s == name && strings.HasPrefix(name, prefix) {
				continue
			}
			n := *f
			n.Attrs = f.Attrs.With(ir.AttrGlobalSymbol, sym)
			if sym != name {
				if _, taken := mod.Lookup(sym); taken {
					return nil, fmt.Errorf("PrimFunc %s: its symbol %s (system_lib_prefix %q) is already a function of the module", name, sym, prefix)
				}
				out.Remove(name)
				renames[name] = sym
			}
			out.Set(sym, &n)
			changed = true
		}
	}
	if !changed {
		return mod, nil
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
