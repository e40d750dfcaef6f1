package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// LiftTransformParams is TVM's src/relax/transform/lift_transform_params.cc
// (PartitionTransformParams and its post-processing; the default,
// shared_transform=False): the weight preprocessing of a model is split
// out so that it runs once, ahead of time, instead of at every inference.
//
// Every Relax function with a num_input attribute (except those whose
// name already ends in "transform_params") is partitioned. Its parameters
// after num_input are the weights. A binding of its body's top-level
// dataflow blocks is lifted when every variable it uses is a weight or a
// lifted binding, every symbolic variable of its struct info is defined by
// a weight, it is not R.builtin.stop_lift_params and its value is not an
// extern function. The lifted bindings become <name>_transform_params
// (global_symbol set, num_input 0) taking the weights as one tuple
// parameter `params` (TVM's BundleModelParams; bundle_params=false keeps
// them as separate parameters, which `phasec run --func` can feed from
// .npy files) and returning a tuple of
//
//   - R.shape of the symbolic variables that only weights define, when
//     the inference function still needs one that no output defines;
//   - the weights the inference function still uses, in parameter order;
//   - the lifted values that depend on a weight and that the inference
//     function uses, in binding order.
//
// The function itself takes its first num_input parameters, then that
// shape (vars_from_compile_time_params), then one parameter per tuple
// field named after it, in that order: main(inputs, *transform(weights))
// computes what main(inputs, weights) did. Lifted bindings that depend on
// no weight (R.zeros(...)) are also computed at run time, where they stay
// (TVM keeps them to avoid storing easy-to-compute tensors); uses of
// R.builtin.stop_lift_params(x) become x.
//
// With shared_transform=true (every function with num_input) or a list of
// function names, one transform_params serves them all: their weights
// must agree in number and struct info (weight j of each is weight j of
// the first), a binding is lifted only when every function computes it
// (structurally equal once the weights are matched), and every function
// takes every output, used or not.
//
// Bindings nested in If branches stay where they are: the whole If is a
// binding outside a dataflow block, never lifted (TVM's collector visits
// them but they are never in a dataflow block either). Unlike TVM, a
// num_input outside [0, parameter count] is a positioned error. When the
// module already has the transform function (a second round), the new
// one is composed after it, as TVM does. Not ported: the consume_params
// config (vm.builtin.tuple_reset_item after each weight's read), and
// under shared_transform the propagation of symbolic variables only the
// weights define and the sharing of match_cast bindings (TVM refuses
// those).
var LiftTransformParams = passes.Define(passes.Info{
	Name:     "LiftTransformParams",
	Doc:      "split the computations on a function's weights (parameters after num_input) into <name>_transform_params; the function takes the transformed weights",
	OptLevel: 1,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it partitions the top-level bindings of each function by what they use, which assumes A-normal form",
	},
	Options: []passes.Option{
		{Name: "bundle_params", Type: passes.Bool, Default: true, Doc: "take the weights as one tuple parameter `params` (TVM's form); false: one parameter per weight"},
		{Name: "shared_transform", Type: passes.JSON, Default: false, Check: checkSharedTransform,
			Doc: "true: one transform_params for every function with num_input, computing what they all compute; a list of function names: for those; false: one <name>_transform_params each"},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	opts := env.Options()
	bundle := opts.Bool("bundle_params")
	var out *ir.Module
	var errs diag.List
	switch shared := opts.JSON("shared_transform").(type) {
	case bool:
		if shared {
			out, errs = liftSharedTargets(mod, nil, bundle)
		} else {
			out, errs = LiftTransformParamsModule(mod, bundle)
		}
	case []any:
		names := make([]string, len(shared))
		for i, n := range shared {
			names[i] = n.(string)
		}
		out, errs = liftSharedTargets(mod, names, bundle)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// Diagnostic codes of LiftTransformParams.
var (
	DiagLiftNumInput = optCodes.Define("OPT600", "a function's num_input attribute is negative or exceeds its parameter count")
	DiagLiftTaken    = optCodes.Define("OPT601", "the name of the transform_params function LiftTransformParams would add is taken")
	DiagLiftShared   = optCodes.Define("OPT602", "shared_transform functions whose weights differ in number or struct info")
	DiagLiftFunc     = optCodes.Define("OPT603", "shared_transform names a function the module does not have, or one without num_input")
)

// liftSuffix ends the name of every function LiftTransformParams makes,
// and marks functions it leaves alone.
const liftSuffix = "transform_params"

// LiftTransformParamsModule runs LiftTransformParams on mod; it returns
// mod itself when no function has a num_input attribute.
func LiftTransformParamsModule(mod *ir.Module, bundle bool) (*ir.Module, diag.List) {
	var errs diag.List
	var targets []string
	for _, name := range mod.Names() { // sorted, as TVM sorts its targets
		f := mod.Func(name)
		if f == nil || strings.HasSuffix(name, liftSuffix) {
			continue
		}
		n, ok := f.Attrs.Int(ir.AttrNumInput)
		if !ok {
			continue
		}
		if n < 0 || n > int64(len(f.Params)) {
			errs.Add(f.Span(), DiagLiftNumInput, "LiftTransformParams: %s has num_input %d but %d parameters: num_input must be in [0, %d]",
				name, n, len(f.Params), len(f.Params))
			continue
		}
		if g, taken := mod.Lookup(liftName(name)); taken {
			if _, ok := g.(*ir.Function); !ok {
				errs.Add(f.Span(), DiagLiftTaken, "LiftTransformParams: the module already has %s, not a Relax function, where lifting %s would add its transform function",
					liftName(name), name)
				continue
			}
		}
		targets = append(targets, name)
	}
	if errs.HasErrors() {
		return nil, errs
	}
	if len(targets) == 0 {
		return mod, nil
	}
	out := mod.Clone()
	for _, name := range targets {
		f := mod.Func(name)
		n, _ := f.Attrs.Int(ir.AttrNumInput)
		plan := planLift(f, int(n), nil)
		runtime, ferrs := plan.runtimeFunction(mod)
		errs = append(errs, ferrs...)
		transform, ferrs := plan.transformFunction(mod, liftName(name), bundle)
		errs = append(errs, ferrs...)
		if errs.HasErrors() {
			continue
		}
		if prev := mod.Func(liftName(name)); prev != nil {
			// An earlier round's transform function runs first (TVM's
			// ComposeFunctions): lifting is idempotent.
			transform, ferrs = composeTransforms(mod, liftName(name), prev, transform, bundle)
			if errs = append(errs, ferrs...); errs.HasErrors() {
				continue
			}
		}
		out.Set(name, runtime)
		out.Set(liftName(name), transform)
	}
	if errs.HasErrors() {
		errs.Sort()
		return nil, errs
	}
	return out, nil
}

// liftPlan is the partition of one function (TVM's LocalCollectInfo).
type liftPlan struct {
	f        *ir.Function
	numInput int
	lifted   []ir.Binding // computable from weights alone, in order
	// vars holds what is known of each var, in one ptrmap: one lookup per
	// use, in a table whose locality-keeping slots stay in cache on large
	// functions (a Go map's random ones miss on each).
	vars     ptrmap.Map[ir.Var, liftFlags]
	symsUsed map[*ir.PrimVar]bool // symbolic vars the inference function uses
	scratch  []*ir.Var            // the uses of the binding being planned
}

func (p *liftPlan) flags(v *ir.Var) liftFlags {
	f, _ := p.vars.Get(v)
	return f
}

// mark adds f to v's flags.
func (p *liftPlan) mark(v *ir.Var, f liftFlags) {
	if old, found := p.vars.GetOrSet(v, f); found && old|f != old {
		p.vars.Set(v, old|f)
	}
}

// liftFlags say what a var of the partitioned function is.
type liftFlags uint8

const (
	liftWeight    liftFlags = 1 << iota // a parameter after num_input
	liftLifted                          // bound by a lifted binding
	liftFromParam                       // a weight, or lifted and computed from one
	liftAtRuntime                       // used by the inference function
)

func (p *liftPlan) has(v *ir.Var, f liftFlags) bool { return p.flags(v)&f == f }

// planLift partitions f; allow, when set, also limits the lifted bindings
// (shared lifting lifts only what every function computes).
func planLift(f *ir.Function, numInput int, allow func(ir.Binding) bool) *liftPlan {
	p := &liftPlan{
		f: f, numInput: numInput,
		symsUsed: map[*ir.PrimVar]bool{},
	}
	// liftableSyms are the symbolic variables the weights define.
	liftableSyms := map[*ir.PrimVar]bool{}
	for _, w := range f.Params[numInput:] {
		p.vars.Set(w, liftWeight|liftFromParam)
		for _, s := range ir.DefinableSymVars(w.StructInfo()) {
			liftableSyms[s] = true
		}
	}
	useAtRuntime := func(free []*ir.Var, e ir.Expr) {
		for _, v := range free {
			p.mark(v, liftAtRuntime)
		}
		for _, s := range freeSymVars(e) {
			p.symsUsed[s] = true
		}
	}
	useSInfo := func(s ir.StructInfo) {
		if s == nil {
			return
		}
		for _, v := range ir.SymVarsInStructInfo(s) {
			p.symsUsed[v] = true
		}
	}
	seq, ok := f.Body.(*ir.SeqExpr)
	if !ok {
		useAtRuntime(appendFreeVars(nil, f.Body), f.Body)
		return p
	}
	for _, blk := range seq.Blocks {
		for _, b := range blk.Bindings {
			v, value := bindingParts(b)
			p.scratch = appendFreeVars(p.scratch[:0], value)
			free := p.scratch
			if blk.Dataflow && p.canLift(value, free, v, liftableSyms) && (allow == nil || allow(b)) {
				p.lifted = append(p.lifted, b)
				flags := liftLifted
				for _, u := range free {
					if p.has(u, liftFromParam) {
						flags |= liftFromParam
						break
					}
				}
				p.mark(v, flags)
				continue
			}
			p.mark(v, liftAtRuntime)
			useAtRuntime(free, value)
			useSInfo(v.StructInfo())
			if mc, ok := b.(*ir.MatchCast); ok {
				useSInfo(mc.SInfo)
			}
		}
	}
	useAtRuntime(appendFreeVars(nil, seq.Body), seq.Body)
	useSInfo(f.Ret)
	return p
}

// canLift is TVM's CanLiftBinding for a binding of a dataflow block whose
// value uses the vars free.
func (p *liftPlan) canLift(value ir.Expr, free []*ir.Var, v *ir.Var, liftableSyms map[*ir.PrimVar]bool) bool {
	if c, ok := value.(*ir.Call); ok {
		if o, ok := c.Op.(*ir.Op); ok && o.Name == stopLiftParams {
			return false
		}
	}
	if _, ok := value.(*ir.ExternFunc); ok {
		return false
	}
	for _, u := range free {
		if p.flags(u)&(liftWeight|liftLifted) == 0 {
			return false
		}
	}
	for _, s := range freeSymVars(value) {
		if !liftableSyms[s] {
			return false
		}
	}
	for _, s := range ir.SymVarsInStructInfo(v.StructInfo()) {
		if !liftableSyms[s] {
			return false
		}
	}
	return true
}

// stopLiftParams is the op that marks a value LiftTransformParams must
// not lift (R.builtin.stop_lift_params).
const stopLiftParams = "relax.builtin.stop_lift_params"

// outputs are the values the transform function returns after the
// optional shape: the weights used at run time, then the lifted values
// depending on a weight that are used at run time.
func (p *liftPlan) outputs() []*ir.Var {
	var out []*ir.Var
	for _, w := range p.f.Params[p.numInput:] {
		if p.has(w, liftAtRuntime) {
			out = append(out, w)
		}
	}
	for _, b := range p.lifted {
		if v := b.BoundVar(); p.has(v, liftFromParam|liftAtRuntime) {
			out = append(out, v)
		}
	}
	return out
}

// propagatedSyms are the symbolic variables the inference function uses
// that only the weights define: neither its inputs nor the outputs of
// the transform function do (TVM's GetPropagatedSymbolicVariables).
func (p *liftPlan) propagatedSyms(outputs []*ir.Var) []*ir.PrimVar {
	defined := map[*ir.PrimVar]bool{}
	for _, v := range p.f.Params[:p.numInput] {
		for _, s := range ir.DefinableSymVars(v.StructInfo()) {
			defined[s] = true
		}
	}
	for _, v := range outputs {
		for _, s := range ir.DefinableSymVars(v.StructInfo()) {
			defined[s] = true
		}
	}
	var out []*ir.PrimVar
	for _, w := range p.f.Params[p.numInput:] {
		for _, s := range ir.DefinableSymVars(w.StructInfo()) {
			if p.symsUsed[s] && !defined[s] && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// runtimeFunction is f taking the transform function's outputs in place
// of its weights, without the bindings those outputs computed.
func (p *liftPlan) runtimeFunction(mod *ir.Module) (*ir.Function, diag.List) {
	outputs := p.outputs()
	outs := make([]liftOutput, len(outputs))
	for i, v := range outputs {
		outs[i] = liftOutput{local: v, like: v}
	}
	return p.runtimeFunctionFor(mod, outs, p.propagatedSyms(outputs))
}

// liftOutput is a field of the transform function's result as the
// inference function receives it: like names it and gives its struct
// info; local is the var it replaces there (nil: the function does not
// use it, as with another function's value under shared_transform).
type liftOutput struct{ local, like *ir.Var }

// runtimeFunctionFor is runtimeFunction taking outs (after the shape of
// syms, when there are any) as its parameters after the inputs.
func (p *liftPlan) runtimeFunctionFor(mod *ir.Module, outs []liftOutput, syms []*ir.PrimVar) (*ir.Function, diag.List) {
	params := slices.Clone(p.f.Params[:p.numInput])
	if len(syms) > 0 {
		vals := make([]ir.PrimExpr, len(syms))
		for i, s := range syms {
			vals[i] = s
		}
		params = append(params, ir.NewVar("vars_from_compile_time_params", ir.ShapeInfoOf(vals...)))
	}
	var subst ptrmap.Map[ir.Var, *ir.Var] // ptrmaps: one lookup per use (see liftPlan.vars)
	for _, o := range outs {
		np := ir.NewVar(o.like.Name, o.like.StructInfo())
		np.SetSpan(o.like.Span())
		if o.local != nil {
			subst.Set(o.local, np)
		}
		params = append(params, np)
	}
	m := &ir.Mutator{
		PostExpr: func(e ir.Expr) ir.Expr {
			switch e := e.(type) {
			case *ir.Var:
				if np, ok := subst.Get(e); ok {
					return np
				}
			case *ir.Call:
				if o, ok := e.Op.(*ir.Op); ok && o.Name == stopLiftParams && len(e.Args) == 1 {
					return e.Args[0]
				}
			}
			return e
		},
		Binding: func(b ir.Binding) ir.Binding {
			if p.has(b.BoundVar(), liftLifted|liftFromParam) {
				return nil
			}
			return b
		},
	}
	body := m.Expr(p.f.Body)
	nf := &ir.Function{Params: params, Body: body, Ret: p.f.Ret, Pure: p.f.Pure, Attrs: p.f.Attrs}
	nf.SetSpan(p.f.Span())
	out, errs := ir.NormalizeFunction(mod, nf)
	if errs.HasErrors() {
		return nil, errs
	}
	return out, nil
}

// transformFunction is the function computing the outputs from the
// weights, named name.
func (p *liftPlan) transformFunction(mod *ir.Module, name string, bundle bool) (*ir.Function, diag.List) {
	outputs := p.outputs()
	// Fresh vars throughout: no var is defined in two functions.
	var fresh ptrmap.Map[ir.Var, *ir.Var]
	weights := p.f.Params[p.numInput:]
	params := make([]*ir.Var, len(weights))
	for i, w := range weights {
		params[i] = ir.NewVar(w.Name, w.StructInfo())
		params[i].SetSpan(w.Span())
		fresh.Set(w, params[i])
	}
	copier := &ir.Mutator{
		DefVar: func(v *ir.Var) *ir.Var {
			if nv, ok := fresh.Get(v); ok {
				return nv
			}
			nv := ir.NewVar(v.Name, v.StructInfo())
			nv.Dataflow = v.Dataflow
			nv.SetSpan(v.Span())
			fresh.Set(v, nv)
			return nv
		},
		PostExpr: func(e ir.Expr) ir.Expr {
			if v, ok := e.(*ir.Var); ok {
				if nv, ok := fresh.Get(v); ok {
					return nv
				}
			}
			return e
		},
	}
	var binds []ir.Binding
	if bundle {
		// The weights are fields of one tuple parameter: each is read
		// from it once, before the bindings.
		infos := make([]ir.StructInfo, len(weights))
		for i, w := range weights {
			infos[i] = w.StructInfo()
		}
		tuple := ir.NewVar("params", ir.NewTupleInfo(infos...))
		for i, w := range params {
			get := &ir.TupleGetItem{Tuple: tuple, Index: i}
			binds = append(binds, ir.NewVarBinding(w, get))
			w.Dataflow = true
		}
		params = []*ir.Var{tuple}
	}
	for _, b := range p.lifted {
		binds = append(binds, copier.Bind(b))
	}
	var fields []ir.Expr
	if syms := p.propagatedSyms(outputs); len(syms) > 0 {
		vals := make([]ir.PrimExpr, len(syms))
		for i, s := range syms {
			vals[i] = s
		}
		fields = append(fields, ir.NewShapeExpr(vals...))
	}
	for _, v := range outputs {
		nv, _ := fresh.Get(v)
		fields = append(fields, nv)
	}
	result := ir.NewVar("output_tuple", nil)
	binds = append(binds, ir.NewVarBinding(result, ir.NewTuple(fields...)))
	body := &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: binds, Dataflow: true}}, Body: result}
	attrs := ir.Attrs{}.With(ir.AttrNumInput, int64(0)).With(ir.AttrGlobalSymbol, name)
	nf := &ir.Function{Params: params, Body: body, Pure: true, Attrs: attrs}
	nf.SetSpan(p.f.Span())
	out, errs := ir.NormalizeFunction(mod, nf)
	if errs.HasErrors() {
		return nil, errs
	}
	// As TVM: tuples built and read back collapse (CanonicalizeBindings),
	// and weights read from the tuple but not used, and lifted values
	// nothing returned needs, go (RemoveAllUnused).
	out, errs = canonicalizeFunction(mod, out)
	if errs.HasErrors() {
		return nil, errs
	}
	return removeAllUnused(mod, out), nil
}

// liftName names the transform function of function name.
func liftName(name string) string { return fmt.Sprintf("%s_%s", name, liftSuffix) }

// composeTransforms is first followed by second: a function of first's
// parameters whose result is second's on first's result (TVM's
// ComposeFunctions). second's parameters are bound to first's result by
// match_cast, which also defines the symbolic variables they name.
func composeTransforms(mod *ir.Module, name string, first, second *ir.Function, bundle bool) (*ir.Function, diag.List) {
	var errs diag.List
	s1, ok1 := first.Body.(*ir.SeqExpr)
	s2, ok2 := second.Body.(*ir.SeqExpr)
	var res *ir.TupleInfo
	if ok1 {
		res, _ = s1.Body.StructInfo().(*ir.TupleInfo)
	}
	if !first.Pure {
		// A lazy transform (LazyTransformParams) hands its outputs to
		// callbacks and returns nothing; the composition would read its
		// empty result as the weights and call impure callbacks from a pure
		// function.
		errs.Add(first.Span(), DiagLiftTaken, "LiftTransformParams: the module's %s is impure (a lazy transform handing its outputs to callbacks); it cannot be composed with the new transform function: lift before LazyTransformParams", name)
		return nil, errs
	}
	if !ok1 || !ok2 || res == nil {
		errs.Add(first.Span(), DiagLiftTaken, "LiftTransformParams: the module's %s does not return a tuple of weights; it cannot be composed with the new transform function", name)
		return nil, errs
	}
	var binds []ir.Binding
	switch {
	case bundle:
		// The bundled form: second's one tuple parameter is first's result.
		p := second.Params[0]
		if pt, ok := p.StructInfo().(*ir.TupleInfo); ok && len(pt.Fields) != len(res.Fields) {
			errs.Add(first.Span(), DiagLiftTaken, "LiftTransformParams: the module's %s returns %d values where the new transform function takes %d weights; they cannot be composed",
				name, len(res.Fields), len(pt.Fields))
			return nil, errs
		}
		binds = append(binds, ir.NewMatchCast(p, s1.Body, p.StructInfo()))
	case len(second.Params) == len(res.Fields):
		// A-normal form: match_cast takes a var or a leaf, so each field is
		// projected into a var of its own first (or taken from a tuple literal).
		for i, p := range second.Params {
			var field ir.Expr
			if t, ok := s1.Body.(*ir.Tuple); ok {
				field = t.Fields[i]
			} else {
				item := ir.NewVar(p.Name, res.Fields[i])
				binds = append(binds, ir.NewVarBinding(item, &ir.TupleGetItem{Tuple: s1.Body, Index: i}))
				field = item
			}
			binds = append(binds, ir.NewMatchCast(p, field, p.StructInfo()))
		}
	default:
		errs.Add(first.Span(), DiagLiftTaken, "LiftTransformParams: the module's %s returns %d values where the new transform function takes %d parameters; they cannot be composed",
			name, len(res.Fields), len(second.Params))
		return nil, errs
	}
	blocks := slices.Clone(s1.Blocks)
	blocks = append(blocks, &ir.BindingBlock{Bindings: binds})
	blocks = append(blocks, s2.Blocks...)
	body := &ir.SeqExpr{Blocks: blocks, Body: s2.Body}
	nf := &ir.Function{Params: first.Params, Body: body, Pure: true, Attrs: second.Attrs}
	nf.SetSpan(first.Span())
	out, errs := ir.NormalizeFunction(mod, nf)
	if errs.HasErrors() {
		return nil, errs
	}
	if out, errs = canonicalizeFunction(mod, out); errs.HasErrors() {
		return nil, errs
	}
	return removeAllUnused(mod, out), nil
}

// sharedBinding is one computation every shared function performs on the
// weights (TVM's unified binding): its value in terms of the first
// function's weights and of other groups' vars, and each function's
// binding of it.
type sharedBinding struct {
	v       *ir.Var
	value   ir.Expr
	members map[int]*ir.Var // function index -> its var
}

// liftShared is shared_transform: one transform_params for the functions
// names, computing what all of them compute on their weights.
func liftShared(mod *ir.Module, names []string, bundle bool) (*ir.Module, diag.List) {
	var errs diag.List
	fs := make([]*ir.Function, len(names))
	ns := make([]int, len(names))
	for i, name := range names {
		fs[i] = mod.Func(name)
		n, _ := fs[i].Attrs.Int(ir.AttrNumInput)
		ns[i] = int(n)
	}
	weights0 := fs[0].Params[ns[0]:]
	// Weight j of every function is weight j of the first.
	varRemap := map[*ir.Var]ir.Expr{}
	symRemap := map[*ir.PrimVar]ir.PrimExpr{}
	for i := 1; i < len(fs); i++ {
		w := fs[i].Params[ns[i]:]
		if len(w) != len(weights0) {
			errs.Add(fs[i].Span(), DiagLiftShared, "LiftTransformParams: shared_transform: %s has %d weights, %s has %d",
				names[i], len(w), names[0], len(weights0))
			continue
		}
		for j, p := range w {
			q := weights0[j]
			if !ir.StructuralEqual(p.StructInfo(), q.StructInfo(), ir.EqualOptions{MapFreeVars: true}) {
				errs.Add(p.Span(), DiagLiftShared, "LiftTransformParams: shared_transform: weight %d of %s (%s) is %s, in %s (%s) it is %s",
					j, names[i], p.Name, p.StructInfo(), names[0], q.Name, q.StructInfo())
				continue
			}
			varRemap[p] = q
			ds, d0 := ir.DefinableSymVars(p.StructInfo()), ir.DefinableSymVars(q.StructInfo())
			for k := range min(len(ds), len(d0)) {
				symRemap[ds[k]] = d0[k]
			}
		}
	}
	if errs.HasErrors() {
		return nil, errs
	}
	// Unify the liftable bindings across the functions, in order of first
	// appearance.
	var groups []*sharedBinding
	byHash := map[uint64][]*sharedBinding{}
	memberOf := map[*ir.Var]*sharedBinding{}
	for i, f := range fs {
		for _, b := range planLift(f, ns[i], nil).lifted {
			vb, ok := b.(*ir.VarBinding)
			if !ok {
				continue // TVM refuses match_cast in shared lifting; it stays
			}
			value := ir.SubstituteSymVarsInExpr(ir.Bind(vb.Value, varRemap), symRemap)
			h := ir.StructuralHash(value)
			var g *sharedBinding
			for _, c := range byHash[h] {
				if ir.StructuralEqual(c.value, value, ir.EqualOptions{}) {
					g = c
					break
				}
			}
			if g == nil {
				g = &sharedBinding{v: vb.Var, value: value, members: map[int]*ir.Var{}}
				groups = append(groups, g)
				byHash[h] = append(byHash[h], g)
			}
			if _, dup := g.members[i]; !dup {
				g.members[i] = vb.Var
				memberOf[vb.Var] = g
			}
			varRemap[vb.Var] = g.v
		}
	}
	shared := func(g *sharedBinding) bool { return len(g.members) == len(fs) }
	// Each function lifts its shared bindings only.
	plans := make([]*liftPlan, len(fs))
	for i, f := range fs {
		plans[i] = planLift(f, ns[i], func(b ir.Binding) bool {
			g := memberOf[b.BoundVar()]
			return g != nil && shared(g) && g.members[i] == b.BoundVar()
		})
	}
	// The shared plan: the first function's inputs and weights, the
	// shared bindings, and what any function needs at run time.
	sp := &liftPlan{f: fs[0], numInput: ns[0], symsUsed: map[*ir.PrimVar]bool{}}
	for _, w := range weights0 {
		sp.vars.Set(w, liftWeight|liftFromParam)
	}
	for _, g := range groups {
		if !shared(g) {
			continue
		}
		sp.lifted = append(sp.lifted, ir.NewVarBinding(g.v, g.value))
		flags := liftLifted
		for i, v := range g.members {
			flags |= plans[i].flags(v) & liftFromParam
		}
		sp.mark(g.v, flags)
	}
	for i, p := range plans {
		for j, w := range fs[i].Params[ns[i]:] {
			if p.has(w, liftAtRuntime) {
				sp.mark(weights0[j], liftAtRuntime)
			}
		}
		for _, g := range groups {
			if v, ok := g.members[i]; ok && shared(g) && p.has(v, liftAtRuntime) {
				sp.mark(g.v, liftAtRuntime)
			}
		}
	}
	outputs := sp.outputs()
	out := mod.Clone()
	for i, p := range plans {
		outs := make([]liftOutput, len(outputs))
		for k, o := range outputs {
			outs[k] = liftOutput{like: o}
			if j := slices.Index(weights0, o); j >= 0 {
				outs[k].local = fs[i].Params[ns[i]+j]
			} else if g := memberOf[o]; g != nil {
				outs[k].local = g.members[i]
			}
		}
		nf, ferrs := p.runtimeFunctionFor(mod, outs, nil)
		if errs = append(errs, ferrs...); ferrs.HasErrors() {
			continue
		}
		out.Set(names[i], nf)
	}
	transform, ferrs := sp.transformFunction(mod, liftSuffix, bundle)
	if errs = append(errs, ferrs...); errs.HasErrors() {
		errs.Sort()
		return nil, errs
	}
	if prev := mod.Func(liftSuffix); prev != nil {
		if transform, ferrs = composeTransforms(mod, liftSuffix, prev, transform, bundle); ferrs.HasErrors() {
			return nil, ferrs
		}
	}
	out.Set(liftSuffix, transform)
	return out, nil
}

// checkSharedTransform accepts what TVM's shared_transform does: a bool
// or a list of function names.
func checkSharedTransform(v any) error {
	switch v := v.(type) {
	case bool:
		return nil
	case []any:
		for _, n := range v {
			if _, ok := n.(string); !ok {
				return fmt.Errorf("want true, false or a list of function names, found %v in the list", n)
			}
		}
		return nil
	}
	return fmt.Errorf("want true, false or a list of function names, got %v", v)
}

// liftSharedTargets lifts the functions names (all with num_input, not
// transform functions themselves, when names is empty) into one shared
// transform_params.
func liftSharedTargets(mod *ir.Module, names []string, bundle bool) (*ir.Module, diag.List) {
	var errs diag.List
	if len(names) == 0 {
		for _, name := range mod.Names() {
			if f := mod.Func(name); f != nil && !strings.HasSuffix(name, liftSuffix) {
				if _, ok := f.Attrs.Int(ir.AttrNumInput); ok {
					names = append(names, name)
				}
			}
		}
		if len(names) == 0 {
			return mod, nil
		}
	}
	for _, name := range names {
		f := mod.Func(name)
		if f == nil {
			errs.Add(diag.Span{}, DiagLiftFunc, "LiftTransformParams: shared_transform names %q, which is not a Relax function of the module (functions: %s)",
				name, strings.Join(relaxFunctionNames(mod), ", "))
			continue
		}
		n, ok := f.Attrs.Int(ir.AttrNumInput)
		if !ok {
			errs.Add(f.Span(), DiagLiftFunc, "LiftTransformParams: shared_transform names %s, which has no num_input attribute to tell its weights", name)
			continue
		}
		if n < 0 || n > int64(len(f.Params)) {
			errs.Add(f.Span(), DiagLiftNumInput, "LiftTransformParams: %s has num_input %d but %d parameters: num_input must be in [0, %d]",
				name, n, len(f.Params), len(f.Params))
		}
	}
	if errs.HasErrors() {
		return nil, errs
	}
	return liftShared(mod, names, bundle)
}
