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
)

// SpecializePrimFuncBasedOnCallSite is TVM's src/relax/transform/
// specialize_primfunc_based_on_callsite.cc: each PrimFunc called by
// R.call_tir from a Relax function (not a Primitive one) gets, for every
// tensor argument and output, a buffer declared from the call site's
// struct info: its shape, its dtype, its storage scope (the memory scope
// of the tensor's virtual device, "global" without one) and its name (the
// argument var's, "A", "B", ... for other arguments, ret_val or ret_val_i
// for the outputs). The PrimFunc's symbolic dimensions are bound to the
// call site's (TVM's tir::Specialize) and it is marked "scoped": 1.
//
// Unlike TVM, which overwrites the PrimFunc at every call site so that the
// last call wins, call sites that specialize one PrimFunc differently get
// copies (name_1, ...): the first keeps the name and every call keeps its
// meaning. A dimension the call site leaves symbolic stays the PrimFunc's
// own (TVM would put the caller's variable into the PrimFunc, leaving it
// free there). A call site whose rank or dtype contradicts the PrimFunc's
// buffer, or whose constant dimension contradicts the buffer's, is a
// positioned error.
var SpecializePrimFuncBasedOnCallSite = passes.Define(passes.Info{
	Name:     "SpecializePrimFuncBasedOnCallSite",
	Doc:      "declare the buffers of each PrimFunc called by R.call_tir from the call site's shapes, dtypes and vdevice scopes",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it reads the call sites' argument struct info, which normal form guarantees",
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	out, errs := SpecializePrimFuncsAtCallSites(mod)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// Diagnostic codes of SpecializePrimFuncBasedOnCallSite.
var (
	DiagSpecializeMismatch = optCodes.Define("OPT630", "an R.call_tir's argument or output does not fit the PrimFunc's buffer")
)

// AttrScoped marks a PrimFunc whose buffers were declared from its call
// site (TVM's "scoped").
const AttrScoped = "scoped"

// SpecializePrimFuncsAtCallSites runs SpecializePrimFuncBasedOnCallSite
// on mod; it returns mod itself when no R.call_tir calls a PrimFunc.
func SpecializePrimFuncsAtCallSites(mod *ir.Module) (*ir.Module, diag.List) {
	s := &specializer{mod: mod, out: mod.Clone(), byKey: map[string]*ir.GlobalVar{}, named: map[string]bool{}}
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		if p, _ := f.Attrs.Int(ir.AttrPrimitive); p != 0 {
			continue
		}
		m := &ir.Mutator{KeepStructInfo: true, PostExpr: s.call}
		if nf := m.Function(f); nf != f {
			s.out.Set(name, nf)
		}
	}
	if s.errs.HasErrors() {
		s.errs.Sort()
		return nil, s.errs
	}
	if len(s.byKey) == 0 {
		return mod, nil
	}
	return s.out, nil
}

type specializer struct {
	mod, out *ir.Module
	// byKey maps a PrimFunc name and call-site signature to the
	// specialized function's global.
	byKey map[string]*ir.GlobalVar
	named map[string]bool // PrimFuncs already specialized under their own name
	errs  diag.List
}

// call specializes the callee of an R.call_tir and redirects the call
// when the specialization got another name.
func (s *specializer) call(e ir.Expr) ir.Expr {
	c, ok := e.(*ir.Call)
	if !ok || c.Op != op.CallTIR || len(c.Args) < 2 || len(c.SInfoArgs) == 0 {
		return e
	}
	gv, ok := c.Args[0].(*ir.GlobalVar)
	args, ok2 := c.Args[1].(*ir.Tuple)
	if !ok || !ok2 {
		return e
	}
	pf := s.mod.PrimFunc(gv.Name)
	if pf == nil {
		return e
	}
	var infos []*ir.TensorInfo
	var names []string
	for i, a := range args.Fields {
		t, ok := a.StructInfo().(*ir.TensorInfo)
		if !ok {
			s.errs.Add(c.Span(), DiagSpecializeMismatch, "SpecializePrimFuncBasedOnCallSite: argument %d of the call of %s is %s, not a tensor", i, gv.Name, a.StructInfo())
			return e
		}
		infos = append(infos, t)
		if v, ok := a.(*ir.Var); ok {
			names = append(names, v.Name)
		} else {
			names = append(names, string(rune('A'+i)))
		}
	}
	// The outputs: one tensor, or several (a list of out_sinfo, or a tuple).
	outs := c.SInfoArgs
	if t, ok := outs[0].(*ir.TupleInfo); ok && len(outs) == 1 {
		outs = t.Fields
	}
	switch {
	case len(outs) == 1:
		t, ok := outs[0].(*ir.TensorInfo)
		if !ok {
			s.errs.Add(c.Span(), DiagSpecializeMismatch, "SpecializePrimFuncBasedOnCallSite: the output of the call of %s is %s, not a tensor", gv.Name, outs[0])
			return e
		}
		infos = append(infos, t)
		names = append(names, "ret_val")
	default:
		for i, f := range outs {
			t, ok := f.(*ir.TensorInfo)
			if !ok {
				s.errs.Add(c.Span(), DiagSpecializeMismatch, "SpecializePrimFuncBasedOnCallSite: output %d of the call of %s is %s, not a tensor", i, gv.Name, f)
				return e
			}
			infos = append(infos, t)
			names = append(names, fmt.Sprintf("ret_val_%d", i))
		}
	}
	key := specializeKey(gv.Name, infos)
	npf, err := specializePrimFunc(pf, infos, names)
	if err != nil {
		s.errs.Add(c.Span(), DiagSpecializeMismatch, "SpecializePrimFuncBasedOnCallSite: the call of %s: %v", gv.Name, err)
		return e
	}
	if npf == nil {
		// The call site cannot be specialized without contradicting its
		// own struct info: it keeps calling the PrimFunc as written.
		key, npf = gv.Name+"|unspecialized", pf
	}
	target, ok := s.byKey[key]
	if !ok {
		name := gv.Name
		if s.named[gv.Name] {
			name = s.out.UniqueName(gv.Name)
		}
		s.named[gv.Name] = true
		s.out.Set(name, npf)
		target = ir.NewGlobalVar(name)
		target.SetStructInfo(ir.PrimFuncInfo(npf))
		s.byKey[key] = target
	}
	if target.Name == gv.Name {
		return e
	}
	nc := *c
	nc.Args = slices.Clone(c.Args)
	nc.Args[0] = target
	return &nc
}

// specializeKey identifies a specialization: the callee and the call
// site's struct info.
func specializeKey(callee string, infos []*ir.TensorInfo) string {
	var b strings.Builder
	b.WriteString(callee)
	for _, t := range infos {
		b.WriteString("|")
		b.WriteString(t.String())
		if t.VDevice != nil {
			b.WriteString("@" + t.VDevice.Scope)
		}
	}
	return b.String()
}

// specializePrimFunc declares pf's first len(infos) buffers from infos
// and binds the symbolic dimensions they fix. It returns nil without an
// error when one call-site buffer fixes a PrimFunc variable that another
// leaves symbolic: the specialized buffer would be constant where the call
// site's struct info is symbolic, a signature the call no longer provably
// matches (addone(A: (n, m)) -> B: (n, m) called on a 4x4 constant with
// out_sinfo (n, 4)).
func specializePrimFunc(pf *ir.PrimFunc, infos []*ir.TensorInfo, names []string) (*ir.PrimFunc, error) {
	if len(infos) > len(pf.Params) {
		return nil, fmt.Errorf("it passes %d tensors, the PrimFunc takes %d parameters", len(infos), len(pf.Params))
	}
	vars := map[*ir.PrimVar]ir.PrimExpr{}
	bufs := map[*ir.Buffer]*ir.Buffer{}
	for i, t := range infos {
		old := pf.BufferMap[pf.Params[i]]
		if old == nil {
			return nil, fmt.Errorf("tensor %s goes to scalar parameter %s", names[i], pf.Params[i].Name)
		}
		if !t.DType.IsVoid() && t.DType != old.DType {
			return nil, fmt.Errorf("%s is %s, buffer %s is %s", names[i], t.DType, old.Name, old.DType)
		}
		shape := slices.Clone(old.Shape)
		if dims, ok := t.Dims(); ok {
			if len(dims) != len(old.Shape) {
				return nil, fmt.Errorf("%s has rank %d, buffer %s rank %d", names[i], len(dims), old.Name, len(old.Shape))
			}
			for j, d := range dims {
				n, isConst := ir.IntValue(d)
				if !isConst {
					continue // symbolic at the call site: the PrimFunc's own
				}
				switch od := old.Shape[j].(type) {
				case *ir.PrimVar:
					if prev, ok := vars[od]; ok {
						if pv, _ := ir.IntValue(prev); pv != n {
							return nil, fmt.Errorf("%s makes %s %d in dimension %d, an earlier buffer made it %d", names[i], od.Name, n, j, pv)
						}
					}
					vars[od] = &ir.IntImm{Type: od.DType(), Value: n}
				default:
					if ov, ok := ir.IntValue(od); ok && ov != n {
						return nil, fmt.Errorf("%s has dimension %d of %d, buffer %s of %d", names[i], j, n, old.Name, ov)
					}
				}
				shape[j] = &ir.IntImm{Type: old.Shape[j].DType(), Value: n}
			}
		}
		nb := *old
		nb.Name = names[i]
		nb.Data = ir.NewPrimVar(names[i], old.Data.DType())
		nb.Shape = shape
		nb.Scope = "" // "global", as phasec spells it
		if t.VDevice != nil && ir.ScopeString(t.VDevice.Scope) != "global" {
			nb.Scope = t.VDevice.Scope
		}
		bufs[old] = &nb
	}
	for i, t := range infos {
		dims, ok := t.Dims()
		if !ok {
			continue
		}
		old := pf.BufferMap[pf.Params[i]]
		for j, d := range dims {
			if _, isConst := ir.IntValue(d); isConst {
				continue
			}
			if v, ok := old.Shape[j].(*ir.PrimVar); ok && vars[v] != nil {
				return nil, nil
			}
		}
	}
	// Every buffer is rewritten consistently: the declared ones, and any
	// other whose shape names a bound variable.
	subst := func(e ir.PrimExpr) ir.PrimExpr { return ir.SubstituteSymVarsPrim(e, vars) }
	m := &ir.TIRMutator{
		PostPrim: func(e ir.PrimExpr) ir.PrimExpr {
			if v, ok := e.(*ir.PrimVar); ok {
				if r, ok := vars[v]; ok {
					return r
				}
			}
			return e
		},
	}
	m.Buffer = func(b *ir.Buffer) *ir.Buffer {
		if nb, ok := bufs[b]; ok {
			return nb
		}
		nb := *b
		changed := false
		nb.Shape = slices.Clone(b.Shape)
		for j, d := range b.Shape {
			if nd := subst(d); nd != d {
				nb.Shape[j], changed = nd, true
			}
		}
		if b.ElemOffset != nil {
			if ne := subst(b.ElemOffset); ne != b.ElemOffset {
				nb.ElemOffset, changed = ne, true
			}
		}
		out := b
		if changed {
			out = &nb
		}
		bufs[b] = out
		return out
	}
	for _, nb := range bufs {
		for j, d := range nb.Shape {
			nb.Shape[j] = subst(d)
		}
	}
	npf := m.PrimFunc(pf)
	if npf == pf {
		c := *pf
		npf = &c
	}
	npf.Attrs = npf.Attrs.With(AttrScoped, int64(1))
	return npf, nil
}
