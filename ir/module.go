package ir

import (
	"fmt"
	"maps"
	"slices"

	"github.com/phasec/phasec/diag"
)

// BaseFunc is a module-level function: a *Function (Relax) or a *PrimFunc (TIR).
type BaseFunc interface {
	Span() diag.Span
	FuncAttrs() Attrs
	baseFunc()
}

// Module maps unique global names to functions, Relax and TIR side by side,
// and carries module attributes (the phase lives there). Iteration is always
// in sorted name order, so everything derived from a module is deterministic.
//
// A Module is a value a pass may share: passes that change functions build a
// new Module with Clone and replace entries, never editing the input.
type Module struct {
	funcs map[string]BaseFunc
	Attrs Attrs
	// VDevices is the module's "vdevice" global info
	// (I.module_global_infos); tensors' VDevice fields point into it.
	VDevices []*VDevice
	// GlobalInfos are the module's other global infos (dummy entries,
	// device meshes), in the order written.
	GlobalInfos []GlobalInfoList
	// Unchecked records the check_well_formed=False decorator arguments the
	// text gave ("" for @I.ir_module, else a function's name) so that they
	// print back. phasec never checks while parsing, so nothing else reads
	// them, and they are not part of equality.
	Unchecked map[string]bool
	// Source is the file the module was parsed from, if any; for diagnostics.
	Source string
	// Meta is the metadata section the module was read from, if any; not
	// part of equality.
	Meta *MetaSection
}

// MetaSection is the metadata section TVM's printer writes with
// show_meta=True (metadata = tvm.ir.load_json("""...""") above the module;
// Docsify in src/script/printer/utils.h): the JSON as read, and the
// constants metadata["relax.expr.Constant"][i] named. A module that prints
// the same constants in the same order prints the same JSON back.
type MetaSection struct {
	JSON      string
	Constants []*Constant
}

// NewModule returns an empty module.
func NewModule() *Module { return &Module{funcs: map[string]BaseFunc{}} }

// Clone returns a shallow copy: a new function table and attribute map
// sharing the (immutable) functions.
func (m *Module) Clone() *Module {
	return &Module{funcs: maps.Clone(m.funcs), Attrs: maps.Clone(m.Attrs), VDevices: m.VDevices, GlobalInfos: m.GlobalInfos, Unchecked: m.Unchecked, Source: m.Source, Meta: m.Meta}
}

// Len is the number of functions.
func (m *Module) Len() int { return len(m.funcs) }

// Lookup returns the function named name.
func (m *Module) Lookup(name string) (BaseFunc, bool) {
	f, ok := m.funcs[name]
	return f, ok
}

// Func returns the Relax function named name, or nil.
func (m *Module) Func(name string) *Function {
	f, _ := m.funcs[name].(*Function)
	return f
}

// PrimFunc returns the TIR function named name, or nil.
func (m *Module) PrimFunc(name string) *PrimFunc {
	f, _ := m.funcs[name].(*PrimFunc)
	return f
}

// Add adds a new function; it fails if name is taken.
func (m *Module) Add(name string, f BaseFunc) error {
	if _, ok := m.funcs[name]; ok {
		return fmt.Errorf("duplicate global function %q", name)
	}
	m.funcs[name] = f
	return nil
}

// Set adds or replaces the function named name.
func (m *Module) Set(name string, f BaseFunc) { m.funcs[name] = f }

// Remove deletes the function named name.
func (m *Module) Remove(name string) { delete(m.funcs, name) }

// Names returns the function names in sorted order.
func (m *Module) Names() []string {
	return slices.Sorted(maps.Keys(m.funcs))
}

// Functions iterates over (name, function) in sorted name order.
func (m *Module) Functions() func(yield func(string, BaseFunc) bool) {
	return func(yield func(string, BaseFunc) bool) {
		for _, n := range m.Names() {
			if !yield(n, m.funcs[n]) {
				return
			}
		}
	}
}

// UniqueName returns name, or name with the smallest numeric suffix "_N"
// that is not yet a function of m.
func (m *Module) UniqueName(name string) string {
	if _, ok := m.funcs[name]; !ok {
		return name
	}
	for i := 1; ; i++ {
		n := fmt.Sprintf("%s_%d", name, i)
		if _, ok := m.funcs[n]; !ok {
			return n
		}
	}
}

// GlobalInfo returns the struct info a reference to the function name has:
// the function's FuncInfo (a Relax function's signature, or the Relax view of
// a PrimFunc).
func (m *Module) GlobalInfo(name string) (StructInfo, bool) {
	switch f := m.funcs[name].(type) {
	case *Function:
		return FuncInfoOf(f), true
	case *PrimFunc:
		return PrimFuncInfo(f), true
	case *ExternFunc:
		return ExternFuncInfo(), true
	}
	return nil, false
}

// FuncInfoOf returns the signature of a Relax function as a FuncInfo.
func FuncInfoOf(f *Function) *FuncInfo {
	params := make([]StructInfo, len(f.Params))
	for i, p := range f.Params {
		params[i] = p.StructInfo()
		if params[i] == nil {
			params[i] = Object()
		}
	}
	ret := f.Ret
	if ret == nil {
		ret = Object()
	}
	return NewFuncInfo(params, ret, f.Pure)
}

// PrimFuncInfo is the Relax view of a PrimFunc: a tensor per buffer
// parameter, an object per bare handle, a prim per scalar; it returns void
// (or the prim type it returns) and is impure, since a DPS kernel writes its
// output buffers.
func PrimFuncInfo(f *PrimFunc) *FuncInfo {
	params := make([]StructInfo, len(f.Params))
	for i, p := range f.Params {
		switch {
		case f.BufferMap[p] != nil:
			b := f.BufferMap[p]
			params[i] = TensorInfoOf(b.DType, b.Shape...)
		case p.Type.IsHandle():
			params[i] = Object()
		default:
			params[i] = NewPrimInfo(p.Type)
		}
	}
	var ret StructInfo = VoidInfo()
	if !f.Ret.IsVoid() {
		ret = NewPrimInfo(f.Ret)
	}
	return NewFuncInfo(params, ret, false)
}

// IsPublic reports whether a function has a global_symbol (is externally visible).
func IsPublic(f BaseFunc) bool {
	_, ok := f.FuncAttrs().String(AttrGlobalSymbol)
	return ok
}
