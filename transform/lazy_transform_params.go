package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// The lazy passes make a weight-transforming function (what
// LiftTransformParams produces) fetch its weights and hand over its
// results one at a time, through callbacks, so that neither all input
// weights nor all outputs need to be in memory at once.
//
//   - LazyTransformParams is TVM's python/tvm/relax/transform/
//     lazy_transform_params.py: the callbacks are packed functions named
//     by the options, called with R.call_packed: get_item(i) returns
//     weight i, set_item(i, value) receives output i.
//   - LazyGetInput and LazySetOutput are TVM's src/relax/transform/
//     lazy_transform_params.cc: the callbacks are parameters of the
//     function (fget_param(i, name), fset_output(i, value)).
//
// The VM runs the first kind with Go packed functions registered under
// those names (vm.RegisterBuiltin); the evaluator runs both kinds (its
// packed functions, eval.Machine.Register, and eval.PackedRef values
// passed as the callback arguments).

// LazyTransformParams is TVM's LazyTransformParams (see above). It
// rewrites the functions whose name ends in "transform_params". Their
// weights, the parameters after num_input (0 when absent), are fetched
// where first used: a single tuple parameter is read with get_item(i) at
// each params[i] binding; separate parameters each with get_item(i) before
// the first binding that uses them, bound by R.match_cast to their
// declared struct info. The function must return a tuple (literal, or a
// var bound to one): each field i is passed to set_item(i, value) right
// after the last binding that uses it (or defines it), a field that is not
// a variable at the end, and the function returns R.tuple(). The function
// becomes impure and its dataflow blocks plain ones (TVM asks for
// ToNonDataflow first; here the pass does it). With fset_item="" the
// outputs are returned as before.
//
// Not ported: TVM's extra_get_item_params / extra_set_item_params (Relax
// vars given from Python), and its R.vm.kill_object after a weight's last
// use (a VM-level op phasec admits only at Build; phasec's VM releases a
// register's value when the register is overwritten). Unlike TVM, a
// function whose result is not a tuple, or that uses its tuple parameter
// other than through params[i], is a positioned error.
var LazyTransformParams = passes.Define(passes.Info{
	Name:     "LazyTransformParams",
	Doc:      "make *transform_params functions fetch each weight with R.call_packed(get_item, i) and hand each output to R.call_packed(set_item, i, value)",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it places the callbacks between the top-level bindings, assuming A-normal form",
	},
	Options: []passes.Option{
		{Name: "fget_item", Type: passes.String, Default: "get_item", Doc: "the packed function returning weight i (TVM's fget_item)", Check: nonEmptyName},
		{Name: "fset_item", Type: passes.String, Default: "set_item", Doc: `the packed function receiving output i; "" leaves the outputs returned (TVM's fset_item=None)`},
	},
}, passes.Functions(func(env *passes.Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error) {
	if !strings.HasSuffix(name, liftSuffix) {
		return f, nil
	}
	opts := env.Options()
	out, errs := lazyTransformParams(mod, name, f, opts.String("fget_item"), opts.String("fset_item"))
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// LazyGetInput is TVM's LazyGetInput (see above). It rewrites the public
// functions whose name ends in transform_params (every public function,
// as TVM, with every_public_function=true: the default keeps it from
// changing the signature of a model's main): each one's
// weights (the parameters after num_input, all of them when it has none)
// are replaced by one parameter fget_param: R.Callable([R.Prim("int64"),
// R.Object], R.Object) after the inputs, and each weight is fetched with
// fget_param(R.prim_value(i), R.str(name)) before the first top-level
// binding that uses it, bound by R.match_cast to its declared struct info.
// num_input becomes the inputs plus one; the return annotation forgets
// the symbolic variables only the weights defined. TVM emits a fetch at
// every use and merges them with EliminateCommonSubexpr; one fetch at the
// first use is what that leaves when the uses are in one block.
var LazyGetInput = passes.Define(passes.Info{
	Name:     "LazyGetInput",
	Doc:      "replace the weights of public functions by a parameter fget_param(i, name) that the function calls to fetch each one",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it places the fetches between the top-level bindings, assuming A-normal form",
	},
	Options: []passes.Option{everyPublicFunction},
}, passes.Functions(onPublicFunctions(lazyGetInput)))

// LazySetOutput is TVM's LazySetOutput (see above). It rewrites the public
// functions whose name ends in transform_params (every public function,
// as TVM, with every_public_function=true); each one gets a parameter fset_output: R.Callable([R.Prim("int64"), R.Object],
// R.Tuple([]), purity=False), after its inputs when it has num_input (which
// grows by one), else last, and hands each output to it instead of
// returning it: the fields of a tuple literal result, or the result itself
// as output 0. A parameter output is handed over first thing, a bound
// variable right after its binding, anything else at the end; the function
// returns R.tuple() and becomes impure, its dataflow blocks plain ones (an
// impure call cannot be in a dataflow block; TVM emits it there).
var LazySetOutput = passes.Define(passes.Info{
	Name:     "LazySetOutput",
	Doc:      "make public functions hand each output to a parameter fset_output(i, value) as soon as it is computed, returning R.tuple()",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it places the callbacks after the bindings of the outputs, assuming A-normal form",
	},
	Options: []passes.Option{everyPublicFunction},
}, passes.Functions(onPublicFunctions(lazySetOutput)))

// everyPublicFunction is the option of LazyGetInput and LazySetOutput.
var everyPublicFunction = passes.Option{Name: "every_public_function", Type: passes.Bool, Default: false,
	Doc: "rewrite every public function, as TVM does; false (the default): only those whose name ends in transform_params, what LiftTransformParams makes"}

// onPublicFunctions applies rewrite to the public functions the
// every_public_function option selects.
func onPublicFunctions(rewrite func(*ir.Module, string, *ir.Function) (*ir.Function, diag.List)) func(*passes.Env, *ir.Module, string, *ir.Function) (*ir.Function, error) {
	return func(env *passes.Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error) {
		if !ir.IsPublic(f) || !(env.Options().Bool("every_public_function") || strings.HasSuffix(name, liftSuffix)) {
			return f, nil
		}
		out, errs := rewrite(mod, name, f)
		if err := errs.Err(); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// Diagnostic codes of the lazy passes.
var (
	DiagLazyNumInput = optCodes.Define("OPT610", "a lazy pass met a num_input outside the function's parameter count")
	DiagLazyShape    = optCodes.Define("OPT611", "LazyTransformParams cannot rewrite the function: it does not return a tuple, or uses its tuple of weights other than by params[i]")
)

func nonEmptyName(v any) error {
	if v.(string) == "" {
		return errEmptyName
	}
	return nil
}

var errEmptyName = lazyError("the name of a packed function must not be empty")

type lazyError string

func (e lazyError) Error() string { return string(e) }

// lazyNumInput returns f's num_input (def when it has none), or an error
// at f when it is out of range.
func lazyNumInput(name string, f *ir.Function, def int) (int, bool, diag.List) {
	n, ok := f.Attrs.Int(ir.AttrNumInput)
	if !ok {
		return def, false, nil
	}
	if n < 0 || n > int64(len(f.Params)) {
		var errs diag.List
		errs.Add(f.Span(), DiagLazyNumInput, "%s has num_input %d but %d parameters: num_input must be in [0, %d]",
			name, n, len(f.Params), len(f.Params))
		return 0, true, errs
	}
	return int(n), true, nil
}

// plainFunction is f with every dataflow block plain and every dataflow
// var a plain var (ToNonDataflow), so that impure calls may go anywhere.
func plainFunction(f *ir.Function) *ir.Function {
	m := &ir.Mutator{
		KeepStructInfo: true,
		DefVar: func(v *ir.Var) *ir.Var {
			if !v.Dataflow {
				return v
			}
			n := ir.NewVar(v.Name, v.StructInfo())
			n.SetSpan(v.Span())
			return n
		},
		PostExpr: func(e ir.Expr) ir.Expr {
			seq, ok := e.(*ir.SeqExpr)
			if !ok {
				return e
			}
			var binds []ir.Binding
			changed := false
			for _, b := range seq.Blocks {
				changed = changed || b.Dataflow
				binds = append(binds, b.Bindings...)
			}
			if !changed {
				return seq
			}
			var blocks []*ir.BindingBlock
			if len(binds) > 0 {
				blocks = []*ir.BindingBlock{{Bindings: binds}}
			}
			return withBlocks(seq, blocks)
		},
	}
	return m.Function(f)
}

// topBindings are the bindings of f's body's blocks, in order.
func topBindings(f *ir.Function) (*ir.SeqExpr, []ir.Binding) {
	seq, ok := f.Body.(*ir.SeqExpr)
	if !ok {
		return nil, nil
	}
	var binds []ir.Binding
	for _, b := range seq.Blocks {
		binds = append(binds, b.Bindings...)
	}
	return seq, binds
}

// packedCall is R.call_packed(name, args..., sinfo_args=(R.Object,)).
func packedCall(name string, args ...ir.Expr) *ir.Call {
	c := ir.NewCall(op.CallPacked, append([]ir.Expr{ir.NewExternFunc(name)}, args...)...)
	c.SInfoArgs = []ir.StructInfo{ir.Object()}
	return c
}

func indexValue(i int) *ir.PrimValue { return ir.NewPrimValue(ir.I64(int64(i))) }

// fetchInto binds v (a former parameter) to fetch's result, cast to v's
// struct info.
func fetchInto(v *ir.Var, fetch ir.Expr) []ir.Binding {
	untyped := ir.NewVar(v.Name+"_untyped", nil)
	return []ir.Binding{
		ir.NewVarBinding(untyped, fetch),
		ir.NewMatchCast(v, untyped, v.StructInfo()),
	}
}

func lazyTransformParams(mod *ir.Module, name string, f *ir.Function, fget, fset string) (*ir.Function, diag.List) {
	n, _, errs := lazyNumInput(name, f, 0)
	if errs.HasErrors() {
		return nil, errs
	}
	f = plainFunction(f)
	seq, binds := topBindings(f)
	if seq == nil {
		return f, nil
	}
	weights := f.Params[n:]
	var tupleParam *ir.Var
	// The per-var tables below are ptrmaps and slices indexed by binding:
	// a Go map keyed by vars misses the cache on every access at 100k
	// bindings, a ptrmap's locality-keeping slots mostly do not.
	var weightIndex ptrmap.Map[ir.Var, int]
	if len(weights) == 1 {
		if _, ok := weights[0].StructInfo().(*ir.TupleInfo); ok {
			tupleParam = weights[0]
		}
	}
	if tupleParam == nil {
		weightIndex.Reserve(len(weights))
		for i, w := range weights {
			weightIndex.Set(w, i)
		}
	}

	// The outputs: fields of the result tuple, found through the binding
	// of the result var when there is one.
	var fields []ir.Expr
	var outBinding ir.Binding
	switch r := seq.Body.(type) {
	case *ir.Tuple:
		fields = r.Fields
	case *ir.Var:
		for _, b := range binds {
			if vb, ok := b.(*ir.VarBinding); ok && vb.Var == r {
				if t, ok := vb.Value.(*ir.Tuple); ok {
					fields, outBinding = t.Fields, b
				}
			}
		}
	}
	// A result that is the weights' tuple itself (an identity transform)
	// or another tuple-valued var: each field is handed over at the end.
	var identity []ir.Binding
	if rt, ok := seq.Body.StructInfo().(*ir.TupleInfo); ok && fields == nil && fset != "" {
		for i := range rt.Fields {
			if seq.Body == tupleParam {
				v := ir.NewVar(fmt.Sprintf("%s_%d", tupleParam.Name, i), rt.Fields[i])
				identity = append(identity, fetchInto(v, packedCall(fget, indexValue(i)))...)
				fields = append(fields, v)
			} else {
				fields = append(fields, &ir.TupleGetItem{Tuple: seq.Body, Index: i})
			}
		}
	}
	if fset != "" && fields == nil {
		errs.Add(f.Span(), DiagLazyShape, "%s returns %s, not a tuple: the outputs cannot be handed to %s(i, value)",
			name, seq.Body.StructInfo(), fset)
		return nil, errs
	}

	// last[v] is the index of the last binding using v (outputs are
	// handed over after it); a binding defining v counts as a use.
	var last ptrmap.Map[ir.Var, int]
	last.Reserve(len(binds) + len(f.Params))
	var free []*ir.Var
	for i, b := range binds {
		if b == outBinding {
			continue
		}
		v, value := bindingParts(b)
		last.Set(v, i)
		free = appendFreeVars(free[:0], value)
		for _, u := range free {
			last.Set(u, i)
		}
	}
	var outIndex ptrmap.Map[ir.Var, []int]
	var leafOutputs []int
	if fset != "" {
		for i, e := range fields {
			if v, ok := e.(*ir.Var); ok {
				is, _ := outIndex.Get(v)
				outIndex.Set(v, append(is, i))
			} else {
				leafOutputs = append(leafOutputs, i)
			}
		}
	}
	// handAt[i] lists the outputs handed over after binding i; -1 (at
	// the start) holds none, as every output needs a binding or fetch.
	handAt := make([][]*ir.Var, len(binds))
	var handAtEnd []*ir.Var
	for _, e := range fields {
		v, ok := e.(*ir.Var)
		if !ok || fset == "" {
			continue
		}
		if i, ok := last.Get(v); ok {
			if !containsVar(handAt[i], v) {
				handAt[i] = append(handAt[i], v)
			}
		} else if !containsVar(handAtEnd, v) {
			handAtEnd = append(handAtEnd, v)
		}
	}

	var out []ir.Binding
	var fetched ptrmap.Map[ir.Var, struct{}]
	fetch := func(v *ir.Var) {
		if i, ok := weightIndex.Get(v); ok {
			if _, done := fetched.GetOrSet(v, struct{}{}); !done {
				out = append(out, fetchInto(v, packedCall(fget, indexValue(i)))...)
			}
		}
	}
	hand := func(v *ir.Var) {
		fetch(v)
		is, _ := outIndex.Get(v)
		for _, i := range is {
			out = append(out, ir.NewVarBinding(ir.NewVar("_", nil), packedCall(fset, indexValue(i), v)))
		}
	}
	// A weight whose struct info is the only definition of a symbolic
	// variable (params: R.Tuple(..., R.Shape(["k"])) with k used in the
	// body) is fetched first, whether or not it is read: its match_cast
	// defines the variable before any use.
	defined := map[*ir.PrimVar]bool{}
	for _, p := range f.Params[:n] {
		for _, sv := range ir.DefinableSymVars(p.StructInfo()) {
			defined[sv] = true
		}
	}
	early := map[int]*ir.Var{} // tuple field -> the var fetched first
	definesNew := func(si ir.StructInfo) bool {
		fresh := false
		for _, sv := range ir.DefinableSymVars(si) {
			if !defined[sv] {
				defined[sv], fresh = true, true
			}
		}
		return fresh
	}
	if tupleParam != nil {
		fields := tupleParam.StructInfo().(*ir.TupleInfo).Fields
		readers := firstReaders(binds, tupleParam, len(fields))
		for i, fi := range fields {
			if definesNew(fi) {
				v := readers[i] // the weight's own name when read
				if v == nil {
					v = ir.NewVar(fmt.Sprintf("%s_%d", tupleParam.Name, i), fi)
				}
				out = append(out, fetchInto(v, packedCall(fget, indexValue(i)))...)
				early[i] = v
			}
		}
	} else {
		for _, w := range weights {
			if definesNew(w.StructInfo()) {
				fetch(w)
			}
		}
	}
	for i, b := range binds {
		if b == outBinding && fset != "" {
			continue
		}
		v, value := bindingParts(b)
		free = appendFreeVars(free[:0], value)
		if tupleParam != nil && slices.Contains(free, tupleParam) {
			get, ok := value.(*ir.TupleGetItem)
			if !ok || get.Tuple != tupleParam {
				errs.Add(b.Span(), DiagLazyShape, "%s uses its weights %s other than by %s[i]: only reads of one weight can be fetched lazily",
					name, tupleParam.Name, tupleParam.Name)
				continue
			}
			if ev, ok := early[get.Index]; ok {
				if ev != v {
					out = append(out, ir.NewVarBinding(v, ev))
				}
			} else {
				out = append(out, fetchInto(v, packedCall(fget, indexValue(get.Index)))...)
			}
		} else {
			for _, w := range weightsIn(free, &weightIndex) { // parameter order
				fetch(w)
			}
			out = append(out, b)
		}
		for _, h := range handAt[i] {
			hand(h)
		}
	}
	if errs.HasErrors() {
		return nil, errs
	}
	out = append(out, identity...)
	for _, h := range handAtEnd {
		hand(h)
	}
	result := seq.Body
	if fset != "" {
		for _, i := range leafOutputs {
			out = append(out, ir.NewVarBinding(ir.NewVar("_", nil), packedCall(fset, indexValue(i), fields[i])))
		}
		result = ir.NewTuple()
	} else {
		for _, w := range weightsIn(appendFreeVars(nil, result), &weightIndex) {
			fetch(w)
		}
	}
	body := &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: out}}, Body: result}
	nf := &ir.Function{Params: f.Params[:n:n], Body: body, Pure: false, Attrs: f.Attrs.Without(ir.AttrForcePure)}
	if fset == "" {
		nf.Ret = f.Ret
	}
	nf.SetSpan(f.Span())
	return ir.NormalizeFunction(mod, nf)
}

// firstReaders returns, for each of tuple's n fields, the var of the first
// binding among binds that reads it (nil when none does): one scan, not
// one per field.
func firstReaders(binds []ir.Binding, tuple *ir.Var, n int) []*ir.Var {
	readers := make([]*ir.Var, n)
	for _, b := range binds {
		if vb, ok := b.(*ir.VarBinding); ok {
			if get, ok := vb.Value.(*ir.TupleGetItem); ok && get.Tuple == tuple && get.Index >= 0 && get.Index < n && readers[get.Index] == nil {
				readers[get.Index] = vb.Var
			}
		}
	}
	return readers
}

func containsVar(vs []*ir.Var, v *ir.Var) bool {
	for _, w := range vs {
		if w == v {
			return true
		}
	}
	return false
}

func lazyGetInput(mod *ir.Module, name string, f *ir.Function) (*ir.Function, diag.List) {
	n, _, errs := lazyNumInput(name, f, 0)
	if errs.HasErrors() {
		return nil, errs
	}
	seq, _ := f.Body.(*ir.SeqExpr)
	if seq == nil {
		return f, nil
	}
	fget := ir.NewVar("fget_param", ir.NewFuncInfo([]ir.StructInfo{ir.NewPrimInfo(ir.Int64), ir.Object()}, ir.Object(), true))
	var weightIndex ptrmap.Map[ir.Var, int] // a ptrmap, as in lazyTransformParams
	weightIndex.Reserve(len(f.Params) - n)
	for i, w := range f.Params[n:] {
		weightIndex.Set(w, i)
	}
	// fetched maps each weight fetched so far to the var it was fetched
	// into (a dataflow var inside a dataflow block, as TVM's builder
	// emits it).
	var fetched ptrmap.Map[ir.Var, *ir.Var]
	// A weight used in more than one block is fetched into a plain var:
	// a dataflow var would not be visible after its block.
	type blockUse struct {
		first int  // the first block using the weight
		many  bool // another block uses it too
	}
	var useBlocks ptrmap.Map[ir.Var, blockUse]
	var free []*ir.Var
	use := func(e ir.Expr, blk int) {
		free = appendFreeVars(free[:0], e)
		for _, w := range weightsIn(free, &weightIndex) {
			if u, seen := useBlocks.GetOrSet(w, blockUse{first: blk}); seen && u.first != blk && !u.many {
				useBlocks.Set(w, blockUse{first: u.first, many: true})
			}
		}
	}
	for i, blk := range seq.Blocks {
		for _, b := range blk.Bindings {
			_, value := bindingParts(b)
			use(value, i)
		}
	}
	use(seq.Body, -1)
	fetches := func(e ir.Expr, dataflow bool) []ir.Binding {
		var out []ir.Binding
		free = appendFreeVars(free[:0], e)
		for _, w := range weightsIn(free, &weightIndex) { // parameter order
			if _, ok := fetched.Get(w); ok {
				continue
			}
			v := ir.NewVar(w.Name, w.StructInfo())
			v.SetSpan(w.Span())
			u, _ := useBlocks.Get(w)
			v.Dataflow = dataflow && !u.many
			fetched.Set(w, v)
			i, _ := weightIndex.Get(w)
			call := ir.NewCall(fget, indexValue(i), ir.NewStringImm(w.Name))
			bs := fetchInto(v, call)
			bs[0].(*ir.VarBinding).Var.Dataflow = dataflow
			out = append(out, bs...)
		}
		return out
	}
	blocks := make([]*ir.BindingBlock, 0, len(seq.Blocks)+1)
	for _, blk := range seq.Blocks {
		binds := make([]ir.Binding, 0, len(blk.Bindings))
		for _, b := range blk.Bindings {
			_, value := bindingParts(b)
			binds = append(binds, fetches(value, blk.Dataflow)...)
			binds = append(binds, b)
		}
		blocks = append(blocks, &ir.BindingBlock{Bindings: binds, Dataflow: blk.Dataflow})
	}
	if tail := fetches(seq.Body, false); len(tail) > 0 {
		blocks = append(blocks, &ir.BindingBlock{Bindings: tail})
	}
	params := append(append([]*ir.Var{}, f.Params[:n]...), fget)
	// The return annotation keeps only what the new parameters define.
	inScope := map[*ir.PrimVar]bool{}
	for _, p := range params {
		for _, s := range ir.DefinableSymVars(p.StructInfo()) {
			inScope[s] = true
		}
	}
	var ret ir.StructInfo
	if f.Ret != nil {
		ret = ir.EraseToWellDefined(f.Ret, func(v *ir.PrimVar) bool { return inScope[v] }, func(*ir.Var) bool { return false })
	}
	var body ir.Expr = &ir.SeqExpr{Blocks: blocks, Body: seq.Body}
	body = (&ir.Mutator{PostExpr: func(e ir.Expr) ir.Expr {
		if v, ok := e.(*ir.Var); ok {
			if fv, ok := fetched.Get(v); ok {
				return fv
			}
		}
		return e
	}}).Expr(body)
	nf := &ir.Function{Params: params, Body: body, Ret: ret, Pure: f.Pure, Attrs: f.Attrs.With(ir.AttrNumInput, int64(n+1))}
	nf.SetSpan(f.Span())
	out, errs := ir.NormalizeFunction(mod, nf)
	if errs.HasErrors() {
		return nil, errs
	}
	return removeAllUnused(mod, out), nil
}

func lazySetOutput(mod *ir.Module, name string, f *ir.Function) (*ir.Function, diag.List) {
	n, hasNumInput, errs := lazyNumInput(name, f, len(f.Params))
	if errs.HasErrors() {
		return nil, errs
	}
	f = plainFunction(f)
	seq, binds := topBindings(f)
	if seq == nil {
		return f, nil
	}
	fset := ir.NewVar("fset_output", ir.NewFuncInfo([]ir.StructInfo{ir.NewPrimInfo(ir.Int64), ir.Object()}, ir.VoidInfo(), false))
	var fields []ir.Expr
	if t, ok := seq.Body.(*ir.Tuple); ok {
		fields = t.Fields
	} else {
		fields = []ir.Expr{seq.Body}
	}
	var outIndex ptrmap.Map[ir.Var, []int] // a ptrmap, as in lazyTransformParams
	var leaves []int
	for i, e := range fields {
		if v, ok := e.(*ir.Var); ok {
			is, _ := outIndex.Get(v)
			outIndex.Set(v, append(is, i))
		} else {
			leaves = append(leaves, i)
		}
	}
	set := func(i int, value ir.Expr) ir.Binding {
		return ir.NewVarBinding(ir.NewVar("_void", nil), ir.NewCall(fset, indexValue(i), value))
	}
	var out []ir.Binding
	for _, p := range f.Params {
		is, _ := outIndex.Get(p)
		for _, i := range is {
			out = append(out, set(i, p))
		}
	}
	for _, b := range binds {
		out = append(out, b)
		v := b.BoundVar()
		is, _ := outIndex.Get(v)
		for _, i := range is {
			out = append(out, set(i, v))
		}
	}
	for _, i := range leaves {
		out = append(out, set(i, fields[i]))
	}
	params := make([]*ir.Var, 0, len(f.Params)+1)
	params = append(append(append(params, f.Params[:n]...), fset), f.Params[n:]...)
	attrs := f.Attrs
	if hasNumInput {
		attrs = attrs.With(ir.AttrNumInput, int64(n+1))
	}
	body := &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: out}}, Body: ir.NewTuple()}
	nf := &ir.Function{Params: params, Body: body, Pure: false, Attrs: attrs.Without(ir.AttrForcePure)}
	nf.SetSpan(f.Span())
	return ir.NormalizeFunction(mod, nf)
}

// weightsIn returns the weights among free in parameter order: the cost
// is that of free, not of the parameter list (a binding uses few of
// possibly many weights).
func weightsIn(free []*ir.Var, index *ptrmap.Map[ir.Var, int]) []*ir.Var {
	type weight struct {
		v *ir.Var
		i int
	}
	var ws []weight
	for _, v := range free {
		if i, ok := index.Get(v); ok {
			ws = append(ws, weight{v, i})
		}
	}
	slices.SortFunc(ws, func(a, b weight) int { return a.i - b.i })
	var out []*ir.Var
	for k, w := range ws {
		if k == 0 || w.v != ws[k-1].v {
			out = append(out, w.v)
		}
	}
	return out
}
