// Package semcheck proves that passes keep what a module computes. Its
// Checker is a pass instrument: it evaluates the pipeline's input once,
// re-evaluates the module after every pass that changed it, and stops the
// run at the first pass whose result differs beyond the dtype-aware
// tolerance (fp32 1e-5 relative plus absolute, integers exact), naming the
// pass, the function, the output and the first differing element.
//
// A module is evaluated by the reference evaluator (package eval) in every
// phase up to Lower; a module in phase Build is compiled by codegen and
// run on the VM, so the same check covers the build barrier.
//
// The package sits above passes, eval and codegen (passes must not import
// eval); pass authors use Checker in their tests, phasec opt
// --verify-semantics and phasec bisect use it on the command line.
//
// Invariants: every evaluation gets fresh copies of the arguments (in-place
// kernels may write their inputs); the arguments are built once, from the
// input module's function, and reused for every later module.
package semcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/phasec/phasec/codegen"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/loader"
)

// Inputs say what a function is evaluated on. The zero value means seeded
// random arguments (eval.RandomArgs) with every symbolic dimension 4.
type Inputs struct {
	Func     string              // the function to evaluate ("main")
	Given    map[string]op.Value // parameters by name (tensors from an .npz file, tuples of them); the rest random
	NoRandom bool                // every parameter must be given
	Seed     uint64              // for random arguments
	Dims     map[string]int64    // symbolic dimensions by name (--symbolic n=8)
	Dim      int64               // every other symbolic dimension (4 when 0)
	Tol      *eval.Tolerance     // nil: eval.Float32Tol, or TranscendentalTol when the module uses exp, log, ...
	// TolFor, when set and Tol is not, chooses the tolerance per checked
	// module (the result of each pass) when it returns true: a run whose
	// passes move computation to float16 (ToMixedPrecision) is checked
	// with float16 tolerances from that pass on (HalfComputeTol).
	TolFor func(after *ir.Module) (eval.Tolerance, bool)
	// Progress, when set, hears what a long search (FindCulprit, Reduce)
	// is doing; the command line shows it on a terminal.
	Progress func(format string, args ...any)
}

func (in *Inputs) progress(format string, args ...any) {
	if in.Progress != nil {
		in.Progress(format, args...)
	}
}

func (in *Inputs) funcName() string {
	if in.Func == "" {
		return "main"
	}
	return in.Func
}

// Args builds the arguments of the input function of mod.
func (in *Inputs) Args(mod *ir.Module) ([]op.Value, error) {
	name := in.funcName()
	fn := mod.Func(name)
	if fn == nil {
		return nil, fmt.Errorf("no Relax function named %s", name)
	}
	dim := in.Dim
	if dim == 0 {
		dim = 4
	}
	// Symbolic dimensions bound by given tensors take their values from them.
	dims := map[string]int64{}
	for k, v := range in.Dims {
		dims[k] = v
	}
	for _, p := range fn.Params {
		t, ok := in.Given[p.Name].(*tensor.Tensor)
		ti, isT := p.StructInfo().(*ir.TensorInfo)
		if !ok || !isT {
			continue
		}
		if ds, known := ti.Dims(); known && len(ds) == len(t.Shape) {
			for i, d := range ds {
				if v, isVar := d.(*ir.PrimVar); isVar {
					if _, set := dims[v.Name]; !set {
						dims[v.Name] = t.Shape[i]
					}
				}
			}
		}
	}
	var random []op.Value
	var randomErr error
	if len(in.Given) < len(fn.Params) && !in.NoRandom {
		random, randomErr = eval.RandomArgs(fn, in.Seed, dims, dim)
	}
	args := make([]op.Value, len(fn.Params))
	used := 0
	for i, p := range fn.Params {
		if t, ok := in.Given[p.Name]; ok {
			args[i] = t
			used++
			continue
		}
		if random == nil {
			if randomErr == nil {
				return nil, fmt.Errorf("parameter %s of %s has no input", p.Name, name)
			}
			return nil, fmt.Errorf("parameter %s of %s: no input and no random value: %v", p.Name, name, randomErr)
		}
		args[i] = random[i]
	}
	if used != len(in.Given) {
		for n := range in.Given {
			found := false
			for _, p := range fn.Params {
				found = found || p.Name == n
			}
			if !found {
				return nil, fmt.Errorf("input %s: %s has no parameter %s", n, name, n)
			}
		}
	}
	return args, nil
}

// Evaluate runs function name of mod on args: with the reference evaluator
// up to phase Lower, on the VM (codegen.Build, then Link) in phase Build.
// The arguments are copied first.
// want, when known, gives the dtypes of scalar results the VM does not keep.
func Evaluate(mod *ir.Module, name string, args []op.Value, want op.Value) (op.Value, error) {
	args = cloneArgs(args)
	if p, _ := phase.Recorded(mod); p == phase.Build {
		exe, diags := codegen.Build(mod)
		if diags.HasErrors() {
			return nil, fmt.Errorf("VM code generation: %v", diags)
		}
		machine, err := loader.Link(exe, vm.Options{Stdout: discard{}})
		if err != nil {
			return nil, fmt.Errorf("linking the executable: %v", err)
		}
		vargs := make([]vm.Value, len(args))
		for i, a := range args {
			if vargs[i], err = codegen.ToVM(a); err != nil {
				return nil, fmt.Errorf("argument %d: %v", i, err)
			}
		}
		out, _, err := machine.Call(context.Background(), name, vargs)
		if err != nil {
			return nil, err
		}
		return codegen.FromVM(out, want)
	}
	return eval.New(mod).Call(name, args...)
}

// Evaluable reports whether Evaluate can run mod: a module in phase Build
// (the VM), or one that is not yet at the VM's level (the evaluator).
// Between the build barrier's steps a module is in neither form: it calls
// VM-level ops (category ir.CatVM: R.vm.alloc_*, vm.call_tir_dyn) or the
// VM's runtime builtins (VMShapeLower's shape heap, vm.builtin.*) but has
// not been checked for code generation, so it is skipped and the
// barrier's result is checked instead. The answer comes from the calls'
// op records and extern symbols, not from the module's text. An op
// without an evaluation does not make a module unevaluable: evaluating it
// fails, and a pass that introduced it is reported, not skipped.
func Evaluable(mod *ir.Module) bool {
	if p, _ := phase.Recorded(mod); p == phase.Build {
		return true
	}
	vmLevel := false
	ir.WalkModule(mod, &ir.Visitor{Expr: func(e ir.Expr) bool {
		switch e := e.(type) {
		case *ir.Op:
			vmLevel = vmLevel || e.Category == ir.CatVM
		case *ir.ExternFunc:
			vmLevel = vmLevel || strings.HasPrefix(e.Symbol, vmBuiltinPrefix)
		}
		return !vmLevel
	}})
	return !vmLevel
}

// vmBuiltinPrefix starts the names of the VM's runtime builtins.
const vmBuiltinPrefix = "vm.builtin."

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func cloneArgs(args []op.Value) []op.Value {
	out := make([]op.Value, len(args))
	for i, a := range args {
		out[i] = cloneValue(a)
	}
	return out
}

func cloneValue(v op.Value) op.Value {
	switch v := v.(type) {
	case *tensor.Tensor:
		return v.Clone()
	case op.Tuple:
		out := make(op.Tuple, len(v))
		for i, x := range v {
			out[i] = cloneValue(x)
		}
		return out
	case op.Shape:
		return append(op.Shape(nil), v...)
	}
	return v
}

// Mismatch is the failure the Checker reports: the first pass after which
// the module computes something else, or can no longer be evaluated.
type Mismatch struct {
	Pass  string      // the pass that changed the answer
	Phase phase.Phase // the recorded phase of the module after it
	Func  string      // the function evaluated
	// Detail names the output and the first differing element
	// ("result[1][0 2]: got 0.5, want -0.5 ..."), or the evaluation error.
	Detail string
	// Crash is true when the module after the pass could not be evaluated.
	Crash bool
	// Before and After are the modules around the pass; BeforePath and
	// AfterPath where they were written (when the Checker has a Dir).
	Before, After         *ir.Module
	BeforePath, AfterPath string
}

func (m *Mismatch) Error() string {
	var b strings.Builder
	if m.Crash {
		fmt.Fprintf(&b, "after pass %s (phase %v), %s can no longer be evaluated: %s", m.Pass, m.Phase, m.Func, m.Detail)
	} else {
		fmt.Fprintf(&b, "pass %s changed what %s computes (phase %v after it): %s", m.Pass, m.Func, m.Phase, m.Detail)
	}
	if m.BeforePath != "" {
		fmt.Fprintf(&b, "\n  module before the pass: %s\n  module after the pass:  %s", m.BeforePath, m.AfterPath)
	}
	return b.String()
}

// Checker is the semantic-checking instrument. Install it in a
// PassContext's Instruments; a run it stops returns an
// *passes.InstrumentError wrapping a *Mismatch (errors.As finds it).
type Checker struct {
	passes.BaseInstrument
	Inputs
	// Dir, when set, receives before.tvms and after.tvms of a failing pass.
	Dir string

	args []op.Value
	want op.Value
	// Checked counts the passes whose result was evaluated; Skipped those
	// whose result neither the evaluator nor the VM can run (see Evaluable).
	Checked, Skipped int
	// Failure is the mismatch that stopped the run, if any.
	Failure *Mismatch
}

func (*Checker) Name() string { return "verify-semantics" }

// Reset forgets the reference result, so the Checker can observe another run.
func (c *Checker) Reset() { c.args, c.want, c.Checked, c.Skipped, c.Failure = nil, nil, 0, 0, nil }

// Reference evaluates the input module, setting the result every later
// module is compared with. BeforePass calls it on the first event.
func (c *Checker) Reference(mod *ir.Module) error {
	args, err := c.Inputs.Args(mod)
	if err != nil {
		return fmt.Errorf("inputs: %v", err)
	}
	want, err := Evaluate(mod, c.funcName(), args, nil)
	if err != nil {
		return fmt.Errorf("evaluating the input module: %v", err)
	}
	c.args, c.want = args, want
	return nil
}

func (c *Checker) BeforePass(ev *passes.Event) error {
	if c.args != nil {
		return nil
	}
	return c.Reference(ev.Before)
}

func (c *Checker) AfterPass(ev *passes.Event) error {
	if ev.Pass.Kind() == passes.KindSequential || !ev.Changed || c.args == nil {
		return nil
	}
	if !Evaluable(ev.After) {
		c.Skipped++
		return nil
	}
	if m := c.Check(ev.Info.Name, ev.Before, ev.After); m != nil {
		return m
	}
	return nil
}

// Check compares after (the result of pass on before) with the reference
// and returns the mismatch, or nil.
func (c *Checker) Check(pass string, before, after *ir.Module) *Mismatch {
	c.Checked++
	got, err := Evaluate(after, c.funcName(), c.args, c.want)
	var m *Mismatch
	switch {
	case err != nil:
		m = &Mismatch{Crash: true, Detail: err.Error()}
	default:
		if err := eval.Compare(got, c.want, c.tolerance(before, after)); err != nil {
			m = &Mismatch{Detail: err.Error()}
		}
	}
	if m == nil {
		return nil
	}
	m.Pass, m.Func, m.Before, m.After = pass, c.funcName(), before, after
	m.Phase, _ = phase.Recorded(after)
	if c.Dir != "" {
		m.BeforePath = filepath.Join(c.Dir, "before.tvms")
		m.AfterPath = filepath.Join(c.Dir, "after.tvms")
		if err := writeModules(c.Dir, m); err != nil {
			m.Detail += fmt.Sprintf(" (writing the modules: %v)", err)
			m.BeforePath, m.AfterPath = "", ""
		}
	}
	c.Failure = m
	return m
}

func writeModules(dir string, m *Mismatch) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	header := fmt.Sprintf("# %%s pass %s: %s\n", m.Pass, strings.ReplaceAll(m.Detail, "\n", " "))
	if err := os.WriteFile(m.BeforePath, []byte(fmt.Sprintf(header, "before")+printer.Print(m.Before)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(m.AfterPath, []byte(fmt.Sprintf(header, "after")+printer.Print(m.After)), 0o644)
}

func (c *Checker) tolerance(mods ...*ir.Module) eval.Tolerance {
	if c.Tol != nil {
		return *c.Tol
	}
	if c.TolFor != nil && len(mods) > 0 {
		if tol, ok := c.TolFor(mods[len(mods)-1]); ok {
			return tol
		}
	}
	if hasHalf(c.want) {
		return Float16Tol
	}
	for _, m := range mods {
		if eval.UsesTranscendental(m) {
			return eval.TranscendentalTol
		}
	}
	return eval.Float32Tol
}

// Float16Tol is the tolerance of results in float16 or bfloat16: about ten
// units in the last place of float16 (epsilon 2^-10), since the evaluator and the
// VM round intermediate results to storage at different points.
var Float16Tol = eval.Tolerance{Rel: 1e-2, Abs: 1e-2}

// HalfComputeTol is a TolFor hook: Float16Tol for a module that holds a
// float16 or bfloat16 tensor anywhere (a parameter, a binding, a kernel
// buffer), where a float32 model computes part of its work in half
// precision; no choice otherwise. It walks the module once.
func HalfComputeTol(mod *ir.Module) (eval.Tolerance, bool) {
	half := func(dt ir.DataType) bool {
		s := dt.String()
		return s == "float16" || s == "bfloat16"
	}
	found := false
	for _, f := range mod.Functions() {
		switch f := f.(type) {
		case *ir.Function:
			for _, p := range f.Params {
				if t, ok := p.StructInfo().(*ir.TensorInfo); ok && half(t.DType) {
					return Float16Tol, true
				}
			}
			ir.Inspect(f.Body, func(e ir.Expr) bool {
				if t, ok := e.StructInfo().(*ir.TensorInfo); ok && half(t.DType) {
					found = true
				}
				return !found
			})
		case *ir.PrimFunc:
			for _, b := range f.BufferMap {
				if half(b.DType) {
					return Float16Tol, true
				}
			}
		}
		if found {
			return Float16Tol, true
		}
	}
	return eval.Tolerance{}, false
}

func hasHalf(v op.Value) bool {
	switch v := v.(type) {
	case *tensor.Tensor:
		return v.DType == tensor.Float16 || v.DType == tensor.BFloat16
	case op.Tuple:
		for _, x := range v {
			if hasHalf(x) {
				return true
			}
		}
	}
	return false
}
