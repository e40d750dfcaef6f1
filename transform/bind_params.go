package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/tensor"
)

// BindParams is TVM's src/relax/transform/bind_params.cc: the parameters
// of one function named like the arrays of an .npz file are replaced by
// those arrays as constants and dropped from the parameter list; the
// symbolic shape variables the parameters define are bound from the
// arrays' shapes (TVM's InferSymbolicVarMap) and substituted throughout
// the function, return annotation included.
//
//	phasec opt --passes 'BindParams{func=main,params=w.npz}' model.tvms
//
// TVM's pass takes a Python dict of arrays; here they come from a file
// (numpy.savez). The function is found as TVM finds it: by its
// global_symbol when it has one (external linkage), else by its name.
// Unlike TVM, which binds whatever it is given, an array whose dtype,
// rank or dimensions contradict the parameter's annotation is an error
// naming the parameter, what it expects and what the file holds, as is a
// symbolic variable given two different values and a function the module
// does not have (TVM leaves the module unchanged); all errors are
// reported together and nothing is bound.
var BindParams = passes.Define(passes.Info{
	Name:     "BindParams",
	Doc:      "bind parameters of a function to the constant arrays of an .npz file, by parameter name",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it substitutes constants for parameters and re-derives the struct info of the bindings that use them, assuming A-normal form",
	},
	Options: []passes.Option{
		{Name: "func", Type: passes.String, Default: "", Doc: "the function whose parameters are bound (its global_symbol, or its name when it has none); required"},
		{Name: "params", Type: passes.String, Default: "", Doc: "path of an .npz file whose array names are parameter names; required"},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	opts := env.Options()
	out, errs := BindParamsFile(mod, opts.String("func"), opts.String("params"))
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// Diagnostic codes of BindParams.
var (
	DiagBindParamsOption   = optCodes.Define("OPT201", "BindParams options missing, or the .npz file unreadable")
	DiagBindParamsFunc     = optCodes.Define("OPT202", "BindParams names a function the module does not have")
	DiagBindParamsName     = optCodes.Define("OPT203", "an array of BindParams' file names no parameter of the function")
	DiagBindParamsMismatch = optCodes.Define("OPT204", "an array of BindParams' file does not match its parameter's dtype or shape")
)

// BindParamsFile reads the arrays of the .npz file at path and binds them
// to the parameters of function fn of mod (see BindParams).
func BindParamsFile(mod *ir.Module, fn, path string) (*ir.Module, diag.List) {
	var errs diag.List
	if fn == "" {
		errs.Add(diag.Span{}, DiagBindParamsOption, "BindParams: option func (the function to bind) is required")
	}
	if path == "" {
		errs.Add(diag.Span{}, DiagBindParamsOption, "BindParams: option params (an .npz file) is required")
	}
	if errs.HasErrors() {
		return nil, errs
	}
	arrays, err := tensor.ReadNpz(path)
	if err != nil {
		errs.Add(diag.Span{}, DiagBindParamsOption, "BindParams: params=%s: %v", path, err)
		return nil, errs
	}
	return BindParamArrays(mod, fn, path, arrays)
}

// BindParamArrays binds arrays to the parameters of function fn of mod;
// source names the arrays' origin in messages.
func BindParamArrays(mod *ir.Module, fn, source string, arrays []tensor.Named) (*ir.Module, diag.List) {
	var errs diag.List
	var names []string
	for _, name := range mod.Names() {
		if f := mod.Func(name); f != nil && bindParamsTarget(name, f) == fn {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		errs.Add(diag.Span{}, DiagBindParamsFunc, "BindParams: the module has no Relax function %q (functions: %s)",
			fn, strings.Join(relaxFunctionNames(mod), ", "))
		return nil, errs
	}
	out := mod
	for _, name := range names {
		f := mod.Func(name)
		nf, ferrs := bindFunctionParams(mod, f, source, arrays)
		errs = append(errs, ferrs...)
		if ferrs.HasErrors() || nf == f {
			continue
		}
		if out == mod {
			out = mod.Clone()
		}
		out.Set(name, nf)
	}
	if errs.HasErrors() {
		errs.Sort()
		return nil, errs
	}
	return out, nil
}

// bindParamsTarget is the name BindParams knows function name by: its
// global_symbol when it has one, else its name in the module.
func bindParamsTarget(name string, f *ir.Function) string {
	if s, ok := f.Attrs.String(ir.AttrGlobalSymbol); ok {
		return s
	}
	return name
}

func relaxFunctionNames(mod *ir.Module) []string {
	var out []string
	for _, name := range mod.Names() {
		if f := mod.Func(name); f != nil {
			out = append(out, bindParamsTarget(name, f))
		}
	}
	return out
}

// bindFunctionParams binds the arrays to f's parameters of the same names.
func bindFunctionParams(mod *ir.Module, f *ir.Function, source string, arrays []tensor.Named) (*ir.Function, diag.List) {
	var errs diag.List
	byName := map[string][]*ir.Var{}
	var paramNames []string
	for _, p := range f.Params {
		byName[p.Name] = append(byName[p.Name], p)
		paramNames = append(paramNames, p.Name)
	}
	binds := map[*ir.Var]ir.Expr{}
	syms := map[*ir.PrimVar]ir.PrimExpr{}
	// symFrom remembers which parameter bound each symbolic variable, for
	// the message when another parameter contradicts it.
	symFrom := map[*ir.PrimVar]string{}
	for _, a := range arrays {
		params := byName[a.Name]
		switch {
		case len(params) == 0:
			errs.Add(f.Span(), DiagBindParamsName, "BindParams: %s has array %q but the function has no parameter of that name (parameters: %s)",
				source, a.Name, strings.Join(paramNames, ", "))
			continue
		case len(params) > 1:
			errs.Add(params[1].Span(), DiagBindParamsName, "BindParams: the function has %d parameters named %q; array %q of %s cannot name one",
				len(params), a.Name, a.Name, source)
			continue
		}
		p := params[0]
		c, err := constantOf(a.Tensor)
		if err != nil {
			errs.Add(p.Span(), DiagBindParamsMismatch, "BindParams: array %q of %s: %v", a.Name, source, err)
			continue
		}
		if msg := matchParam(p, c.Data, syms, symFrom); msg != "" {
			errs.Add(p.Span(), DiagBindParamsMismatch, "BindParams: parameter %s %s", p.Name, msg+" in "+source)
			continue
		}
		binds[p] = c
	}
	// A dimension that is an expression of bound variables (n+1) must
	// come out as the array's size.
	for p, c := range binds {
		dims, _ := p.StructInfo().(*ir.TensorInfo).Dims()
		for i, d := range dims {
			got := c.(*ir.Constant).Data.Shape[i]
			if v, ok := ir.IntValue(ir.SubstituteSymVarsPrim(d, syms)); ok && v != got {
				errs.Add(p.Span(), DiagBindParamsMismatch, "BindParams: parameter %s expects dimension %d to be %s = %d, found %d in %s",
					p.Name, i, d, v, got, source)
			}
		}
	}
	if errs.HasErrors() || len(binds) == 0 {
		return f, errs
	}
	bound := ir.Bind(f, binds)
	bound = ir.SubstituteSymVarsInExpr(bound, syms)
	nf, nerrs := ir.NormalizeFunction(mod, bound.(*ir.Function))
	return nf, nerrs
}

// matchParam checks the array a against p's struct info and records the
// symbolic variables p's shape defines (TVM's InferSymbolicVarMap). It
// returns what is wrong, or "".
func matchParam(p *ir.Var, a *ir.NDArray, syms map[*ir.PrimVar]ir.PrimExpr, symFrom map[*ir.PrimVar]string) string {
	t, ok := p.StructInfo().(*ir.TensorInfo)
	if !ok {
		return fmt.Sprintf("is %s, not a tensor: it cannot be bound to an array", p.StructInfo())
	}
	found := fmt.Sprintf("%s %s", a.DType, tensor.FormatShape(a.Shape))
	if !t.DType.IsVoid() && t.DType != a.DType {
		return fmt.Sprintf("expects dtype %s, found %s", t.DType, found)
	}
	if t.NDim >= 0 && t.NDim != len(a.Shape) {
		return fmt.Sprintf("expects rank %d (%s), found %s", t.NDim, t, found)
	}
	dims, ok := t.Dims()
	if !ok {
		return ""
	}
	// Check every dimension before recording any binding, so a mismatch
	// leaves syms as it was.
	local := map[*ir.PrimVar]int64{}
	for i, d := range dims {
		got := a.Shape[i]
		if v, ok := ir.IntValue(d); ok && v != got {
			return fmt.Sprintf("expects shape %s, found %s", dimsString(dims), found)
		}
		v, ok := d.(*ir.PrimVar)
		if !ok {
			continue
		}
		if prev, ok := syms[v]; ok {
			if pv, _ := ir.IntValue(prev); pv != got {
				return fmt.Sprintf("expects shape %s with %s = %d (bound by parameter %s), found %s",
					dimsString(dims), v.Name, pv, symFrom[v], found)
			}
		}
		if prev, ok := local[v]; ok && prev != got {
			return fmt.Sprintf("expects shape %s, found %s (%s cannot be both %d and %d)", dimsString(dims), found, v.Name, prev, got)
		}
		local[v] = got
	}
	for v, n := range local {
		if _, ok := syms[v]; !ok {
			syms[v] = ir.I64(n)
			symFrom[v] = p.Name
		}
	}
	return ""
}

// constantOf copies a tensor into a Relax constant.
func constantOf(t *tensor.Tensor) (*ir.Constant, error) {
	dt := op.IRDType(t.DType)
	arr, err := ir.NewNDArray(dt, slices.Clone(t.Shape))
	if err != nil {
		return nil, err
	}
	if len(arr.Data) != len(t.Bytes()) {
		return nil, fmt.Errorf("%s %s holds %d bytes, want %d", dt, tensor.FormatShape(t.Shape), len(t.Bytes()), len(arr.Data))
	}
	copy(arr.Data, t.Bytes())
	return &ir.Constant{Data: arr}, nil
}

func dimsString(dims []ir.PrimExpr) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = fmt.Sprint(d)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
