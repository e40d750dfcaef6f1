package transform

import (
	"slices"
	"strconv"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// FuseTIR is TVM's relax.transform.FuseTIR
// (src/relax/transform/fuse_tir.cc, a Sequential at opt level 0):
// ExpandTupleArguments and RemoveUnusedParameters, which give the
// Primitive functions FuseOps made flat tensor and shape parameters, then
// FuseTIRInner, which turns each into one PrimFunc, then
// DeadCodeElimination, which drops the PrimFuncs nothing calls any more.
// The four run nested (env.Run), so instruments show each.
//
// The contract accepts any phase (a module inside the fusion group records
// none: it lacks NoPrimitiveFunctions, an Ingest invariant) and requires
// what the pass reads: Normalized, NoNestedFunctions, PrimFuncsViaCallTIR.
// Legalized is not required: the
// pass needs call_tir inside Primitive functions, not in the whole module
// (main may keep high-level ops; TVM's tests fuse next to unfused kernels),
// and a Primitive function still calling a high-level op is refused with
// a diagnostic at that binding (OPT270) rather than by the pipeline
// checker. It establishes NoPrimitiveFunctions: every Primitive function
// becomes a PrimFunc or the pass fails. (Composite and Codegen functions of
// FuseOpsByPattern without the Primitive attribute are RunCodegen's.)
var FuseTIR = passes.Define(passes.Info{
	Name:     "FuseTIR",
	Doc:      "turn each Primitive function (a fusion group of FuseOps) into one PrimFunc called with R.call_tir, then drop the PrimFuncs nothing calls",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized:          "it reads the struct info of parameters, arguments and call_tir outputs, and follows bindings of A-normal form",
		phase.NoNestedFunctions:   "it rewrites module-level Primitive functions only",
		phase.PrimFuncsViaCallTIR: "it inlines the PrimFuncs the Primitive functions reach through call_tir",
	},
	Establishes: phase.Of(phase.NoPrimitiveFunctions),
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	for _, p := range []*passes.Pass{ExpandTupleArguments, RemoveUnusedParameters, FuseTIRInner, DeadCodeElimination} {
		var err error
		if mod, err = env.Run(p, mod); err != nil {
			return nil, err
		}
	}
	return mod, nil
}))

// FuseTIRInner is the module pass TVM's FuseTIR runs between the tidying
// passes ("FuseTIRInner", src/relax/transform/fuse_tir.cc).
//
// Each Relax function with a nonzero "Primitive" attribute, whose body is a
// chain of R.call_tir / R.call_tir_inplace bindings (with tuples, tuple
// projections and aliases between them), becomes a private PrimFunc of the
// same name: the callees' bodies, each with fresh definitions, in binding
// order under one root block; a value passed from one call to the next
// becomes a buffer allocated in the root block (named after the callee's
// output buffer, "_intermediate" appended); tensor parameters become the
// fused function's buffers (handle "p_" + name), outputs come after them
// ("p_output0", ...), and R.Shape / R.Prim parameters become trailing
// scalar parameters. Callee symbolic variables are bound by matching
// callee buffer shapes against the fused ones, so a dynamic kernel called
// with static shapes loops over constants. Block names are made unique as
// TVM does (compute, compute1, ...). An output that is an input written in
// place makes the call R.call_tir_inplace. Every call of the Relax
// function becomes R.call_tir of the PrimFunc, R.Shape and R.Prim
// arguments passed as tir_vars.
//
// A Primitive function it cannot fuse (a binding that is not call_tir, a
// callee that is not a PrimFunc with blocks, shapes that cannot match)
// gets a diagnostic at the offending binding naming the function.
var FuseTIRInner = passes.Define(passes.Info{
	Name:     "FuseTIRInner",
	Doc:      "turn each Primitive function into one PrimFunc and its calls into R.call_tir (before DeadCodeElimination)",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized:          "it reads the struct info of parameters, arguments and call_tir outputs, and follows bindings of A-normal form",
		phase.NoNestedFunctions:   "it rewrites module-level Primitive functions only",
		phase.PrimFuncsViaCallTIR: "it inlines the PrimFuncs the Primitive functions reach through call_tir",
	},
}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
	return fuseTIR(mod)
}))

// Diagnostics of FuseTIR.
var (
	DiagFuseTIRBody     = optCodes.Define("OPT270", "FuseTIR: a Primitive function's body is not a chain of call_tir calls to PrimFuncs")
	DiagFuseTIRCallee   = optCodes.Define("OPT271", "FuseTIR: a PrimFunc a Primitive function calls cannot be inlined (no block structure, or it returns a value)")
	DiagFuseTIRMismatch = optCodes.Define("OPT272", "FuseTIR: a call_tir's arguments or outputs do not match its PrimFunc's buffers and shapes")
	DiagFuseTIRSig      = optCodes.Define("OPT273", "FuseTIR: a Primitive function's parameter or a call's argument is not a tensor of known shape, a shape of variables or a prim value variable")
)

// isPrimitive reports whether f carries a nonzero "Primitive" attribute
// (TVM's HasNonzeroAttr; FuseOps writes 1, TVMScript often True).
func isPrimitive(f ir.BaseFunc) bool {
	switch v := f.FuncAttrs()[ir.AttrPrimitive].(type) {
	case bool:
		return v
	case int64:
		return v != 0
	case float64:
		return v != 0
	}
	return false
}

// fusedGroup is what FuseTIRInner made of one Primitive function.
type fusedGroup struct {
	prim *ir.PrimFunc
	// inplace is, when the fused function writes some of its inputs in
	// place, the inplace_indices of its call: for each output the input
	// it is written into, or -1 for an output parameter. (TVM lists the
	// in-place inputs only, which R.call_tir_inplace refuses when there
	// are fresh outputs too.)
	inplace []int64
}

func fuseTIR(mod *ir.Module) (*ir.Module, error) {
	var names []string
	for name, bf := range mod.Functions() {
		if f, ok := bf.(*ir.Function); ok && isPrimitive(f) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return mod, nil
	}
	slices.Sort(names)
	var errs diag.List
	groups := make(map[string]*fusedGroup, len(names))
	renew := newRenewer() // shared: its maps are reused, not reallocated
	for _, name := range names {
		f := mod.Func(name)
		g := fuseGroup(mod, name, f, renew, &errs)
		if g != nil {
			groups[name] = g
		}
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	out := mod.Clone()
	for name, g := range groups {
		out.Set(name, g.prim)
	}
	rw := ir.NewRewriter(out)
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		vb, ok := bind.(*ir.VarBinding)
		if !ok {
			return false
		}
		c, ok := value.(*ir.Call)
		if !ok {
			return false
		}
		gv, ok := c.Op.(*ir.GlobalVar)
		if !ok || groups[gv.Name] == nil {
			return false
		}
		nc := fusedCall(c, gv, groups[gv.Name], vb, &errs)
		if nc == nil {
			return false
		}
		rw.ReEmit(bind, nc)
		return true
	}
	res, ds := rw.Module(out)
	errs = append(errs, ds...)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// fusedCall is the R.call_tir (or R.call_tir_inplace) of the fused PrimFunc
// that replaces c, a call of the group's Relax function: tensor arguments
// in order, R.Shape and R.Prim arguments as tir_vars.
func fusedCall(c *ir.Call, gv *ir.GlobalVar, g *fusedGroup, vb *ir.VarBinding, errs *diag.List) *ir.Call {
	span := c.Span()
	if !span.IsValid() {
		span = vb.Span()
	}
	var tensors []ir.Expr
	var tirVars []ir.PrimExpr
	for i, a := range c.Args {
		switch s := a.StructInfo().(type) {
		case *ir.ShapeInfo:
			if !s.Known() {
				errs.Add(span, DiagFuseTIRSig, "call to %s: argument %d is a shape of unknown values; FuseTIR passes shapes as tir_vars", gv.Name, i)
				return nil
			}
			for _, v := range s.Values {
				if _, ok := v.(*ir.PrimVar); !ok {
					errs.Add(span, DiagFuseTIRSig, "call to %s: argument %d has the shape value %s; FuseTIR needs each to be a single symbolic variable", gv.Name, i, ir.FormatPrim(v, nil))
					return nil
				}
				tirVars = append(tirVars, v)
			}
		case *ir.PrimInfo:
			if _, ok := s.Value.(*ir.PrimVar); !ok {
				errs.Add(span, DiagFuseTIRSig, "call to %s: argument %d is an R.Prim without a symbolic variable as its value; FuseTIR passes it as a tir_var", gv.Name, i)
				return nil
			}
			tirVars = append(tirVars, s.Value)
		case *ir.TupleInfo:
			errs.Add(span, DiagFuseTIRSig, "call to %s: argument %d is a tuple; ExpandTupleArguments (part of FuseTIR) expands them only for private functions", gv.Name, i)
			return nil
		default:
			tensors = append(tensors, a)
		}
	}
	sinfo := c.StructInfo()
	if sinfo == nil {
		sinfo = vb.Var.StructInfo()
	}
	var outs []ir.StructInfo
	switch s := sinfo.(type) {
	case *ir.TensorInfo:
		outs = []ir.StructInfo{s}
	case *ir.TupleInfo:
		for _, f := range s.Fields {
			if _, ok := f.(*ir.TensorInfo); !ok {
				errs.Add(span, DiagFuseTIRSig, "call to %s: its result %s is not a tensor or a tuple of tensors", gv.Name, ir.FormatStructInfo(sinfo, nil))
				return nil
			}
		}
		outs = s.Fields
	default:
		errs.Add(span, DiagFuseTIRSig, "call to %s: its result %s is not a tensor or a tuple of tensors", gv.Name, ir.FormatStructInfo(sinfo, nil))
		return nil
	}
	args := []ir.Expr{ir.NewGlobalVar(gv.Name), ir.NewTuple(tensors...)}
	if len(tirVars) > 0 {
		args = append(args, ir.NewShapeExpr(tirVars...))
	}
	nc := &ir.Call{Op: op.CallTIR, Args: args, SInfoArgs: outs}
	if len(g.inplace) > 0 {
		nc.Op = op.CallTIRInplace
		nc.Attrs = ir.Attrs{"inplace_indices": g.inplace}
	}
	nc.SetSpan(c.Span())
	return nc
}

// groupFuser builds the PrimFunc of one Primitive function (TVM's
// FusedTIRConstructor).
type groupFuser struct {
	mod  *ir.Module
	name string
	fn   *ir.Function
	errs *diag.List

	// bufs maps each Relax value of the body (parameters, bound vars,
	// calls, tuples) to the fused buffers holding it, flattened.
	bufs map[ir.Expr][]*ir.Buffer
	// allocs are the buffers the callees allocate and the intermediates,
	// in order; allocNames their names.
	allocs     []*ir.Buffer
	allocNames map[string]bool
	bodies     []ir.Stmt
	params     []*ir.PrimVar
	bufferMap  map[*ir.PrimVar]*ir.Buffer
	outputs    map[*ir.Buffer]bool
	subst      map[*ir.Buffer]*ir.Buffer
	sym        *symMatcher
	renewer    *renewer
	// paramLayout is the callee buffer each Relax value was first matched
	// to (TVM's RelaxToTIRVarMapCollector): a parameter's fused buffer
	// takes its scope and axis separators.
	paramLayout map[ir.Expr]*ir.Buffer
}

// fuseGroup returns the fused group of f, or nil after reporting why f
// cannot be fused.
func fuseGroup(mod *ir.Module, name string, f *ir.Function, renew *renewer, errs *diag.List) *fusedGroup {
	gf := &groupFuser{
		mod: mod, name: name, fn: f, errs: errs,
		bufs:        map[ir.Expr][]*ir.Buffer{},
		allocNames:  map[string]bool{},
		bufferMap:   map[*ir.PrimVar]*ir.Buffer{},
		outputs:     map[*ir.Buffer]bool{},
		subst:       map[*ir.Buffer]*ir.Buffer{},
		sym:         newSymMatcher(),
		renewer:     renew,
		paramLayout: map[ir.Expr]*ir.Buffer{},
	}
	n := len(*errs)
	g := gf.run()
	if len(*errs) > n {
		return nil
	}
	return g
}

func (gf *groupFuser) errorf(span diag.Span, code diag.Code, format string, args ...any) {
	if !span.IsValid() {
		span = gf.fn.Span()
	}
	gf.errs.Add(span, code, "Primitive function %s: "+format, append([]any{gf.name}, args...)...)
}

func (gf *groupFuser) run() *fusedGroup {
	seq, ok := gf.fn.Body.(*ir.SeqExpr)
	if !ok {
		gf.errorf(gf.fn.Span(), DiagFuseTIRBody, "its body is not normalized")
		return nil
	}
	if !gf.collectLayouts(seq) {
		return nil
	}
	// Step 1: parameters. Buffers first, scalars after (a stable sort, as
	// TVM's), so the fused function's signature is tensors, outputs,
	// symbolic variables.
	var scalars []*ir.PrimVar
	for _, p := range gf.fn.Params {
		bufs, vars, ok := gf.paramDefs(p)
		if !ok {
			return nil
		}
		gf.bufs[p] = bufs
		for _, b := range bufs {
			h := ir.NewPrimVar("p_"+b.Name, ir.Handle)
			gf.params = append(gf.params, h)
			gf.bufferMap[h] = b
		}
		scalars = append(scalars, vars...)
	}
	// Step 2: the bindings, in order.
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			if !gf.binding(bind) {
				return nil
			}
		}
	}
	// Step 3: outputs. An output that is a parameter's buffer is written in
	// place; others become output parameters.
	outBufs, ok := gf.valueBufs(seq.Body)
	if !ok || len(outBufs) == 0 {
		gf.errorf(seq.Body.Span(), DiagFuseTIRBody, "its result is not a value of the call_tir chain")
		return nil
	}
	inputIndex := make(map[*ir.Buffer]int, len(gf.params))
	for i, p := range gf.params {
		inputIndex[gf.bufferMap[p]] = i
	}
	var inplace []int64
	seen := map[int]bool{}
	numOut := 0
	for _, b := range outBufs {
		if i, ok := inputIndex[b]; ok {
			if seen[i] {
				gf.errorf(seq.Body.Span(), DiagFuseTIRBody, "it returns parameter %d in place twice", i)
				return nil
			}
			seen[i] = true
			inplace = append(inplace, int64(i))
			continue
		}
		h := ir.NewPrimVar("p_output"+strconv.Itoa(numOut), ir.Handle)
		numOut++
		gf.params = append(gf.params, h)
		gf.bufferMap[h] = b
		gf.outputs[b] = true
	}
	if len(inplace) > 0 {
		// TVM lists an in-place call's indices for every output: fresh
		// outputs are -1.
		full := make([]int64, 0, len(outBufs))
		k := 0
		for _, b := range outBufs {
			if _, ok := inputIndex[b]; ok {
				full = append(full, inplace[k])
				k++
			} else {
				full = append(full, -1)
			}
		}
		inplace = full
	}
	gf.params = append(gf.params, scalars...)
	prim := gf.construct()
	if v := undefinedVar(prim); v != nil {
		gf.errorf(gf.fn.Span(), DiagFuseTIRCallee, "the fused kernel would use %s, a variable of a callee that neither its buffer shapes nor its tir_vars determine (a stride or offset variable, or one only inside a shape expression)", v.Name)
		return nil
	}
	return &fusedGroup{prim: prim, inplace: inplace}
}

// collectLayouts records, for each Relax value a call_tir passes or
// binds, the callee buffer it meets first, and reports values two callees
// see with different layouts (TVM's "Inconsistent buffers").
func (gf *groupFuser) collectLayouts(seq *ir.SeqExpr) bool {
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			vb, ok := bind.(*ir.VarBinding)
			if !ok {
				continue
			}
			c, ok := vb.Value.(*ir.Call)
			if !ok || (c.Op != op.CallTIR && c.Op != op.CallTIRInplace) || len(c.Args) < 2 {
				continue
			}
			pf := gf.callee(c, vb)
			if pf == nil {
				return false
			}
			args := callArgs(c)
			outIdx, ok := gf.outputIndices(c, vb, len(args))
			if !ok {
				return false
			}
			for i, p := range pf.Params {
				b := pf.BufferMap[p]
				if b == nil {
					continue
				}
				if i < len(args) {
					if !gf.recordLayout(args[i], b, vb) {
						return false
					}
				}
				if j := slices.Index(outIdx, i); j == 0 {
					// TVM maps the binding var (a tuple var for several
					// outputs) to the first output's buffer only.
					if !gf.recordLayout(vb.Var, b, vb) {
						return false
					}
				}
			}
		}
	}
	return true
}

func (gf *groupFuser) recordLayout(e ir.Expr, b *ir.Buffer, vb *ir.VarBinding) bool {
	if old, ok := gf.paramLayout[e]; ok && !sameLayout(old, b) {
		gf.errorf(vb.Span(), DiagFuseTIRMismatch, "inconsistent buffers %s and %s (scope, dtype or axis separators differ) are mapped to the same Relax value %s",
			old.Name, b.Name, ir.FormatExpr(e, nil))
		return false
	}
	gf.paramLayout[e] = b
	return true
}

// sameLayout compares what FuseTIR carries from a callee buffer to a
// fused one.
func sameLayout(a, b *ir.Buffer) bool {
	return a.DType == b.DType && ir.ScopeString(a.Scope) == ir.ScopeString(b.Scope) && slices.Equal(a.AxisSeparators, b.AxisSeparators)
}

// paramDefs returns the fused buffers of a tensor parameter or the
// symbolic variables of a shape or prim value parameter.
func (gf *groupFuser) paramDefs(p *ir.Var) ([]*ir.Buffer, []*ir.PrimVar, bool) {
	switch s := p.StructInfo().(type) {
	case *ir.TensorInfo:
		dims, known := s.Dims()
		if !known || s.DType.IsVoid() {
			gf.errorf(p.Span(), DiagFuseTIRSig, "parameter %s needs a known shape and dtype, has %s", p.Name, ir.FormatStructInfo(s, nil))
			return nil, nil, false
		}
		b := ir.NewBuffer(p.Name, dims, s.DType)
		if l := gf.paramLayout[p]; l != nil {
			b.Scope = l.Scope
			b.AxisSeparators = l.AxisSeparators
		}
		return []*ir.Buffer{b}, nil, true
	case *ir.PrimInfo:
		v, ok := s.Value.(*ir.PrimVar)
		if !ok {
			gf.errorf(p.Span(), DiagFuseTIRSig, "parameter %s is an R.Prim whose value is not a symbolic variable", p.Name)
			return nil, nil, false
		}
		return nil, []*ir.PrimVar{v}, true
	case *ir.ShapeInfo:
		var vars []*ir.PrimVar
		for _, e := range s.Values {
			v, ok := e.(*ir.PrimVar)
			if !ok {
				gf.errorf(p.Span(), DiagFuseTIRSig, "parameter %s is a shape whose values are not all symbolic variables", p.Name)
				return nil, nil, false
			}
			vars = append(vars, v)
		}
		if !s.Known() {
			gf.errorf(p.Span(), DiagFuseTIRSig, "parameter %s is a shape of unknown values", p.Name)
			return nil, nil, false
		}
		return nil, vars, true
	case *ir.TupleInfo:
		gf.errorf(p.Span(), DiagFuseTIRSig, "parameter %s is a tuple; ExpandTupleArguments (part of FuseTIR) expands tuple parameters of private functions only", p.Name)
	default:
		gf.errorf(p.Span(), DiagFuseTIRSig, "parameter %s is neither a tensor, a shape nor an R.Prim", p.Name)
	}
	return nil, nil, false
}

// binding records the buffers of one binding of the body, inlining the
// callee of a call_tir.
func (gf *groupFuser) binding(bind ir.Binding) bool {
	vb, ok := bind.(*ir.VarBinding)
	if !ok {
		gf.errorf(bind.Span(), DiagFuseTIRBody, "R.match_cast is not supported in a Primitive function")
		return false
	}
	if c, ok := vb.Value.(*ir.Call); ok {
		if c.Op != op.CallTIR && c.Op != op.CallTIRInplace {
			gf.errorf(vb.Span(), DiagFuseTIRBody, "binding %s calls %s; only R.call_tir and R.call_tir_inplace can be fused",
				vb.Var.Name, calleeName(c))
			return false
		}
		outs, ok := gf.inline(c, vb)
		if !ok {
			return false
		}
		gf.bufs[vb.Var] = outs
		return true
	}
	bufs, ok := gf.valueBufs(vb.Value)
	if !ok {
		what := "a value"
		if _, isConst := vb.Value.(*ir.Constant); isConst {
			what = "a constant (R.const)"
		}
		gf.errorf(vb.Span(), DiagFuseTIRBody, "binding %s binds %s FuseTIR cannot turn into buffers; only call_tir results, tuples of them and their elements can be fused", vb.Var.Name, what)
		return false
	}
	gf.bufs[vb.Var] = bufs
	return true
}

// valueBufs returns the buffers of a leaf, tuple or tuple projection of
// known values.
func (gf *groupFuser) valueBufs(e ir.Expr) ([]*ir.Buffer, bool) {
	switch e := e.(type) {
	case *ir.Var:
		b, ok := gf.bufs[e]
		return b, ok
	case *ir.Tuple:
		var out []*ir.Buffer
		for _, f := range e.Fields {
			b, ok := gf.valueBufs(f)
			if !ok {
				return nil, false
			}
			out = append(out, b...)
		}
		return out, true
	case *ir.TupleGetItem:
		all, ok := gf.valueBufs(e.Tuple)
		t, isTuple := e.Tuple.StructInfo().(*ir.TupleInfo)
		if !ok || !isTuple || e.Index < 0 || e.Index >= len(t.Fields) {
			return nil, false
		}
		begin := 0
		for _, f := range t.Fields[:e.Index] {
			begin += tensorCount(f)
		}
		end := begin + tensorCount(t.Fields[e.Index])
		if end > len(all) {
			return nil, false
		}
		return all[begin:end], true
	}
	return nil, false
}

// tensorCount is the number of tensors in a (nested) tuple.
func tensorCount(s ir.StructInfo) int {
	if t, ok := s.(*ir.TupleInfo); ok {
		n := 0
		for _, f := range t.Fields {
			n += tensorCount(f)
		}
		return n
	}
	return 1
}

func calleeName(c *ir.Call) string {
	switch o := c.Op.(type) {
	case *ir.Op:
		return o.Name
	case *ir.GlobalVar:
		return o.Name
	case *ir.ExternFunc:
		return o.Symbol
	}
	return "a local function"
}

// callArgs is the argument list of a call_tir.
func callArgs(c *ir.Call) []ir.Expr {
	if t, ok := c.Args[1].(*ir.Tuple); ok {
		return t.Fields
	}
	return []ir.Expr{c.Args[1]}
}

// callee is the PrimFunc a call_tir calls, or nil after reporting.
func (gf *groupFuser) callee(c *ir.Call, vb *ir.VarBinding) *ir.PrimFunc {
	gv, ok := c.Args[0].(*ir.GlobalVar)
	if !ok {
		gf.errorf(vb.Span(), DiagFuseTIRBody, "binding %s calls something that is not a global PrimFunc", vb.Var.Name)
		return nil
	}
	bf, ok := gf.mod.Lookup(gv.Name)
	pf, isPrim := bf.(*ir.PrimFunc)
	if !ok || !isPrim {
		gf.errorf(vb.Span(), DiagFuseTIRBody, "binding %s calls %s, which is not a PrimFunc of the module", vb.Var.Name, gv.Name)
		return nil
	}
	return pf
}

// outputIndices are the callee parameter positions of a call_tir's
// outputs (TVM's GetInplaceOutputIndices for call_tir_inplace, where -1
// is a fresh output after the inputs).
func (gf *groupFuser) outputIndices(c *ir.Call, vb *ir.VarBinding, numInputs int) ([]int, bool) {
	outs := c.SInfoArgs
	if c.Op != op.CallTIRInplace {
		idx := make([]int, len(outs))
		for i := range idx {
			idx[i] = numInputs + i
		}
		return idx, true
	}
	inplace, ok := c.Attrs.Ints("inplace_indices")
	if !ok || len(inplace) != len(outs) {
		gf.errorf(vb.Span(), DiagFuseTIRMismatch, "binding %s: inplace_indices must list one index per output", vb.Var.Name)
		return nil, false
	}
	idx := make([]int, len(outs))
	next := numInputs
	for i, v := range inplace {
		switch {
		case v >= 0 && int(v) < numInputs:
			idx[i] = int(v)
		case v == -1:
			idx[i] = next
			next++
		default:
			gf.errorf(vb.Span(), DiagFuseTIRMismatch, "binding %s: inplace index %d is not an argument position or -1", vb.Var.Name, v)
			return nil, false
		}
	}
	return idx, true
}

// inline appends a call_tir's callee body to the fused body and returns
// the buffers of its outputs.
func (gf *groupFuser) inline(c *ir.Call, vb *ir.VarBinding) ([]*ir.Buffer, bool) {
	if len(c.Args) < 2 {
		gf.errorf(vb.Span(), DiagFuseTIRBody, "binding %s: malformed call_tir", vb.Var.Name)
		return nil, false
	}
	orig := gf.callee(c, vb)
	if orig == nil {
		return nil, false
	}
	gv := c.Args[0].(*ir.GlobalVar)
	if !orig.Ret.IsVoid() {
		gf.errorf(vb.Span(), DiagFuseTIRCallee, "%s returns a value (T.ret); only kernels writing their output buffers can be fused", gv.Name)
		return nil, false
	}
	pf := gf.renewer.renew(orig)
	// The callee's blocks: its root block's body and allocations, or its
	// whole body when the root is implicit.
	if br, ok := pf.Body.(*ir.BlockRealize); ok && len(br.Block.IterVars) == 0 {
		gf.addAllocs(br.Block.AllocBuffers)
		gf.bodies = append(gf.bodies, br.Block.Body)
	} else if containsBlock(pf.Body) {
		gf.bodies = append(gf.bodies, pf.Body)
	} else {
		gf.errorf(vb.Span(), DiagFuseTIRCallee, "%s has no block structure (lowered TIR); only schedulable PrimFuncs, whose loops hold blocks, can be fused", gv.Name)
		return nil, false
	}
	// Inputs: each argument's buffers replace the callee's parameter
	// buffers in order.
	args := callArgs(c)
	var inputBufs []*ir.Buffer
	pi := 0
	for ai, a := range args {
		bufs, ok := gf.valueBufs(a)
		if !ok {
			what := ir.FormatExpr(a, nil)
			if _, isConst := a.(*ir.Constant); isConst {
				what = "a constant (R.const)"
			}
			gf.errorf(vb.Span(), DiagFuseTIRBody, "argument %d of the call to %s is %s; only parameters and call_tir results can be passed inside a Primitive function", ai, gv.Name, what)
			return nil, false
		}
		for _, tgt := range bufs {
			if pi >= len(pf.Params) || pf.BufferMap[pf.Params[pi]] == nil {
				gf.errorf(vb.Span(), DiagFuseTIRMismatch, "the call to %s passes more tensors than it has buffer parameters", gv.Name)
				return nil, false
			}
			src := pf.BufferMap[pf.Params[pi]]
			if err := gf.sym.matchAll(src.Shape, tgt.Shape); err != nil {
				gf.errorf(vb.Span(), DiagFuseTIRMismatch, "the shape of %s's parameter %s does not match argument %d: %v", gv.Name, src.Name, ai, err)
				return nil, false
			}
			gf.subst[src] = tgt
			inputBufs = append(inputBufs, tgt)
			pi++
		}
	}
	// Outputs: a fresh output becomes an intermediate buffer of the
	// out_sinfo shape; an in-place one is the input buffer.
	outIdx, ok := gf.outputIndices(c, vb, len(args))
	if !ok {
		return nil, false
	}
	var outs []*ir.Buffer
	for i, idx := range outIdx {
		t, isTensor := c.SInfoArgs[i].(*ir.TensorInfo)
		dims, known := []ir.PrimExpr(nil), false
		if isTensor {
			dims, known = t.Dims()
		}
		if !known {
			gf.errorf(vb.Span(), DiagFuseTIRSig, "output %d of the call to %s has no known shape", i, gv.Name)
			return nil, false
		}
		if idx >= len(pf.Params) || pf.BufferMap[pf.Params[idx]] == nil {
			gf.errorf(vb.Span(), DiagFuseTIRMismatch, "output %d of the call to %s is not a buffer parameter of %[2]s", i, gv.Name)
			return nil, false
		}
		src := pf.BufferMap[pf.Params[idx]]
		if idx < len(args) {
			if idx >= len(inputBufs) {
				gf.errorf(vb.Span(), DiagFuseTIRMismatch, "output %d of the call to %s is written in place into an argument that is not one tensor", i, gv.Name)
				return nil, false
			}
			outs = append(outs, inputBufs[idx])
			continue
		}
		nb := *src
		nb.Shape = dims
		nb.Name = gf.intermediateName(src.Name)
		nb.Data = ir.NewPrimVar(nb.Name, ir.Handle)
		gf.addAllocs([]*ir.Buffer{&nb})
		if err := gf.sym.matchAll(src.Shape, dims); err != nil {
			gf.errorf(vb.Span(), DiagFuseTIRMismatch, "the shape of %s's output %s does not match out_sinfo %d: %v", gv.Name, src.Name, i, err)
			return nil, false
		}
		gf.subst[src] = &nb
		outs = append(outs, &nb)
	}
	// Scalar parameters: the trailing ones take tir_vars.
	if len(c.Args) > 2 {
		se, ok := c.Args[2].(*ir.ShapeExpr)
		if !ok {
			gf.errorf(vb.Span(), DiagFuseTIRBody, "the tir_vars of the call to %s are not an R.shape(...) expression", gv.Name)
			return nil, false
		}
		n := len(pf.Params)
		if len(se.Values) > n {
			gf.errorf(vb.Span(), DiagFuseTIRMismatch, "the call to %s passes more tir_vars than it has parameters", gv.Name)
			return nil, false
		}
		for i, v := range se.Values {
			if err := gf.sym.match(pf.Params[n-len(se.Values)+i], v); err != nil {
				gf.errorf(vb.Span(), DiagFuseTIRMismatch, "tir_var %d of the call to %s: %v", i, gv.Name, err)
				return nil, false
			}
		}
	}
	return outs, true
}

func (gf *groupFuser) addAllocs(bufs []*ir.Buffer) {
	for _, b := range bufs {
		gf.allocs = append(gf.allocs, b)
		gf.allocNames[b.Name] = true
	}
}

// intermediateName is TVM's unify_name_hints: name + "_intermediate",
// then "_1", "_2", ... appended to the previous attempt while taken.
func (gf *groupFuser) intermediateName(name string) string {
	n := name + "_intermediate"
	for id := 1; gf.allocNames[n]; id++ {
		n = n + "_" + strconv.Itoa(id)
	}
	return n
}

// construct assembles the fused PrimFunc (TVM's ConstructFunc): the
// callees' bodies in order, substituted, under a root block holding the
// allocations that are not outputs.
func (gf *groupFuser) construct() *ir.PrimFunc {
	s := newFusedBodySubst(gf.subst, gf.sym.remap)
	var stmts []ir.Stmt
	for _, b := range gf.bodies {
		if seq, ok := b.(*ir.SeqStmt); ok {
			stmts = append(stmts, seq.Stmts...)
		} else {
			stmts = append(stmts, b)
		}
	}
	for i, st := range stmts {
		stmts[i] = s.m.Stmt(st)
	}
	var allocs []*ir.Buffer
	for _, b := range gf.allocs {
		if !gf.outputs[b] {
			allocs = append(allocs, s.buffer(b))
		}
	}
	var body ir.Stmt
	if len(stmts) == 1 {
		body = stmts[0]
	} else {
		body = &ir.SeqStmt{Stmts: stmts}
	}
	if len(allocs) > 0 {
		// phasec's parser (and op.Kernel) make the root block explicit
		// only when it allocates; TVM always has one.
		blk := &ir.Block{Name: "root", Body: body, AllocBuffers: allocs, Reads: []ir.BufferRegion{}, Writes: []ir.BufferRegion{}}
		body = &ir.BlockRealize{IterValues: []ir.PrimExpr{}, Block: blk}
	}
	f := &ir.PrimFunc{Params: gf.params, BufferMap: gf.bufferMap, Body: body, Ret: ir.Void, Attrs: ir.Attrs{ir.AttrNoAlias: true}}
	f.SetSpan(gf.fn.Span())
	return f
}

// containsBlock reports whether s holds a block (a schedulable body whose
// root block is implicit).
func containsBlock(s ir.Stmt) bool {
	found := false
	ir.WalkStmt(s, &ir.StmtVisitor{Stmt: func(st ir.Stmt) bool {
		if _, ok := st.(*ir.BlockRealize); ok {
			found = true
		}
		return !found
	}})
	return found
}
