package syntax

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// This file drives the conversion of the syntax tree into an ir.Module:
// module structure, name scopes, error recovery and attribute literals.
//
// Error recovery works at statement granularity. A conversion step that
// finds a problem reports it with fail, which records the diagnostic and
// unwinds (panics with bailout) to the nearest statement boundary; the
// statement loop recovers and goes on with the next statement. A name whose
// definition failed is "poisoned": later uses of it are silently skipped, so
// one mistake gives one diagnostic, not a cascade. Every Relax function is
// built with its own ir.Builder, so a failure can never leave a builder's
// scopes unbalanced for the next function.

// bailout unwinds a failed statement; see fail.
type bailout struct{}

// symbol is what a name means in a scope.
type symbol struct {
	relax  *ir.Var
	prim   *ir.PrimVar
	buf    *ir.Buffer
	loop   *loopInfo
	rare   *rareSymbol // the kinds few names are; nil for most
	module bool        // "cls = Module": an alias of the module being defined
	poison bool        // its definition failed; uses are skipped silently
}

// rareSymbol holds what only a few TIR names need, behind a pointer so that
// the symbol of every binding stays small (48 bytes, not 104: a large
// module defines one per binding, and the collector's work is the largest
// cost of a parse).
type rareSymbol struct {
	// group holds the loop variables a single name stands for in
	// "for iters in T.grid(a, b):" (iters[0] is the first).
	group []*ast
	// meta is the expression "x = T.meta_var(e)" binds x to: uses of x
	// stand for e itself, no variable is defined.
	meta ir.PrimExpr
	// envThread is the thread tag "x = T.env_thread(tag)" binds x to; every
	// T.launch_thread(x, n) launches the one variable envVar (TVM's
	// env_thread returns one IterVar, and tir::VerifyWellFormed requires a
	// thread to be launched through one variable).
	envThread string
	envType   ir.DataType
	envVar    *ir.PrimVar
}

// loopInfo records a TIR loop variable's domain, for T.axis.remap.
type loopInfo struct {
	min, extent ir.PrimExpr
}

// builder converts one file.
type builder struct {
	file  string
	diags diag.List
	conv  converter

	// declared is the annotation of the binding whose value declaredFor is
	// being converted: the struct info of an opaque call (build_opaque.go).
	declared    ir.StructInfo
	declaredFor *ast

	mod     *ir.Module
	modName string          // the class name of the module ("Module")
	funcs   map[string]bool // module function names -> true for Relax, false for TIR
	// funcDefs holds where each module function is first defined, for the
	// note on a duplicate.
	funcDefs map[string]diag.Span
	metadata map[string][]*ast

	scope *scope
	// recent caches lookup results (see lookup); entries of another
	// generation than recentGen are void.
	recent    *recentNames
	recentGen uint32
	// ops caches the operators R.* callees resolved to (relaxOp).
	ops *[opSlots]cachedOp
	// intType is the type of an integer literal in the current prim
	// context: int64 in Relax shapes, int32 in TIR bodies.
	intType ir.DataType
	// sigDefines lets string dimensions ("n") define new symbolic
	// variables: true while converting function signatures and match_cast
	// struct info.
	sigDefines bool
	// rb is the ir.Builder of the Relax function being built.
	rb *ir.Builder
	// tir holds the state of the PrimFunc being built, or nil.
	tir *tirState
	// neutral maps the line of each pass that syntax error recovery put in
	// place of broken text to the names that text bound (recover_build.go);
	// nil when the file parsed at once. neutralSeen counts those met.
	neutral     map[int][]string
	neutralSeen int
	// lazy reads the deferred statements of Parse's first pass
	// (deferred.go); nil when the tree was read eagerly.
	lazy *lazyReader
	// symbols is the unused rest of newSymbol's current slab.
	symbols []symbol
	vars    []ir.Var // the unused rest of newVar's current slab
}

func newBuilder(file string) *builder {
	bd := &builder{file: file, funcs: map[string]bool{}, funcDefs: map[string]diag.Span{}, intType: ir.Int64}
	bd.conv.diags = &bd.diags
	bd.conv.expandStar = bd.starItems
	bd.scope = newScope(nil, 0)
	bd.recent = new(recentNames)
	bd.ops = new([opSlots]cachedOp)
	return bd
}

// fail reports a diagnostic and abandons the current statement.
func (bd *builder) fail(sp diag.Span, format string, args ...any) {
	bd.errorf(sp, format, args...)
	panic(bailout{})
}

// failRelated is fail with notes at other positions: the first definition
// of a name defined twice.
func (bd *builder) failRelated(sp diag.Span, related []diag.Related, format string, args ...any) {
	bd.errorf(sp, format, args...).Related = related
	panic(bailout{})
}

// firstDefinedHere is the note on a duplicate module function: where the
// name was defined first.
func (bd *builder) firstDefinedHere(name string) []diag.Related {
	if sp, ok := bd.funcDefs[name]; ok {
		return []diag.Related{{Span: sp, Msg: "function " + name + " is first defined here"}}
	}
	return nil
}

// skip abandons the current statement without a new diagnostic (the cause
// was reported already).
func (bd *builder) skip() { panic(bailout{}) }

func (bd *builder) errorf(sp diag.Span, format string, args ...any) *diag.Diagnostic {
	return bd.diags.Add(sp, "", format, args...)
}

// try runs f, recovering a bailout; it reports whether f completed.
func (bd *builder) try(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, is := r.(bailout); !is {
				panic(r)
			}
			ok = false
		}
	}()
	f()
	return true
}

// Scopes.

func (bd *builder) push() { bd.pushSized(0) }

// pushSized opens a scope that will hold about n names (a block's
// statement count: no rehashing as a large block's names go in).
func (bd *builder) pushSized(n int) {
	bd.scope = newScope(bd.scope, n)
}
func (bd *builder) pop() {
	bd.scope = bd.scope.parent
	bd.recentGen++ // its names are gone
}

// newSymbol returns a copy of s carved from a slab of symbols: a module's
// bindings each define a name, and one allocation per few hundred of them
// instead of one each keeps the collector's work down. A slab lives as long
// as any of its symbols (the function scope holds them all anyway).
func (bd *builder) newSymbol(s symbol) *symbol {
	if len(bd.symbols) == 0 {
		bd.symbols = make([]symbol, symbolSlab)
	}
	p := &bd.symbols[0]
	bd.symbols = bd.symbols[1:]
	*p = s
	return p
}

const symbolSlab = 256

// newVar is ir.NewVar carved from a slab, for the same reason as newSymbol.
// The variables outlive the parse with the module, and so do their slabs,
// which hold nothing else.
func (bd *builder) newVar(name string, sinfo ir.StructInfo) *ir.Var {
	if len(bd.vars) == 0 {
		bd.vars = make([]ir.Var, symbolSlab)
	}
	v := &bd.vars[0]
	bd.vars = bd.vars[1:]
	*v = *ir.NewVar(name, sinfo)
	return v
}

// define binds name in the innermost scope.
func (bd *builder) define(name string, s *symbol) {
	if name == "_" {
		return
	}
	bd.scope.set(name, s)
	*bd.recent.slot(name) = recentName{name, s, bd.recentGen}
}

// lookup resolves name from the innermost scope out. The names a block
// uses are mostly those it defined a few bindings before and the
// function's parameters; in a block of 100k bindings each map probe is a
// cache miss (two when the name is a parameter), so results go to a small
// direct-mapped cache first. It stays exact because definitions only go to
// the innermost scope (define writes through, and a new innermost scope
// starts empty) and pop, which forgets names, voids it.
func (bd *builder) lookup(name string) *symbol {
	c := bd.recent.slot(name)
	if c.sym != nil && c.gen == bd.recentGen && c.name == name {
		return c.sym
	}
	for s := bd.scope; s != nil; s = s.parent {
		if sym := s.get(name); sym != nil {
			*c = recentName{name, sym, bd.recentGen}
			return sym
		}
	}
	return nil
}

const recentSlots = 256

type recentNames [recentSlots]recentName

type recentName struct {
	name string
	sym  *symbol
	gen  uint32
}

// slot returns name's entry: hashed on its length and last bytes, which
// tell generated names (lv1, lv2, ...) apart.
func (r *recentNames) slot(name string) *recentName {
	return &r[tailHash(name)%recentSlots]
}

// tailHash hashes a short name on its length and last bytes.
func tailHash(name string) uint {
	h := uint(len(name))
	for i := max(0, len(name)-4); i < len(name); i++ {
		h = h*31 + uint(name[i])
	}
	return h
}

// visibleNames lists every name in scope, for suggestions.
func (bd *builder) visibleNames() []string {
	seen := map[string]bool{}
	for s := bd.scope; s != nil; s = s.parent {
		s.each(func(n string, _ *symbol) { seen[n] = true })
	}
	return slices.Sorted(maps.Keys(seen))
}

// undefined reports an unknown name with the closest visible one.
func (bd *builder) undefined(a *ast, what string) {
	bd.fail(a.Span, "undefined %s %s%s", what, a.Name, didYouMean(a.Name, bd.visibleNames(), ""))
}

// Module structure.

// buildFile converts the top-level statements: an @I.ir_module class (the
// usual case), or bare decorated functions forming an anonymous module.
func (bd *builder) buildFile(f *fileNode) *ir.Module {
	bd.mod = ir.NewModule()
	bd.mod.Source = bd.file
	var funcs []*stmtNode
	var body []*stmtNode
	sawModule := false
	for _, st := range f.Stmts {
		switch {
		case st.Decorated != nil && st.Decorated.Class != nil:
			if sawModule {
				bd.errorf(spanOf(st.Pos, st.Pos), "expected one @I.ir_module class per file, found a second class %s", st.Decorated.Class.Name)
				continue
			}
			sawModule = true
			bd.try(func() { bd.checkModuleDecorators(st.Decorated) })
			bd.modName = st.Decorated.Class.Name
			body = suiteStmts(st.Decorated.Class.Body)
		case st.Class != nil:
			bd.errorf(spanOf(st.Pos, st.Pos), "expected @I.ir_module before class %s", st.Class.Name)
		case st.Decorated != nil && st.Decorated.Def != nil:
			funcs = append(funcs, st)
		case st.Simple != nil && st.Simple.Expr != nil && bd.isMetadata(st.Simple.Expr):
			bd.try(func() { bd.collectMetadata(st.Simple.Expr) })
		default:
			bd.errorf(spanOf(st.Pos, st.Pos), "expected an @I.ir_module class or a decorated function at top level, found %s", stmtKind(st))
		}
	}
	if sawModule && len(funcs) > 0 {
		bd.errorf(spanOf(funcs[0].Pos, funcs[0].Pos), "expected functions inside the @I.ir_module class, found one outside it")
	}
	body = append(body, funcs...)
	bd.buildModuleBody(body)
	return bd.mod
}

func suiteStmts(s *suiteNode) []*stmtNode {
	if s == nil {
		return nil
	}
	if s.Simple != nil {
		return []*stmtNode{{Pos: s.Simple.Pos, EndPos: s.Simple.EndPos, Simple: s.Simple}}
	}
	return s.Stmts
}

func stmtKind(st *stmtNode) string {
	switch {
	case st.Decorated != nil, st.Def != nil:
		return "a function definition"
	case st.Class != nil:
		return "a class"
	case st.If != nil:
		return "an if statement"
	case st.For != nil && st.For.While != nil:
		return "a while loop"
	case st.For != nil:
		return "a for loop"
	case st.With != nil:
		return "a with statement"
	case st.Simple != nil && st.Simple.Return != nil:
		return "a return statement"
	case st.Simple != nil && st.Simple.Pass:
		return "pass"
	}
	return "an expression statement"
}

func (bd *builder) checkModuleDecorators(d *decoratedNode) {
	for _, dec := range d.Decorators {
		a := bd.conv.expr(dec)
		name, _ := a.Dotted()
		if a.Kind == aCall {
			// @I.ir_module(check_well_formed=False): the flag only tells
			// TVM's parser to skip its check; phasec never checks while
			// parsing (phasec check does).
			name, _ = a.X.Dotted()
			for i, kw := range a.Keywords {
				if kw != "check_well_formed" {
					bd.fail(a.Items[i].Span, "expected check_well_formed=... in @%s(...), found %s", name, cmp.Or(kw, "a positional argument"))
				}
				if !bd.boolLiteral(a.Items[i]) {
					bd.markUnchecked("")
				}
			}
		}
		if name == "I.ir_module" || name == "tvm.script.ir_module" || name == "ir_module" {
			continue
		}
		bd.fail(a.Span, "expected @I.ir_module on class %s, found @%s", d.Class.Name, describeOrName(a))
	}
}

func describeOrName(a *ast) string {
	if d, ok := a.Dotted(); ok {
		return d
	}
	if c := a.callee(); c != "" {
		return c + "(...)"
	}
	return a.describe()
}

// funcDecl is a module function before its body is converted.
type funcDecl struct {
	st      *stmtNode
	def     *defNode
	relax   bool
	private bool
	pure    bool
	span    diag.Span
	sig     *relaxSig // Relax: the converted signature
}

func (bd *builder) buildModuleBody(body []*stmtNode) {
	var decls []*funcDecl
	for _, st := range body {
		switch {
		case st.Decorated != nil && st.Decorated.Def != nil:
			var d *funcDecl
			if bd.try(func() { d = bd.funcDecorators(st.Decorated) }) {
				at := spanOf(d.def.Pos, d.def.Pos)
				if _, dup := bd.funcs[d.def.Name]; dup {
					bd.errorf(at, "duplicate function %s in the module", d.def.Name).Related = bd.firstDefinedHere(d.def.Name)
					continue
				}
				bd.funcs[d.def.Name] = d.relax
				bd.funcDefs[d.def.Name] = at
				decls = append(decls, d)
			}
		case st.Def != nil:
			bd.errorf(spanOf(st.Pos, st.Pos), "expected @R.function or @T.prim_func before def %s", st.Def.Name)
		case st.Simple != nil && st.Simple.Pass:
			bd.neutralizedPass(st, false)
		case st.Simple != nil && st.Simple.Expr != nil:
			bd.try(func() { bd.moduleStmt(st.Simple.Expr) })
		default:
			bd.errorf(spanOf(st.Pos, st.Pos), "expected a function definition or I.module_attrs in the module body, found %s", stmtKind(st))
		}
	}
	// PrimFuncs first: Relax functions resolve call_tir callees' signatures
	// through the module. Relax functions are added as signatures first, so
	// calls between them infer, then replaced as their bodies are built.
	for _, d := range decls {
		if !d.relax {
			bd.try(func() { bd.buildPrimFunc(d) })
		}
	}
	for _, d := range decls {
		if d.relax {
			bd.try(func() { bd.declareRelaxFunc(d) })
		}
	}
	for _, d := range decls {
		if d.relax {
			bd.try(func() { bd.buildRelaxFunc(d) })
		}
	}
}

func (bd *builder) funcDecorators(dn *decoratedNode) *funcDecl {
	d := &funcDecl{def: dn.Def, pure: true, span: spanOf(dn.Def.Pos, dn.Def.Pos)}
	if len(dn.Decorators) != 1 {
		bd.fail(spanOf(dn.Pos, dn.Pos), "expected one decorator on def %s, found %d", dn.Def.Name, len(dn.Decorators))
	}
	a := bd.conv.expr(dn.Decorators[0])
	name, ok := a.Dotted()
	var call *ast
	if !ok && a.Kind == aCall {
		call = a
		name, ok = a.X.Dotted()
	}
	switch name {
	case "R.function":
		d.relax = true
	case "T.prim_func":
	default:
		bd.fail(a.Span, "expected @R.function or @T.prim_func on def %s, found @%s%s", dn.Def.Name, describeOrName(a),
			didYouMean(name, []string{"R.function", "T.prim_func"}, "@"))
	}
	if call != nil {
		for i, kw := range call.Keywords {
			v := call.Items[i]
			switch {
			case kw == "private":
				d.private = bd.boolLiteral(v)
			case kw == "pure" && d.relax:
				d.pure = bd.boolLiteral(v)
			case kw == "check_well_formed":
				if !bd.boolLiteral(v) {
					bd.markUnchecked(dn.Def.Name)
				}
			case kw == "":
				bd.fail(v.Span, "expected keyword arguments in @%s(...), found a positional argument", name)
			default:
				opts := []string{"private", "check_well_formed"}
				if d.relax {
					opts = append(opts, "pure")
				}
				bd.fail(v.Span, "unknown keyword %s in @%s(...)%s", kw, name, didYouMean(kw, opts, ""))
			}
		}
	}
	return d
}

// markUnchecked records a check_well_formed=False decorator argument (on
// the module for name "") for the printer.
func (bd *builder) markUnchecked(name string) {
	if bd.mod.Unchecked == nil {
		bd.mod.Unchecked = map[string]bool{}
	}
	bd.mod.Unchecked[name] = true
}

func (bd *builder) boolLiteral(a *ast) bool {
	if a.Kind == aConst && (a.Text == "True" || a.Text == "False") {
		return a.Text == "True"
	}
	bd.fail(a.Span, "expected True or False, found %s", a.describe())
	return false
}

// moduleStmt handles I.module_attrs / I.module_global_infos.
func (bd *builder) moduleStmt(as *assignNode) {
	if as.Value != nil && as.Annot == nil {
		bd.externMember(as)
		return
	}
	if as.Value != nil || as.Annot != nil {
		bd.fail(spanOf(as.Pos, as.Pos), "expected a function definition or I.module_attrs in the module body, found an assignment")
	}
	a := bd.conv.exprList(as.Target)
	switch a.callee() {
	case "I.module_attrs":
		if len(a.Items) != 1 || a.Keywords[0] != "" {
			bd.fail(a.Span, "expected I.module_attrs({...}) with one dict argument")
		}
		if bd.mod.Attrs != nil {
			bd.fail(a.Span, "duplicate I.module_attrs: a module has one attribute dictionary")
		}
		bd.mod.Attrs = ir.Attrs{}
		maps.Copy(bd.mod.Attrs, bd.attrDict(a.Items[0]))
	case "I.module_global_infos":
		bd.moduleGlobalInfos(a)
	default:
		bd.fail(a.Span, "expected a function definition or I.module_attrs in the module body, found %s", a.describe())
	}
}

// externMember reads "name = R.ExternFunc(\"symbol\")" in the module body:
// TVM's ir parser declares and defines name as a global function (the
// Assign handler of python/tvm/script/parser/ir/parser.py), which
// functions refer to as cls.name.
func (bd *builder) externMember(as *assignNode) {
	target, value := bd.conv.exprList(as.Target), bd.conv.exprList(as.Value)
	if target.Kind != aName || target.Paren || value.callee() != "R.ExternFunc" {
		bd.fail(spanOf(as.Pos, as.Pos), "expected a function definition, I.module_attrs or name = R.ExternFunc(\"symbol\") in the module body, found an assignment")
	}
	arg := bd.onlyArg(value, "global_symbol")
	if arg.Kind != aStr {
		bd.fail(arg.Span, "expected a string in R.ExternFunc(...), found %s", arg.describe())
	}
	if _, dup := bd.funcs[target.Name]; dup {
		bd.failRelated(target.Span, bd.firstDefinedHere(target.Name), "duplicate function %s in the module", target.Name)
	}
	bd.funcs[target.Name] = true
	bd.funcDefs[target.Name] = target.Span
	ef := ir.NewExternFunc(arg.Text)
	ef.SetSpan(value.Span)
	bd.mod.Set(target.Name, ef)
}

// Attribute literals.

// attrDict converts a dict literal of attributes.
func (bd *builder) attrDict(a *ast) ir.Attrs {
	if a.Kind != aDict {
		bd.fail(a.Span, "expected a dict of attributes, found %s", a.describe())
	}
	out := make(ir.Attrs, len(a.Items))
	for i, k := range a.Items {
		if k.Kind != aStr {
			bd.fail(k.Span, "expected a string attribute key, found %s", k.describe())
		}
		out[k.Text] = bd.attrValue(a.Values[i])
	}
	return out
}

// attrValue converts an attribute value: str, bool, int, float, None, a list
// or dict of these, or a TIR constant such as T.int64(8).
func (bd *builder) attrValue(a *ast) any {
	switch a.Kind {
	case aStr:
		return a.Text
	case aConst:
		switch a.Text {
		case "True":
			return true
		case "False":
			return false
		}
		return nil
	case aInt, aFloat:
		return bd.number(a, false)
	case aUnary:
		if a.Name == "-" && (a.X.Kind == aInt || a.X.Kind == aFloat) {
			return bd.number(a.X, true)
		}
	case aList, aTuple:
		out := make([]any, len(a.Items))
		for i, it := range a.Items {
			out[i] = bd.attrValue(it)
		}
		return out
	case aDict:
		return bd.attrDict(a)
	case aCall, aName, aBinary:
		if a.Kind == aCall && a.callee() == "T.target" {
			return bd.target(a)
		}
		saved := bd.intType
		bd.intType = ir.Int64
		defer func() { bd.intType = saved }()
		return bd.prim(a)
	}
	bd.fail(a.Span, "expected an attribute value (string, bool, number, list or dict), found %s", a.describe())
	return nil
}

// target converts T.target(config, host=None): a configuration dict, the
// form TVM prints a Target in (its exported configuration), or a target
// string, expanded as TVM does (targetFromString). host is a string or a
// dict too, kept under "host".
func (bd *builder) target(a *ast) *ir.Target {
	args := bd.callArgs(a, "target_config", "host")
	cfg := args.get("target_config")
	if cfg == nil {
		bd.fail(a.Span, "expected T.target(target_config, host=None)")
	}
	conf := bd.targetConfig(cfg)
	if h := args.get("host"); h != nil && !isNone(h) {
		conf["host"] = bd.targetConfig(h)
	}
	return &ir.Target{Config: conf}
}

func (bd *builder) targetConfig(cfg *ast) ir.Attrs {
	switch cfg.Kind {
	case aStr:
		conf, err := targetFromString(cfg.Text)
		if err != nil {
			bd.fail(cfg.Span, "T.target(%q): %v; write the configuration dict TVM prints (T.target({\"kind\": ..., ...}))", cfg.Text, err)
		}
		return conf
	case aDict:
		conf := bd.attrDict(cfg)
		if _, ok := conf["kind"].(string); !ok {
			bd.fail(cfg.Span, "a target configuration needs a string \"kind\" entry")
		}
		return conf
	}
	bd.fail(cfg.Span, "expected a target string or configuration dict, found %s", cfg.describe())
	return nil
}

// number parses an int or float literal (negated when neg) as int64 or
// float64.
func (bd *builder) number(a *ast, neg bool) any {
	text := a.Text
	if neg {
		text = "-" + text
	}
	if a.Kind == aInt {
		v, err := strconv.ParseInt(text, 0, 64)
		if err != nil {
			bd.fail(a.Span, "integer literal %s out of range", text)
		}
		return v
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		bd.fail(a.Span, "bad float literal %s", text)
	}
	return v
}

// Metadata section.

// isMetadata recognizes the trailing "metadata = {...}" section.
func (bd *builder) isMetadata(as *assignNode) bool {
	if as.Value == nil || len(as.Target.Items) != 1 {
		return false
	}
	t := as.Target.Items[0].tree
	return t.Kind == aName && !t.Paren && t.Name == "metadata"
}

// collectMetadata records the metadata section: a dict from a kind
// ("relax.expr.Constant") to a list of values, each written as R.const(...).
// The entries are converted lazily where they are referenced.
func (bd *builder) collectMetadata(as *assignNode) {
	v := bd.conv.exprList(as.Value)
	if v.callee() == "tvm.ir.load_json" {
		bd.loadJSONMetadata(v)
		return
	}
	if v.Kind != aDict {
		bd.fail(v.Span, "expected the metadata section to be a dict {kind: [values]}, found %s", v.describe())
	}
	bd.metadata = map[string][]*ast{}
	for i, k := range v.Items {
		if k.Kind != aStr || (v.Values[i].Kind != aList && v.Values[i].Kind != aTuple) {
			bd.fail(k.Span, "expected metadata entries \"kind\": [values], found %s", k.describe())
		}
		bd.metadata[k.Text] = v.Values[i].Items
	}
}

// metadataConstant resolves metadata["relax.expr.Constant"][i].
func (bd *builder) metadataConstant(a *ast) ir.Expr {
	kind, idx := a.X.Items, a.Items
	if len(kind) != 1 || kind[0].Kind != aStr || len(idx) != 1 || idx[0].Kind != aInt {
		bd.fail(a.Span, "expected metadata[\"relax.expr.Constant\"][index], found %s", a.describe())
	}
	if kind[0].Text != "relax.expr.Constant" {
		bd.fail(kind[0].Span, "unsupported metadata kind %q (only \"relax.expr.Constant\")", kind[0].Text)
	}
	if bd.mod.Meta != nil {
		return bd.jsonMetadataConstant(kind[0], idx[0])
	}
	if bd.metadata == nil {
		bd.fail(a.Span, "metadata[...] used but the file has no metadata section (print with show_meta=True)")
	}
	i, err := strconv.Atoi(idx[0].Text)
	entries := bd.metadata[kind[0].Text]
	if err != nil || i < 0 || i >= len(entries) {
		bd.fail(idx[0].Span, "metadata index %s out of range (the section has %d constants)", idx[0].Text, len(entries))
	}
	e := entries[i]
	if e.callee() != "R.const" {
		bd.fail(e.Span, "expected R.const(...) in the metadata section, found %s", e.describe())
	}
	c := bd.constant(e)
	c.SetSpan(a.Span)
	return c
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
