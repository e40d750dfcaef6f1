package transform

import (
	"strconv"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// NormalizeGlobalVar is TVM's relax.transform.NormalizeGlobalVar
// (GlobalVarNormalizer in src/relax/transform/normalize.cc, a module pass
// at opt level 0): every public function is renamed to its global_symbol,
// private functions whose names that takes are renamed to fresh ones
// (TVM's NameSupply: '.' becomes '_', then a numeric suffix), and every
// reference follows.
//
// phasec's WellFormed already includes what this pass establishes (WF011:
// a Relax function's global_symbol equals its name), and every pass needs
// WellFormed, so on any module a pipeline accepts the pass changes nothing.
// The renaming itself is normalizeGlobalVars, for modules read from TVM
// text whose names disagree with their symbols.
var NormalizeGlobalVar = passes.Define(passes.Info{
	Name:     "NormalizeGlobalVar",
	Doc:      "rename public functions to their global_symbol and private ones out of their way",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return normalizeGlobalVars(mod)
}))

// DiagDuplicateGlobalSymbol: two functions of a module have the same
// global_symbol.
var DiagDuplicateGlobalSymbol = optCodes.Define("OPT051", "two functions of the module have the same global_symbol")

// normalizeGlobalVars is TVM's GlobalVarNormalizer::Normalize: mod itself
// when every function's global_symbol is its name, else the renamed module.
// Functions are visited in name order (TVM's map order is unspecified).
func normalizeGlobalVars(mod *ir.Module) (*ir.Module, error) {
	order := mod.Names() // sorted once; each Functions() call sorts again
	needed := false
	for _, name := range order {
		f, _ := mod.Lookup(name)
		if sym, ok := f.FuncAttrs().String(ir.AttrGlobalSymbol); ok && sym != name {
			needed = true
			break
		}
	}
	if !needed {
		return mod, nil
	}
	names := nameSupply{}
	rename := map[string]string{}
	var errs diag.List
	for _, name := range order {
		f, _ := mod.Lookup(name)
		sym, ok := f.FuncAttrs().String(ir.AttrGlobalSymbol)
		if !ok {
			continue
		}
		if names[sym] != nil {
			errs.Add(f.Span(), DiagDuplicateGlobalSymbol, "the module has two functions with global_symbol %q", sym)
			continue
		}
		names.reserve(sym)
		rename[name] = sym
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	for _, name := range order {
		f, _ := mod.Lookup(name)
		if _, ok := f.FuncAttrs().String(ir.AttrGlobalSymbol); !ok {
			rename[name] = names.fresh(name)
		}
	}
	m := &ir.Mutator{KeepStructInfo: true, PostExpr: func(e ir.Expr) ir.Expr {
		gv, ok := e.(*ir.GlobalVar)
		if !ok || rename[gv.Name] == gv.Name {
			return e
		}
		n := ir.NewGlobalVar(rename[gv.Name])
		n.SetSpan(gv.Span())
		n.SetStructInfo(gv.StructInfo())
		return n
	}}
	out := ir.NewModule()
	out.Attrs, out.VDevices, out.GlobalInfos, out.Unchecked, out.Source, out.Meta = mod.Attrs, mod.VDevices, mod.GlobalInfos, mod.Unchecked, mod.Source, mod.Meta
	for _, name := range order {
		f, _ := mod.Lookup(name)
		if fn, ok := f.(*ir.Function); ok {
			f = m.Function(fn)
		}
		out.Set(rename[name], f)
	}
	return out, nil
}

// nameSupply is TVM's NameSupply (src/ir/name_supply.cc) without a
// prefix: each name taken, with the last numeric suffix tried for it.
type nameSupply map[string]*int

func (s nameSupply) reserve(name string) { s[name] = new(int) }

// fresh returns name with '.' replaced by '_', or, when that is taken, the
// first of name1, name2, ... not taken (TVM's FreshName without underscore).
func (s nameSupply) fresh(name string) string {
	name = strings.ReplaceAll(name, ".", "_")
	counter, taken := s[name]
	if !taken {
		s.reserve(name)
		return name
	}
	for {
		*counter++
		n := name + strconv.Itoa(*counter)
		if s[n] == nil {
			s.reserve(n)
			return n
		}
	}
}
