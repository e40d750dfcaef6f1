package passes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/ir"
)

// Kind is the granularity a pass works at.
type Kind uint8

const (
	KindModule Kind = iota
	KindFunction
	KindPrimFunc
	KindDataflowBlock
	KindSequential
)

var kindNames = [...]string{
	KindModule:        "module",
	KindFunction:      "function",
	KindPrimFunc:      "primfunc",
	KindDataflowBlock: "dataflow-block",
	KindSequential:    "sequential",
}

func (k Kind) String() string { return kindNames[k] }

// ModuleFunc transforms a whole module. It returns a new module (or mod
// itself when nothing changed) and never edits mod.
type ModuleFunc func(env *Env, mod *ir.Module) (*ir.Module, error)

// FunctionFunc transforms one Relax function; it returns f itself when it
// changed nothing. mod is the input module (read-only).
type FunctionFunc func(env *Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error)

// PrimFuncFunc transforms one TIR function; it returns f itself when it
// changed nothing.
type PrimFuncFunc func(env *Env, mod *ir.Module, name string, f *ir.PrimFunc) (*ir.PrimFunc, error)

// BlockFunc transforms one dataflow block of function fn; the result must
// bind the same output (non-dataflow) vars with the same struct info.
type BlockFunc func(env *Env, mod *ir.Module, fn string, b *ir.BindingBlock) (*ir.BindingBlock, error)

// Pass is a runnable pass: its declaration plus its implementation. Passes
// are immutable values built by the constructors below or by the registry.
type Pass struct {
	info     Info
	kind     Kind
	module   ModuleFunc
	function FunctionFunc
	primFunc PrimFuncFunc
	block    BlockFunc
	// parallel lets function-level passes transform functions concurrently.
	parallel bool
	children []*Pass
	// step is the pipeline step the pass was built from (position, text).
	step *Step
	file string // the pipeline text's name in diagnostics
}

// Info returns the pass's declaration.
func (p *Pass) Info() *Info { return &p.info }

// Kind returns the pass's kind.
func (p *Pass) Kind() Kind { return p.kind }

// Children returns the passes of a Sequential.
func (p *Pass) Children() []*Pass { return p.children }

// Step returns the pipeline step the pass was built from, or nil.
func (p *Pass) Step() *Step { return p.step }

// String prints the pass as pipeline text.
func (p *Pass) String() string {
	if p.step != nil {
		return p.step.String()
	}
	if p.kind != KindSequential {
		return p.info.Name
	}
	parts := make([]string, len(p.children))
	for i, c := range p.children {
		parts[i] = c.String()
	}
	return "seq(" + strings.Join(parts, ",") + ")"
}

// NewModulePass returns a module pass.
func NewModulePass(info Info, fn ModuleFunc) *Pass {
	return &Pass{info: info, kind: KindModule, module: fn}
}

// NewFunctionPass returns a pass applying fn to every Relax function not
// marked ir.AttrSkipOptimize. With parallel set the functions are
// transformed concurrently (fn must then not share mutable state); the
// result is identical to the sequential run.
func NewFunctionPass(info Info, parallel bool, fn FunctionFunc) *Pass {
	return &Pass{info: info, kind: KindFunction, function: fn, parallel: parallel}
}

// NewPrimFuncPass returns a pass applying fn to every PrimFunc.
func NewPrimFuncPass(info Info, parallel bool, fn PrimFuncFunc) *Pass {
	return &Pass{info: info, kind: KindPrimFunc, primFunc: fn, parallel: parallel}
}

// NewDataflowBlockPass returns a pass applying fn to every dataflow block of
// every Relax function not marked ir.AttrSkipOptimize, checking that fn
// keeps each block's interface.
func NewDataflowBlockPass(info Info, parallel bool, fn BlockFunc) *Pass {
	return &Pass{info: info, kind: KindDataflowBlock, block: fn, parallel: parallel}
}

// Sequential groups passes; it runs them in order under the same gating.
// A Sequential's contract is the composition of its children's; its own
// Info holds only the name ("seq" when empty) and doc.
func Sequential(name string, passes ...*Pass) *Pass {
	if name == "" {
		name = "seq"
	}
	return &Pass{info: Info{Name: name, Doc: "a sequence of passes"}, kind: KindSequential, children: passes}
}

// Env is what a running pass sees: the cancellation context, the pass
// context (config) and its own declaration.
type Env struct {
	ctx  context.Context
	pc   *PassContext
	info *Info
	// r and depth locate the running pass in its run, for Run; r is nil
	// when a pass function is called outside PassContext.Run.
	r     *runner
	depth int
	ev    *Event // the running pass's event, which collects its statistics
}

// Run runs p on mod as part of the running pass (a barrier runs its
// sequence this way): instruments see p nested one level below the running
// pass, with the reason "part of <pass>", and a disabled p is skipped. The
// opt level does not gate p: the running pass decided to run it.
func (e *Env) Run(p *Pass, mod *ir.Module) (*ir.Module, error) {
	if e.r == nil {
		pc := e.pc
		if pc == nil {
			pc = &PassContext{}
		}
		return pc.Execute(e.ctx, p, mod, 0)
	}
	why := Reason{Kind: PartOf, Of: e.info.Name}
	if slices.Contains(e.pc.Disabled, p.info.Name) {
		why = Reason{Kind: Disabled}
	}
	return e.r.step(p, mod, e.depth+1, why)
}

// Stat records a statistic of the running pass (a count, a byte size),
// shown by instruments such as Summary. Outside PassContext.Run it does
// nothing.
func (e *Env) Stat(name string, value int64) {
	if e.ev != nil {
		e.ev.Stats = append(e.ev.Stats, Stat{Name: name, Value: value})
	}
}

// Stat is one statistic a pass reported.
type Stat struct {
	Name  string
	Value int64
}

// Context returns the run's context.Context; long passes poll Err.
func (e *Env) Context() context.Context { return e.ctx }

// Err reports cancellation of the run.
func (e *Env) Err() error { return e.ctx.Err() }

// PassContext returns the context the pass runs in.
func (e *Env) PassContext() *PassContext { return e.pc }

// Info returns the running pass's declaration.
func (e *Env) Info() *Info { return e.info }

// Config returns the value of a registered config key: the context's value
// or the key's default. It panics on an unregistered key (a bug in the pass).
func (e *Env) Config(key string) any {
	k, ok := lookupConfig(key)
	if !ok {
		panic(fmt.Sprintf("pass %s reads unregistered config key %q", e.info.Name, key))
	}
	if v, ok := e.pc.Config[key]; ok {
		return v
	}
	return k.Default
}
