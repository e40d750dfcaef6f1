package wellformed

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// checker is one walk over a module. It reports violations of the rules whose
// property is in props, or, in infer mode, only records which properties are
// violated.
type checker struct {
	mod   *ir.Module
	ctx   *ir.InferCtx
	props phase.Set
	phase phase.Phase // for messages; None when checking bare properties
	infer bool
	// noHooks skips the op hooks (Normalize, Validate, Infer) and call
	// re-derivation; only the benchmark sets it, to measure the walk alone.
	noHooks bool

	violated phase.Set
	diags    diag.List

	scopes

	// Per-function context.
	fnName    string // the enclosing top-level function, for messages
	fnPure    bool   // the innermost function is pure
	fnForced  bool   // ... and carries relax.force_pure
	dataflow  bool   // the current binding sits in a dataflow block
	anchor    diag.Span
	path      []pathSeg
	primWrite map[string][]bool // PrimFunc name -> params it writes
	primPure  map[string]bool   // PrimFunc name -> pure (primFuncPure)
	// symReported lists the out-of-scope symbolic variables reported in the
	// current binding: its value and its variable's annotation usually
	// mention the same ones, and one diagnostic per binding is enough.
	symReported []*ir.PrimVar
}

// pathSeg is one step of the path to a node: ".name" or ".name[idx]".
type pathSeg struct {
	name string
	idx  int
}

func newChecker(mod *ir.Module, props phase.Set, p phase.Phase, infer bool) *checker {
	return &checker{
		mod:    mod,
		ctx:    &ir.InferCtx{Module: mod},
		props:  props.With(phase.WellFormed),
		phase:  p,
		infer:  infer,
		scopes: newScopes(countVars(mod)),
	}
}

// on reports whether the rule is checked (and, when inferring, whether its
// property is still undecided, so finished properties cost nothing).
func (c *checker) on(id ruleID) bool {
	p := catalogue[id].Property
	if !c.props.Has(p) {
		return false
	}
	return !c.infer || !c.violated.Has(p)
}

func (c *checker) push(name string, idx int) { c.path = append(c.path, pathSeg{name, idx}) }
func (c *checker) pop()                      { c.path = c.path[:len(c.path)-1] }

func (c *checker) pathString() string {
	var b strings.Builder
	for i, s := range c.path {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
		if s.idx >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.idx))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// report records a violation of rule id at span (or, when the node has no
// position, at the nearest enclosing node that has one).
func (c *checker) report(id ruleID, span diag.Span, format string, args ...any) {
	if !c.on(id) {
		return
	}
	r := &catalogue[id]
	if c.infer {
		c.violated = c.violated.With(r.Property)
		return
	}
	if !span.IsValid() {
		span = c.anchor
	}
	if span.File == "" {
		span.File = c.mod.Source
	}
	msg := fmt.Sprintf(format, args...)
	if !r.Structural() {
		if c.phase != phase.None {
			msg += " in phase " + c.phase.String()
		} else {
			msg += " by property " + r.Property.String()
		}
	}
	c.diags = append(c.diags, &diag.Diagnostic{
		Span: span, Severity: r.Severity, Code: r.Code, Msg: msg, Hint: r.Hint, Path: c.pathString(),
	})
}

// reportHint is report with a hint of its own in place of the rule's.
func (c *checker) reportHint(id ruleID, span diag.Span, hint, format string, args ...any) {
	n := len(c.diags)
	c.report(id, span, format, args...)
	if len(c.diags) > n {
		c.diags[n].Hint = hint
	}
}

// where names a position for messages: "main:4", or "main" when unknown.
func (c *checker) where(span diag.Span) string {
	if span.IsValid() {
		return c.fnName + ":" + strconv.Itoa(span.Line)
	}
	return c.fnName
}

func spanOr(s, anchor diag.Span) diag.Span {
	if s.IsValid() {
		return s
	}
	return anchor
}

// run walks the whole module.
func (c *checker) run() {
	c.checkPhaseAttr()
	for name, f := range c.mod.Functions() {
		c.fnName = name
		c.anchor = diag.Span{File: c.mod.Source}
		c.path = append(c.path[:0], pathSeg{name, -1})
		c.checkGlobalSymbol(name, f)
		switch f := f.(type) {
		case *ir.Function:
			c.checkGroupFunction(name, f)
			c.function(f, false)
		case *ir.PrimFunc:
			c.primFunc(f)
		}
	}
}

func (c *checker) checkPhaseAttr() {
	v, present := c.mod.Attrs[ir.AttrPhase]
	if !present {
		return
	}
	if _, err := phase.Recorded(c.mod); err != nil {
		c.path = c.path[:0]
		c.anchor = diag.Span{File: c.mod.Source}
		c.report(rulePhaseAttr, diag.Span{}, "module phase attribute %s: %v", ir.FormatAttrValue(v), err)
	}
}

func (c *checker) checkGlobalSymbol(name string, f ir.BaseFunc) {
	if _, extern := f.(*ir.ExternFunc); extern {
		return // its symbol is what it links to, not a function attribute
	}
	span := f.Span()
	if sym, ok := f.FuncAttrs()[ir.AttrGlobalSymbol]; ok {
		if s, isStr := sym.(string); !isStr || s != name {
			// TVM's well_formed compares the symbol with the name for
			// Relax functions only (CheckGlobalVarAndGsymbolConsistency);
			// a PrimFunc's symbol is the build's concern (AttachGlobalSymbol
			// sets it, with the system-lib prefix).
			if _, prim := f.(*ir.PrimFunc); prim {
				c.report(ruleNoGlobalSymbol, span, "PrimFunc %s with global_symbol %s other than its name is not allowed", name, ir.FormatAttrValue(sym))
				return
			}
			c.report(ruleGlobalSymbolName, span, "function %s has global_symbol %s; it must equal the function's name",
				name, ir.FormatAttrValue(sym))
		}
	} else if c.on(ruleNoGlobalSymbol) {
		c.report(ruleNoGlobalSymbol, span, "function %s without global_symbol is not allowed", name)
	}
}

// The function attributes that make a Relax function a member of a
// declared group of passes rather than a function of its own (TVM's
// attr::kPrimitive, attr::kComposite, attr::kCodegen).
const (
	attrComposite = "Composite" // a pattern match of FuseOpsByPattern
	attrCodegen   = "Codegen"   // an offloaded function awaiting RunCodegen
)

// checkGroupFunction reports a function a group of passes left half done:
// a fusion group FuseOps made that FuseTIR has not yet turned into a
// PrimFunc, or an offload group RunCodegen has not yet compiled. The hint
// names the missing member.
func (c *checker) checkGroupFunction(name string, f *ir.Function) {
	_, composite := f.Attrs[attrComposite]
	_, codegen := f.Attrs[attrCodegen]
	primitive := attrSet(f.Attrs[ir.AttrPrimitive])
	switch {
	case primitive && composite && c.on(rulePrimitiveFunction):
		c.reportHint(rulePrimitiveFunction, f.Span(), "run RunCodegen (after MergeCompositeFunctions), or FuseTIR once its ops are legalized",
			"function %s is a pattern group (attributes Composite, Primitive) of FuseOpsByPattern that neither RunCodegen nor FuseTIR has consumed", name)
	case primitive && c.on(rulePrimitiveFunction):
		c.reportHint(rulePrimitiveFunction, f.Span(), "run FuseTIR",
			"function %s is a fusion group (attribute Primitive) that FuseTIR has not turned into a PrimFunc", name)
	case (codegen || composite) && !primitive && c.on(ruleOffloadGroup):
		attr := attrCodegen
		if !codegen {
			attr = attrComposite
		}
		c.reportHint(ruleOffloadGroup, f.Span(), "run RunCodegen (after MergeCompositeFunctions)",
			"function %s is an offload group (attribute %s) whose kernel RunCodegen has not produced", name, attr)
	}
}

// attrSet reports whether a flag attribute is present and not false or 0
// (TVM writes Primitive as the integer 1; TVMScript prints it as True).
func attrSet(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case int64:
		return v != 0
	}
	return true
}

// function checks a Relax function: a top-level one, or a local function
// bound in a body (nested).
func (c *checker) function(f *ir.Function, nested bool) {
	span := spanOr(f.Span(), c.anchor)
	if nested {
		c.report(ruleNestedFunction, span, "local function at %s is not allowed", c.where(span))
	}
	saveAnchor, savePure, saveForced, saveDF := c.anchor, c.fnPure, c.fnForced, c.dataflow
	c.anchor = span
	forced, _ := f.Attrs.Bool(ir.AttrForcePure)
	c.fnPure, c.fnForced, c.dataflow = f.Pure, forced, false
	if forced && !f.Pure {
		c.report(ruleForcePureImpure, span, "function %s is impure (pure=False) but sets relax.force_pure", c.funcLabel(nested))
	}
	if f.Pure && !forced {
		c.report(rulePureNotForced, span, "pure function %s without relax.force_pure is not allowed", c.funcLabel(nested))
	}

	outerFrame := c.enterFunction()
	m := c.mark()
	for i, p := range f.Params {
		c.push("params", i)
		if p == nil {
			c.report(ruleMalformed, span, "parameter %d of %s is nil", i, c.funcLabel(nested))
			c.pop()
			continue
		}
		c.defineParam(p, span)
		c.pop()
	}
	// Symbolic variables the parameters define are visible in every
	// parameter's annotation (as in TVM, (x: ("n * 2",), y: ("n",)) is fine).
	for i, p := range f.Params {
		if p != nil && p.StructInfo() != nil {
			c.symReported = c.symReported[:0]
			c.push("params", i)
			c.useIn(p.StructInfo(), spanOr(p.Span(), span))
			c.pop()
		}
	}
	c.push("ret", -1)
	c.symReported = c.symReported[:0]
	if f.Ret == nil {
		c.report(ruleRetMissing, span, "function %s has no return struct info", c.funcLabel(nested))
	} else {
		c.sinfo(f.Ret, false, span)
	}
	c.pop()

	c.push("body", -1)
	switch body := f.Body.(type) {
	case *ir.SeqExpr:
		c.seq(body)
	case nil:
		c.report(ruleMalformed, span, "function %s has no body", c.funcLabel(nested))
	default:
		c.report(ruleSeqPlacement, spanOr(body.Span(), span), "body of function %s is not a SeqExpr", c.funcLabel(nested))
		c.expr(body)
	}
	// The return annotation should bind the body's value as a binding's
	// annotation does. TVM's Function constructor keeps a contradicting one
	// and its well_formed does not compare them, so this is a phase rule,
	// not a structural one: a module without a phase passes as in TVM.
	if f.Ret != nil && f.Body != nil && f.Body.StructInfo() != nil && c.on(ruleRetContradicted) &&
		ir.StructInfoBaseCheck(f.Ret, f.Body.StructInfo()) == ir.FailL0 { // provably wrong; R.Object under R.Callable (L1) and symbolic mismatches are not
		c.report(ruleRetContradicted, span, "function %s returns a value of type %s but is annotated %s",
			c.funcLabel(nested), c.fmtInfo(f.Body.StructInfo()), c.fmtInfo(f.Ret))
	}
	c.pop()

	c.scopes.pop(m)
	c.frame = outerFrame
	c.anchor, c.fnPure, c.fnForced, c.dataflow = saveAnchor, savePure, saveForced, saveDF
}

func (c *checker) funcLabel(nested bool) string {
	if nested {
		return "local function in " + c.fnName
	}
	return c.fnName
}

// defineParam defines a parameter and the symbolic variables its annotation
// binds; the caller checks the annotation's uses once all are defined.
func (c *checker) defineParam(p *ir.Var, fnSpan diag.Span) {
	span := spanOr(p.Span(), fnSpan)
	if _, prev, redefined := c.defineVar(p, true); redefined {
		if prev.param {
			c.report(ruleSharedParam, span, "parameter %s is already a parameter of another function (or twice of this one)", p.Name)
		} else {
			c.report(ruleRedefinedVar, span, "variable %s is defined more than once", p.Name)
		}
	}
	if p.Dataflow {
		c.report(ruleDataflowVarDef, span, "parameter %s is a dataflow variable; dataflow variables are defined only in dataflow blocks", p.Name)
	}
	if p.StructInfo() == nil {
		c.report(ruleInfoMissing, span, "parameter %s without struct info is not allowed", p.Name)
		return
	}
	c.defineIn(p.StructInfo())
}

// scopedSeq checks a SeqExpr that opens a scope (function body or If branch).
func (c *checker) scopedSeq(s *ir.SeqExpr) {
	m := c.mark()
	c.seq(s)
	c.scopes.pop(m)
}

// seq checks the blocks and result of a SeqExpr. Bindings are iterated, so the
// walk's depth does not grow with the length of the program.
func (c *checker) seq(s *ir.SeqExpr) {
	if c.on(ruleInfoMissing) && s.StructInfo() == nil {
		c.report(ruleInfoMissing, s.Span(), "SeqExpr at %s without struct info is not allowed", c.where(spanOr(s.Span(), c.anchor)))
	}
	for i, b := range s.Blocks {
		c.push("blocks", i)
		if b == nil {
			c.report(ruleMalformed, s.Span(), "block %d is nil", i)
			c.pop()
			continue
		}
		if c.on(ruleBlockHygiene) {
			bspan := spanOr(b.Span(), c.anchor)
			if len(b.Bindings) == 0 {
				c.report(ruleBlockHygiene, bspan, "empty binding block at %s is not allowed", c.where(bspan))
			} else if i > 0 && s.Blocks[i-1] != nil && s.Blocks[i-1].Dataflow == b.Dataflow {
				c.report(ruleBlockHygiene, bspan, "%s at %s directly after another of the same kind is not allowed", blockKind(b), c.where(bspan))
			}
		}
		c.block(b)
		c.pop()
	}
	c.push("body", -1)
	switch {
	case s.Body == nil:
		c.report(ruleMalformed, s.Span(), "SeqExpr has no result")
	default:
		c.operand(s.Body, "result of SeqExpr")
		c.expr(s.Body)
	}
	c.pop()
}

func blockKind(b *ir.BindingBlock) string {
	if b.Dataflow {
		return "dataflow block"
	}
	return "binding block"
}

func (c *checker) block(b *ir.BindingBlock) {
	span := b.Span()
	if !span.IsValid() && len(b.Bindings) > 0 && b.Bindings[0] != nil {
		span = b.Bindings[0].Span() // a block without a position is where its first binding is
	}
	span = spanOr(span, c.anchor)
	if b.Dataflow {
		c.report(ruleDataflowBlock, span, "dataflow block at %s is not allowed", c.where(span))
	}
	saveDF, saveAnchor := c.dataflow, c.anchor
	c.dataflow = b.Dataflow
	m := c.mark()
	for i, bd := range b.Bindings {
		c.push("bindings", i)
		c.binding(bd, span)
		c.pop()
	}
	if b.Dataflow {
		c.dropDataflow(m)
	}
	c.dataflow, c.anchor = saveDF, saveAnchor
}

func (c *checker) binding(bd ir.Binding, blockSpan diag.Span) {
	if bd == nil {
		c.report(ruleMalformed, blockSpan, "binding is nil")
		return
	}
	span := spanOr(bd.Span(), blockSpan)
	c.anchor = span
	c.symReported = c.symReported[:0]
	v := bd.BoundVar()
	if v == nil {
		c.report(ruleMalformed, span, "binding defines no variable")
		return
	}
	switch bd := bd.(type) {
	case *ir.VarBinding:
		c.push("value", -1)
		switch val := bd.Value.(type) {
		case nil:
			c.report(ruleMalformed, span, "binding of %s has no value", v.Name)
			c.defineBound(v, span)
		case *ir.Function:
			// A local function may call itself: its variable is in scope in its body.
			c.defineBound(v, span)
			c.expr(val)
		case *ir.SeqExpr:
			c.report(ruleSeqPlacement, spanOr(val.Span(), span), "SeqExpr bound to %s is not allowed; SeqExprs are only function bodies and If branches", v.Name)
			c.scopedSeq(val)
			c.defineBound(v, span)
		default:
			c.expr(val)
			isConst := c.isConstant(val)
			id := c.defineBound(v, span)
			c.vars[id].constBound = isConst
		}
		c.pop()
		c.boundInfo(v, span)
		if bd.Value != nil && v.StructInfo() != nil && bd.Value.StructInfo() != nil && c.on(ruleBindingInfo) {
			if !ir.IsBaseOf(v.StructInfo(), bd.Value.StructInfo()) {
				c.report(ruleBindingInfo, span, "value of type %s cannot be bound to %s of type %s",
					c.fmtInfo(bd.Value.StructInfo()), v.Name, c.fmtInfo(v.StructInfo()))
			}
		}
	case *ir.MatchCast:
		c.push("value", -1)
		if bd.Value == nil {
			c.report(ruleMalformed, span, "match_cast of %s has no value", v.Name)
		} else {
			c.operand(bd.Value, "value of match_cast")
			c.expr(bd.Value)
		}
		c.pop()
		c.push("sinfo", -1)
		if bd.SInfo == nil {
			c.report(ruleMalformed, span, "match_cast of %s has no target struct info", v.Name)
		} else {
			c.sinfo(bd.SInfo, true, span)
		}
		c.pop()
		isConst := c.isConstant(bd.Value)
		id := c.defineBound(v, span)
		c.vars[id].constBound = isConst
		c.boundInfo(v, span)
		if bd.SInfo != nil && v.StructInfo() != nil && c.on(ruleBindingInfo) && !ir.IsBaseOf(v.StructInfo(), bd.SInfo) {
			c.report(ruleBindingInfo, span, "match_cast target %s cannot be bound to %s of type %s",
				c.fmtInfo(bd.SInfo), v.Name, c.fmtInfo(v.StructInfo()))
		}
	default:
		c.report(ruleMalformed, span, "unknown binding kind %T", bd)
	}
}

// defineBound defines a binding's variable and returns its ID.
func (c *checker) defineBound(v *ir.Var, span diag.Span) int32 {
	id, _, redefined := c.defineVar(v, false)
	if redefined {
		c.report(ruleRedefinedVar, span, "variable %s is defined more than once", v.Name)
	}
	if v.Dataflow && !c.dataflow {
		c.report(ruleDataflowVarDef, span, "dataflow variable %s is defined outside a dataflow block", v.Name)
	}
	return id
}

// boundInfo checks a binding variable's own struct info (present, and its
// symbolic variables in scope).
func (c *checker) boundInfo(v *ir.Var, span diag.Span) {
	if v.StructInfo() == nil {
		c.report(ruleInfoMissing, span, "variable %s without struct info is not allowed", v.Name)
		return
	}
	c.push("struct_info", -1)
	c.sinfo(v.StructInfo(), false, span)
	c.pop()
}

// operand checks the A-normal-form requirement on e: a leaf or a tuple (whose
// own fields are checked when the tuple is visited).
func (c *checker) operand(e ir.Expr, what string) {
	if e == nil || !c.on(ruleNotANF) {
		return
	}
	if _, isTuple := e.(*ir.Tuple); isTuple || ir.IsLeaf(e) {
		return
	}
	span := spanOr(e.Span(), c.anchor)
	c.report(ruleNotANF, span, "%s at %s is a nested %s; A-normal form requires a variable, a leaf or a tuple", what, c.where(span), exprKind(e))
}

func exprKind(e ir.Expr) string {
	switch e.(type) {
	case *ir.Call:
		return "call"
	case *ir.If:
		return "If"
	case *ir.SeqExpr:
		return "SeqExpr"
	case *ir.Function:
		return "function"
	case *ir.TupleGetItem:
		return "tuple projection"
	}
	return fmt.Sprintf("%T", e)
}

func (c *checker) fmtInfo(s ir.StructInfo) string { return ir.FormatStructInfo(s, nil) }
