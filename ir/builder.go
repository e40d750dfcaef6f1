package ir

import "github.com/phasec/phasec/diag"

// STUB owned by the builder helper. Signatures are the contract.

// Builder is the normalizing block builder every pass emits through.
type Builder struct {
	mod  *Module
	errs diag.List
}

// NewBuilder returns a builder whose calls resolve globals in mod (may be nil).
func NewBuilder(mod *Module) *Builder { return &Builder{mod: mod} }

// Module returns the module globals resolve against.
func (b *Builder) Module() *Module { return b.mod }

// Diagnostics returns the errors found while normalizing (inference failures,
// contradicting annotations), each with the span of the offending node.
func (b *Builder) Diagnostics() diag.List { return b.errs }

// BeginScope opens a function-body or If-branch scope; params are in scope.
func (b *Builder) BeginScope(params []*Var) {}

// EndScope closes the innermost scope.
func (b *Builder) EndScope() {}

// BeginBlock starts a binding block (dataflow or not) in the current scope.
func (b *Builder) BeginBlock(dataflow bool) {}

// EndBlock ends the current block and returns it.
func (b *Builder) EndBlock() *BindingBlock { return &BindingBlock{} }

// Emit normalizes value and binds it to a fresh var (a dataflow var inside a
// dataflow block) named name.
func (b *Builder) Emit(value Expr, name string) *Var { return NewVar(name, nil) }

// EmitOutput is Emit with a non-dataflow var: an output of a dataflow block.
func (b *Builder) EmitOutput(value Expr, name string) *Var { return NewVar(name, nil) }

// EmitMatchCast emits "name = R.match_cast(value, sinfo)".
func (b *Builder) EmitMatchCast(value Expr, sinfo StructInfo, name string) *Var {
	return NewVar(name, sinfo)
}

// EmitBinding normalizes the binding's value and appends the binding; an
// annotated var keeps its annotation, which must be consistent.
func (b *Builder) EmitBinding(bind Binding) {}

// Normalize fills struct info bottom-up and puts e in A-normal form,
// emitting bindings for nested non-leaf operands into the current block.
func (b *Builder) Normalize(e Expr) Expr { return e }

// NormalizeFunction returns f with a normalized body and inferred return info.
func NormalizeFunction(mod *Module, f *Function) (*Function, diag.List) { return f, nil }

// NormalizeModule normalizes every Relax function of mod into a new module.
func NormalizeModule(mod *Module) (*Module, diag.List) { return mod, nil }
