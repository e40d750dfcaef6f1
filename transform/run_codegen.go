package transform

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// Codes of RunCodegen.
var (
	codeUnknownCodegen = optCodes.Define("OPT410", "RunCodegen: a function names a codegen nobody registered")
	codeCodegenFailed  = optCodes.Define("OPT411", "RunCodegen: an external codegen cannot compile a function")
	codeBadCodegenCall = optCodes.Define("OPT412", "RunCodegen: a Codegen function is used other than as a callee, or nested functions remain outside Codegen functions")
	codeBadTargetOpts  = optCodes.Define("OPT413", "RunCodegen: target_options is not a map from codegen names to option maps")
	codeNotOffloaded   = optCodes.Define("OPT414", "RunCodegen: a composite function belongs to no Codegen function, so phasec computes it")
	codeFusionGroup    = optCodes.Define("OPT415", "RunCodegen: a FuseOps group (Primitive, not Composite) awaits FuseTIR")
)

// CodegenFunction is one function an external codegen compiles: a Codegen
// function of the module (its body binds nested composite functions and
// calls them) and the symbol the VM will call it by.
type CodegenFunction struct {
	Symbol string
	Func   *ir.Function
}

// ExternalModule is what an external codegen returns (TVM's
// runtime.Module): a kind naming the runtime linker that rebuilds it
// (package vm/extern), the symbols it exports and its payload. RunCodegen
// records it in the module attribute external_mods, which VM code
// generation writes into the executable.
type ExternalModule struct {
	Kind    string
	Symbols []string
	Payload []byte
}

// CodegenError is an external codegen's refusal of one function.
type CodegenError struct {
	Symbol string
	Msg    string
}

func (e *CodegenError) Error() string { return e.Symbol + ": " + e.Msg }

// ExternalCodegen compiles the Codegen functions of its name (TVM's
// relax.ext.<name> global function). options are target_options[name].
type ExternalCodegen func(funcs []CodegenFunction, options map[string]any) ([]ExternalModule, error)

var (
	codegensMu sync.RWMutex
	codegens   = map[string]ExternalCodegen{}
)

// RegisterCodegen registers an external codegen under the name Codegen
// attributes use. Registering a name twice is an error.
func RegisterCodegen(name string, cg ExternalCodegen) error {
	codegensMu.Lock()
	defer codegensMu.Unlock()
	if name == "" || cg == nil {
		return fmt.Errorf("codegen needs a name and a function")
	}
	if _, dup := codegens[name]; dup {
		return fmt.Errorf("codegen %q is already registered", name)
	}
	codegens[name] = cg
	return nil
}

// Codegens lists the registered codegen names, sorted.
func Codegens() []string {
	codegensMu.RLock()
	defer codegensMu.RUnlock()
	names := make([]string, 0, len(codegens))
	for n := range codegens {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookupCodegen(name string) (ExternalCodegen, bool) {
	codegensMu.RLock()
	defer codegensMu.RUnlock()
	cg, ok := codegens[name]
	return cg, ok
}

// RunCodegen is TVM's relax.transform.RunCodegen
// (src/relax/transform/run_codegen.cc).
//
// Every module-level function with attribute Codegen is compiled by the
// external codegen registered under that name (RegisterCodegen), all
// functions of one codegen in one call (with target_options[codegen]); the
// modules it returns are appended to the module attribute external_mods.
// In every other Relax function each call of a Codegen function becomes
// R.call_dps_packed(R.ExternFunc(global_symbol), args, out_sinfo=its
// result), which the lower barrier turns into an output allocation and a
// packed call the VM resolves in the executable's external modules. The
// Codegen functions and the composite functions no longer called are
// removed, and then, as TVM does, DeadCodeElimination with entry_functions
// (the public functions and those named).
//
// A codegen nobody registered is an error at each function naming it
// (OPT410); a function its codegen refuses is an error naming it (OPT411).
//
// Phase: it ends the offload sub-phase (see FuseOpsByPattern): it
// establishes NoPrimitiveFunctions and NoNestedFunctions. A nested function
// outside a Codegen function, which no offload pass makes, is refused
// (OPT412) rather than left behind.
var RunCodegen = passes.Define(passes.Info{
	Name:     "RunCodegen",
	Doc:      "compile Codegen functions with their registered external codegen and call the kernels through call_dps_packed",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized: "it reads call struct info for the call_dps_packed output and rewrites call bindings",
	},
	Establishes: phase.Of(phase.NoPrimitiveFunctions, phase.NoOffloadGroups, phase.NoNestedFunctions),
	Options: []passes.Option{
		{Name: "target_options", Type: passes.JSON, Default: map[string]any{}, Doc: `options per codegen, {"phasec_blas": {...}}`},
		{Name: "entry_functions", Type: passes.Strings, Default: []string{}, Doc: "functions whose calls are rewritten besides the public ones"},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	o := env.Options()
	opts, ok := o.JSON("target_options").(map[string]any)
	if !ok {
		var errs diag.List
		errs.Add(moduleSpan(mod), codeBadTargetOpts, "RunCodegen: target_options must be a JSON object mapping codegen names to option objects")
		return nil, errs
	}
	return runCodegen(mod, opts, o.Strings("entry_functions"), env.PassContext().Warn)
}))

func runCodegen(mod *ir.Module, targetOptions map[string]any, entries []string, warn func(*diag.Diagnostic)) (*ir.Module, error) {
	var errs diag.List
	for _, name := range mod.Names() {
		if f := mod.Func(name); f != nil {
			_, prim := f.Attrs[ir.AttrPrimitive]
			_, comp := f.Attrs[AttrComposite]
			if prim && !comp {
				errs.Add(f.Span(), codeFusionGroup, "RunCodegen: %s is a FuseOps group (Primitive) awaiting its kernel; RunCodegen establishes that no group remains, so run FuseTIR before it", name)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	byCodegen := map[string][]CodegenFunction{}
	symbols := map[string]string{} // function name -> symbol
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		cg, ok := f.Attrs.String(AttrCodegen)
		if !ok {
			continue
		}
		sym, ok := f.Attrs.String(ir.AttrGlobalSymbol)
		if !ok {
			sym = name
		}
		symbols[name] = sym
		byCodegen[cg] = append(byCodegen[cg], CodegenFunction{Symbol: sym, Func: f})
	}
	funcSpan := func(sym string) diag.Span {
		for name, s := range symbols {
			if s == sym {
				return mod.Func(name).Span()
			}
		}
		return moduleSpan(mod)
	}
	var mods []any
	if old, ok := mod.Attrs[ir.AttrExternalMods].([]any); ok {
		mods = append(mods, old...)
	}
	cgNames := make([]string, 0, len(byCodegen))
	for cg := range byCodegen {
		cgNames = append(cgNames, cg)
	}
	sort.Strings(cgNames)
	for _, cg := range cgNames {
		funcs := byCodegen[cg]
		gen, ok := lookupCodegen(cg)
		if !ok {
			for _, f := range funcs {
				d := errs.Add(f.Func.Span(), codeUnknownCodegen, "RunCodegen: function %s names codegen %q, which nobody registered (registered: %s)", f.Symbol, cg, strings.Join(Codegens(), ", "))
				d.Hint = "register it with transform.RegisterCodegen before RunCodegen runs"
				if c := diag.Closest(cg, Codegens()); c != "" {
					d.Hint = fmt.Sprintf("did you mean %q?", c)
				}
			}
			continue
		}
		opts, _ := targetOptions[cg].(map[string]any)
		ext, err := gen(funcs, opts)
		if err != nil {
			var ce *CodegenError
			if errors.As(err, &ce) {
				errs.Add(funcSpan(ce.Symbol), codeCodegenFailed, "RunCodegen: codegen %s cannot compile function %s: %s", cg, ce.Symbol, ce.Msg)
			} else {
				errs.Add(funcSpan(funcs[0].Symbol), codeCodegenFailed, "RunCodegen: codegen %s failed: %v", cg, err)
			}
			continue
		}
		for _, x := range ext {
			syms := make([]any, len(x.Symbols))
			for i, s := range x.Symbols {
				syms[i] = s
			}
			mods = append(mods, ir.Attrs{"kind": x.Kind, "symbols": syms, "payload": string(x.Payload)})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}

	out := mod.Clone()
	if len(byCodegen) > 0 {
		out.Attrs = out.Attrs.With(ir.AttrExternalMods, mods)
	}
	changed := len(byCodegen) > 0
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil || symbols[name] != "" || IsGroupFunction(f) {
			continue
		}
		nf, err := rewriteCodegenCalls(out, name, f, symbols)
		if err != nil {
			return nil, err
		}
		if nf != f {
			out.Set(name, nf)
		}
	}
	for name := range symbols {
		out.Remove(name)
	}
	removeUncalledGroups(out)
	// Composite functions still called belong to no Codegen function
	// (FuseOpsByPattern ran without annotate_codegen or
	// MergeCompositeFunctions): they become ordinary functions.
	for _, name := range out.Names() {
		f := out.Func(name)
		if f == nil {
			continue
		}
		if comp, ok := f.Attrs.String(AttrComposite); ok {
			nf := *f
			nf.Attrs = f.Attrs.Without(AttrComposite).Without(ir.AttrPrimitive)
			out.Set(name, &nf)
			changed = true
			if warn != nil {
				warn(&diag.Diagnostic{Span: f.Span(), Severity: diag.Warning, Code: codeNotOffloaded,
					Msg:  fmt.Sprintf("RunCodegen: composite function %s (%s) belongs to no Codegen function; phasec computes it", name, comp),
					Hint: "run MergeCompositeFunctions, or FuseOpsByPattern with annotate_codegen=true, before RunCodegen"})
			}
		}
	}
	if !changed {
		return mod, nil
	}
	if len(byCodegen) == 0 {
		return out, nil
	}
	return EliminateDeadCode(out, entries)
}

// rewriteCodegenCalls replaces calls of Codegen functions in f by
// call_dps_packed calls of their symbols.
func rewriteCodegenCalls(mod *ir.Module, name string, f *ir.Function, symbols map[string]string) (*ir.Function, error) {
	var errs diag.List
	m := &ir.Mutator{
		PreExpr: func(e ir.Expr) ir.Expr {
			if c, ok := e.(*ir.Call); ok {
				if gv, ok := c.Op.(*ir.GlobalVar); ok && symbols[gv.Name] != "" {
					call := ir.NewCall(op.CallDPSPacked, ir.NewExternFunc(symbols[gv.Name]), ir.NewTuple(c.Args...))
					call.SInfoArgs = []ir.StructInfo{c.StructInfo()}
					return call
				}
			}
			switch e := e.(type) {
			case *ir.GlobalVar:
				if symbols[e.Name] != "" {
					errs.Add(e.Span(), codeBadCodegenCall, "RunCodegen: %s uses Codegen function %s as a value; only calls can be offloaded", name, e.Name)
				}
			case *ir.Function:
				errs.Add(e.Span(), codeBadCodegenCall, "RunCodegen: %s holds a local function outside any Codegen function; lift it first (LambdaLift)", name)
			}
			return nil
		},
	}
	nf := m.Function(f)
	if len(errs) > 0 {
		return nil, errs
	}
	if nf == f {
		return f, nil
	}
	norm, derrs := ir.NormalizeFunction(mod, nf)
	if len(derrs) > 0 {
		return nil, derrs
	}
	return norm, nil
}

// removeUncalledGroups removes the Composite functions nothing references.
func removeUncalledGroups(mod *ir.Module) {
	used := map[string]bool{}
	for _, bf := range mod.Functions() {
		if f, ok := bf.(*ir.Function); ok {
			ir.Inspect(f.Body, func(e ir.Expr) bool {
				if gv, ok := e.(*ir.GlobalVar); ok {
					used[gv.Name] = true
				}
				return true
			})
		}
	}
	for _, name := range mod.Names() {
		if f := mod.Func(name); f != nil && !used[name] {
			if _, ok := f.Attrs[AttrComposite]; ok {
				mod.Remove(name)
			}
		}
	}
}
