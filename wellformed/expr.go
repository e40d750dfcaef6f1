package wellformed

import (
	"fmt"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/vm/abi"
)

// expr checks an expression. Recursion follows expression nesting only
// (calls inside tuples, If branches, local functions); bindings are iterated.
func (c *checker) expr(e ir.Expr) {
	if e == nil {
		c.report(ruleMalformed, c.anchor, "missing expression")
		return
	}
	switch e := e.(type) {
	case *ir.Var:
		c.useVar(e)
		return
	case *ir.GlobalVar:
		c.global(e, false)
		return
	case *ir.Op:
		return
	}
	if c.on(ruleInfoMissing) && e.StructInfo() == nil {
		span := spanOr(e.Span(), c.anchor)
		c.report(ruleInfoMissing, span, "%s at %s without struct info is not allowed", exprKind(e), c.where(span))
	}
	switch e := e.(type) {
	case *ir.Constant, *ir.StringImm, *ir.DataTypeImm, *ir.ExternFunc:
	case *ir.ShapeExpr:
		c.shapeExpr(e)
	case *ir.PrimValue:
		c.primValue(e)
	case *ir.Tuple:
		for i, f := range e.Fields {
			c.push("fields", i)
			c.operand(f, "tuple field")
			c.expr(f)
			c.pop()
		}
	case *ir.TupleGetItem:
		c.push("tuple", -1)
		c.operand(e.Tuple, "projected tuple")
		c.expr(e.Tuple)
		c.pop()
	case *ir.Call:
		c.call(e)
	case *ir.If:
		c.ifExpr(e)
	case *ir.SeqExpr:
		span := spanOr(e.Span(), c.anchor)
		c.report(ruleSeqPlacement, span, "SeqExpr at %s is not allowed here; SeqExprs are only function bodies and If branches", c.where(span))
		c.scopedSeq(e)
	case *ir.Function:
		c.function(e, true)
	default:
		c.report(ruleMalformed, spanOr(e.Span(), c.anchor), "unknown expression kind %T", e)
	}
}

func (c *checker) useVar(v *ir.Var) {
	info := c.lookupVar(v)
	// A Var node is shared by its definition and every use, so its own span
	// is the definition; a use is reported where the enclosing binding is.
	span := c.anchor
	switch {
	case info == nil:
		c.report(ruleUndefinedVar, span, "variable %s is used before it is defined", v.Name)
		return
	case info.state == varDropped:
		c.report(ruleDataflowVarUse, span, "dataflow variable %s is used after its dataflow block ends", v.Name)
		return
	case info.state == varOutOfScope:
		c.report(ruleUndefinedVar, span, "variable %s is used outside the scope that defines it", v.Name)
		return
	}
	if v.Dataflow && !c.dataflow {
		c.report(ruleDataflowVarUse, span, "dataflow variable %s is used outside a dataflow block", v.Name)
	}
}

// global checks a reference to a module function. A PrimFunc may only be
// called (directly, or as the kernel of a call_tir-family call): kernelPos.
func (c *checker) global(g *ir.GlobalVar, kernelPos bool) {
	span := spanOr(g.Span(), c.anchor)
	f, ok := c.mod.Lookup(g.Name)
	if !ok {
		c.report(ruleUndefinedGlobal, span, "global function %s is not defined in the module", g.Name)
		return
	}
	if _, isPrim := f.(*ir.PrimFunc); isPrim && !kernelPos {
		c.report(rulePrimFuncValue, span, "PrimFunc %s used as a value at %s is not allowed", g.Name, c.where(span))
	}
}

func (c *checker) shapeExpr(s *ir.ShapeExpr) {
	span := spanOr(s.Span(), c.anchor)
	for i, v := range s.Values {
		if v == nil {
			c.report(ruleMalformed, span, "R.shape value %d is missing", i)
			continue
		}
		if !v.DType().IsInteger() {
			c.report(ruleShapeNotInt, span, "R.shape value %d has type %s; shape values must be integers", i, v.DType())
		}
		c.prim(v, span)
		if c.on(ruleSymbolicShape) {
			if _, isConst := v.(*ir.IntImm); !isConst {
				c.report(ruleSymbolicShape, span, "symbolic shape R.shape([..., %s, ...]) at %s is not allowed", ir.FormatPrim(v, nil), c.where(span))
			}
		}
	}
}

func (c *checker) primValue(p *ir.PrimValue) {
	span := spanOr(p.Span(), c.anchor)
	if p.Value == nil {
		c.report(ruleMalformed, span, "R.prim_value has no value")
		return
	}
	c.prim(p.Value, span)
	switch p.Value.(type) {
	case *ir.IntImm, *ir.FloatImm:
	default:
		c.report(ruleSymbolicPrimValue, span, "non-constant R.prim_value(%s) at %s is not allowed", ir.FormatPrim(p.Value, nil), c.where(span))
	}
}

func (c *checker) ifExpr(e *ir.If) {
	span := spanOr(e.Span(), c.anchor)
	if c.dataflow {
		c.report(ruleIfInDataflow, span, "If at %s is inside a dataflow block; dataflow blocks contain no control flow", c.where(span))
	}
	c.push("cond", -1)
	if e.Cond == nil {
		c.report(ruleMalformed, span, "If has no condition")
	} else {
		c.operand(e.Cond, "If condition")
		c.expr(e.Cond)
	}
	c.pop()
	for _, br := range [...]struct {
		name string
		e    ir.Expr
	}{{"then", e.Then}, {"else", e.Else}} {
		c.push(br.name, -1)
		switch b := br.e.(type) {
		case *ir.SeqExpr:
			c.scopedSeq(b)
		case nil:
			c.report(ruleMalformed, span, "If has no %s branch", br.name)
		default:
			c.report(ruleSeqPlacement, spanOr(b.Span(), span), "%s branch of If at %s is not a SeqExpr", br.name, c.where(span))
			m := c.mark()
			c.expr(b)
			c.scopes.pop(m)
		}
		c.pop()
	}
}

// call checks a call: its callee and operands, purity, the op's category
// against the phase, and the op's Normalize, Validate and Infer hooks.
func (c *checker) call(call *ir.Call) {
	span := spanOr(call.Span(), c.anchor)
	op, _ := call.Op.(*ir.Op)
	c.push("op", -1)
	switch callee := call.Op.(type) {
	case nil:
		c.report(ruleMalformed, span, "call has no callee")
	case *ir.Op:
	case *ir.GlobalVar:
		c.global(callee, true)
	case *ir.Var, *ir.ExternFunc:
		c.expr(callee)
	default:
		c.operand(callee, "callee")
		c.report(ruleBadCallee, span, "callee of call at %s is a %s; it must be an op, a global function, an extern function or a closure variable",
			c.where(span), exprKind(callee))
		c.expr(callee)
	}
	c.pop()

	kernel := kernelArgIndex(call, op)
	for i, a := range call.Args {
		c.push("args", i)
		c.operand(a, "argument")
		if g, ok := a.(*ir.GlobalVar); ok && i == kernel {
			c.global(g, true)
		} else {
			c.expr(a)
		}
		c.pop()
	}
	for i, s := range call.SInfoArgs {
		c.push("sinfo_args", i)
		c.sinfo(s, false, span)
		c.pop()
	}

	if pure, known := c.callPurity(call); known && !pure {
		if c.dataflow {
			c.report(ruleImpureInDataflow, span, "impure call to %s at %s is inside a dataflow block", c.calleeName(call), c.where(span))
		} else if c.fnPure && !c.fnForced {
			c.report(ruleImpureInPure, span, "impure call to %s at %s is inside pure function %s", c.calleeName(call), c.where(span), c.fnName)
		}
	}
	if op != nil {
		c.opCall(op, call, span)
	} else {
		c.calleeInfo(call, span)
		if g, ok := call.Op.(*ir.GlobalVar); ok {
			if pf := c.mod.PrimFunc(g.Name); pf != nil {
				c.kernelWrites(g.Name, pf, call, span)
			}
		}
	}
}

// kernelArgIndex returns the index of the argument that is a kernel (a
// PrimFunc reference) in call, or -1: the first argument of call_tir-family
// and relax.vm ops and of the vm.builtin.call_tir_dyn extern, as
// R.call_packed("vm.builtin.call_tir_dyn", kernel, ...) or its op form.
func kernelArgIndex(call *ir.Call, o *ir.Op) int {
	if o == nil {
		if f, ok := call.Op.(*ir.ExternFunc); ok && f.Symbol == abi.BuiltinCallTIRDyn {
			return 0
		}
		return -1
	}
	switch {
	case o.Category == ir.CatCall || o.Category == ir.CatVM:
		return 0
	case o == op.CallPacked && len(call.Args) > 0:
		if f, ok := call.Args[0].(*ir.ExternFunc); ok && f.Symbol == abi.BuiltinCallTIRDyn {
			return 1
		}
	}
	return -1
}

func (c *checker) calleeName(call *ir.Call) string {
	switch f := call.Op.(type) {
	case *ir.Op:
		return ir.OpPath(f)
	case *ir.GlobalVar:
		return f.Name
	case *ir.ExternFunc:
		return fmt.Sprintf("extern %q", f.Symbol)
	case *ir.Var:
		return "closure " + f.Name
	}
	return "callee"
}

// callPurity says whether the call is pure, when that is known: an op's
// Pure field; a global function's purity (PrimFuncs write their outputs, so
// are impure); the struct info of an extern function or closure variable.
func (c *checker) callPurity(call *ir.Call) (pure, known bool) {
	switch f := call.Op.(type) {
	case *ir.Op:
		return f.Pure, true
	case *ir.GlobalVar:
		switch g, _ := c.mod.Lookup(f.Name); g := g.(type) {
		case *ir.Function:
			return g.Pure, true
		case *ir.PrimFunc:
			return c.primFuncPure(f.Name, g), true
		}
	case *ir.ExternFunc:
		if fi, ok := f.StructInfo().(*ir.FuncInfo); ok {
			return fi.Pure, true
		}
		return false, true // extern functions are impure unless declared otherwise
	case *ir.Var:
		if fi, ok := f.StructInfo().(*ir.FuncInfo); ok {
			return fi.Pure, true
		}
	}
	return false, false
}

// primFuncPure approximates TVM's tir::IsPureFunction
// (src/tir/analysis/is_pure_function.cc), which gives a PrimFunc's struct
// info its purity: a PrimFunc is pure unless it stores into a buffer it
// did not allocate (a parameter's, typically: a DPS kernel) or calls out
// of TIR (extern and packed calls update state). Computed once per
// PrimFunc.
func (c *checker) primFuncPure(name string, pf *ir.PrimFunc) bool {
	if p, ok := c.primPure[name]; ok {
		return p
	}
	local := map[*ir.PrimVar]bool{} // data of buffers allocated inside
	pure := true
	ir.WalkStmt(pf.Body, &ir.StmtVisitor{
		Stmt: func(s ir.Stmt) bool {
			switch s := s.(type) {
			case *ir.Allocate:
				local[s.Data] = true
			case *ir.Block:
				for _, b := range s.AllocBuffers {
					local[b.Data] = true
				}
			}
			return pure
		},
		Prim: func(e ir.PrimExpr) bool {
			if call, ok := e.(*ir.PrimCall); ok && stateCalls[call.Op] {
				pure = false
			}
			return pure
		},
	})
	if pure {
		walkStores(pf.Body, func(b *ir.Buffer) { pure = pure && local[b.Data] })
	}
	if c.primPure == nil {
		c.primPure = map[string]bool{}
	}
	c.primPure[name] = pure
	return pure
}

// stateCalls are the TIR calls out of TIR, whose effect TVM registers as
// kUpdateState or kOpaque.
var stateCalls = map[string]bool{
	"call_extern": true, "call_packed": true, "call_cpacked": true, "tvm_call_packed": true,
	"tvm_call_cpacked": true, "call_llvm_intrin": true, "call_intrin": true,
}

// argsHaveInfo reports whether op hooks can run on the call: they assume
// normalized operands with struct info.
func argsHaveInfo(call *ir.Call) bool {
	for _, a := range call.Args {
		if a == nil {
			return false
		}
		if _, isOp := a.(*ir.Op); isOp {
			continue
		}
		if _, isGV := a.(*ir.GlobalVar); isGV {
			continue
		}
		if a.StructInfo() == nil {
			return false
		}
	}
	return true
}

func (c *checker) opCall(op *ir.Op, call *ir.Call, span diag.Span) {
	// Rules are tested with c.on before their messages are built: most calls
	// violate some phase's rule that is not being checked, and formatting
	// arguments would cost an allocation per call.
	// specific: a rule of an earlier phase already explains why the op must
	// go (and names the pass that removes it), so the generic BuiltinsLowered
	// diagnostic would only repeat it. Infer still records the property.
	specific := false
	switch {
	case op.Category == ir.CatTensor && c.on(ruleTensorOp):
		c.report(ruleTensorOp, span, "high-level op %s at %s is not allowed", ir.OpPath(op), c.where(span))
		specific = true
	case op.Category == ir.CatCall && c.on(ruleCallTIR):
		c.report(ruleCallTIR, span, "%s at %s is not allowed", ir.OpPath(op), c.where(span))
		specific = true
	}
	if purityOverrides[op] && c.on(rulePurityOverride) {
		c.report(rulePurityOverride, span, "purity override %s at %s is not allowed", ir.OpPath(op), c.where(span))
		specific = true
	}
	if !op.LegalAtBuild && c.on(ruleNotVMLegal) && (c.infer || !specific) {
		c.report(ruleNotVMLegal, span, "op %s at %s, which VM codegen cannot handle, is not allowed", ir.OpPath(op), c.where(span))
	}
	if !argsHaveInfo(call) {
		return
	}
	if c.noHooks {
		return
	}
	if op.Normalize != nil && (c.on(ruleOpNormalizeFails) || c.on(ruleNotCanonical)) {
		norm, err := c.normalizeHook(op, call)
		if err != nil {
			c.report(ruleOpNormalizeFails, span, "call to %s at %s is rejected by its normalizer: %v", ir.OpPath(op), c.where(span), err)
			return
		}
		if norm != ir.Expr(call) {
			c.report(ruleNotCanonical, span, "call to %s at %s is not in canonical form (its normalizer rewrites it to %s)",
				ir.OpPath(op), c.where(span), ir.FormatExpr(norm, nil))
		}
	}
	if op.Validate != nil && c.on(ruleOpValidate) {
		if err := c.validateHook(op, call); err != nil {
			c.report(ruleOpValidate, span, "call to %s at %s is invalid: %v", ir.OpPath(op), c.where(span), err)
		}
	}
	if op.Infer != nil && c.on(ruleCallInfo) {
		inferred, err := c.inferHook(op, call)
		c.checkCallInfo(call, op, inferred, err, span)
	}
}

// The hook wrappers turn a panic in an op hook (a bug in the hook, triggered
// by this input) into an error, so the user still gets a positioned
// diagnostic. Separate functions keep the common path free of closures.

func (c *checker) normalizeHook(op *ir.Op, call *ir.Call) (_ ir.Expr, err error) {
	defer recoverHook(&err, op.Name, "Normalize")
	return op.Normalize(c.ctx, call)
}

func (c *checker) validateHook(op *ir.Op, call *ir.Call) (err error) {
	defer recoverHook(&err, op.Name, "Validate")
	return op.Validate(c.ctx, call)
}

func (c *checker) inferHook(op *ir.Op, call *ir.Call) (_ ir.StructInfo, err error) {
	defer recoverHook(&err, op.Name, "Infer")
	return op.Infer(c.ctx, call)
}

func (c *checker) deriveHook(fi *ir.FuncInfo, call *ir.Call) (_ ir.StructInfo, err error) {
	defer recoverHook(&err, "ir", "DeriveCallRetStructInfo")
	return ir.DeriveCallRetStructInfo(fi, call, c.ctx)
}

func recoverHook(err *error, owner, hook string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("internal error: %s %s panicked: %v", owner, hook, r)
	}
}

// calleeInfo re-derives the return info of a call to a function value with a
// known signature (a global function, or a closure variable).
func (c *checker) calleeInfo(call *ir.Call, span diag.Span) {
	if c.noHooks || !c.on(ruleCallInfo) || call.StructInfo() == nil || !argsHaveInfo(call) {
		return
	}
	var fi *ir.FuncInfo
	switch f := call.Op.(type) {
	case *ir.GlobalVar:
		info, _ := c.mod.GlobalInfo(f.Name)
		fi, _ = info.(*ir.FuncInfo)
	case *ir.Var:
		fi, _ = f.StructInfo().(*ir.FuncInfo)
	}
	if fi == nil || fi.Opaque {
		return
	}
	if len(fi.Params) != len(call.Args) {
		c.report(ruleCallInfo, span, "call to %s at %s passes %d arguments; it takes %d",
			c.calleeName(call), c.where(span), len(call.Args), len(fi.Params))
		return
	}
	inferred, err := c.deriveHook(fi, call)
	c.checkCallInfo(call, nil, inferred, err, span)
}

// checkCallInfo reports a failed inference, or an annotation the inferred
// struct info proves wrong (FailL0; unprovable differences are allowed).
func (c *checker) checkCallInfo(call *ir.Call, op *ir.Op, inferred ir.StructInfo, err error, span diag.Span) {
	if err != nil {
		c.report(ruleCallInfo, span, "struct info of call to %s at %s cannot be inferred: %v", c.calleeName(call), c.where(span), err)
		return
	}
	if annotated := call.StructInfo(); annotated != nil && inferred != nil &&
		ir.StructInfoBaseCheck(annotated, inferred) == ir.FailL0 {
		c.report(ruleCallInfo, span, "call to %s at %s has struct info %s, but its arguments give %s",
			c.calleeName(call), c.where(span), c.fmtInfo(annotated), c.fmtInfo(inferred))
	}
}

// kernelWrites checks a direct (destination-passing) call of a PrimFunc: no
// argument the kernel writes may be a constant.
func (c *checker) kernelWrites(name string, pf *ir.PrimFunc, call *ir.Call, span diag.Span) {
	if !c.on(ruleKernelWritesConst) {
		return
	}
	written := c.writtenParams(name, pf)
	for i, a := range call.Args {
		if i >= len(written) || !written[i] {
			continue
		}
		if c.isConstant(a) {
			c.report(ruleKernelWritesConst, span, "kernel %s at %s writing its argument %d, a constant, is not allowed", name, c.where(span), i)
		}
	}
}

// isConstant reports whether e is a constant: a Constant, or a variable
// bound to one directly, through an alias or through a match_cast.
func (c *checker) isConstant(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Constant:
		return true
	case *ir.Var:
		info := c.lookupVar(e)
		return info != nil && info.constBound
	}
	return false
}

// writtenParams returns, per parameter of pf, whether its body stores into the
// parameter's buffer. Computed once per PrimFunc.
func (c *checker) writtenParams(name string, pf *ir.PrimFunc) []bool {
	if w, ok := c.primWrite[name]; ok {
		return w
	}
	if c.primWrite == nil {
		c.primWrite = map[string][]bool{}
	}
	stored := map[*ir.PrimVar]bool{} // data handles of written buffers
	walkStores(pf.Body, func(b *ir.Buffer) { stored[b.Data] = true })
	w := make([]bool, len(pf.Params))
	for i, p := range pf.Params {
		if b := pf.BufferMap[p]; b != nil && stored[b.Data] {
			w[i] = true
		}
	}
	c.primWrite[name] = w
	return w
}

// walkStores calls f with every buffer a statement stores into. Statement
// sequences and let chains are iterated; recursion follows loop nesting.
func walkStores(s ir.Stmt, f func(*ir.Buffer)) {
	for s != nil {
		switch t := s.(type) {
		case *ir.BufferStore:
			f(t.Buffer)
			return
		case *ir.SeqStmt:
			for _, x := range t.Stmts {
				walkStores(x, f)
			}
			return
		case *ir.IfThenElse:
			walkStores(t.Then, f)
			s = t.Else
		case *ir.BlockRealize:
			if t.Block == nil {
				return
			}
			for _, w := range t.Block.Writes {
				f(w.Buffer)
			}
			walkStores(t.Block.Init, f)
			s = t.Block.Body
		default:
			body, ok := ir.ScopeBody(s)
			if !ok {
				return
			}
			s = body
		}
	}
}

// purityOverrides are the ops that declare an impure callee pure;
// RemovePurityChecking replaces them.
var purityOverrides = map[*ir.Op]bool{op.CallPurePacked: true, op.CallInplacePacked: true, op.InvokePureClosure: true}
