package transform

import (
	"fmt"
	"os"
	"slices"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/transform/dpl"
)

// PatternMatchingRewriter is TVM's PatternMatchingRewriter.from_module
// (python/tvm/relax/dpl/rewrite.py, src/relax/ir/dataflow_expr_rewriter.cc)
// as a pass: the TVMScript module of file holds two public Relax
// functions of one signature, pattern and replacement, and wherever a
// function of the module computes what pattern computes, it computes what
// replacement computes instead.
//
//	PatternMatchingRewriter{file="rules.tvms"}
//
// The pattern is read off pattern's bindings: each parameter is a
// wildcard (one per parameter: a parameter used twice matches one
// expression twice) whose match must have the parameter's struct info,
// symbolic dimensions bound consistently across the match; each call
// matches a call of the same op (or function, or extern symbol) on
// arguments matching its own; tuples and tuple-get-items match theirs;
// the result is the root, matched against each binding's value with
// operands followed through the block's bindings (transform/dpl). A match
// is replaced by replacement's bindings, with fresh vars, its parameters
// bound to what the wildcards matched and its symbolic dimensions to the
// matched ones. Then, as TVM, bindings are canonicalized, common
// subexpressions eliminated and unused bindings removed, and the sweep
// repeats until nothing changes, so replacements that expose new matches
// are rewritten too. The file's private functions are subroutines the
// replacement may call: they are added to the module when a rewrite uses
// them (renamed on a clash with a different function of the module).
//
// Differences from TVM: a call matches only a call with the same
// attributes and sinfo_args (TVM's call patterns ignore attributes, so a
// pattern R.sum(A, axis=[1]) would also rewrite R.sum(x, axis=[0])), and
// constants, shapes and other literals of the pattern match equal ones
// (TVM cannot make patterns of constants or shapes). As TVM's matcher, an
// add or multiply also matches with its operands swapped. Not supported:
// implicit tuples (a pattern whose result is a tuple of values bound
// separately, TVM's TupleRewriter), TVM's reassociation of multiply and
// divide, composition of rewriters (run the pass once per file), and
// fusion groups (Primitive functions are left alone, as the other
// rewrites here).
var PatternMatchingRewriter = passes.Define(passes.Info{
	Name:     "PatternMatchingRewriter",
	Doc:      "rewrite what the pattern function of a TVMScript file computes into what its replacement function computes (TVM's PatternMatchingRewriter.from_module)",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it matches the bindings of A-normal form, following operands through the variables bound to them, and reads struct info",
	},
	// A replacement may hold high-level ops, which LegalizeOps must lower
	// again when the module was legalized.
	Invalidates: phase.Of(phase.Legalized),
	Options: []passes.Option{
		{Name: "file", Type: passes.String, Default: "", Doc: "a TVMScript module with public Relax functions pattern and replacement (and private subroutines)"},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	rule, err := loadRewriteRule(mod, env.Options().String("file"))
	if err != nil {
		return nil, err
	}
	return rule.apply(mod)
}))

// Codes of PatternMatchingRewriter.
var (
	codeRewriterFile   = optCodes.Define("OPT760", "PatternMatchingRewriter: the rule file cannot be read, or lacks a pattern or replacement Relax function")
	codeRewriterSig    = optCodes.Define("OPT761", "PatternMatchingRewriter: pattern and replacement do not have the same signature")
	codeRewriterPublic = optCodes.Define("OPT762", "PatternMatchingRewriter: the rule file has a public function other than pattern and replacement")
	codeRewriterForm   = optCodes.Define("OPT763", "PatternMatchingRewriter: the pattern holds a binding no pattern can be made of")
)

// rewriteRule is a rule file read: the pattern and what the rewrite emits.
type rewriteRule struct {
	file        string
	root        dpl.Pattern
	params      []*dpl.WildcardPattern // the wildcard of each pattern parameter
	pattern     *ir.Function
	replacement *ir.Function
	// subroutines are the file's private functions by name.
	subroutines map[string]ir.BaseFunc
	order       []string
}

// loadRewriteRule reads and checks the rule file (TVM's FromModule).
func loadRewriteRule(mod *ir.Module, file string) (*rewriteRule, error) {
	var errs diag.List
	at := diag.Span{File: file, Line: 1, Col: 1}
	if file == "" {
		errs.Add(moduleSpan(mod), codeRewriterFile, `PatternMatchingRewriter needs file="rules.tvms": a TVMScript module with pattern and replacement functions`)
		return nil, errs
	}
	src, err := os.ReadFile(file)
	if err != nil {
		errs.Add(moduleSpan(mod), codeRewriterFile, "cannot read the rule file: %v", err)
		return nil, errs
	}
	lib, perrs := syntax.Parse(file, src)
	if perrs.HasErrors() {
		return nil, perrs
	}
	r := &rewriteRule{file: file, subroutines: map[string]ir.BaseFunc{}}
	fn := func(name string) *ir.Function {
		bf, ok := lib.Lookup(name)
		if !ok {
			errs.Add(at, codeRewriterFile, "%s has no function %s (a rule file defines pattern and replacement, two Relax functions of one signature)", file, name)
			return nil
		}
		f, ok := bf.(*ir.Function)
		if !ok {
			errs.Add(at, codeRewriterFile, "%s of %s must be a Relax function (@R.function), not a %T", name, file, bf)
			return nil
		}
		return f
	}
	r.pattern, r.replacement = fn("pattern"), fn("replacement")
	for _, name := range lib.Names() {
		if name == "pattern" || name == "replacement" {
			continue
		}
		bf, _ := lib.Lookup(name)
		if ir.IsPublic(bf) {
			errs.Add(at, codeRewriterPublic, "%s defines public function %s: a rule file's other functions must be private (@R.function(private=True)), subroutines the replacement calls", file, name)
			continue
		}
		r.subroutines[name] = bf
		r.order = append(r.order, name)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if ps, rs := r.pattern.StructInfo(), r.replacement.StructInfo(); !ir.StructuralEqual(ps, rs, ir.EqualOptions{MapFreeVars: true}) {
		errs.Add(r.replacement.Span(), codeRewriterSig, "pattern and replacement must have the same signature: pattern is %s, replacement is %s", ps, rs)
		return nil, errs
	}
	r.root = r.makePattern(&errs)
	if len(errs) > 0 {
		return nil, errs
	}
	return r, nil
}

// makePattern builds the dpl pattern of r.pattern's bindings.
func (r *rewriteRule) makePattern(errs *diag.List) dpl.Pattern {
	of := map[*ir.Var]dpl.Pattern{}
	for _, p := range r.pattern.Params {
		w := dpl.Wildcard()
		r.params = append(r.params, w)
		// Each parameter's struct info is checked while matching, so that
		// a commuted alternative is tried when it fails; instantiate
		// checks the symbolic dimensions across parameters.
		want := p.StructInfo()
		of[p] = dpl.Where(w, "struct_info", func(x ir.Expr) bool {
			got := x.StructInfo()
			return got != nil && matchStructInfo(want, got, map[*ir.PrimVar]ir.PrimExpr{})
		})
	}
	// Values are in normal form: build recurses through one value's
	// nesting (tuple arguments), not along the function.
	var build func(e ir.Expr, span diag.Span) dpl.Pattern
	build = func(e ir.Expr, span diag.Span) dpl.Pattern {
		switch e := e.(type) {
		case *ir.Var:
			if p, ok := of[e]; ok {
				return p
			}
			errs.Add(span, codeRewriterForm, "the pattern reads %s, which is neither a parameter nor bound before", e.Name)
			return nil
		case *ir.Call:
			args := make([]dpl.Pattern, len(e.Args))
			for i, a := range e.Args {
				if args[i] = build(a, span); args[i] == nil {
					return nil
				}
			}
			head := &ir.Call{Op: e.Op, Attrs: e.Attrs, SInfoArgs: e.SInfoArgs}
			sameHead := func(x ir.Expr) bool {
				c, ok := x.(*ir.Call)
				return ok && ir.StructuralEqual(head, &ir.Call{Op: c.Op, Attrs: c.Attrs, SInfoArgs: c.SInfoArgs}, ir.EqualOptions{MapFreeVars: true})
			}
			call := dpl.Where(&dpl.CallPattern{Args: args}, "same_callee", sameHead)
			if (e.Op == op.Add || e.Op == op.Multiply) && len(args) == 2 {
				// TVM's matcher takes add and multiply either way round.
				swapped := dpl.Where(&dpl.CallPattern{Args: []dpl.Pattern{args[1], args[0]}}, "same_callee", sameHead)
				return dpl.Or(call, swapped)
			}
			return call
		case *ir.Tuple:
			fields := make([]dpl.Pattern, len(e.Fields))
			for i, f := range e.Fields {
				if fields[i] = build(f, span); fields[i] == nil {
					return nil
				}
			}
			return dpl.IsTuple(fields...)
		case *ir.TupleGetItem:
			t := build(e.Tuple, span)
			if t == nil {
				return nil
			}
			return dpl.IsTupleGetItem(t, e.Index)
		case *ir.Constant, *ir.ShapeExpr, *ir.PrimValue, *ir.StringImm, *ir.DataTypeImm, *ir.ExternFunc, *ir.GlobalVar:
			lit := e
			return dpl.Where(dpl.Wildcard(), "equal", func(x ir.Expr) bool {
				return ir.StructuralEqual(lit, x, ir.EqualOptions{MapFreeVars: true})
			})
		}
		errs.Add(span, codeRewriterForm, "a pattern cannot match a %T (only calls, tuples, tuple items, parameters and literals)", e)
		return nil
	}
	seq, ok := r.pattern.Body.(*ir.SeqExpr)
	if !ok {
		seq = &ir.SeqExpr{Body: r.pattern.Body}
	}
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			vb, ok := bind.(*ir.VarBinding)
			if !ok {
				errs.Add(bind.Span(), codeRewriterForm, "the pattern binds %s by %T; only plain bindings make patterns", bindingVar(bind).Name, bind)
				return nil
			}
			p := build(vb.Value, vb.Span())
			if p == nil {
				return nil
			}
			of[vb.Var] = p
		}
	}
	root := build(seq.Body, r.pattern.Span())
	if v, ok := seq.Body.(*ir.Var); ok && slices.Contains(r.pattern.Params, v) {
		errs.Add(r.pattern.Span(), codeRewriterForm, "the pattern returns a parameter, which would match every expression; it must compute something")
		return nil
	}
	return root
}

// apply runs the rule on every Relax function of mod. The file's
// subroutines are in the module the rewrites are built in (the calls the
// replacement makes resolve there), renamed where mod has a different
// function of the name, and stay in the result when a rewrite happened.
func (r *rewriteRule) apply(mod *ir.Module) (*ir.Module, error) {
	rename := map[string]string{}
	for _, name := range r.order {
		rename[name] = name
		if prev, ok := mod.Lookup(name); ok && !ir.StructuralEqual(prev, r.subroutines[name], ir.EqualOptions{}) {
			rename[name] = freshGlobalName(mod, name)
		}
	}
	work := mod
	if len(r.order) > 0 {
		work = mod.Clone()
		for _, name := range r.order {
			work.Set(rename[name], renameGlobals(work, r.subroutines[name], rename))
		}
	}
	out := mod.Clone()
	changed := false
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil || skipRewrite(f) {
			continue
		}
		nf, errs := rewriteEmitting(work, f, r.root, func(b *ir.Builder, expr ir.Expr, m dpl.Match) ir.Expr {
			return r.instantiate(b, expr, m, rename)
		})
		if err := errs.Err(); err != nil {
			return nil, err
		}
		if nf != f {
			out.Set(name, nf)
			changed = true
		}
	}
	if !changed {
		return mod, nil
	}
	for _, name := range r.order {
		sub, _ := work.Lookup(rename[name])
		out.Set(rename[name], sub)
	}
	return out, nil
}

// renameGlobals is f with its references to the renamed subroutines
// following them (PrimFuncs reference none).
func renameGlobals(mod *ir.Module, f ir.BaseFunc, rename map[string]string) ir.BaseFunc {
	rf, ok := f.(*ir.Function)
	if !ok {
		return f
	}
	rw := ir.NewRewriter(mod)
	rw.PostExpr = func(_ *ir.Rewriter, e ir.Expr) ir.Expr { return renamedGlobal(e, rename) }
	return rw.Function(rf)
}

// renamedGlobal is e, or the global a renamed subroutine took.
func renamedGlobal(e ir.Expr, rename map[string]string) ir.Expr {
	if gv, ok := e.(*ir.GlobalVar); ok {
		if to, ok := rename[gv.Name]; ok && to != gv.Name {
			return ir.NewGlobalVar(to)
		}
	}
	return e
}

// freshGlobalName is name with the first numeric suffix mod does not use.
func freshGlobalName(mod *ir.Module, name string) string {
	for i := 1; ; i++ {
		n := fmt.Sprintf("%s%d", name, i)
		if _, taken := mod.Lookup(n); !taken {
			return n
		}
	}
}

// instantiate emits replacement for a match of expr, returning what the
// binding becomes; expr itself when a parameter's struct info does not
// match (the rewrite does not apply).
func (r *rewriteRule) instantiate(b *ir.Builder, expr ir.Expr, m dpl.Match, rename map[string]string) ir.Expr {
	args := make([]ir.Expr, len(r.params))
	patSyms := map[*ir.PrimVar]ir.PrimExpr{}
	repSyms := map[*ir.PrimVar]ir.PrimExpr{}
	for i, w := range r.params {
		args[i] = m[w]
		got := args[i].StructInfo()
		if got == nil || !matchStructInfo(r.pattern.Params[i].StructInfo(), got, patSyms) ||
			!matchStructInfo(r.replacement.Params[i].StructInfo(), got, repSyms) {
			return expr
		}
	}
	repl := r.replacement
	if len(repSyms) > 0 {
		if f, ok := ir.SubstituteSymVarsInExpr(repl, repSyms).(*ir.Function); ok {
			repl = f
		}
	}
	sub := &ir.Rewriter{B: b}
	for i, p := range repl.Params {
		sub.Remap(p, args[i])
	}
	sub.PostExpr = func(_ *ir.Rewriter, e ir.Expr) ir.Expr { return renamedGlobal(e, rename) }
	seq, ok := repl.Body.(*ir.SeqExpr)
	if !ok {
		return sub.Expr(repl.Body)
	}
	// The binding of the result itself becomes the rewritten binding's
	// value, so the rewritten var keeps its name (as TVM's cleanup leaves
	// it).
	var last *ir.VarBinding
	if n := len(seq.Blocks); n > 0 {
		if bs := seq.Blocks[n-1].Bindings; len(bs) > 0 {
			if vb, ok := bs[len(bs)-1].(*ir.VarBinding); ok && vb.Var == seq.Body {
				last = vb
			}
		}
	}
	for _, blk := range seq.Blocks {
		for _, bind := range blk.Bindings {
			if bind == last {
				return sub.Expr(last.Value)
			}
			switch bd := bind.(type) {
			case *ir.VarBinding:
				sub.Remap(bd.Var, b.Emit(sub.Expr(bd.Value), bd.Var.Name))
			case *ir.MatchCast:
				sub.Remap(bd.Var, b.EmitMatchCast(sub.Expr(bd.Value), bd.SInfo, bd.Var.Name))
			}
		}
	}
	return sub.Expr(seq.Body)
}

// matchStructInfo reports whether got has the struct info want declares
// (TVM's StructInfoPattern): dtypes and ranks equal where want states
// them, constant dimensions equal, and each symbolic variable of want
// bound to one dimension of got throughout (syms holds the bindings).
func matchStructInfo(want, got ir.StructInfo, syms map[*ir.PrimVar]ir.PrimExpr) bool {
	dim := func(w, g ir.PrimExpr) bool {
		if v, ok := w.(*ir.PrimVar); ok {
			if prev, bound := syms[v]; bound {
				return ir.StructuralEqual(prev, g, ir.EqualOptions{})
			}
			syms[v] = g
			return true
		}
		return ir.StructuralEqual(ir.SubstitutePrim(w, syms), g, ir.EqualOptions{})
	}
	switch w := want.(type) {
	case nil, *ir.ObjectInfo, *ir.FuncInfo:
		return true
	case *ir.TensorInfo:
		g, ok := got.(*ir.TensorInfo)
		if !ok || (!w.DType.IsVoid() && w.DType != g.DType) || (w.NDim >= 0 && w.NDim != g.NDim) {
			return false
		}
		wd, ok := w.Dims()
		if !ok {
			return true
		}
		gd, ok := g.Dims()
		if !ok || len(gd) != len(wd) {
			return false
		}
		for i := range wd {
			if !dim(wd[i], gd[i]) {
				return false
			}
		}
		return true
	case *ir.ShapeInfo:
		g, ok := got.(*ir.ShapeInfo)
		if !ok || (w.NDim >= 0 && w.NDim != g.NDim) {
			return false
		}
		if w.Values == nil {
			return true
		}
		if len(g.Values) != len(w.Values) {
			return false
		}
		for i := range w.Values {
			if !dim(w.Values[i], g.Values[i]) {
				return false
			}
		}
		return true
	case *ir.PrimInfo:
		g, ok := got.(*ir.PrimInfo)
		if !ok || (!w.DType.IsVoid() && w.DType != g.DType) {
			return false
		}
		return w.Value == nil || (g.Value != nil && dim(w.Value, g.Value))
	case *ir.TupleInfo:
		g, ok := got.(*ir.TupleInfo)
		if !ok || len(g.Fields) != len(w.Fields) {
			return false
		}
		for i := range w.Fields {
			if !matchStructInfo(w.Fields[i], g.Fields[i], syms) {
				return false
			}
		}
		return true
	}
	return ir.StructuralEqual(want, got, ir.EqualOptions{})
}
