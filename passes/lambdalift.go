package passes

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/phase"
)

// LambdaLift is TVM's src/relax/transform/lambda_lift.cc (see
// LiftLocalFunctions).
var LambdaLift = Define(Info{
	Name:     "LambdaLift",
	Doc:      "lift local functions to module-level functions, captured values becoming trailing parameters bound by make_closure",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized: "it finds local functions as binding values, which only A-normal form guarantees",
	},
	Establishes: phase.Of(phase.NoNestedFunctions),
}, Module(func(_ *Env, mod *ir.Module) (*ir.Module, error) {
	out, errs := LiftLocalFunctions(mod)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// LiftLocalFunctions lifts every local function of mod into a new module-level
// function, innermost first, and returns the new module (mod itself when
// it has no local function) with the normalizer's diagnostics.
//
// Names: the first free one of the local function's own global_symbol,
// "<outer>_<local>" (outer is the top-level function, local the binding
// var), the full path of binding vars joined with "_", and that path with
// a numeric suffix from _0, as TVM names them. Lifted functions are private unless the local function
// had a global_symbol.
//
// Capture: the Relax variables a local function uses but does not define
// (except its own binding var, for recursion, and local functions already
// lifted without captures, which became globals) are appended as trailing
// parameters, in order of first use, led by an R.Shape parameter binding
// the symbolic variables their struct info uses where no parameter defines
// them (symbolic variables do not cross function boundaries). With captures the binding becomes
// R.make_closure(gv, (captured...)) and every call through the closure
// variable R.invoke_closure(var, (args...), sinfo_args=(ret,)), or
// R.invoke_pure_closure when the local function was pure; a recursive call
// inside the function calls gv directly, passing the captured values on.
// Without captures the binding disappears and every use of the variable
// refers to the global function.
func LiftLocalFunctions(mod *ir.Module) (*ir.Module, diag.List) {
	l := &lifter{
		out:     mod.Clone(),
		taken:   map[string]bool{},
		global:  map[*ir.Var]*ir.GlobalVar{},
		closure: map[*ir.Var]bool{},
		rename:  map[*ir.Var]*ir.Var{},
		subst:   map[*ir.Var]*ir.Var{},
	}
	for _, name := range mod.Names() {
		l.taken[name] = true
	}
	var changed []string
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		body := l.scope(f.Body, []string{name})
		if body == f.Body {
			continue
		}
		nf := *f
		nf.Body = body
		l.out.Set(name, &nf)
		changed = append(changed, name)
	}
	if len(l.lifted) == 0 {
		return mod, nil
	}
	// Lifted functions first (innermost first), so callers see their
	// normalized signatures.
	var errs diag.List
	for _, name := range append(l.lifted, changed...) {
		nf, ds := ir.NormalizeFunction(l.out, l.out.Func(name))
		errs = append(errs, ds...)
		if nf != nil {
			l.out.Set(name, nf)
		}
	}
	return l.out, errs.Dedup()
}

type lifter struct {
	out   *ir.Module
	taken map[string]bool
	// global maps the binding var of a local function lifted without
	// captures to its GlobalVar.
	global map[*ir.Var]*ir.GlobalVar
	// closure marks vars holding a closure (the make_closure result, and
	// parameters that capture one); the value is the callee's purity.
	closure map[*ir.Var]bool
	// rename maps the binding var of a capturing local function to the
	// var bound to its make_closure.
	rename map[*ir.Var]*ir.Var
	// subst maps captured vars to the lifted function's parameters while
	// its body is rewritten.
	subst  map[*ir.Var]*ir.Var
	selves []self
	lifted []string
}

// self is the capturing local function whose body is being rewritten.
type self struct {
	v      *ir.Var
	gv     *ir.GlobalVar
	params []*ir.Var
}

func (l *lifter) top() *self {
	if len(l.selves) == 0 {
		return nil
	}
	return &l.selves[len(l.selves)-1]
}

// scope rewrites a function body or If branch (a SeqExpr once
// normalized); it returns e itself when nothing changed.
func (l *lifter) scope(e ir.Expr, path []string) ir.Expr {
	seq, ok := e.(*ir.SeqExpr)
	if !ok {
		return l.expr(e, path)
	}
	changed := false
	blocks := make([]*ir.BindingBlock, 0, len(seq.Blocks))
	for _, blk := range seq.Blocks {
		var binds []ir.Binding
		bchanged := false
		for _, bind := range blk.Bindings {
			nb := l.binding(bind, path)
			if nb != bind {
				bchanged = true
			}
			if nb != nil {
				binds = append(binds, nb)
			}
		}
		if !bchanged {
			blocks = append(blocks, blk)
			continue
		}
		changed = true
		nblk := &ir.BindingBlock{Bindings: binds, Dataflow: blk.Dataflow}
		nblk.SetSpan(blk.Span())
		blocks = append(blocks, nblk)
	}
	body := l.expr(seq.Body, path)
	if !changed && body == seq.Body {
		return seq
	}
	out := &ir.SeqExpr{Blocks: blocks, Body: body}
	out.SetSpan(seq.Span())
	return out
}

// binding rewrites one binding; nil drops it.
func (l *lifter) binding(bind ir.Binding, path []string) ir.Binding {
	switch b := bind.(type) {
	case *ir.VarBinding:
		if fn, ok := b.Value.(*ir.Function); ok {
			return l.liftLocal(b.Var, fn, path, b.Span())
		}
		v := l.expr(b.Value, path)
		if v == b.Value {
			return b
		}
		nb := ir.NewVarBinding(b.Var, v)
		nb.SetSpan(b.Span())
		return nb
	case *ir.MatchCast:
		v := l.expr(b.Value, path)
		if v == b.Value {
			return b
		}
		nb := ir.NewMatchCast(b.Var, v, b.SInfo)
		nb.SetSpan(b.Span())
		return nb
	}
	return bind
}

// liftLocal lifts the local function fn bound to v and returns the binding
// that replaces the definition (nil without captures).
func (l *lifter) liftLocal(v *ir.Var, fn *ir.Function, path []string, span diag.Span) ir.Binding {
	name := l.name(path, v.Name, fn)
	gv := ir.NewGlobalVar(name)
	caps := l.freeVars(fn, v)
	params := make([]*ir.Var, len(caps))
	saved := make([]*ir.Var, len(caps))
	for i, c := range caps {
		p := ir.NewVar(c.Name, c.StructInfo())
		p.SetSpan(c.Span())
		params[i] = p
		saved[i] = l.subst[c]
		l.subst[c] = p
		if pure, ok := l.closure[c]; ok {
			l.closure[p] = pure
		}
	}
	// Symbolic variables do not cross function boundaries: those the
	// captured parameters' struct info uses where no parameter defines
	// them (n in R.Tensor((n + 1,))) are passed in a leading R.Shape
	// capture, which defines them.
	var symCapture ir.Expr
	if missing := undefinedSymVars(append(slices.Clip(fn.Params), params...)); len(missing) > 0 {
		dims := make([]ir.PrimExpr, len(missing))
		for i, m := range missing {
			dims[i] = m
		}
		sp := ir.NewVar("shape", ir.ShapeInfoOf(dims...))
		sp.SetSpan(fn.Span())
		params = append([]*ir.Var{sp}, params...)
		symCapture = ir.NewShapeExpr(dims...)
	}
	if len(caps) == 0 {
		l.global[v] = gv
	} else {
		l.selves = append(l.selves, self{v: v, gv: gv, params: params})
		// Marked before the body is rewritten: a local function nested
		// in this one may capture v and must invoke it as a closure.
		l.closure[v] = fn.Pure
	}
	body := l.scope(fn.Body, append(slices.Clip(path), v.Name))
	if len(caps) > 0 {
		l.selves = l.selves[:len(l.selves)-1]
	}
	for i, c := range caps {
		if saved[i] == nil {
			delete(l.subst, c)
		} else {
			l.subst[c] = saved[i]
		}
	}
	attrs := fn.Attrs
	if s, ok := attrs.String(ir.AttrGlobalSymbol); ok && s != name {
		attrs = attrs.Without(ir.AttrGlobalSymbol)
	}
	lifted := &ir.Function{
		Params: append(slices.Clip(fn.Params), params...),
		Body:   body, Ret: fn.Ret, Pure: fn.Pure, Attrs: attrs,
	}
	lifted.SetSpan(fn.Span())
	l.out.Set(name, lifted)
	l.lifted = append(l.lifted, name)
	if len(caps) == 0 {
		return nil
	}
	var captured []ir.Expr
	if symCapture != nil {
		captured = append(captured, symCapture)
	}
	for _, c := range caps {
		captured = append(captured, l.expr(c, path))
	}
	mk := ir.NewCall(op.MakeClosure, gv, ir.NewTuple(captured...))
	mk.SetSpan(span)
	cv := ir.NewVar(v.Name, nil)
	cv.SetSpan(v.Span())
	l.rename[v] = cv
	l.closure[cv] = fn.Pure
	nb := ir.NewVarBinding(cv, mk)
	nb.SetSpan(span)
	return nb
}

// name picks the lifted function's name (see LambdaLift).
func (l *lifter) name(path []string, local string, fn *ir.Function) string {
	full := strings.Join(append(slices.Clip(path), local), "_")
	var cands []string
	if s, ok := fn.Attrs.String(ir.AttrGlobalSymbol); ok {
		cands = append(cands, s)
	}
	cands = append(cands, path[0]+"_"+local, full)
	for _, c := range cands {
		if !l.taken[c] {
			l.taken[c] = true
			return c
		}
	}
	// TVM's last resort appends a counter from 0 (src/relax/transform/
	// lambda_lift.cc, LambdaNameCollector).
	for i := 0; ; i++ {
		if c := fmt.Sprintf("%s_%d", full, i); !l.taken[c] {
			l.taken[c] = true
			return c
		}
	}
}

// freeVars lists, in order of first use, the Relax vars fn uses without
// defining them, except selfVar and local functions lifted to globals.
func (l *lifter) freeVars(fn *ir.Function, selfVar *ir.Var) []*ir.Var {
	defined := map[*ir.Var]bool{}
	seen := map[*ir.Var]bool{}
	var uses []*ir.Var
	ir.Walk(fn, &ir.Visitor{
		DefVar: func(v *ir.Var) { defined[v] = true },
		Expr: func(e ir.Expr) bool {
			if v, ok := e.(*ir.Var); ok && !seen[v] {
				seen[v] = true
				uses = append(uses, v)
			}
			return true
		},
	})
	var free []*ir.Var
	for _, v := range uses {
		if !defined[v] && v != selfVar && l.global[v] == nil {
			free = append(free, v)
		}
	}
	return free
}

// variable returns what a use of v becomes.
func (l *lifter) variable(v *ir.Var) ir.Expr {
	if p, ok := l.subst[v]; ok {
		return p
	}
	if s := l.top(); s != nil && v == s.v {
		// The capturing function used as a value inside itself.
		return ir.NewCall(op.MakeClosure, s.gv, ir.NewTuple(varsToExprs(s.params)...))
	}
	if r, ok := l.rename[v]; ok {
		return r
	}
	if gv, ok := l.global[v]; ok {
		return gv
	}
	return v
}

func varsToExprs(vs []*ir.Var) []ir.Expr {
	out := make([]ir.Expr, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// expr rewrites an expression; recursion follows expression nesting.
func (l *lifter) expr(e ir.Expr, path []string) ir.Expr {
	switch e := e.(type) {
	case *ir.Var:
		return l.variable(e)
	case *ir.Tuple:
		fields, ch := l.exprs(e.Fields, path)
		if !ch {
			return e
		}
		n := ir.NewTuple(fields...)
		n.SetSpan(e.Span())
		return n
	case *ir.TupleGetItem:
		t := l.expr(e.Tuple, path)
		if t == e.Tuple {
			return e
		}
		n := &ir.TupleGetItem{Tuple: t, Index: e.Index}
		n.SetSpan(e.Span())
		return n
	case *ir.Call:
		args, ch := l.exprs(e.Args, path)
		if v, ok := e.Op.(*ir.Var); ok {
			if _, captured := l.subst[v]; !captured {
				if s := l.top(); s != nil && v == s.v {
					// Recursion: call the lifted function directly.
					n := &ir.Call{Op: s.gv, Args: append(slices.Clip(args), varsToExprs(s.params)...), Attrs: e.Attrs, SInfoArgs: e.SInfoArgs}
					n.SetSpan(e.Span())
					return n
				}
			}
			callee := l.variable(v)
			if cv, ok := callee.(*ir.Var); ok {
				if pure, isClosure := l.closure[cv]; isClosure {
					inv := op.InvokeClosure
					if pure {
						inv = op.InvokePureClosure
					}
					var ret []ir.StructInfo
					if s := e.StructInfo(); s != nil {
						ret = []ir.StructInfo{s}
					} else if fi, ok := v.StructInfo().(*ir.FuncInfo); ok && fi.Ret != nil {
						ret = []ir.StructInfo{fi.Ret}
					}
					n := &ir.Call{Op: inv, Args: []ir.Expr{cv, ir.NewTuple(args...)}, SInfoArgs: ret}
					n.SetSpan(e.Span())
					return n
				}
			}
			if callee != ir.Expr(v) || ch {
				n := &ir.Call{Op: callee, Args: args, Attrs: e.Attrs, SInfoArgs: e.SInfoArgs}
				n.SetSpan(e.Span())
				return n
			}
			return e
		}
		op := l.expr(e.Op, path)
		if op == e.Op && !ch {
			return e
		}
		n := &ir.Call{Op: op, Args: args, Attrs: e.Attrs, SInfoArgs: e.SInfoArgs}
		n.SetSpan(e.Span())
		return n
	case *ir.If:
		c := l.expr(e.Cond, path)
		t := l.scope(e.Then, path)
		f := l.scope(e.Else, path)
		if c == e.Cond && t == e.Then && f == e.Else {
			return e
		}
		n := &ir.If{Cond: c, Then: t, Else: f}
		n.SetSpan(e.Span())
		return n
	case *ir.SeqExpr:
		return l.scope(e, path)
	case *ir.Function:
		// A function outside a binding (not normalized input): lift it
		// under the name "lambda".
		v := ir.NewVar("lambda", e.StructInfo())
		if nb := l.liftLocal(v, e, path, e.Span()); nb != nil {
			return nb.(*ir.VarBinding).Value
		}
		return l.global[v]
	}
	return e
}

func (l *lifter) exprs(in []ir.Expr, path []string) ([]ir.Expr, bool) {
	var out []ir.Expr
	for i, e := range in {
		n := l.expr(e, path)
		if n != e && out == nil {
			out = make([]ir.Expr, len(in))
			copy(out, in[:i])
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

// undefinedSymVars lists, in order of first use, the symbolic variables
// the struct info of params uses before (or without) a parameter defining
// them, visiting the parameters in order as the checker does: a bare
// variable in a shape position defines it, any other use needs it defined.
// A callable's parameter annotations define variables for its own return
// info only.
func undefinedSymVars(params []*ir.Var) []*ir.PrimVar {
	defined := map[*ir.PrimVar]bool{}
	missing := map[*ir.PrimVar]bool{}
	var out []*ir.PrimVar
	dim := func(e ir.PrimExpr, def bool) {
		if v, ok := e.(*ir.PrimVar); ok && def {
			defined[v] = true
			return
		}
		for _, v := range ir.PrimVarsIn(e) {
			if !defined[v] && !missing[v] {
				missing[v] = true
				out = append(out, v)
			}
		}
	}
	var walk func(s ir.StructInfo, def bool)
	walk = func(s ir.StructInfo, def bool) {
		switch s := s.(type) {
		case *ir.PrimInfo:
			if s.Value != nil {
				dim(s.Value, def)
			}
		case *ir.ShapeInfo:
			for _, d := range s.Values {
				dim(d, def)
			}
		case *ir.TensorInfo:
			if sh, ok := s.Shape.(*ir.ShapeExpr); ok {
				for _, d := range sh.Values {
					dim(d, def)
				}
			}
		case *ir.TupleInfo:
			for _, f := range s.Fields {
				walk(f, def)
			}
		case *ir.FuncInfo:
			saved := maps.Clone(defined)
			if !s.Opaque {
				for _, p := range s.Params {
					walk(p, true)
				}
			}
			walk(s.Ret, false)
			defined = saved
		}
	}
	for _, p := range params {
		walk(p.StructInfo(), true)
	}
	return out
}
