package transform

import (
	"fmt"
	"strconv"

	"github.com/phasec/phasec/ir"
)

// The TIR side of FuseTIR (TVM's src/relax/transform/fuse_tir.cc:
// SymbolicMatcher, FuseTIRBufferSubstitutor, BlockNameDeduplicator, and
// tir::RenewDefs): fresh definitions for each inlined callee, matching of
// callee shapes against the fused function's, and the substitution that
// makes the callees' bodies one body.

// renewDefs returns a copy of f in which every variable and buffer f
// defines (parameters, buffer handles and the symbolic variables buffer
// shapes define, loop, let and block iteration variables, allocated and
// matched buffers) is a fresh object: inlining the same PrimFunc twice into
// one fused function must not define one variable twice (TVM's
// tir::RenewDefs). The copy's structure and names are f's.
func renewDefs(f *ir.PrimFunc) *ir.PrimFunc { return newRenewer().renew(f) }

// newRenewer returns a renewer; one serves many functions in turn (its
// maps are cleared, not reallocated, between them).
func newRenewer() *renewer {
	r := &renewer{vars: map[*ir.PrimVar]*ir.PrimVar{}, bufs: map[*ir.Buffer]*ir.Buffer{}}
	r.m = ir.TIRMutator{
		PostPrim: func(e ir.PrimExpr) ir.PrimExpr {
			if v, ok := e.(*ir.PrimVar); ok {
				return r.use(v)
			}
			return e
		},
		Var:    r.define,
		Buffer: r.buffer,
	}
	return r
}

func (r *renewer) renew(f *ir.PrimFunc) *ir.PrimFunc {
	clear(r.vars)
	clear(r.bufs)
	params := make([]*ir.PrimVar, len(f.Params))
	bm := make(map[*ir.PrimVar]*ir.Buffer, len(f.BufferMap))
	for i, p := range f.Params {
		params[i] = r.define(p)
		if b := f.BufferMap[p]; b != nil {
			bm[params[i]] = r.buffer(b)
		}
	}
	n := *f
	n.Params, n.BufferMap, n.Body = params, bm, r.m.Stmt(f.Body)
	return &n
}

type renewer struct {
	m    ir.TIRMutator
	vars map[*ir.PrimVar]*ir.PrimVar
	bufs map[*ir.Buffer]*ir.Buffer
}

// define gives a variable in a binding position a fresh copy; uses in its
// scope (visited after it) see the copy.
func (r *renewer) define(v *ir.PrimVar) *ir.PrimVar {
	n := ir.NewPrimVar(v.Name, v.Type)
	n.SetSpan(v.Span())
	r.vars[v] = n
	return n
}

// use is the copy of v; a variable met first in a use (one a buffer shape
// defines) gets its copy there.
func (r *renewer) use(v *ir.PrimVar) *ir.PrimVar {
	if n, ok := r.vars[v]; ok {
		return n
	}
	return r.define(v)
}

func (r *renewer) buffer(b *ir.Buffer) *ir.Buffer {
	if n, ok := r.bufs[b]; ok {
		return n
	}
	n := *b
	if b.Data != nil {
		n.Data = r.use(b.Data)
	}
	n.Shape = r.prims(b.Shape)
	n.Strides = r.prims(b.Strides)
	if b.ElemOffset != nil {
		n.ElemOffset = r.m.Prim(b.ElemOffset)
	}
	r.bufs[b] = &n
	return &n
}

func (r *renewer) prims(in []ir.PrimExpr) []ir.PrimExpr {
	if in == nil {
		return nil
	}
	out := make([]ir.PrimExpr, len(in))
	for i, e := range in {
		out[i] = r.m.Prim(e)
	}
	return out
}

// symMatcher binds the symbolic variables of callee parameter expressions
// (buffer shapes, scalar parameters) to the fused function's expressions
// (TVM's SymbolicMatcher): a variable met first is bound to the argument;
// structurally different expressions become equalities that must not be
// provably false once the bindings are known.
type symMatcher struct {
	remap map[*ir.PrimVar]ir.PrimExpr
	// pending are the equalities not yet proved, each a (param, arg) pair.
	pending [][2]ir.PrimExpr
}

func newSymMatcher() *symMatcher {
	return &symMatcher{remap: map[*ir.PrimVar]ir.PrimExpr{}}
}

// matchAll matches params[i] against args[i].
func (m *symMatcher) matchAll(params, args []ir.PrimExpr) error {
	if len(params) != len(args) {
		return fmt.Errorf("rank %d does not match rank %d", len(params), len(args))
	}
	for i := range params {
		if err := m.match(params[i], args[i]); err != nil {
			return err
		}
	}
	return nil
}

// match matches one parameter expression against an argument and checks
// the pending equalities with what is now known.
func (m *symMatcher) match(param, arg ir.PrimExpr) error {
	if err := m.visit(param, arg); err != nil {
		return err
	}
	kept := m.pending[:0]
	for _, eq := range m.pending {
		a := ir.Simplify(ir.SubstitutePrim(eq[0], m.remap))
		b := ir.Simplify(ir.SubstitutePrim(eq[1], m.remap))
		av, aok := ir.IntValue(a)
		bv, bok := ir.IntValue(b)
		switch {
		case aok && bok && av != bv:
			return fmt.Errorf("%s = %s cannot hold (it is %d = %d)", ir.FormatPrim(eq[0], nil), ir.FormatPrim(eq[1], nil), av, bv)
		case aok && bok, ir.CanProveEqual(a, b):
			// proved
		default:
			kept = append(kept, eq)
		}
	}
	m.pending = kept
	return nil
}

func (m *symMatcher) visit(param, arg ir.PrimExpr) error {
	if param == arg {
		return nil
	}
	if param.DType().Code != arg.DType().Code {
		return fmt.Errorf("%s of type %s cannot match %s of type %s", ir.FormatPrim(param, nil), param.DType(), ir.FormatPrim(arg, nil), arg.DType())
	}
	switch p := param.(type) {
	case *ir.PrimVar:
		if bound, ok := m.remap[p]; ok {
			return m.visit(bound, arg)
		}
		m.remap[p] = arg
		return nil
	case *ir.IntImm:
		if a, ok := arg.(*ir.IntImm); !ok || a.Value != p.Value {
			return fmt.Errorf("expected the integer %d, got %s", p.Value, ir.FormatPrim(arg, nil))
		}
		return nil
	case *ir.FloatImm:
		if a, ok := arg.(*ir.FloatImm); !ok || a.Value != p.Value {
			return fmt.Errorf("expected the float %v, got %s", p.Value, ir.FormatPrim(arg, nil))
		}
		return nil
	case *ir.Cast:
		a, ok := arg.(*ir.Cast)
		if !ok {
			return fmt.Errorf("expected a cast to %s, got %s", p.Type, ir.FormatPrim(arg, nil))
		}
		return m.visit(p.Value, a.Value)
	case *ir.Binary:
		if a, ok := arg.(*ir.Binary); ok && a.Op == p.Op {
			if err := m.visit(p.A, a.A); err != nil {
				return err
			}
			return m.visit(p.B, a.B)
		}
	case *ir.Select:
		if a, ok := arg.(*ir.Select); ok {
			if err := m.visit(p.True, a.True); err != nil {
				return err
			}
			return m.visit(p.False, a.False)
		}
	}
	m.pending = append(m.pending, [2]ir.PrimExpr{param, arg})
	return nil
}

// fusedBodySubst rewrites the concatenated callee bodies into the fused
// function's body (TVM's FuseTIRBufferSubstitutor and
// BlockNameDeduplicator in one walk): callee buffers become the fused
// buffers they were matched to, callee symbolic variables the expressions
// they were bound to, buffers the callees allocate get their shapes
// substituted, each block's read and write regions keep the first region
// of each buffer, and block names are made unique in post-order.
type fusedBodySubst struct {
	m     ir.TIRMutator
	bufs  map[*ir.Buffer]*ir.Buffer
	vars  map[*ir.PrimVar]ir.PrimExpr
	names map[string]bool
}

func newFusedBodySubst(bufs map[*ir.Buffer]*ir.Buffer, vars map[*ir.PrimVar]ir.PrimExpr) *fusedBodySubst {
	s := &fusedBodySubst{bufs: bufs, vars: vars, names: map[string]bool{}}
	for src, tgt := range bufs {
		if src.Data != nil && tgt.Data != nil && src.Data != tgt.Data {
			vars[src.Data] = tgt.Data
		}
	}
	s.m = ir.TIRMutator{
		PostPrim: func(e ir.PrimExpr) ir.PrimExpr {
			if v, ok := e.(*ir.PrimVar); ok {
				if r, ok := s.vars[v]; ok {
					return r
				}
			}
			return e
		},
		Buffer:   s.buffer,
		PostStmt: s.block,
	}
	return s
}

// buffer is the fused buffer for a callee buffer: the one it was matched
// to, or (a buffer the callee allocates or matches) a copy whose shape,
// strides and offset are substituted when they change.
func (s *fusedBodySubst) buffer(b *ir.Buffer) *ir.Buffer {
	if n, ok := s.bufs[b]; ok {
		return n
	}
	shape, ch1 := s.prims(b.Shape)
	strides, ch2 := s.prims(b.Strides)
	off := s.m.Prim(b.ElemOffset)
	data := b.Data
	if v, ok := s.vars[data].(*ir.PrimVar); ok && data != nil {
		data = v // a buffer declared over a substituted buffer's memory
	}
	if !ch1 && !ch2 && off == b.ElemOffset && data == b.Data {
		s.bufs[b] = b
		return b
	}
	n := *b
	n.Shape, n.Strides, n.ElemOffset, n.Data = shape, strides, off, data
	s.bufs[b] = &n
	return &n
}

func (s *fusedBodySubst) prims(in []ir.PrimExpr) ([]ir.PrimExpr, bool) {
	var out []ir.PrimExpr
	for i, e := range in {
		n := s.m.Prim(e)
		if n != e && out == nil {
			out = append([]ir.PrimExpr(nil), in...)
		}
		if out != nil {
			out[i] = n
		}
	}
	if out == nil {
		return in, false
	}
	return out, true
}

// block dedups a block's regions and names it uniquely; blocks are seen
// after their children, as TVM's StmtMutator visits them.
func (s *fusedBodySubst) block(st ir.Stmt) ir.Stmt {
	b, ok := st.(*ir.Block)
	if !ok {
		return st
	}
	reads, rch := firstRegionPerBuffer(b.Reads)
	writes, wch := firstRegionPerBuffer(b.Writes)
	name := s.uniqueName(b.Name)
	if !rch && !wch && name == b.Name {
		return b
	}
	n := *b
	n.Reads, n.Writes, n.Name = reads, writes, name
	return &n
}

// firstRegionPerBuffer keeps the first region of each buffer (TVM's
// UnionAccessRegion, which only unites identical accesses: substitution
// can make two parameters one buffer, as in concatenate(x, x)).
func firstRegionPerBuffer(in []ir.BufferRegion) ([]ir.BufferRegion, bool) {
	if len(in) < 2 {
		return in, false
	}
	seen := make(map[*ir.Buffer]bool, len(in))
	var out []ir.BufferRegion
	for i, r := range in {
		if seen[r.Buffer] {
			if out == nil {
				out = append([]ir.BufferRegion(nil), in[:i]...)
			}
			continue
		}
		seen[r.Buffer] = true
		if out != nil {
			out = append(out, r)
		}
	}
	if out == nil {
		return in, false
	}
	return out, true
}

// uniqueName is TVM's BlockNameDeduplicator: a taken name with a numeric
// suffix counts up from it (compute1 -> compute2), one without gets 1, 2,
// ... appended (compute -> compute1).
func (s *fusedBodySubst) uniqueName(name string) string {
	if !s.names[name] {
		s.names[name] = true
		return name
	}
	baseLen := len(name)
	for baseLen > 0 && name[baseLen-1] >= '0' && name[baseLen-1] <= '9' {
		baseLen--
	}
	base, next := name, int64(1)
	if baseLen < len(name) {
		if v, err := strconv.ParseInt(name[baseLen:], 10, 64); err == nil && v < 1<<62 {
			base, next = name[:baseLen], v+1
		}
	}
	for {
		c := base + strconv.FormatInt(next, 10)
		if !s.names[c] {
			s.names[c] = true
			return c
		}
		next++
	}
}

// undefinedVar returns a variable f uses but never defines, or nil: what
// is left of a callee variable no fused buffer shape or tir_var bound (a
// stride or offset variable of a callee buffer, a shape parameter given
// only inside an expression FuseTIR cannot invert). Scopes are not
// checked; the well-formedness checker does that.
func undefinedVar(f *ir.PrimFunc) *ir.PrimVar {
	defined := map[*ir.PrimVar]bool{}
	defineBuffer := func(b *ir.Buffer) {
		defined[b.Data] = true
		for _, list := range [][]ir.PrimExpr{b.Shape, b.Strides, {b.ElemOffset}} {
			for _, d := range list {
				if v, ok := d.(*ir.PrimVar); ok {
					defined[v] = true
				}
			}
		}
	}
	for _, p := range f.Params {
		defined[p] = true
		if b := f.BufferMap[p]; b != nil {
			defineBuffer(b)
		}
	}
	ir.WalkStmt(f.Body, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
		switch s := s.(type) {
		case *ir.For:
			defined[s.Var] = true
		case *ir.LetStmt:
			defined[s.Var] = true
		case *ir.AttrStmt:
			if s.Thread != nil {
				defined[s.Thread] = true
			}
		case *ir.Allocate:
			defined[s.Data] = true
		case *ir.AllocateConst:
			defined[s.Data] = true
		case *ir.Block:
			for _, iv := range s.IterVars {
				defined[iv.Var] = true
			}
			for _, b := range s.AllocBuffers {
				defined[b.Data] = true
			}
			for _, mb := range s.MatchBuffers {
				defineBuffer(mb.Buffer)
			}
		}
		return true
	}})
	var undef *ir.PrimVar
	use := func(e ir.PrimExpr) bool {
		if v, ok := e.(*ir.PrimVar); ok && !defined[v] && undef == nil {
			undef = v
		}
		return undef == nil
	}
	ir.WalkStmt(f.Body, &ir.StmtVisitor{
		Prim: use,
		Buffer: func(b *ir.Buffer) {
			for _, list := range [][]ir.PrimExpr{b.Shape, b.Strides, {b.ElemOffset}} {
				for _, d := range list {
					ir.InspectPrim(d, use)
				}
			}
		},
	})
	return undef
}
