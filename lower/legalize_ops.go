package lower

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// LegalizeOps is TVM's src/relax/transform/legalize_ops.cc (see
// LegalizeModule).
var LegalizeOps = passes.Define(passes.Info{
	Name:     "LegalizeOps",
	Doc:      "replace high-level tensor ops by call_tir to generated PrimFuncs",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized: "it replaces op calls in bindings by call_tir",
		// TVM legalizes before fusing (python/tvm/relax/pipeline.py):
		// FuseOps groups call_tir by the patterns of their PrimFuncs.
		phase.NoPrimitiveFunctions: "it cannot legalize inside a fusion group: a Primitive function's calls become one kernel only through FuseTIR, and TVM legalizes before fusing",
		phase.NoOffloadGroups:      "an offload group's ops are compiled by its external codegen (RunCodegen), not legalized",
	},
	Establishes: phase.Of(phase.Legalized),
	// The call_tir it introduces are what CallTIRRewrite removes.
	Invalidates: phase.Of(phase.NoCallTIR),
	Options: []passes.Option{
		{Name: "skip", Type: passes.String, Default: "", Doc: "comma-separated op names (relax.add or R.add) to leave alone"},
		{Name: "custom", Type: passes.String, Default: "", Doc: "a custom legalization map registered with lower.RegisterLegalizeMap"},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	opts := env.Options()
	o := LegalizeOptions{}
	for _, s := range strings.Split(opts.String("skip"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.Skip = append(o.Skip, s)
		}
	}
	if name := opts.String("custom"); name != "" {
		m, ok := lookupLegalizeMap(name)
		if !ok {
			return nil, fmt.Errorf("LegalizeOps: no custom legalization map named %q", name)
		}
		o.Custom = m
	}
	out, errs := LegalizeModule(mod, o)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// DiagNoLegalization is reported, once per op and function, for
// high-level ops LegalizeOps cannot lower (no legalization, or shapes that
// are not known), with the number of calls.
var DiagNoLegalization = lowCodes.Define("LOW030", "high-level ops LegalizeOps cannot lower (no legalization, or shapes not known)")

// DiagLegalizeFailed is reported for a call whose legalization rejects it
// (an invalid attribute the struct info inference let through).
var DiagLegalizeFailed = lowCodes.Define("LOW031", "an op's legalization rejects a call")

// LegalizeOptions customize LegalizeOps.
type LegalizeOptions struct {
	// Custom maps op names ("relax.add") to legalizations tried before the
	// op's own (TVM's customize_legalize_map).
	Custom map[string]op.LegalizeFunc
	// Skip lists op names left as they are.
	Skip []string
	// AllowUnlegalized leaves ops without a legalization in place instead
	// of reporting them (TVM's behaviour; the Legalized property then does
	// not hold).
	AllowUnlegalized bool
}

var customMaps struct {
	sync.Mutex
	byName map[string]map[string]op.LegalizeFunc
}

// RegisterLegalizeMap names a custom legalization map so that a textual
// pipeline can select it: LegalizeOps{custom=name}.
func RegisterLegalizeMap(name string, m map[string]op.LegalizeFunc) {
	customMaps.Lock()
	defer customMaps.Unlock()
	if customMaps.byName == nil {
		customMaps.byName = map[string]map[string]op.LegalizeFunc{}
	}
	customMaps.byName[name] = m
}

func lookupLegalizeMap(name string) (map[string]op.LegalizeFunc, bool) {
	customMaps.Lock()
	defer customMaps.Unlock()
	m, ok := customMaps.byName[name]
	return m, ok
}

// canonicalOpName accepts relax.add and R.add.
func canonicalOpName(s string) string {
	if rest, ok := strings.CutPrefix(s, "R."); ok {
		return "relax." + rest
	}
	return s
}

// LegalizeModule lowers every high-level op call of mod's Relax functions to
// R.call_tir of a generated private PrimFunc, choosing as TVM does: the
// custom map, then the op's legalization, both only when the argument and
// result shapes are known; ops without either, or with unknown shapes, are
// left in place and reported once per op and function (unless
// AllowUnlegalized). Generated PrimFuncs are named after the op, with a
// numeric suffix on a clash (add, add1). As in TVM's BlockBuilder
// (src/relax/ir/block_builder.cc, AddFunction), a generated PrimFunc
// structurally equal to one already in the module, generated or not, is not
// added again: the call uses the existing one, so a chain of 100k adds of one
// shape yields one add PrimFunc. The input module is not modified.
func LegalizeModule(mod *ir.Module, o LegalizeOptions) (*ir.Module, diag.List) {
	skip := map[string]bool{}
	for _, s := range o.Skip {
		skip[canonicalOpName(s)] = true
	}
	custom := map[string]op.LegalizeFunc{}
	for k, f := range o.Custom {
		custom[canonicalOpName(k)] = f
	}
	work := mod.Clone()
	names := map[string]bool{}
	suffix := map[string]int{}
	for _, n := range mod.Names() {
		names[n] = true
	}
	var added []string
	dedup := newFuncDedup(mod)
	kernels := newKernelCache()
	// left counts the calls left alone per function and op, in order of
	// first appearance, for one diagnostic each.
	type leftKey struct{ fn, op string }
	type leftInfo struct {
		count int
		span  diag.Span
		why   string
		hint  string
	}
	left := map[leftKey]*leftInfo{}
	var leftOrder []leftKey
	var fnName string
	var nested map[*ir.Call]bool
	var fromTensor *tensorShapes // the current function's shapes made by R.tensor_to_shape

	rw := ir.NewRewriter(work)
	// em adds each kernel to the module (deduplicated) and emits the
	// bindings of legalizations that need more than one call.
	em := &kernelEmitter{rw: rw, nested: &nested, add: func(k *op.Kernel, pf *ir.PrimFunc) string {
		name, h, found := dedup.find(pf)
		if !found {
			name = uniqueName(k.Name, names, suffix)
			names[name] = true
			work.Set(name, pf)
			added = append(added, name)
			dedup.add(h, pf, name)
		}
		return name
	}}
	var errs diag.List
	rw.PostExpr = func(rw *ir.Rewriter, e ir.Expr) ir.Expr {
		call, ok := e.(*ir.Call)
		if !ok {
			return e
		}
		o, ok := call.Op.(*ir.Op)
		if !ok || (o.Category != ir.CatTensor && o != op.Reshape) || skip[o.Name] {
			return e
		}
		// The struct info of a rebuilt call is computed when it is
		// normalized; legalization needs it now.
		n := rw.B.Normalize(call)
		call, ok = n.(*ir.Call)
		if !ok {
			return n
		}
		f, isCustom := custom[o.Name]
		ok = isCustom
		if !ok {
			if d, has := op.DefOf(o); has && d.Legalize != nil {
				f, ok = d.Legalize, true
			}
		}
		// Custom legalizations are arbitrary code: only the op's own,
		// which read their arguments' struct info and not their identity,
		// are cached. Calls in nested functions may not take symbolic
		// variables and are not cached either.
		cacheable := cacheKernels && ok && !isCustom && !nested[call]
		var sig uint64
		if cacheable {
			var hit *cachedKernel
			if hit, sig = kernels.find(call); hit != nil {
				return hit.callTIR(call)
			}
		}
		why := "has no legalization"
		if ok {
			em.call, em.emitted = call, 0
			k := op.NewKernel(call)
			k.Emit = em
			err := f(k, call)
			if err == nil && k.Forward != nil {
				return k.Forward // the op computes an argument: no kernel
			}
			var res ir.Expr
			if err == nil {
				out := k.Result
				if out == nil {
					out = call.StructInfo()
				}
				res, err = em.CallTIR(k, out)
			}
			if err == nil {
				// A legalization that emitted kernels or bindings of its
				// own, or named a result other than the call's, is not one
				// kernel call: it is legalized anew each time.
				if cacheable && em.emitted == 1 && k.Result == nil {
					if ck := newCachedKernel(call, res.(*ir.Call)); ck != nil {
						kernels.add(sig, ck)
					}
				}
				return res
			}
			if !errors.Is(err, op.ErrNotLegalizable) {
				errs = append(errs, &diag.Diagnostic{Span: call.Span(), Severity: diag.Error, Code: DiagLegalizeFailed,
					Msg: fmt.Sprintf("%s: %v", ir.OpPath(o), err)})
				return call
			}
			why = "has arguments or a result of unknown shape"
			if reason, ok := strings.CutPrefix(err.Error(), op.ErrNotLegalizable.Error()+": "); ok {
				why = "cannot be legalized: " + reason // the op said why (fmt.Errorf("%w: ...", op.ErrNotLegalizable))
			}
		}
		key := leftKey{fnName, o.Name}
		info := left[key]
		if info == nil {
			info = &leftInfo{span: call.Span(), why: why,
				hint: "add a legalization (op.Def.Legalize or a custom map), or skip the op with LegalizeOps{skip=...}"}
			if fromTensor.uses(call) {
				info.hint = "a shape argument comes from R.tensor_to_shape, whose dimensions are unknown: run DecomposeOpsForInference (or DecomposeOpsForTraining) before LegalizeOps; it matches the shape to symbolic variables (TVM leaves this order implicit)"
			}
			left[key] = info
			leftOrder = append(leftOrder, key)
		}
		info.count++
		return call
	}
	out := work.Clone()
	for _, name := range mod.Names() {
		if fn := mod.Func(name); fn != nil {
			fnName = name
			nested = nestedCalls(fn)
			fromTensor = &tensorShapes{fn: fn}
			if nf := rw.Function(fn); nf != fn {
				out.Set(name, nf)
			}
		}
	}
	for _, name := range added {
		pf, _ := work.Lookup(name)
		out.Set(name, pf)
	}
	errs = append(errs, rw.B.Diagnostics()...)
	if !o.AllowUnlegalized {
		for _, key := range leftOrder {
			info := left[key]
			calls := "call"
			if info.count != 1 {
				calls = "calls"
			}
			errs = append(errs, &diag.Diagnostic{Span: info.span, Severity: diag.Error, Code: DiagNoLegalization,
				Msg:  fmt.Sprintf("%s %s: %d %s in %s left unlegalized (first here)", opPathOf(key.op), info.why, info.count, calls, key.fn),
				Hint: info.hint})
		}
	}
	errs.Sort()
	return out, errs
}

// kernelEmitter is LegalizeOps' op.Emitter: kernels go into the module
// through add, bindings into the rewriter's current block.
type kernelEmitter struct {
	rw     *ir.Rewriter
	nested *map[*ir.Call]bool
	add    func(k *op.Kernel, pf *ir.PrimFunc) string
	call   *ir.Call // the call being legalized
	// emitted counts the kernels and bindings emitted for the call.
	emitted int
}

// CallTIR finishes k and returns the call_tir of its PrimFunc, positioned
// at the call being legalized.
func (em *kernelEmitter) CallTIR(k *op.Kernel, out ir.StructInfo) (ir.Expr, error) {
	em.emitted++
	pf, tirVars := k.Finish()
	if len(tirVars) > 0 && (*em.nested)[em.call] {
		// The symbolic variables would cross into a nested function
		// (WF012); LambdaLift first passes them in.
		return nil, op.ErrNotLegalizable
	}
	var vars *ir.ShapeExpr
	if len(tirVars) > 0 {
		vars = ir.NewShapeExpr(tirVars...)
	}
	return callTIR(em.call, ir.NewGlobalVar(em.add(k, pf)), k.Args, vars, out), nil
}

// callTIR is the call_tir of PrimFunc name on args (passing the symbolic
// variables tirVars, when not nil) with result out, positioned at call.
func callTIR(call *ir.Call, gv *ir.GlobalVar, args []ir.Expr, tirVars *ir.ShapeExpr, out ir.StructInfo) *ir.Call {
	cargs := []ir.Expr{gv, ir.NewTuple(args...)}
	if tirVars != nil {
		cargs = append(cargs, tirVars)
	}
	res := &ir.Call{Op: op.CallTIR, Args: cargs, SInfoArgs: []ir.StructInfo{out}}
	res.SetSpan(call.Span())
	return res
}

func (em *kernelEmitter) Emit(value ir.Expr, name string) *ir.Var {
	em.position(value)
	em.emitted++
	return em.rw.B.Emit(value, name)
}

func (em *kernelEmitter) EmitMatchCast(value ir.Expr, s ir.StructInfo, name string) *ir.Var {
	em.position(value)
	em.emitted++
	return em.rw.B.EmitMatchCast(value, s, name)
}

// position gives an emitted value the legalized call's span, so that its
// binding and diagnostics point at the op in the source.
func (em *kernelEmitter) position(value ir.Expr) {
	if v, ok := value.(interface{ SetSpan(diag.Span) }); ok && !value.Span().IsValid() {
		v.SetSpan(em.call.Span())
	}
}

// kernelCache remembers the kernel legalized for a call signature, so that
// a chain of a million adds of one shape builds the add PrimFunc once
// instead of building a million copies for funcDedup to discard (TVM builds
// each and deduplicates, src/relax/transform/legalize_ops.cc).
//
// Two calls have the same signature when they apply the same op with
// structurally equal attributes, struct info arguments and result struct
// info, their non-variable arguments are structurally equal, and their
// variable arguments repeat in the same pattern with structurally equal
// struct info. Symbolic variables compare by identity (no free-variable
// mapping): the kernel's symbolic parameters are passed the caller's
// variables, which must be the same ones. An op's legalization sees a
// variable argument only through its struct info, so calls of one
// signature legalize into the same kernel, taking the corresponding
// arguments.
type kernelCache struct {
	byHash map[uint64][]*cachedKernel
	// scratch and args are sameSignature's reused call.
	scratch ir.Call
	args    []ir.Expr
}

type cachedKernel struct {
	call *ir.Call // the call legalized
	// gv names its PrimFunc; it and tirVars are immutable leaves that
	// every call of the signature shares, as TVM shares a function's
	// GlobalVar (a million copies would cost about 140 MB).
	gv *ir.GlobalVar
	// argAt[i] is the position in call.Args of the kernel's argument i.
	argAt   []int
	tirVars *ir.ShapeExpr
}

// cacheKernels turns kernelCache on; tests compare with it off.
var cacheKernels = true

func newKernelCache() *kernelCache { return &kernelCache{byHash: map[uint64][]*cachedKernel{}} }

// newCachedKernel describes res, the call_tir legalizing call, for calls
// of call's signature; nil when a kernel argument is not one of call's.
func newCachedKernel(call, res *ir.Call) *cachedKernel {
	ck := &cachedKernel{call: call, gv: res.Args[0].(*ir.GlobalVar)}
	kargs := res.Args[1].(*ir.Tuple).Fields
	ck.argAt = make([]int, len(kargs))
	for i, a := range kargs {
		j := slices.Index(call.Args, a)
		if j < 0 {
			return nil
		}
		ck.argAt[i] = j
	}
	if len(res.Args) > 2 {
		ck.tirVars = res.Args[2].(*ir.ShapeExpr)
	}
	return ck
}

// callTIR is the cached kernel applied to the arguments of call, a call of
// the same signature.
func (ck *cachedKernel) callTIR(call *ir.Call) *ir.Call {
	args := make([]ir.Expr, len(ck.argAt))
	for i, j := range ck.argAt {
		args[i] = call.Args[j]
	}
	return callTIR(call, ck.gv, args, ck.tirVars, call.StructInfo())
}

// add caches ck under h, its call's signatureHash.
func (c *kernelCache) add(h uint64, ck *cachedKernel) {
	c.byHash[h] = append(c.byHash[h], ck)
}

// find returns the cached kernel of call's signature (nil if none) and
// the signature's hash.
func (c *kernelCache) find(call *ir.Call) (*cachedKernel, uint64) {
	h := signatureHash(call)
	for _, ck := range c.byHash[h] {
		if c.sameSignature(ck.call, call) {
			return ck, h
		}
	}
	return nil, h
}

// signatureHash hashes what sameSignature compares: the call (variables
// by first use, which is their repetition pattern), the struct info of its
// variable arguments and its result struct info.
func signatureHash(call *ir.Call) uint64 {
	h := ir.StructuralHash(call)
	for _, a := range call.Args {
		if v, ok := a.(*ir.Var); ok {
			h = h*0x9e3779b97f4a7c15 ^ ir.StructuralHash(v.StructInfo())
		}
	}
	return h*0x9e3779b97f4a7c15 ^ ir.StructuralHash(call.StructInfo())
}

func (c *kernelCache) sameSignature(a, b *ir.Call) bool {
	if a.Op != b.Op || len(a.Args) != len(b.Args) ||
		!ir.StructuralEqual(a.StructInfo(), b.StructInfo(), ir.EqualOptions{}) {
		return false
	}
	// b with a's variables in place of its own compares as a call:
	// operator, attributes, struct info arguments and the other arguments.
	c.args = append(c.args[:0], b.Args...)
	c.scratch = *b
	c.scratch.Args = c.args
	for i, x := range b.Args {
		vb, ok := x.(*ir.Var)
		if !ok {
			continue
		}
		va, ok := a.Args[i].(*ir.Var)
		if !ok || !ir.StructuralEqual(va.StructInfo(), vb.StructInfo(), ir.EqualOptions{}) {
			return false
		}
		for j := range i {
			if (a.Args[j] == ir.Expr(va)) != (b.Args[j] == ir.Expr(vb)) {
				return false
			}
		}
		c.scratch.Args[i] = va
	}
	return ir.StructuralEqual(a, &c.scratch, ir.EqualOptions{})
}

// funcDedup finds PrimFuncs structurally equal to one already in the module,
// like the BlockBuilder's context function dedup map in TVM
// (src/relax/ir/block_builder.cc, LazyInitCtxFuncDedupMap): StructuralHash
// picks the bucket, StructuralEqual decides.
type funcDedup struct {
	byHash map[uint64][]dedupEntry
}

type dedupEntry struct {
	pf   *ir.PrimFunc
	name string
}

func newFuncDedup(mod *ir.Module) *funcDedup {
	d := &funcDedup{byHash: map[uint64][]dedupEntry{}}
	for _, name := range mod.Names() {
		if pf, ok := mod.Lookup(name); ok {
			if pf, ok := pf.(*ir.PrimFunc); ok {
				d.add(ir.StructuralHash(pf), pf, name)
			}
		}
	}
	return d
}

func (d *funcDedup) add(h uint64, pf *ir.PrimFunc, name string) {
	d.byHash[h] = append(d.byHash[h], dedupEntry{pf, name})
}

// find returns the name of a function equal to pf, and pf's hash for add.
func (d *funcDedup) find(pf *ir.PrimFunc) (string, uint64, bool) {
	h := ir.StructuralHash(pf)
	for _, e := range d.byHash[h] {
		if ir.StructuralEqual(e.pf, pf, ir.EqualOptions{}) {
			return e.name, h, true
		}
	}
	return "", h, false
}

func opPathOf(name string) string { return "R." + strings.TrimPrefix(name, "relax.") }

// uniqueName is name, or name1, name2, ... when taken (TVM's
// GetUniqueName). next remembers the last suffix tried per name, so n
// kernels of one op take linear, not quadratic, time.
func uniqueName(name string, taken map[string]bool, next map[string]int) string {
	if !taken[name] {
		return name
	}
	for i := next[name] + 1; ; i++ {
		if n := name + strconv.Itoa(i); !taken[n] {
			next[name] = i
			return n
		}
	}
}

// legalizedOps lists the ops with a legalization, for documentation.
func legalizedOps() []string {
	var out []string
	for _, o := range ir.Ops() {
		if d, ok := op.DefOf(o); ok && d.Legalize != nil {
			out = append(out, o.Name)
		}
	}
	slices.Sort(out)
	return out
}

// nestedCalls collects the calls inside fn's nested functions.
// tensorShapes finds, on first use, the vars of a function bound to
// R.tensor_to_shape calls: a call left unlegalized for want of a shape
// that one of them provides gets a hint naming DecomposeOpsForInference.
type tensorShapes struct {
	fn   *ir.Function
	vars map[*ir.Var]bool
}

// uses reports whether an argument of c is bound to R.tensor_to_shape.
func (t *tensorShapes) uses(c *ir.Call) bool {
	if t == nil {
		return false
	}
	if t.vars == nil {
		t.vars = map[*ir.Var]bool{}
		ir.Walk(t.fn, &ir.Visitor{Binding: func(b ir.Binding) bool {
			if vb, ok := b.(*ir.VarBinding); ok {
				if v, ok := vb.Value.(*ir.Call); ok && v.Op == op.TensorToShape {
					t.vars[vb.Var] = true
				}
			}
			return true
		}})
	}
	for _, a := range c.Args {
		if v, ok := a.(*ir.Var); ok && t.vars[v] {
			return true
		}
	}
	return false
}

func nestedCalls(fn *ir.Function) map[*ir.Call]bool {
	out := map[*ir.Call]bool{}
	ir.Inspect(fn.Body, func(e ir.Expr) bool {
		if f, ok := e.(*ir.Function); ok {
			ir.Inspect(f.Body, func(e ir.Expr) bool {
				if c, ok := e.(*ir.Call); ok {
					out[c] = true
				}
				return true
			})
			return false
		}
		return true
	})
	return out
}
