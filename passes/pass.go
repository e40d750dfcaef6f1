package passes

import (
	"context"
	"fmt"
	"maps"
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

// Pass is a pass: its declaration (Info), its implementation and its
// option values. A pass is a Go value defined once, at package level, with
// Define, in the style of golang.org/x/tools/go/analysis.Analyzer:
//
//	var ToNonDataflow = passes.Define(passes.Info{...}, passes.Functions(toNonDataflow).InParallel())
//
// Barriers and Go pipelines list these values, so a misspelled or missing
// pass is a compile error; a Registry built from them resolves the names of
// textual pipelines. Passes are immutable: With returns a copy with other
// option values, and Sequential groups passes without changing them.
type Pass struct {
	info Info
	impl
	// opts are the option values, every option of info.Options filled in.
	opts     Options
	children []*Pass
	// fixpoint: a Sequential whose children run in rounds until a round
	// changes nothing (Fixpoint).
	fixpoint bool
	// step is the pipeline step the pass was built from (position, text).
	step *Step
	file string // the pipeline text's name in diagnostics
	// reg is the registry a textual pipeline's root was built from: names
	// in the pass context and the static check's hints resolve against it.
	reg *Registry
}

// impl is what a pass transforms and the function that does it.
type impl struct {
	kind     Kind
	module   ModuleFunc
	function FunctionFunc
	primFunc PrimFuncFunc
	block    BlockFunc
	// parallel lets per-function passes transform functions concurrently.
	parallel bool
}

// Impl is a pass's implementation, built by Module, Functions, PrimFuncs or
// DataflowBlocks; its kind is the granularity the pass works at.
type Impl struct{ impl }

// Module implements a pass transforming the whole module.
func Module(fn ModuleFunc) Impl { return Impl{impl{kind: KindModule, module: fn}} }

// Functions implements a pass applying fn to every Relax function not
// marked ir.AttrSkipOptimize.
func Functions(fn FunctionFunc) Impl { return Impl{impl{kind: KindFunction, function: fn}} }

// PrimFuncs implements a pass applying fn to every PrimFunc.
func PrimFuncs(fn PrimFuncFunc) Impl { return Impl{impl{kind: KindPrimFunc, primFunc: fn}} }

// DataflowBlocks implements a pass applying fn to every dataflow block of
// every Relax function not marked ir.AttrSkipOptimize, checking that fn
// keeps each block's interface.
func DataflowBlocks(fn BlockFunc) Impl { return Impl{impl{kind: KindDataflowBlock, block: fn}} }

// InParallel lets a per-function (or per-block) implementation transform
// the functions concurrently: fn must then not share mutable state. The
// result is identical to the sequential run.
func (i Impl) InParallel() Impl {
	if i.kind == KindModule {
		panic("passes: a module pass cannot run in parallel")
	}
	i.parallel = true
	return i
}

// Define returns the pass declared by info and implemented by impl, its
// options at their defaults. It panics on an invalid declaration (see
// Info.Validate): a required property without its reason, a malformed
// option, a Doc of more than one line. Passes are defined once, as
// package-level variables, so the panic surfaces when the package loads.
func Define(info Info, impl Impl) *Pass {
	if err := info.Validate(); err != nil {
		panic("passes.Define: " + err.Error())
	}
	if impl.kind == KindSequential || impl.module == nil && impl.function == nil && impl.primFunc == nil && impl.block == nil {
		panic("passes.Define: pass " + info.Name + " has no implementation")
	}
	info.Requires = maps.Clone(info.Requires)
	info.Precedes = maps.Clone(info.Precedes)
	info.EstablishesAtLevel = maps.Clone(info.EstablishesAtLevel)
	info.Prerequisites = slices.Clone(info.Prerequisites)
	info.Options = slices.Clone(info.Options)
	opts := Options{}
	for _, o := range info.Options {
		opts[o.Name], _ = o.Type.check(o.Default)
	}
	return &Pass{info: info, impl: impl.impl, opts: opts}
}

// Info returns the pass's declaration.
func (p *Pass) Info() *Info { return &p.info }

// Kind returns the pass's kind.
func (p *Pass) Kind() Kind { return p.kind }

// Name returns the pass's name.
func (p *Pass) Name() string { return p.info.Name }

// Options returns the pass's option values (defaults filled in).
func (p *Pass) Options() Options { return maps.Clone(p.opts) }

// Children returns the passes of a Sequential.
func (p *Pass) Children() []*Pass { return p.children }

// Step returns the pipeline step the pass was built from, or nil.
func (p *Pass) Step() *Step { return p.step }

// With returns a copy of p with the given option values (others keep
// p's values), type-checked against the declared options.
func (p *Pass) With(opts Options) (*Pass, error) {
	full := maps.Clone(p.opts)
	for _, k := range sortedKeys(opts) {
		o := p.info.option(k)
		if o == nil {
			return nil, fmt.Errorf("pass %s: %w", p.info.Name, unknownName("option", k, p.info.optionNames()))
		}
		v, ok := o.Type.check(opts[k])
		if !ok {
			return nil, fmt.Errorf("pass %s: option %s wants a %v, got %v", p.info.Name, k, o.Type, opts[k])
		}
		if o.Check != nil {
			if err := o.Check(v); err != nil {
				return nil, fmt.Errorf("pass %s: option %s: %v", p.info.Name, k, err)
			}
		}
		full[k] = v
	}
	c := *p
	c.opts, c.step, c.file, c.reg = full, nil, "", nil
	return &c, nil
}

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
	group := "seq"
	if p.fixpoint {
		group = fixpointName
	}
	return group + "(" + strings.Join(parts, ",") + ")"
}

// Sequential groups passes; it runs them in order under the same gating.
// A Sequential's contract is the composition of its children's; its own
// Info holds only the name ("seq" when empty) and doc.
func Sequential(name string, passes ...*Pass) *Pass {
	if name == "" {
		name = "seq"
	}
	return &Pass{info: Info{Name: name, Doc: "a sequence of passes"}, impl: impl{kind: KindSequential}, children: passes}
}

// fixpointName is the pipeline keyword and the Info.Name of a Fixpoint.
const fixpointName = "fixpoint"

// Fixpoint groups passes run in rounds until a round changes nothing, as
// optimization sequences are ("FoldConstant, CanonicalizeBindings and
// DeadCodeElimination feed each other"): a round changed nothing when it
// returned its input module, or one structurally equal to it. The rounds
// are capped by the config key FixpointMaxIterations; reaching the cap
// without converging is a warning (PassContext.Warn, code PIPE004), not an
// error: the module is as correct after any round as after the last.
//
// Each round is gated and instrumented as a Sequential named "round N"
// nested in the fixpoint, so instruments see every round's passes. The
// static check treats a fixpoint as a seq run at least once, and simulates
// further rounds from the state the previous one left until that state
// repeats. A Fixpoint keeps the input of the running round alive to
// compare it with the output.
func Fixpoint(passes ...*Pass) *Pass {
	return &Pass{info: Info{Name: fixpointName, Doc: "passes run in rounds until a round changes nothing"},
		impl: impl{kind: KindSequential}, children: passes, fixpoint: true}
}

// IsFixpoint reports whether p is a Fixpoint.
func (p *Pass) IsFixpoint() bool { return p.fixpoint }

// Env is what a running pass sees: the cancellation context, the pass
// context (config) and its own declaration.
type Env struct {
	ctx  context.Context
	pc   *PassContext
	info *Info
	opts Options
	// r and depth locate the running pass in its run, for Run; r is nil
	// when a pass function is called outside PassContext.Run.
	r     *runner
	depth int
	ev    *Event // the running pass's event, which collects its statistics
}

// Run runs p on mod as part of the running pass (a barrier runs its
// sequence this way): instruments see p nested one level below the running
// pass, with the reason "part of <pass>", and a disabled p is skipped. The
// opt level does not gate p itself, since the running pass decided to run
// it; the children of a Sequential or Fixpoint p are gated as pipeline
// steps are (the optimize barrier relies on this).
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

// Options returns the running pass's option values (defaults filled in).
func (e *Env) Options() Options { return e.opts }

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
