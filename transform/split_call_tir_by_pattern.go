package transform

import (
	"encoding/json"
	"fmt"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/vm/extern"
)

// SplitCallTIRByPattern is TVM's relax.transform.SplitCallTIRByPattern
// (src/relax/transform/split_call_tir_by_pattern.cc), on phasec's own
// kernel library.
//
// TVM matches the leading loop nests of each called PrimFunc against TIR
// patterns (the CUTLASS GEMM patterns) and splits the function in two: the
// matched part becomes a library kernel called with R.call_dps_packed, the
// rest a PrimFunc (unfused_epilogue) that takes the library kernel's
// result as its first parameter; a function matched whole becomes the
// library call alone. Here the pattern is phasec_blas's GEMM and the
// library is vm/blas's packed SGEMM, the one phasec_blas's external
// codegen uses (transform/run_codegen_blas.go, vm/extern/blas.go): a
// PrimFunc whose root block starts with the loop nest LegalizeOps makes of
// R.matmul,
//
//	for b..., i, j, k:  C[b..., i, j] = 0 at k's start; C[b..., i, j] += A[b..., i, k] * B[k, j]
//
// (B[j, k] for a transposed weight), over float32 buffers, with A and B
// parameters and the loops covering C, A and B whole, is split into a
// phasec_blas GEMM (A's leading axes are the rows) and the PrimFunc of the
// loop nests after it. The GEMMs of a run go into one external module of
// kind phasec_blas recorded in the module attribute external_mods, as
// RunCodegen records its modules; each is called by the symbol
// <kernel>_gemm. A split kernel nothing calls any more is removed.
//
// A kernel is left alone when its first nest is not such a GEMM, when the
// GEMM writes an output the rest also writes, when it has scalar
// parameters (tir_vars), or when the epilogue would need a symbolic
// variable only A or B defined: the split is an optimization, never an
// error.
//
// Phase: after fusion and FuseTIR, which make the fused kernels it splits
// (it Requires NoPrimitiveFunctions), and before lowering, which turns
// the call_dps_packed it emits into an allocation and a packed call:
// `canonicalize,optimize,SplitCallTIRByPattern,lower,build`.
var SplitCallTIRByPattern = passes.Define(passes.Info{
	Name:     "SplitCallTIRByPattern",
	Doc:      "split each called PrimFunc that starts with a GEMM into a phasec_blas GEMM call (R.call_dps_packed) and a PrimFunc of the rest",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized:           "it rewrites call_tir bindings and reads the arguments' struct info for the GEMM's output shape",
		phase.NoPrimitiveFunctions: "it splits the kernels FuseTIR makes; a FuseOps group awaiting FuseTIR would get a packed call FuseTIR cannot fuse",
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return splitCallTIRByPattern(mod)
}))

// gemmSplit is how one PrimFunc splits: the GEMM's operands (parameter
// indices), and the epilogue (nil when the GEMM is the whole function)
// with the parameters it keeps.
type gemmSplit struct {
	lhs, rhs int
	transB   bool
	symbol   string
	epilogue string // the epilogue's global name; "" when there is none
	keep     []int  // the original parameters the epilogue takes after the GEMM result, in order
}

func splitCallTIRByPattern(mod *ir.Module) (*ir.Module, error) {
	s := &splitter{mod: mod, splits: map[string]*gemmSplit{}, taken: map[string]bool{}}
	if old, ok := mod.Attrs[ir.AttrExternalMods].([]any); ok {
		for _, m := range old {
			if a, ok := m.(ir.Attrs); ok {
				if syms, ok := a["symbols"].([]any); ok {
					for _, sym := range syms {
						if name, ok := sym.(string); ok {
							s.taken[name] = true
						}
					}
				}
			}
		}
	}
	for _, name := range mod.Names() {
		s.taken[name] = true
	}
	var out *ir.Module
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		if out == nil {
			out = mod.Clone()
		}
		s.out = out
		nf, errs := s.function(f)
		if len(errs) > 0 {
			return nil, errs
		}
		if nf != f {
			out.Set(name, nf)
		}
	}
	if len(s.blas.Functions) == 0 {
		return mod, nil
	}
	payload, err := json.Marshal(s.blas)
	if err != nil {
		return nil, err
	}
	var mods []any
	if old, ok := mod.Attrs[ir.AttrExternalMods].([]any); ok {
		mods = append(mods, old...)
	}
	syms := make([]any, len(s.blas.Functions))
	for i, f := range s.blas.Functions {
		syms[i] = f.Symbol
	}
	mods = append(mods, ir.Attrs{"kind": extern.BLASKind, "symbols": syms, "payload": string(payload)})
	out.Attrs = out.Attrs.With(ir.AttrExternalMods, mods)
	removeUncalledPrimFuncs(out, s.splits)
	return out, nil
}

// removeUncalledPrimFuncs removes the split kernels no function references.
func removeUncalledPrimFuncs(mod *ir.Module, split map[string]*gemmSplit) {
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
	for name, sp := range split {
		if sp != nil && !used[name] && !ir.IsPublic(mod.PrimFunc(name)) {
			mod.Remove(name)
		}
	}
}

type splitter struct {
	mod, out *ir.Module
	splits   map[string]*gemmSplit // kernel name -> its split (nil: does not split)
	taken    map[string]bool       // global and external symbol names in use
	blas     extern.BLASModule
}

func (s *splitter) unique(base string) string {
	name := base
	for i := 1; s.taken[name]; i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	s.taken[name] = true
	return name
}

func (s *splitter) function(f *ir.Function) (*ir.Function, diag.List) {
	rw := ir.NewRewriter(s.out)
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		c, ok := value.(*ir.Call)
		if !ok || c.Op != op.CallTIR || len(c.Args) != 2 {
			return false
		}
		gv, ok := c.Args[0].(*ir.GlobalVar)
		tuple, ok2 := c.Args[1].(*ir.Tuple)
		if !ok || !ok2 {
			return false
		}
		sp := s.split(gv.Name)
		if sp == nil {
			return false
		}
		lhs, _ := tuple.Fields[sp.lhs].StructInfo().(*ir.TensorInfo)
		rhs, _ := tuple.Fields[sp.rhs].StructInfo().(*ir.TensorInfo)
		if lhs == nil || rhs == nil {
			return false
		}
		ldims, ok1 := lhs.Dims()
		rdims, ok2 := rhs.Dims()
		if !ok1 || !ok2 || len(rdims) != 2 || len(ldims) < 2 {
			return false
		}
		n := rdims[1]
		if sp.transB {
			n = rdims[0]
		}
		gemmShape := append(append([]ir.PrimExpr{}, ldims[:len(ldims)-1]...), n)
		gemm := ir.NewCall(op.CallDPSPacked, ir.NewExternFunc(sp.symbol), ir.NewTuple(tuple.Fields[sp.lhs], tuple.Fields[sp.rhs]))
		gemm.SInfoArgs = []ir.StructInfo{ir.TensorInfoOf(lhs.DType, gemmShape...)}
		gemm.SetSpan(c.Span())
		if sp.epilogue == "" {
			gemm.SInfoArgs = c.SInfoArgs
			rw.ReEmit(bind, gemm)
			return true
		}
		res := rw.B.Emit(gemm, "lv")
		args := []ir.Expr{res}
		for _, i := range sp.keep {
			args = append(args, tuple.Fields[i])
		}
		epi := &ir.Call{Op: op.CallTIR, Args: []ir.Expr{ir.NewGlobalVar(sp.epilogue), ir.NewTuple(args...)}, Attrs: c.Attrs, SInfoArgs: c.SInfoArgs}
		epi.SetSpan(c.Span())
		rw.ReEmit(bind, epi)
		return true
	}
	nf := rw.Function(f)
	return nf, rw.B.Diagnostics()
}

// split returns how the kernel name splits (computed once), or nil.
func (s *splitter) split(name string) *gemmSplit {
	if sp, ok := s.splits[name]; ok {
		return sp
	}
	s.splits[name] = nil
	pf := s.mod.PrimFunc(name)
	if pf == nil {
		return nil
	}
	g, rest, root := matchLeadingGEMM(pf)
	if g == nil {
		return nil
	}
	sp := &gemmSplit{lhs: g.lhs, rhs: g.rhs, transB: g.transB}
	if g.outParam < 0 {
		epi, keep := epilogueFunc(pf, root, rest, g)
		if epi == nil {
			return nil
		}
		sp.keep = keep
		sp.epilogue = s.unique("unfused_epilogue")
		s.out.Set(sp.epilogue, epi)
	} else if len(rest) > 0 {
		return nil // the rest writes or reads the output the GEMM wrote
	}
	sp.symbol = s.unique(name + "_gemm")
	s.blas.Functions = append(s.blas.Functions, extern.BLASFunction{
		Symbol: sp.symbol, Params: 2,
		Steps:   []extern.BLASStep{{LHS: "p0", RHS: "p1", TransB: g.transB}},
		Outputs: []int{0},
	})
	s.splits[name] = sp
	return sp
}

// leadingGEMM is a matched GEMM nest: the parameter indices of A and B,
// the output buffer C, and C's parameter index (-1 when C is allocated in
// the root block: an intermediate the rest reads).
type leadingGEMM struct {
	lhs, rhs int
	transB   bool
	c        *ir.Buffer
	outParam int
}

// matchLeadingGEMM matches the first loop nest of pf's root block against
// the GEMM; it returns the match, the statements after it and the root
// block.
func matchLeadingGEMM(pf *ir.PrimFunc) (*leadingGEMM, []ir.Stmt, *ir.Block) {
	for _, p := range pf.Params {
		if pf.BufferMap[p] == nil {
			return nil, nil, nil // tir_vars
		}
	}
	// The root block, or none (a body that is the loop nests itself).
	var root *ir.Block
	body := pf.Body
	if br, ok := body.(*ir.BlockRealize); ok {
		if br.Block == nil || len(br.IterValues) != 0 || len(br.Block.MatchBuffers) > 0 || br.Block.Init != nil {
			return nil, nil, nil
		}
		root, body = br.Block, br.Block.Body
	}
	var stmts []ir.Stmt
	switch b := body.(type) {
	case *ir.SeqStmt:
		stmts = b.Stmts
	case *ir.For:
		stmts = []ir.Stmt{b}
	default:
		return nil, nil, nil
	}
	if len(stmts) == 0 {
		return nil, nil, nil
	}
	// The loop nest down to one block with trivial bindings.
	var loops []*ir.For
	s := stmts[0]
	for {
		f, ok := s.(*ir.For)
		if !ok {
			break
		}
		if f.Kind != ir.ForSerial || len(f.Annotations) > 0 || !isZero(f.Min) {
			return nil, nil, nil
		}
		loops = append(loops, f)
		s = f.Body
	}
	inner, ok := s.(*ir.BlockRealize)
	if !ok || inner.Predicate != nil && !isTrue(inner.Predicate) {
		return nil, nil, nil
	}
	blk := inner.Block
	nv := len(blk.IterVars)
	if nv < 3 || len(loops) != nv || len(inner.IterValues) != nv || len(blk.AllocBuffers) > 0 || len(blk.MatchBuffers) > 0 {
		return nil, nil, nil
	}
	vars := make([]*ir.PrimVar, nv)
	for i, iv := range blk.IterVars {
		if inner.IterValues[i] != loops[i].Var || !isZero(iv.Dom.Min) || !sameExpr(iv.Dom.Extent, loops[i].Extent) {
			return nil, nil, nil
		}
		want := ir.IterSpatial
		if i == nv-1 {
			want = ir.IterReduce
		}
		if iv.Kind != want {
			return nil, nil, nil
		}
		vars[i] = iv.Var
	}
	spatial, k := vars[:nv-1], vars[nv-1]
	ext := func(i int) ir.PrimExpr { return blk.IterVars[i].Dom.Extent }

	// init: C[spatial] = 0; body: C[spatial] = C[spatial] + A[..] * B[..].
	init, ok := blk.Init.(*ir.BufferStore)
	if !ok || !isFloatZero(init.Value) || !indexedBy(init.Indices, spatial) {
		return nil, nil, nil
	}
	store, ok := blk.Body.(*ir.BufferStore)
	if !ok || store.Buffer != init.Buffer || !indexedBy(store.Indices, spatial) {
		return nil, nil, nil
	}
	c := store.Buffer
	add, ok := store.Value.(*ir.Binary)
	if !ok || add.Op != ir.OpAdd {
		return nil, nil, nil
	}
	acc, prod := add.A, add.B
	if !isLoadOf(acc, c, spatial) {
		acc, prod = add.B, add.A
	}
	mul, ok := prod.(*ir.Binary)
	if !isLoadOf(acc, c, spatial) || !ok || mul.Op != ir.OpMul {
		return nil, nil, nil
	}
	a, ok1 := mul.A.(*ir.BufferLoad)
	b, ok2 := mul.B.(*ir.BufferLoad)
	if !ok1 || !ok2 {
		return nil, nil, nil
	}
	batchI := spatial[:len(spatial)-1] // batch..., i
	j := spatial[len(spatial)-1]
	lhsIdx := append(append([]*ir.PrimVar{}, batchI...), k)
	if !indexedBy(a.Indices, lhsIdx) {
		a, b = b, a
	}
	if !indexedBy(a.Indices, lhsIdx) {
		return nil, nil, nil
	}
	var transB bool
	switch {
	case indexedBy(b.Indices, []*ir.PrimVar{k, j}):
	case indexedBy(b.Indices, []*ir.PrimVar{j, k}):
		transB = true
	default:
		return nil, nil, nil
	}
	for _, buf := range []*ir.Buffer{a.Buffer, b.Buffer, c} {
		if buf.DType.String() != "float32" || !buf.CompactLayout() || buf.Scope != "" && buf.Scope != "global" {
			return nil, nil, nil
		}
	}
	// The loops cover the buffers whole.
	for i := range spatial {
		if !sameExpr(c.Shape[i], ext(i)) {
			return nil, nil, nil
		}
	}
	for i := range batchI {
		if !sameExpr(a.Buffer.Shape[i], ext(i)) {
			return nil, nil, nil
		}
	}
	if !sameExpr(a.Buffer.Shape[len(batchI)], ext(nv-1)) {
		return nil, nil, nil
	}
	bk, bj := b.Buffer.Shape[0], b.Buffer.Shape[1]
	if transB {
		bk, bj = bj, bk
	}
	if !sameExpr(bk, ext(nv-1)) || !sameExpr(bj, ext(nv-2)) {
		return nil, nil, nil
	}
	g := &leadingGEMM{lhs: -1, rhs: -1, outParam: -1, transB: transB, c: c}
	for i, p := range pf.Params {
		switch pf.BufferMap[p] {
		case a.Buffer:
			g.lhs = i
		case b.Buffer:
			if g.rhs < 0 {
				g.rhs = i
			}
		case c:
			g.outParam = i
		}
	}
	if a.Buffer == b.Buffer {
		g.rhs = g.lhs
	}
	if g.lhs < 0 || g.rhs < 0 || g.outParam >= 0 && (g.outParam <= g.lhs || g.outParam <= g.rhs) {
		return nil, nil, nil
	}
	if g.outParam < 0 && (root == nil || !containsBuffer(root.AllocBuffers, c)) {
		return nil, nil, nil
	}
	return g, stmts[1:], root
}

// epilogueFunc builds the PrimFunc of the statements after the GEMM: C
// becomes its first parameter, followed by the inputs the rest reads and
// the outputs (the parameters from the first one the rest writes on; it
// must write them all). It returns nil when the rest writes A, B or C, or
// needs a symbolic variable only A or B defined.
func epilogueFunc(pf *ir.PrimFunc, root *ir.Block, rest []ir.Stmt, g *leadingGEMM) (*ir.PrimFunc, []int) {
	if len(rest) == 0 {
		return nil, nil
	}
	used := map[*ir.Buffer]bool{}
	written := map[*ir.Buffer]bool{}
	vars := map[*ir.PrimVar]bool{}
	visit := &ir.StmtVisitor{
		Stmt: func(s ir.Stmt) bool {
			if st, ok := s.(*ir.BufferStore); ok {
				written[st.Buffer] = true
			}
			if blk, ok := s.(*ir.Block); ok {
				for _, w := range blk.Writes {
					written[w.Buffer] = true
				}
			}
			return true
		},
		Prim: func(e ir.PrimExpr) bool {
			switch x := e.(type) {
			case *ir.BufferLoad:
				used[x.Buffer] = true
			case *ir.PrimVar:
				vars[x] = true
			}
			return true
		},
		Buffer: func(b *ir.Buffer) { used[b] = true },
	}
	for _, s := range rest {
		ir.WalkStmt(s, visit)
	}
	lhsBuf, rhsBuf := pf.ParamBuffer(g.lhs), pf.ParamBuffer(g.rhs)
	if written[lhsBuf] || written[rhsBuf] || written[g.c] {
		return nil, nil
	}
	cParam := ir.NewPrimVar("p_"+g.c.Name, ir.Handle)
	params := []*ir.PrimVar{cParam}
	bm := map[*ir.PrimVar]*ir.Buffer{cParam: g.c}
	var keep []int
	defined := map[*ir.PrimVar]bool{}
	define := func(b *ir.Buffer) {
		for _, d := range b.Shape {
			if v, ok := d.(*ir.PrimVar); ok {
				defined[v] = true
			}
		}
	}
	define(g.c)
	numInputs := len(pf.Params)
	for i, p := range pf.Params {
		b := pf.BufferMap[p]
		if written[b] {
			numInputs = min(numInputs, i)
		}
	}
	for i, p := range pf.Params {
		b := pf.BufferMap[p]
		if i < numInputs && !used[b] {
			continue
		}
		params = append(params, p)
		bm[p] = b
		define(b)
		if i < numInputs {
			keep = append(keep, i)
		}
	}
	// Every output is a parameter the rest writes, and the call passes
	// only the inputs: the outputs must follow the inputs.
	for i := numInputs; i < len(pf.Params); i++ {
		if !written[pf.ParamBuffer(i)] {
			return nil, nil
		}
	}
	var allocs []*ir.Buffer
	for _, b := range root.AllocBuffers {
		if b != g.c && used[b] {
			allocs = append(allocs, b)
			define(b)
		}
	}
	// Loop and block variables are defined in the body; what remains must
	// come from a buffer shape.
	local := map[*ir.PrimVar]bool{}
	for _, s := range rest {
		ir.WalkStmt(s, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
			switch x := s.(type) {
			case *ir.For:
				local[x.Var] = true
			case *ir.Block:
				for _, iv := range x.IterVars {
					local[iv.Var] = true
				}
			case *ir.LetStmt:
				local[x.Var] = true
			}
			return true
		}})
	}
	for v := range vars {
		if !local[v] && !defined[v] && v.Type != ir.Handle {
			return nil, nil
		}
	}
	var body ir.Stmt = &ir.SeqStmt{Stmts: rest}
	if len(rest) == 1 {
		body = rest[0]
	}
	nroot := *root
	nroot.Body, nroot.AllocBuffers = body, allocs
	nbr := &ir.BlockRealize{Block: &nroot}
	epi := &ir.PrimFunc{Params: params, BufferMap: bm, Body: nbr, Ret: pf.Ret, Attrs: pf.Attrs.Without(ir.AttrGlobalSymbol)}
	epi.SetSpan(pf.Span())
	return renewDefs(epi), keep
}

func containsBuffer(list []*ir.Buffer, b *ir.Buffer) bool {
	for _, x := range list {
		if x == b {
			return true
		}
	}
	return false
}

func isZero(e ir.PrimExpr) bool {
	v, ok := ir.IntValue(e)
	return ok && v == 0
}

func isTrue(e ir.PrimExpr) bool {
	v, ok := ir.IntValue(e)
	return ok && v != 0
}

func isFloatZero(e ir.PrimExpr) bool {
	switch x := e.(type) {
	case *ir.FloatImm:
		return x.Value == 0
	case *ir.IntImm:
		return x.Value == 0
	}
	return false
}

func sameExpr(a, b ir.PrimExpr) bool {
	if x, ok := ir.IntValue(a); ok {
		y, ok := ir.IntValue(b)
		return ok && x == y
	}
	return ir.StructuralEqual(ir.Simplify(a), ir.Simplify(b), ir.EqualOptions{})
}

// indexedBy reports whether idx is exactly the variables vars, in order.
func indexedBy(idx []ir.PrimExpr, vars []*ir.PrimVar) bool {
	if len(idx) != len(vars) {
		return false
	}
	for i, e := range idx {
		if v, ok := e.(*ir.PrimVar); !ok || v != vars[i] {
			return false
		}
	}
	return true
}

func isLoadOf(e ir.PrimExpr, b *ir.Buffer, vars []*ir.PrimVar) bool {
	l, ok := e.(*ir.BufferLoad)
	return ok && l.Buffer == b && indexedBy(l.Indices, vars)
}
