package transform

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/transform/dpl"
)

// Attributes of the offload passes, spelt as TVM writes them
// (include/tvm/relax/expr.h, attr::kComposite, kCodegen).
const (
	// AttrComposite names the pattern a lifted function matched
	// ("phasec_blas.matmul_bias"); the part before the first dot is the
	// codegen that takes it.
	AttrComposite = "Composite"
	// AttrCodegen names the external codegen that compiles a function.
	AttrCodegen = "Codegen"
)

// Codes of the offload passes (FuseOpsByPattern, MergeCompositeFunctions,
// RunCodegen).
var (
	codeUnknownPatternTable = optCodes.Define("OPT400", "FuseOpsByPattern: a pattern table named in patterns is not registered")
	codeNoPatternMatched    = optCodes.Define("OPT401", "FuseOpsByPattern: no pattern matched anything (the module is unchanged)")
	codeNoPatterns          = optCodes.Define("OPT402", "FuseOpsByPattern: the patterns option names no pattern table")
	codeNoEntryFunction     = optCodes.Define("OPT403", "FuseOpsByPattern: an entry function named in entry_functions is not in the module")
)

// FusionPattern is one entry of a pattern table, TVM's
// relax.transform.FusionPattern: the matched subgraph becomes a function
// with attribute Composite = Name.
type FusionPattern struct {
	// Name is "<codegen>.<pattern>"; annotate_codegen and
	// MergeCompositeFunctions read the codegen from the part before the
	// first dot, as TVM does.
	Name    string
	Pattern dpl.Pattern
	// AnnotationPatterns name sub-patterns whose matches Check (and the
	// codegen) may want to see (PatternCheckContext.AnnotatedExpr).
	AnnotationPatterns map[string]dpl.Pattern
	// Check, when set, must accept a match for it to be fused.
	Check func(*PatternCheckContext) bool
}

// PatternCheckContext is what a FusionPattern's Check sees of a match
// (TVM's transform::PatternCheckContext).
type PatternCheckContext struct {
	// MatchedExpr is the root call the pattern matched.
	MatchedExpr *ir.Call
	// AnnotatedExpr maps each annotation pattern's name to what it matched.
	AnnotatedExpr map[string]ir.Expr
	// MatchedBindings maps the variables of the matched bindings (the root's
	// and the interior calls') to their values.
	MatchedBindings map[*ir.Var]ir.Expr
	// VarUsages maps each variable bound in the block to the variables
	// whose bindings in the block use it.
	VarUsages map[*ir.Var][]*ir.Var
	// ValueToBoundVar maps each bound value of the block to its variable.
	ValueToBoundVar map[ir.Expr]*ir.Var
}

// HasLeakingIntermediates reports whether a matched binding other than the
// root's is used outside the match (TVM's has_leaking_intermediate_variables
// in python/tvm/relax/backend/utils.py): a check for codegens whose kernels
// have one output.
func HasLeakingIntermediates(ctx *PatternCheckContext) bool {
	root := ctx.ValueToBoundVar[ctx.MatchedExpr]
	for v := range ctx.MatchedBindings {
		if v == root {
			continue
		}
		if !v.Dataflow {
			return true
		}
		for _, u := range ctx.VarUsages[v] {
			if _, ok := ctx.MatchedBindings[u]; !ok {
				return true
			}
		}
	}
	return false
}

// Codegen returns the codegen part of a composite name ("phasec_blas" for
// "phasec_blas.matmul").
func Codegen(composite string) string {
	cg, _, _ := strings.Cut(composite, ".")
	return cg
}

var (
	patternTablesMu sync.RWMutex
	patternTables   = map[string][]FusionPattern{}
)

// RegisterPatternTable registers patterns under a table name, for
// FuseOpsByPattern{patterns=["name"]} (TVM's register_patterns, with a
// table per name instead of a global list filtered by prefix). Patterns
// earlier in the table take precedence, as in TVM. Registering a name
// twice is an error.
func RegisterPatternTable(name string, patterns []FusionPattern) error {
	patternTablesMu.Lock()
	defer patternTablesMu.Unlock()
	if name == "" || len(patterns) == 0 {
		return fmt.Errorf("pattern table needs a name and at least one pattern")
	}
	if _, dup := patternTables[name]; dup {
		return fmt.Errorf("pattern table %q is already registered", name)
	}
	for _, p := range patterns {
		if p.Name == "" || p.Pattern == nil {
			return fmt.Errorf("pattern table %q: every pattern needs a name and a pattern", name)
		}
	}
	patternTables[name] = slices.Clone(patterns)
	return nil
}

// PatternTable returns the patterns registered under name.
func PatternTable(name string) ([]FusionPattern, bool) {
	patternTablesMu.RLock()
	defer patternTablesMu.RUnlock()
	p, ok := patternTables[name]
	return p, ok
}

// PatternTables lists the registered table names, sorted.
func PatternTables() []string {
	patternTablesMu.RLock()
	defer patternTablesMu.RUnlock()
	names := make([]string, 0, len(patternTables))
	for n := range patternTables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// FuseOpsByPattern is TVM's relax.transform.FuseOpsByPattern
// (src/relax/transform/fuse_ops.cc: PatternBasedPartitioner and
// MakeGroupedFunctions; tests/python/relax/test_transform_fuse_ops_by_pattern.py).
//
// Each pattern of the named tables, in order, is matched at every call
// binding of every dataflow block, the binding's value being the root and
// operands followed through the block's bindings (package dpl). A match the
// pattern's Check accepts groups the root binding with the bindings of its
// interior calls; a later, larger match subsumes earlier groups entirely
// inside it, and is dropped when it would split one. Each group becomes a
// private function named fused_<ops> (relax.nn.conv2d → relax_nn_conv2d,
// uniquified with a numeric suffix) with attributes
// {"Composite": pattern name, "Primitive": 1}; its parameters are the
// group's inputs in order of first use, constants stay inside unless
// bind_constants is false, and a group whose intermediate values are used
// outside returns them all in a tuple. The group's bindings are replaced by
// a call at the root's position.
//
// With annotate_codegen the composite function is instead a local function
// (attribute Composite only) inside a public function named
// fused_<ops>_<codegen> with {"Codegen": codegen, "global_symbol": name}
// that calls it: TVM's form for RunCodegen without MergeCompositeFunctions.
//
// Pattern tables are registered from Go (RegisterPatternTable) and named in
// the patterns option; from Go a program may also call FuseByPattern with
// any []FusionPattern. A table nobody registered is an error (OPT400); when
// nothing matches, the module is returned unchanged with a warning (OPT401).
//
// Phase: the offload group is a declared sub-phase. Without
// annotate_codegen the result has module-level Composite/Primitive
// functions; with it, Codegen functions holding nested composite functions.
// The contract declares the worst case of both (options cannot change a
// contract): it invalidates NoPrimitiveFunctions and NoNestedFunctions,
// MergeCompositeFunctions keeps them broken, and RunCodegen restores both.
//
// Unlike TVM, a match is also refused when a binding outside the group but
// between its members uses a member's value (TVM would emit a group call
// after a use of its result).
var FuseOpsByPattern = passes.Define(passes.Info{
	Name:     "FuseOpsByPattern",
	Doc:      "lift subgraphs matching registered patterns into Composite functions for an external codegen",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "patterns follow operands through bindings of an A-normal dataflow block and read struct info",
	},
	Invalidates: phase.Of(phase.NoPrimitiveFunctions, phase.NoOffloadGroups, phase.NoNestedFunctions),
	Options: []passes.Option{
		{Name: "patterns", Type: passes.Strings, Default: []string{}, Doc: "registered pattern tables, in order of precedence"},
		{Name: "bind_constants", Type: passes.Bool, Default: true, Doc: "keep constants inside the composite functions instead of passing them as arguments"},
		{Name: "annotate_codegen", Type: passes.Bool, Default: false, Doc: "wrap each composite function in a public function with Codegen and global_symbol"},
		{Name: "entry_functions", Type: passes.Strings, Default: []string{}, Doc: "the functions to partition (default: every Relax function that is not a group)"},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	o := env.Options()
	tables := o.Strings("patterns")
	span := moduleSpan(mod)
	if len(tables) == 0 {
		var errs diag.List
		errs.Add(span, codeNoPatterns, "FuseOpsByPattern: patterns is empty: name a registered pattern table (registered: %s)", strings.Join(PatternTables(), ", "))
		return nil, errs
	}
	var pats []FusionPattern
	var errs diag.List
	for _, t := range tables {
		tp, ok := PatternTable(t)
		if !ok {
			d := errs.Add(span, codeUnknownPatternTable, "FuseOpsByPattern: no pattern table named %q is registered (registered: %s)", t, strings.Join(PatternTables(), ", "))
			if c := diag.Closest(t, PatternTables()); c != "" {
				d.Hint = fmt.Sprintf("did you mean %q?", c)
			}
			continue
		}
		pats = append(pats, tp...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	out, n, err := FuseByPattern(mod, pats, FuseByPatternOptions{
		BindConstants:   o.Bool("bind_constants"),
		AnnotateCodegen: o.Bool("annotate_codegen"),
		EntryFunctions:  o.Strings("entry_functions"),
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		if warn := env.PassContext().Warn; warn != nil {
			warn(&diag.Diagnostic{Span: span, Severity: diag.Warning, Code: codeNoPatternMatched,
				Msg: fmt.Sprintf("FuseOpsByPattern: no pattern of %s matched (the module is unchanged)", strings.Join(tables, ", "))})
		}
	}
	env.Stat("groups", int64(n))
	return out, nil
}))

// moduleSpan is where module-wide diagnostics point: the first public
// function, else the module's file.
func moduleSpan(mod *ir.Module) diag.Span {
	for _, name := range mod.Names() {
		if f := mod.Func(name); f != nil && ir.IsPublic(f) {
			return f.Span()
		}
	}
	return diag.Span{File: mod.Source}
}

// FuseByPatternOptions are FuseOpsByPattern's options, for Go callers.
type FuseByPatternOptions struct {
	BindConstants   bool
	AnnotateCodegen bool
	EntryFunctions  []string

	// placeholders are the names the composite functions of
	// annotate_codegen held while the pass ran (TVM lifts them to the
	// module first and annotates afterwards, so they take part in naming).
	placeholders *[]string
	// suffixes remembers, per base name, the next numeric suffix to try,
	// so that naming n groups alike stays linear.
	suffixes map[string]int
}

// IsGroupFunction reports whether f is a fusion or offload group (attribute
// Primitive, Composite or Codegen).
func IsGroupFunction(f ir.BaseFunc) bool {
	a := f.FuncAttrs()
	_, p := a[ir.AttrPrimitive]
	_, c := a[AttrComposite]
	_, g := a[AttrCodegen]
	return p || c || g
}

// FuseByPattern partitions mod by pats (see FuseOpsByPattern) and returns
// the new module and the number of groups lifted (mod itself when none).
func FuseByPattern(mod *ir.Module, pats []FusionPattern, opts FuseByPatternOptions) (*ir.Module, int, error) {
	out := mod.Clone()
	total := 0
	var placeholders []string
	opts.placeholders = &placeholders
	opts.suffixes = map[string]int{}
	defer func() {
		for _, n := range placeholders {
			out.Remove(n)
		}
	}()
	names := mod.Names()
	if len(opts.EntryFunctions) > 0 {
		names = opts.EntryFunctions
		var errs diag.List
		for _, n := range names {
			if mod.Func(n) == nil {
				d := errs.Add(moduleSpan(mod), codeNoEntryFunction, "FuseOpsByPattern: entry function %q is not a Relax function of the module", n)
				if c := diag.Closest(n, mod.Names()); c != "" {
					d.Hint = fmt.Sprintf("did you mean %q?", c)
				}
			}
		}
		if len(errs) > 0 {
			return nil, 0, errs
		}
	}
	for _, name := range names {
		f := mod.Func(name)
		if f == nil || IsGroupFunction(f) {
			continue
		}
		nf, n, err := fuseFunctionByPattern(out, f, pats, opts)
		if err != nil {
			return nil, 0, err
		}
		if n > 0 {
			out.Set(name, nf)
			total += n
		}
	}
	if total == 0 {
		return mod, 0, nil
	}
	return out, total, nil
}

// fuseFunctionByPattern partitions the dataflow blocks of f, adding the
// lifted functions to out.
func fuseFunctionByPattern(out *ir.Module, f *ir.Function, pats []FusionPattern, opts FuseByPatternOptions) (*ir.Function, int, error) {
	seq, ok := f.Body.(*ir.SeqExpr)
	if !ok {
		return f, 0, nil
	}
	total := 0
	blocks := slices.Clone(seq.Blocks)
	for bi, blk := range blocks {
		if !blk.Dataflow {
			continue
		}
		for _, fp := range pats {
			groups := partitionBlock(blk, fp)
			if len(groups) == 0 {
				continue
			}
			blk = liftGroups(out, blk, groups, fp.Name, opts)
			total += len(groups)
		}
		blocks[bi] = blk
	}
	if total == 0 {
		return f, 0, nil
	}
	nf := &ir.Function{Params: f.Params, Body: &ir.SeqExpr{Blocks: blocks, Body: seq.Body}, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	nf.SetSpan(f.Span())
	norm, errs := ir.NormalizeFunction(out, nf)
	if len(errs) > 0 {
		return nil, 0, errs
	}
	return norm, total, nil
}

// blockUses returns, for each binding index, the indices of the bindings
// of blk that use its variable.
func blockUses(blk *ir.BindingBlock) (index map[*ir.Var]int, users [][]int) {
	index = make(map[*ir.Var]int, len(blk.Bindings))
	users = make([][]int, len(blk.Bindings))
	for i, b := range blk.Bindings {
		index[b.BoundVar()] = i
	}
	for i, b := range blk.Bindings {
		seen := map[int]bool{}
		ir.Inspect(bindingValue(b), func(e ir.Expr) bool {
			if v, ok := e.(*ir.Var); ok {
				if j, ok := index[v]; ok && !seen[j] {
					seen[j] = true
					users[j] = append(users[j], i)
				}
			}
			return true
		})
	}
	return index, users
}

func bindingValue(b ir.Binding) ir.Expr {
	switch b := b.(type) {
	case *ir.VarBinding:
		return b.Value
	case *ir.MatchCast:
		return b.Value
	}
	return nil
}

// partitionBlock runs one pattern over a block (TVM's
// PatternBasedPartitioner) and returns the groups as ascending binding
// indices, the root last, in order of their roots.
func partitionBlock(blk *ir.BindingBlock, fp FusionPattern) [][]int {
	bindings := dpl.BlockBindings(blk)
	index, users := blockUses(blk)
	valueVar := make(map[ir.Expr]*ir.Var, len(blk.Bindings))
	for _, b := range blk.Bindings {
		if vb, ok := b.(*ir.VarBinding); ok {
			valueVar[vb.Value] = vb.Var
		}
	}
	var usages map[*ir.Var][]*ir.Var // built on the first Check
	groupOf := make([]int, len(blk.Bindings))
	members := map[int][]int{}
	for i := range groupOf {
		groupOf[i] = i
	}
	for i, b := range blk.Bindings {
		vb, ok := b.(*ir.VarBinding)
		if !ok {
			continue
		}
		call, ok := vb.Value.(*ir.Call)
		if !ok {
			continue
		}
		m, ok := dpl.MatchExpr(fp.Pattern, call, bindings)
		if !ok {
			continue
		}
		set := map[int]bool{i: true}
		valid := true
		for p, e := range m {
			switch p.(type) {
			case *dpl.CallPattern, *dpl.TupleGetItemPattern:
			default:
				continue
			}
			if e == ir.Expr(call) {
				continue
			}
			v, ok := valueVar[e]
			if !ok {
				valid = false // a nested value no binding names: not in A-normal form
				break
			}
			set[index[v]] = true
		}
		if !valid {
			continue
		}
		if fp.Check != nil {
			if usages == nil {
				usages = map[*ir.Var][]*ir.Var{}
				for j, us := range users {
					for _, u := range us {
						usages[blk.Bindings[j].BoundVar()] = append(usages[blk.Bindings[j].BoundVar()], blk.Bindings[u].BoundVar())
					}
				}
			}
			ctx := &PatternCheckContext{MatchedExpr: call, AnnotatedExpr: map[string]ir.Expr{}, MatchedBindings: map[*ir.Var]ir.Expr{}, VarUsages: usages, ValueToBoundVar: valueVar}
			for name, p := range fp.AnnotationPatterns {
				if e, ok := m[p]; ok {
					ctx.AnnotatedExpr[name] = e
				}
			}
			for j := range set {
				ctx.MatchedBindings[blk.Bindings[j].BoundVar()] = bindingValue(blk.Bindings[j])
			}
			if !fp.Check(ctx) {
				continue
			}
		}
		// An earlier group this match overlaps must lie entirely inside it.
		for j := range set {
			if g := members[groupOf[j]]; len(g) > 1 {
				for _, k := range g {
					if !set[k] {
						valid = false
					}
				}
			}
		}
		// No binding outside the group may use a member before the root,
		// where the group's call will be.
		for j := range set {
			for _, u := range users[j] {
				if !set[u] && u < i {
					valid = false
				}
			}
		}
		if !valid {
			continue
		}
		group := make([]int, 0, len(set))
		for j := range set {
			if old := groupOf[j]; old != i {
				members[old] = slices.DeleteFunc(members[old], func(k int) bool { return k == j })
			}
			groupOf[j] = i
			group = append(group, j)
		}
		slices.Sort(group)
		members[i] = group
	}
	var groups [][]int
	for i := range blk.Bindings {
		if g := members[i]; len(g) > 0 {
			groups = append(groups, g)
		}
	}
	return groups
}

// liftGroups replaces each group of blk by a call of a new function added
// to mod.
func liftGroups(mod *ir.Module, blk *ir.BindingBlock, groups [][]int, composite string, opts FuseByPatternOptions) *ir.BindingBlock {
	_, users := blockUses(blk)
	rootOf := map[int][]int{}
	inGroup := map[int]bool{}
	for _, g := range groups {
		rootOf[g[len(g)-1]] = g
		for _, j := range g {
			inGroup[j] = true
		}
	}
	var out []ir.Binding
	for i, b := range blk.Bindings {
		g, isRoot := rootOf[i]
		if !isRoot {
			if !inGroup[i] {
				out = append(out, b)
			}
			continue
		}
		out = append(out, liftGroup(mod, blk, g, users, composite, opts)...)
	}
	nb := &ir.BindingBlock{Bindings: out, Dataflow: blk.Dataflow}
	nb.SetSpan(blk.Span())
	return nb
}

// liftGroup builds the function of one group and returns the bindings that
// call it.
func liftGroup(mod *ir.Module, blk *ir.BindingBlock, group []int, users [][]int, composite string, opts FuseByPatternOptions) []ir.Binding {
	member := map[int]bool{}
	defined := map[*ir.Var]bool{}
	for _, j := range group {
		member[j] = true
		defined[blk.Bindings[j].BoundVar()] = true
	}
	// Inputs in order of first use; outputs: members used outside the group
	// or visible outside the block, and the root.
	var inputs []ir.Expr
	seen := map[ir.Expr]bool{}
	var opNames []string
	for _, j := range group {
		val := bindingValue(blk.Bindings[j])
		if c, ok := val.(*ir.Call); ok {
			if op, ok := c.Op.(*ir.Op); ok {
				opNames = append(opNames, strings.ReplaceAll(op.Name, ".", "_"))
			}
		}
		ir.Inspect(val, func(e ir.Expr) bool {
			switch e := e.(type) {
			case *ir.Var:
				if !defined[e] && !seen[e] {
					seen[e] = true
					inputs = append(inputs, e)
				}
			case *ir.Constant:
				if !opts.BindConstants && !seen[e] {
					seen[e] = true
					inputs = append(inputs, e)
				}
			case *ir.Function:
				return false
			}
			return true
		})
	}
	var outputs []*ir.Var
	for k, j := range group {
		v := blk.Bindings[j].BoundVar()
		escapes := k == len(group)-1 || !v.Dataflow
		for _, u := range users[j] {
			if !member[u] {
				escapes = true
			}
		}
		if escapes {
			outputs = append(outputs, v)
		}
	}

	// The function: fresh parameters, the members' bindings with fresh
	// variables, the outputs as its result.
	subst := map[*ir.Var]ir.Expr{}
	constParam := map[*ir.Constant]*ir.Var{}
	params := make([]*ir.Var, len(inputs))
	for k, in := range inputs {
		switch in := in.(type) {
		case *ir.Var:
			params[k] = ir.NewVar(in.Name, in.StructInfo())
			subst[in] = params[k]
		case *ir.Constant:
			params[k] = ir.NewVar(fmt.Sprintf("param_%d", k), in.StructInfo())
			constParam[in] = params[k]
		}
	}
	isOutput := map[*ir.Var]bool{}
	for _, v := range outputs {
		isOutput[v] = true
	}
	var body []ir.Binding
	for _, j := range group {
		b := blk.Bindings[j]
		val := ir.Bind(bindingValue(b), subst)
		if len(constParam) > 0 {
			val = (&ir.Mutator{PostExpr: func(e ir.Expr) ir.Expr {
				if c, ok := e.(*ir.Constant); ok && constParam[c] != nil {
					return constParam[c]
				}
				return e
			}}).Expr(val)
		}
		old := b.BoundVar()
		nv := ir.NewVar(old.Name, old.StructInfo())
		nv.Dataflow = !isOutput[old]
		subst[old] = nv
		var nb ir.Binding
		if mc, ok := b.(*ir.MatchCast); ok {
			nb = ir.NewMatchCast(nv, val, mc.SInfo)
		} else {
			nb = ir.NewVarBinding(nv, val)
		}
		body = append(body, nb)
	}
	var result ir.Expr
	if len(outputs) == 1 {
		result = subst[outputs[0]]
	} else {
		fields := make([]ir.Expr, len(outputs))
		for k, v := range outputs {
			fields[k] = subst[v]
		}
		result = ir.NewTuple(fields...)
	}
	root := blk.Bindings[group[len(group)-1]]
	fn := &ir.Function{
		Params: params,
		Body:   &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: body, Dataflow: true}}, Body: result},
		Pure:   true,
		Attrs:  ir.Attrs{AttrComposite: composite, ir.AttrPrimitive: int64(1)},
	}
	fn.SetSpan(root.Span())
	name := "fused_" + strings.Join(opNames, "_")
	name = uniqueFuncNameFrom(mod, name, opts.suffixes)
	fn, _ = ir.NormalizeFunction(mod, fn)
	mod.Set(name, fn)
	if opts.AnnotateCodegen {
		*opts.placeholders = append(*opts.placeholders, name)
		name = uniqueFuncNameFrom(mod, name+"_"+Codegen(composite), opts.suffixes)
		mod.Set(name, wrapInCodegen(mod, fn, name, Codegen(composite)))
	}

	args := make([]ir.Expr, len(inputs))
	copy(args, inputs)
	call := ir.NewCall(ir.NewGlobalVar(name), args...)
	if len(outputs) == 1 {
		vb := ir.NewVarBinding(outputs[0], call)
		vb.SetSpan(root.Span())
		return []ir.Binding{vb}
	}
	tv := ir.NewDataflowVar("lv", nil)
	vb := ir.NewVarBinding(tv, call)
	vb.SetSpan(root.Span())
	out := []ir.Binding{vb}
	for k, v := range outputs {
		gb := ir.NewVarBinding(v, &ir.TupleGetItem{Tuple: tv, Index: k})
		gb.SetSpan(root.Span())
		out = append(out, gb)
	}
	return out
}

// wrapInCodegen returns the public function name whose body binds the
// composite function locally (attribute Composite only) and calls it:
// TVM's annotate_codegen form.
func wrapInCodegen(mod *ir.Module, composite *ir.Function, name, codegen string) *ir.Function {
	inner := &ir.Function{Params: composite.Params, Body: composite.Body, Pure: true,
		Attrs: ir.Attrs{AttrComposite: composite.Attrs[AttrComposite]}}
	inner.SetSpan(composite.Span())
	inner, _ = ir.NormalizeFunction(mod, inner)
	params := make([]*ir.Var, len(composite.Params))
	args := make([]ir.Expr, len(params))
	for i, p := range composite.Params {
		params[i] = ir.NewVar(p.Name, p.StructInfo())
		args[i] = params[i]
	}
	local := ir.NewVar("gv", ir.FuncInfoOf(inner))
	res := ir.NewVar("gv1", nil)
	outer := &ir.Function{
		Params: params,
		Body: &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: []ir.Binding{
			ir.NewVarBinding(local, inner),
			ir.NewVarBinding(res, ir.NewCall(local, args...)),
		}}}, Body: res},
		Pure:  true,
		Attrs: ir.Attrs{AttrCodegen: codegen, ir.AttrGlobalSymbol: name},
	}
	outer.SetSpan(composite.Span())
	outer, _ = ir.NormalizeFunction(mod, outer)
	return outer
}

// uniqueFuncName returns name, or name with the smallest numeric suffix
// ("fused_relax_matmul1") that is not a function of mod, as TVM's
// NameSupply does.
func uniqueFuncName(mod *ir.Module, name string) string {
	return uniqueFuncNameFrom(mod, name, nil)
}

// uniqueFuncNameFrom is uniqueFuncName starting the search at the suffix
// next records for name (and recording the next one).
func uniqueFuncNameFrom(mod *ir.Module, name string, next map[string]int) string {
	if _, ok := mod.Lookup(name); !ok {
		return name
	}
	i := max(next[name], 1)
	for ; ; i++ {
		n := fmt.Sprintf("%s%d", name, i)
		if _, ok := mod.Lookup(n); !ok {
			if next != nil {
				next[name] = i + 1
			}
			return n
		}
	}
}
