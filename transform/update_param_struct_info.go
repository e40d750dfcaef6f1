package transform

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
)

// UpdateParamStructInfo is TVM's src/relax/transform/
// update_param_struct_info.cc: parameters of the module's Relax functions
// get new struct info, and the bindings that use them are re-derived.
//
// TVM takes a callback from a parameter to its new struct info (or None).
// Its textual form here is a JSON object from parameter name to struct
// info in TVMScript, applied to every parameter of that name in every
// Relax function:
//
//	UpdateParamStructInfo{sinfo={"x": "R.Tensor(('batch', 16), 'float32')"}}
//
// (TVMScript takes single-quoted strings as well, which keeps the JSON
// readable.) Symbolic variables are matched by name: a name that a
// function's other parameters define is that variable; others are new and
// defined by the updated parameter. Bindings whose value's struct info
// changes get fresh vars with the new info; the return annotation is kept
// when it still describes the body, else re-derived. Unlike TVM, a name
// that no parameter of any function has is an error (a callback cannot
// tell), and so is struct info that does not parse, reported at the
// option.
var UpdateParamStructInfo = passes.Define(passes.Info{
	Name:     "UpdateParamStructInfo",
	Doc:      "give parameters new struct info, by name (a JSON object of TVMScript annotations), and re-derive the bindings that use them",
	OptLevel: 1,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it re-derives the struct info of the bindings using the parameters, binding by binding",
	},
	Options: []passes.Option{
		{Name: "sinfo", Type: passes.JSON, Default: map[string]any{},
			Doc:   `a JSON object from parameter name to its new struct info in TVMScript, e.g. {"x": "R.Tensor(('n', 16), 'float32')"}`,
			Check: func(v any) error { _, err := parseParamStructInfo(v); return err }},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	infos, err := parseParamStructInfo(env.Options().JSON("sinfo"))
	if err != nil {
		return nil, err
	}
	out, errs := UpdateParamStructInfoModule(mod, infos)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// Diagnostic codes of UpdateParamStructInfo.
var (
	DiagUpdateParamName = optCodes.Define("OPT640", "UpdateParamStructInfo names a parameter no function has")
)

// parseParamStructInfo reads the sinfo option: every struct info is
// parsed as the annotation of one parameter of one function, so that a
// symbolic variable named in several is one variable.
func parseParamStructInfo(v any) (map[string]ir.StructInfo, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object from parameter name to struct info, got %T", v)
	}
	names := slices.Sorted(maps.Keys(obj))
	var src strings.Builder
	src.WriteString("@I.ir_module\nclass Module:\n    @R.function\n    def f(")
	for i, name := range names {
		text, ok := obj[name].(string)
		if !ok {
			return nil, fmt.Errorf("parameter %s: want struct info as a TVMScript string, got %v", name, obj[name])
		}
		if strings.ContainsAny(text, "\n\r") {
			return nil, fmt.Errorf("parameter %s: struct info %q spans several lines", name, text)
		}
		if i > 0 {
			src.WriteString(", ")
		}
		fmt.Fprintf(&src, "p%d: %s", i, text)
	}
	src.WriteString("):\n        return R.tuple()\n")
	mod, diags := syntax.Parse("sinfo", []byte(src.String()))
	if diags.HasErrors() {
		return nil, fmt.Errorf("struct info %s does not parse: %s", describeSInfoOption(obj, names), diags[0].Msg)
	}
	f := mod.Func("f")
	if f == nil || len(f.Params) != len(names) {
		return nil, fmt.Errorf("struct info %s is not one annotation per parameter", describeSInfoOption(obj, names))
	}
	out := make(map[string]ir.StructInfo, len(names))
	for i, name := range names {
		out[name] = f.Params[i].StructInfo()
	}
	return out, nil
}

func describeSInfoOption(obj map[string]any, names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s: %v", n, obj[n])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// UpdateParamStructInfoModule gives every parameter of mod's Relax
// functions named in infos its new struct info.
func UpdateParamStructInfoModule(mod *ir.Module, infos map[string]ir.StructInfo) (*ir.Module, diag.List) {
	var errs diag.List
	used := map[string]bool{}
	var allParams []string
	out := mod
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		nf, ferrs := updateParams(mod, f, infos, used, &allParams)
		errs = append(errs, ferrs...)
		if nf == f || ferrs.HasErrors() {
			continue
		}
		if out == mod {
			out = mod.Clone()
		}
		out.Set(name, nf)
	}
	for _, name := range slices.Sorted(maps.Keys(infos)) {
		if !used[name] {
			slices.Sort(allParams)
			errs.Add(diag.Span{}, DiagUpdateParamName, "UpdateParamStructInfo: no function has a parameter %q (parameters: %s)",
				name, strings.Join(slices.Compact(allParams), ", "))
		}
	}
	if errs.HasErrors() {
		errs.Sort()
		return nil, errs
	}
	return out, nil
}

// updateParams rewrites f with the new parameters; it records the names
// it matched in used and every parameter name in all.
func updateParams(mod *ir.Module, f *ir.Function, infos map[string]ir.StructInfo, used map[string]bool, all *[]string) (*ir.Function, diag.List) {
	// The function's symbolic variables by name, for the new infos to
	// refer to.
	syms := map[string]*ir.PrimVar{}
	for _, p := range f.Params {
		for _, s := range ir.DefinableSymVars(p.StructInfo()) {
			syms[s.Name] = s
		}
	}
	rw := ir.NewRewriter(mod)
	params := slices.Clone(f.Params)
	changed := false
	for i, p := range f.Params {
		*all = append(*all, p.Name)
		s, ok := infos[p.Name]
		if !ok {
			continue
		}
		used[p.Name] = true
		subst := map[*ir.PrimVar]ir.PrimExpr{}
		for _, v := range ir.SymVarsInStructInfo(s) {
			if own, ok := syms[v.Name]; ok && own != v {
				subst[v] = own
			}
		}
		s = ir.SubstituteSymVars(s, subst)
		if ir.StructuralEqual(s, p.StructInfo(), ir.EqualOptions{}) {
			continue
		}
		np := ir.NewVar(p.Name, s)
		np.SetSpan(p.Span())
		params[i] = np
		rw.Remap(p, np)
		changed = true
	}
	if !changed {
		return f, nil
	}
	// No return annotation: renormalize keeps f's when it still fits.
	withParams := &ir.Function{Params: params, Body: f.Body, Pure: f.Pure, Attrs: f.Attrs}
	withParams.SetSpan(f.Span())
	nf := rw.Function(withParams)
	if errs := rw.B.Diagnostics(); errs.HasErrors() {
		return nil, errs
	}
	return renormalize(mod, f, nf)
}
