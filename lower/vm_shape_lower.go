package lower

import (
	"fmt"
	"strconv"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/vm/abi"
)

// VMShapeLower is TVM's src/relax/backend/vm/vm_shape_lower.cc (see
// LowerShapes). TVM never checks that LambdaLift ran before it (it aborts
// on a local function); here NoNestedFunctions is part of the contract.
var VMShapeLower = passes.Define(passes.Info{
	Name:     "VMShapeLower",
	Doc:      "lower symbolic shapes and prim values to the VM shape heap and builtins, checking arguments, match_casts and results at run time",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized:        "it rewrites bindings and inserts checks between them, and needs every match_cast value bound",
		phase.NoNestedFunctions: "VMShapeLower and VM codegen abort on local functions (LambdaLift is not in TVM's default pipeline)",
		phase.NoDataflow:        "the checks it emits are impure calls and may not sit in dataflow blocks",
		phase.PurityRelaxed:     "it inserts impure checks (call_packed) into pure functions",
		phase.BuiltinsLowered:   "it must be the last value rewriter: a later pass materializing struct info would bring back symbolic values",
	},
	Establishes: phase.Of(phase.ShapesLowered),
	// The shape_func PrimFuncs it adds are private until AttachGlobalSymbol.
	Invalidates: phase.Of(phase.GlobalSymbols),
	Options: []passes.Option{{
		Name: "emit_err_ctx", Type: passes.Bool, Default: true,
		Doc: "pass an ErrorContext(...) string naming the function, parameter and annotation to every run-time check (false: an empty string)",
	}},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	out, st, errs := LowerShapes(mod, env.Options().Bool("emit_err_ctx"))
	if err := errs.Err(); err != nil {
		return nil, err
	}
	env.Stat("heap_slots", int64(st.Slots))
	env.Stat("shape_funcs", int64(st.ShapeFuncs))
	env.Stat("checks", int64(st.Checks))
	return out, nil
}))

// Diagnostics VMShapeLower reports.
var (
	DiagNestedFunction = lowCodes.Define("LOW040", "a local function reached VMShapeLower (LambdaLift must run first)")
	DiagUncomputable   = lowCodes.Define("LOW041", "a symbolic expression no match point defines")
	DiagNeverMatches   = lowCodes.Define("LOW042", "a match_cast or result that can never hold")
	DiagShapePattern   = lowCodes.Define("LOW043", "a struct info VMShapeLower cannot check (a tensor whose shape is a var)")
)

// ShapeLowerStats counts what VMShapeLower emitted, over all functions.
type ShapeLowerStats struct {
	Slots      int // shape heap slots
	ShapeFuncs int // shape_func calls (deduplicated PrimFuncs may be shared)
	Checks     int // check_* and match_* calls
}

// LowerShapes lowers every Relax function's symbolic shape bookkeeping to
// explicit VM builtin calls on a per-invocation shape heap, after TVM:
//
//   - Slots: every distinct non-constant PrimExpr in the parameters' struct
//     info, the body (values and the struct info of calls, tuples, shapes)
//     and match_cast and return struct info gets a heap slot, in first
//     occurrence order. The heap is
//     R.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", (R.prim_value(slots),), ...)
//     or R.null_value() when there are no slots.
//   - Match points: function entry (every parameter, always checked: callers
//     are untrusted; parameters at index >= num_input only when their shape
//     is not static), every match_cast (only what static struct info does
//     not already prove) and the return value. Each emits the check_* calls
//     and vm.builtin.match_shape / match_prim_value with per-dimension codes:
//     0 assert equal to an immediate, 1 store a variable to the heap, 2 no-op
//     (a composite not computed yet), 3 assert equal to a heap slot.
//     Composites whose variables are now known are computed by a generated
//     host PrimFunc shape_func(H) (H[slot] = expression over H), then the
//     match is repeated for them.
//   - Values: a ShapeExpr with a symbolic dimension becomes
//     vm.builtin.make_shape(heap, ndim, code, value, ...) (0 immediate, 1
//     heap slot), a symbolic PrimValue vm.builtin.make_prim_value.
//     Struct info is left alone, so VMShapeLower must be the last pass that
//     rewrites values.
//   - Every check carries an "ErrorContext(fn=..., loc=..., ...) " string,
//     or "" when emitErrCtx is false.
//
// Deviations from TVM, all on inputs TVM aborts on or orders arbitrarily:
// a local function, a symbolic expression that no match point defines and
// a tensor whose shape is a var are diagnostics instead of crashes; a
// match_cast or result whose struct info provably contradicts the value's is
// a diagnostic (TVM emits a check that always fails); composites computed
// at one match point are computed in slot order (TVM follows an unordered
// map); a match_cast is re-emitted with its rewritten value. Slots are
// keyed on the canonical form ir.Simplify gives (the form the printer
// shows), so that a module parsed from text and the same module built by
// earlier passes lower alike; TVM compares the expressions as they are. As
// in TVM's BlockBuilder::AddFunction, a shape_func structurally equal to a
// PrimFunc already in the module is that function.
//
//	phasec opt --passes VMShapeLower testdata/passes/VMShapeLower/symbolic.tvms
//	phasec opt --passes 'VMShapeLower{emit_err_ctx=false}' testdata/passes/VMShapeLower/tuples.tvms
//	phasec opt --passes canonicalize,lower,build --summary testdata/models/mlp_legalized.tvms
func LowerShapes(mod *ir.Module, emitErrCtx bool) (*ir.Module, ShapeLowerStats, diag.List) {
	out := mod.Clone()
	l := &shapeLowering{
		emitErrCtx: emitErrCtx,
		rw:         ir.NewRewriter(out),
		adder:      newFuncAdder(out, true),
	}
	l.rw.PostExpr = l.postExpr
	l.rw.Binding = l.binding
	l.rw.Branch = l.branch
	for _, name := range mod.Names() {
		fn := mod.Func(name)
		if fn == nil {
			continue
		}
		out.Set(name, l.function(name, fn))
	}
	errs := append(l.errs, l.rw.B.Diagnostics()...)
	errs.Sort()
	return out, l.stats, errs
}

// primSlot is a shape heap slot: one distinct symbolic expression.
type primSlot struct {
	expr  ir.PrimExpr
	index int
	// users are the composite slots whose expressions mention this
	// variable's slot; outstanding counts a composite's variables not yet
	// stored.
	users       []*primSlot
	outstanding int
	computed    bool
}

// matchItem is a value whose shape (or prim value) must match pattern.
type matchItem struct {
	input   ir.Expr
	pattern []ir.PrimExpr
	errCtx  string
}

type shapeLowering struct {
	emitErrCtx bool
	rw         *ir.Rewriter
	adder      *funcAdder
	errs       diag.List
	stats      ShapeLowerStats

	// Per function.
	fnName string
	slots  []*primSlot
	byVar  map[*ir.PrimVar]*primSlot
	byKey  map[string]*primSlot
	varIDs map[*ir.PrimVar]int
	canon  map[ir.PrimExpr]ir.PrimExpr
	// Shared leaves and struct info (see extern).
	externs map[string]*ir.ExternFunc
	ndims   []*ir.ShapeInfo
	heap    *ir.Var
	ready   []*primSlot
	// forks are the slot states saved at the Ifs being rewritten (see branch).
	forks []ifFork
	// span positions diagnostics about the match point being lowered.
	span diag.Span
}

func (l *shapeLowering) errorf(span diag.Span, code diag.Code, format string, args ...any) {
	if !span.IsValid() {
		span = l.span
	}
	l.errs.Add(span, code, format, args...)
}

func (l *shapeLowering) function(name string, fn *ir.Function) *ir.Function {
	l.fnName = name
	l.slots = nil
	l.byVar = map[*ir.PrimVar]*primSlot{}
	l.byKey = map[string]*primSlot{}
	l.varIDs = map[*ir.PrimVar]int{}
	l.canon = map[ir.PrimExpr]ir.PrimExpr{}
	l.ready = nil
	l.span = fn.Span()
	l.collect(fn)
	l.populateUsers()
	l.stats.Slots += len(l.slots)

	numInput := len(fn.Params)
	if n, ok := fn.Attrs.Int(ir.AttrNumInput); ok && n >= 0 && int(n) < numInput {
		numInput = int(n)
	}
	prologue := func(rw *ir.Rewriter) {
		l.heap = rw.B.Emit(l.allocHeap(), "shape_heap")
		var todo []matchItem
		for i, p := range fn.Params {
			l.span = p.Span()
			s := p.StructInfo()
			errCtx := fmt.Sprintf("ErrorContext(fn=%s, loc=param[%d], param=%s, annotation=%s) ", name, i, p.Name, ir.FormatStructInfo(s, nil))
			l.checkMatchCast(s, p, true, i >= numInput, errCtx, &todo)
		}
		l.match(todo)
	}
	epilogue := func(rw *ir.Rewriter, result ir.Expr) {
		l.span = fn.Span()
		if seq, ok := fn.Body.(*ir.SeqExpr); ok && seq.Body.Span().IsValid() {
			l.span = seq.Body.Span()
		}
		l.neverMatches(fn.Ret, result, "the result")
		var todo []matchItem
		errCtx := fmt.Sprintf("ErrorContext(fn=%s, loc=return, annotation=%s) ", name, ir.FormatStructInfo(fn.Ret, nil))
		l.checkMatchCast(fn.Ret, result, false, false, errCtx, &todo)
		// Everything the result's struct info mentions must be known by now.
		l.runMatch(todo, true)
	}
	if straightLine(fn) {
		return l.functionSpliced(fn, prologue, epilogue)
	}
	return l.rw.FunctionAround(fn, prologue, epilogue)
}

// match runs a match point: store what can be stored, compute the
// composites that became computable, then check them.
func (l *shapeLowering) match(todo []matchItem) {
	todo = l.runMatch(todo, false)
	l.emitOutstandingCompute()
	l.runMatch(todo, true)
}

// allocHeap is the shape heap's value: an int64 tensor of one element per
// slot on the host, or the null object when no slot is needed.
func (l *shapeLowering) allocHeap() ir.Expr {
	if len(l.slots) == 0 {
		return ir.NewCall(op.NullValue)
	}
	heapInfo := ir.TensorInfoNDim(ir.Int64, 1)
	return &ir.Call{
		Op:        op.CallBuiltinWithCtx,
		Args:      []ir.Expr{ir.NewExternFunc(abi.BuiltinAllocShapeHeap), ir.NewTuple(i64Value(int64(len(l.slots))))},
		SInfoArgs: []ir.StructInfo{heapInfo},
	}
}

func i64Value(v int64) *ir.PrimValue { return ir.NewPrimValue(ir.I64(v)) }

// smallValues holds R.prim_value(0) ... R.prim_value(255), normalized: the
// codes, ranks and slot indices of the shape builtins. Leaves are immutable
// and may be shared.
var smallValues = func() []*ir.PrimValue {
	out := make([]*ir.PrimValue, 256)
	for i := range out {
		out[i] = i64Value(int64(i))
		out[i].SetStructInfo(ir.PrimInfoOf(out[i].Value))
	}
	return out
}()

// smallValue is R.prim_value(v), shared for small v.
func smallValue(v int64) *ir.PrimValue {
	if v >= 0 && v < int64(len(smallValues)) {
		return smallValues[v]
	}
	return i64Value(v)
}

// emitCheck emits a void packed call to a check or match builtin.
func (l *shapeLowering) emitCheck(builtin string, args ...ir.Expr) {
	l.stats.Checks++
	l.rw.B.Emit(packed(builtin, ir.VoidInfo(), args...), "_")
}

func (l *shapeLowering) errCtx(s string) ir.Expr {
	if !l.emitErrCtx {
		s = ""
	}
	return ir.NewStringImm(s)
}

// Slot collection (TVM's PrimExprSlotCollector).

func (l *shapeLowering) collect(fn *ir.Function) {
	for _, p := range fn.Params {
		l.collectSInfo(p.StructInfo())
	}
	l.collectExpr(fn.Body)
	l.collectSInfo(fn.Ret)
}

// collectExpr visits e as TVM's ExprVisitor does: operands, then the
// struct info of calls, tuples, shapes, Ifs and scopes. Local functions are
// not entered (they are reported when rewriting).
func (l *shapeLowering) collectExpr(e ir.Expr) {
	switch e := e.(type) {
	case *ir.SeqExpr:
		for _, blk := range e.Blocks {
			for _, bind := range blk.Bindings {
				switch bd := bind.(type) {
				case *ir.VarBinding:
					l.collectExpr(bd.Value)
				case *ir.MatchCast:
					l.collectSInfo(bd.SInfo)
				}
			}
		}
		l.collectExpr(e.Body)
		l.collectSInfo(e.StructInfo())
	case *ir.Call:
		l.collectExpr(e.Op)
		for _, s := range e.SInfoArgs {
			l.collectSInfo(s)
		}
		for _, a := range e.Args {
			l.collectExpr(a)
		}
		l.collectSInfo(e.StructInfo())
	case *ir.Tuple:
		for _, f := range e.Fields {
			l.collectExpr(f)
		}
		l.collectSInfo(e.StructInfo())
	case *ir.TupleGetItem:
		l.collectExpr(e.Tuple)
	case *ir.ShapeExpr:
		for _, v := range e.Values {
			l.collectPrim(v)
		}
	case *ir.PrimValue:
		l.collectPrim(e.Value)
	case *ir.If:
		l.collectExpr(e.Cond)
		l.collectExpr(e.Then)
		l.collectExpr(e.Else)
		l.collectSInfo(e.StructInfo())
	}
}

func (l *shapeLowering) collectSInfo(s ir.StructInfo) {
	switch s := s.(type) {
	case *ir.TensorInfo:
		if se, ok := s.Shape.(*ir.ShapeExpr); ok {
			l.collectExpr(se)
		}
	case *ir.ShapeInfo:
		for _, v := range s.Values {
			l.collectPrim(v)
		}
	case *ir.PrimInfo:
		if s.Value != nil {
			l.collectPrim(s.Value)
		}
	case *ir.TupleInfo:
		for _, f := range s.Fields {
			l.collectSInfo(f)
		}
	}
}

func (l *shapeLowering) collectPrim(e ir.PrimExpr) {
	e = l.canonical(e)
	if _, ok := e.(*ir.IntImm); ok {
		return
	}
	if l.lookup(e) != nil {
		return
	}
	s := &primSlot{expr: e, index: len(l.slots)}
	l.slots = append(l.slots, s)
	if v, ok := e.(*ir.PrimVar); ok {
		l.byVar[v] = s
	} else {
		l.byKey[l.key(e)] = s
	}
}

// canonical is e in the canonical form ir.Simplify gives, the form the
// printer shows: expressions that print alike share a slot, whether they
// were parsed or built by a pass (TVM compares them syntactically, and its
// passes build them simplified).
func (l *shapeLowering) canonical(e ir.PrimExpr) ir.PrimExpr {
	switch e.(type) {
	case *ir.IntImm, *ir.PrimVar:
		return e
	}
	if c, ok := l.canon[e]; ok {
		return c
	}
	c := ir.Simplify(e)
	l.canon[e] = c
	return c
}

// lookup returns the slot of e, a canonical expression (compared as TVM's
// ExprDeepEqual does: syntactically, variables by identity), or nil.
func (l *shapeLowering) lookup(e ir.PrimExpr) *primSlot {
	if v, ok := e.(*ir.PrimVar); ok {
		return l.byVar[v]
	}
	return l.byKey[l.key(e)]
}

// key spells e with variables numbered by identity, so two expressions
// have the same key exactly when they are deeply equal.
func (l *shapeLowering) key(e ir.PrimExpr) string {
	return string(l.appendKey(nil, e))
}

func (l *shapeLowering) appendKey(b []byte, e ir.PrimExpr) []byte {
	switch e := e.(type) {
	case *ir.IntImm:
		b = append(b, 'i')
		b = append(b, e.Type.String()...)
		b = append(b, ':')
		return strconv.AppendInt(b, e.Value, 10)
	case *ir.FloatImm:
		b = append(b, 'f')
		b = append(b, e.Type.String()...)
		b = append(b, ':')
		return strconv.AppendFloat(b, e.Value, 'g', -1, 64)
	case *ir.PrimVar:
		id, ok := l.varIDs[e]
		if !ok {
			id = len(l.varIDs)
			l.varIDs[e] = id
		}
		b = append(b, 'v')
		return strconv.AppendInt(b, int64(id), 10)
	case *ir.Binary:
		b = append(b, '(')
		b = strconv.AppendInt(b, int64(e.Op), 10)
		b = append(b, ' ')
		b = l.appendKey(b, e.A)
		b = append(b, ' ')
		b = l.appendKey(b, e.B)
		return append(b, ')')
	case *ir.Not:
		b = append(b, "(!"...)
		b = l.appendKey(b, e.A)
		return append(b, ')')
	case *ir.Select:
		b = append(b, "(?"...)
		for _, x := range []ir.PrimExpr{e.Cond, e.True, e.False} {
			b = append(b, ' ')
			b = l.appendKey(b, x)
		}
		return append(b, ')')
	case *ir.Cast:
		b = append(b, "(cast "...)
		b = append(b, e.Type.String()...)
		b = append(b, ' ')
		b = l.appendKey(b, e.Value)
		return append(b, ')')
	case *ir.PrimCall:
		b = append(b, "(call "...)
		b = append(b, e.Op...)
		b = append(b, ' ')
		b = append(b, e.Type.String()...)
		for _, a := range e.Args {
			b = append(b, ' ')
			b = l.appendKey(b, a)
		}
		return append(b, ')')
	}
	// Strings and buffer loads do not occur in shapes; spell them uniquely
	// by printing.
	return append(b, fmt.Sprintf("(%T %s)", e, ir.FormatPrim(e, nil))...)
}

// populateUsers links every composite slot to the slots of its variables
// (TVM's PopulateSlotInfo). A variable without a slot of its own is never
// defined by a match point, so the composite cannot be computed.
func (l *shapeLowering) populateUsers() {
	for _, s := range l.slots {
		if _, ok := s.expr.(*ir.PrimVar); ok {
			continue
		}
		deps := ir.PrimVarsIn(s.expr)
		for _, v := range deps {
			vs := l.byVar[v]
			if vs == nil {
				l.errorf(s.expr.Span(), DiagUncomputable, "%s in function %s: symbolic variable %s is never defined by a parameter or match_cast on its own, so the VM cannot compute it (define it with R.match_cast)",
					ir.FormatPrim(s.expr, nil), l.fnName, v.Name)
				continue
			}
			vs.users = append(vs.users, s)
		}
		s.outstanding += len(deps)
	}
}

// Value rewriting.

func (l *shapeLowering) postExpr(_ *ir.Rewriter, e ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.ShapeExpr:
		if allConstant(e.Values) {
			return e
		}
		args := make([]ir.Expr, 0, 2+2*len(e.Values))
		args = append(args, l.heap, smallValue(int64(len(e.Values))))
		for _, v := range e.Values {
			code, arg := l.makeShapeArg(v, e.Span())
			args = append(args, smallValue(int64(code)), arg)
		}
		sinfo := l.shapeInfoNDim(len(e.Values))
		c := &ir.Call{Op: l.extern(abi.BuiltinMakeShape), Args: args, SInfoArgs: []ir.StructInfo{sinfo}}
		c.SetSpan(e.Span())
		c.SetStructInfo(sinfo)
		return l.rw.B.Normalize(c) // the operands' struct info
	case *ir.PrimValue:
		switch e.Value.(type) {
		case *ir.IntImm, *ir.FloatImm:
			return e
		}
		code, arg := l.makeShapeArg(e.Value, e.Span())
		sinfo := e.StructInfo()
		if sinfo == nil {
			sinfo = ir.PrimInfoOf(e.Value)
		}
		c := packed(abi.BuiltinMakePrimValue, sinfo, l.heap, i64Value(int64(code)), arg)
		c.SetSpan(e.Span())
		c.SetStructInfo(sinfo)
		return l.rw.B.Normalize(c)
	case *ir.Function:
		l.errorf(e.Span(), DiagNestedFunction, "local function in %s: VMShapeLower needs module-level functions only (run LambdaLift, or the canonicalize barrier, first)", l.fnName)
	}
	return e
}

// extern is the normalized ExternFunc leaf naming a builtin, shared by
// every call of it (leaves are immutable): one allocation per builtin rather
// than per call on large functions.
func (l *shapeLowering) extern(name string) *ir.ExternFunc {
	if f, ok := l.externs[name]; ok {
		return f
	}
	f := l.rw.B.Normalize(ir.NewExternFunc(name)).(*ir.ExternFunc)
	if l.externs == nil {
		l.externs = map[string]*ir.ExternFunc{}
	}
	l.externs[name] = f
	return f
}

// shapeInfoNDim is R.Shape(ndim=n), shared (struct info is immutable).
func (l *shapeLowering) shapeInfoNDim(n int) *ir.ShapeInfo {
	for len(l.ndims) <= n {
		l.ndims = append(l.ndims, ir.ShapeInfoNDim(len(l.ndims)))
	}
	return l.ndims[n]
}

// makeShapeArg is the code and operand of one dimension of make_shape.
func (l *shapeLowering) makeShapeArg(e ir.PrimExpr, span diag.Span) (abi.MakeCode, ir.Expr) {
	e = l.canonical(e)
	if c, ok := e.(*ir.IntImm); ok {
		return abi.MakeUseImm, smallValue(c.Value)
	}
	s := l.lookup(e)
	if s == nil || !s.computed {
		l.errorf(span, DiagUncomputable, "%s in function %s is not computed at this point: no parameter or earlier match_cast defines its variables", ir.FormatPrim(e, nil), l.fnName)
		return abi.MakeUseImm, i64Value(0)
	}
	return abi.MakeLoadShape, smallValue(int64(s.index))
}

func (l *shapeLowering) binding(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
	mc, ok := bind.(*ir.MatchCast)
	if !ok {
		return false
	}
	l.span = mc.Span()
	// value is rewritten but not yet normalized.
	value = rw.B.NormalizeArgument(value)
	if l.neverMatches(mc.SInfo, value, "R.match_cast") {
		rw.ReEmit(bind, value)
		return true
	}
	var todo []matchItem
	errCtx := fmt.Sprintf("ErrorContext(match_cast, struct_info=%s) ", ir.FormatStructInfo(mc.SInfo, nil))
	l.checkMatchCast(mc.SInfo, value, false, false, errCtx, &todo)
	l.match(todo)
	// Code generation compiles the match_cast itself as a copy.
	rw.ReEmit(bind, value)
	return true
}

// neverMatches reports a match whose pattern contradicts what is statically
// known of the value: the run-time check could only fail.
func (l *shapeLowering) neverMatches(pattern ir.StructInfo, value ir.Expr, what string) bool {
	vinfo := value.StructInfo()
	if vinfo == nil || ir.StructInfoBaseCheck(pattern, vinfo) != ir.FailL0 {
		return false
	}
	l.errorf(l.span, DiagNeverMatches, "%s can never hold: %s is %s, which %s excludes",
		what, ir.FormatExpr(value, nil), ir.FormatStructInfo(vinfo, nil), ir.FormatStructInfo(pattern, nil))
	return true
}

// Matching (TVM's CheckMatchCast, a StructInfoFunctor).

// checkMatchCast emits the checks that value has the kind, rank, dtype and
// size sinfo requires and queues its shapes and prim values in todo.
// alwaysCheck emits checks even where static info proves them;
// dynamicOnly skips tensors of static shape (weights).
func (l *shapeLowering) checkMatchCast(sinfo ir.StructInfo, value ir.Expr, alwaysCheck, dynamicOnly bool, errCtx string, todo *[]matchItem) {
	vinfo := value.StructInfo()
	if vinfo == nil {
		vinfo = ir.Object()
	}
	if !alwaysCheck && ir.IsBaseOf(sinfo, vinfo) {
		return
	}
	switch s := sinfo.(type) {
	case *ir.PrimInfo:
		if vp, ok := vinfo.(*ir.PrimInfo); !ok || vp.DType != s.DType || alwaysCheck {
			l.emitCheck(abi.BuiltinCheckPrimValueInfo, value, ir.NewDataTypeImm(s.DType), l.errCtx(errCtx))
		}
		// The shape heap holds int64: a float value (R.Prim(value=T.float32(0.5)),
		// which the Optimize phase's re-derived annotations can carry) is
		// checked by dtype only, as it defines no symbolic variable.
		if s.Value != nil && !s.DType.IsFloat() {
			*todo = append(*todo, matchItem{input: value, pattern: []ir.PrimExpr{s.Value}, errCtx: errCtx})
		}
	case *ir.ShapeInfo:
		if alwaysCheck || !ir.IsBaseOf(ir.ShapeInfoNDim(s.NDim), vinfo) {
			l.emitCheck(abi.BuiltinCheckShapeInfo, value, i64Value(int64(s.NDim)), l.errCtx(errCtx))
		}
		if s.Known() {
			*todo = append(*todo, matchItem{input: value, pattern: s.Values, errCtx: errCtx})
		}
	case *ir.TensorInfo:
		if dynamicOnly {
			if se, ok := s.Shape.(*ir.ShapeExpr); ok && allConstant(se.Values) {
				return
			}
		}
		if alwaysCheck || !ir.IsBaseOf(ir.TensorInfoNDim(s.DType, s.NDim), vinfo) {
			l.emitCheck(abi.BuiltinCheckTensorInfo, value, i64Value(int64(s.NDim)), ir.NewDataTypeImm(s.DType), l.errCtx(errCtx))
		}
		switch sh := s.Shape.(type) {
		case *ir.ShapeExpr:
			*todo = append(*todo, matchItem{input: value, pattern: sh.Values, errCtx: errCtx})
		case *ir.Var:
			l.errorf(l.span, DiagShapePattern, "%s: a tensor whose shape is the var %s cannot be checked by VMShapeLower (TVM leaves this unsupported); annotate the shape's dimensions instead",
				ir.FormatStructInfo(s, nil), sh.Name)
		}
	case *ir.TupleInfo:
		vt, isTuple := vinfo.(*ir.TupleInfo)
		if isTuple && len(vt.Fields) != len(s.Fields) {
			l.errorf(l.span, DiagNeverMatches, "%s tuple size mismatch: %s has %d fields, the pattern %d", errCtx, ir.FormatExpr(value, nil), len(vt.Fields), len(s.Fields))
			return
		}
		if alwaysCheck || !isTuple {
			l.emitCheck(abi.BuiltinCheckTupleInfo, value, i64Value(int64(len(s.Fields))), l.errCtx(errCtx))
		}
		for i, f := range s.Fields {
			l.checkMatchCast(f, l.tupleItem(value, i), alwaysCheck, dynamicOnly, errCtx, todo)
		}
	case *ir.FuncInfo:
		if _, ok := vinfo.(*ir.FuncInfo); ok && !alwaysCheck {
			return
		}
		l.emitCheck(abi.BuiltinCheckFuncInfo, value, l.errCtx(errCtx))
	}
}

func allConstant(vals []ir.PrimExpr) bool {
	for _, v := range vals {
		if _, ok := v.(*ir.IntImm); !ok {
			return false
		}
	}
	return true
}

// tupleItem is field i of value: the field itself for a tuple literal, a
// projection when value is statically a tuple, vm.builtin.tuple_getitem
// otherwise. A projection is an operand the builder binds once per block.
func (l *shapeLowering) tupleItem(value ir.Expr, i int) ir.Expr {
	if t, ok := value.(*ir.Tuple); ok {
		return t.Fields[i]
	}
	if _, ok := value.StructInfo().(*ir.TupleInfo); ok {
		return l.rw.B.Normalize(&ir.TupleGetItem{Tuple: value, Index: i})
	}
	return l.rw.B.Emit(packed(abi.BuiltinTupleGetItem, ir.Object(), value, i64Value(int64(i))), "tuple_item")
}

// runMatch emits match_shape / match_prim_value for each item (unless
// every dimension is a no-op) and returns the items with composites not
// computed yet. With requireComputed, every composite must be computed.
func (l *shapeLowering) runMatch(todo []matchItem, requireComputed bool) []matchItem {
	var outstanding []matchItem
	for _, it := range todo {
		builtin := abi.BuiltinMatchShape
		args := []ir.Expr{it.input, l.heap}
		if _, ok := it.input.StructInfo().(*ir.PrimInfo); ok {
			builtin = abi.BuiltinMatchPrimValue
		} else {
			args = append(args, i64Value(int64(len(it.pattern))))
		}
		allNoOp, anyNoOp := true, false
		for _, e := range it.pattern {
			code, arg := l.matchArg(e, requireComputed)
			allNoOp = allNoOp && code == abi.MatchNoOp
			anyNoOp = anyNoOp || code == abi.MatchNoOp
			args = append(args, smallValue(int64(code)), arg)
		}
		if anyNoOp {
			outstanding = append(outstanding, it)
		}
		args = append(args, l.errCtx(it.errCtx))
		if !allNoOp {
			l.emitCheck(builtin, args...)
		}
	}
	return outstanding
}

// matchArg is the code and operand of one dimension of a match. A variable
// seen for the first time is stored and becomes ready.
func (l *shapeLowering) matchArg(e ir.PrimExpr, requireComputed bool) (abi.MatchCode, ir.Expr) {
	e = l.canonical(e)
	if c, ok := e.(*ir.IntImm); ok {
		return abi.MatchAssertEqualToImm, smallValue(c.Value)
	}
	s := l.lookup(e)
	if s == nil {
		l.errorf(diag.Span{}, DiagUncomputable, "%s in function %s has no shape heap slot", ir.FormatPrim(e, nil), l.fnName)
		return abi.MatchNoOp, i64Value(0)
	}
	if s.computed {
		return abi.MatchAssertEqualToLoad, smallValue(int64(s.index))
	}
	if requireComputed {
		l.errorf(diag.Span{}, DiagUncomputable, "%s in function %s is not computed at this point: no parameter or earlier match_cast defines its variables", ir.FormatPrim(e, nil), l.fnName)
		return abi.MatchNoOp, i64Value(0)
	}
	if _, ok := e.(*ir.PrimVar); ok {
		s.computed = true
		l.ready = append(l.ready, s)
		return abi.MatchStoreToHeap, smallValue(int64(s.index))
	}
	return abi.MatchNoOp, i64Value(0)
}

// emitOutstandingCompute computes, in one generated shape_func, every
// composite whose variables are all stored now, and calls it on the heap.
func (l *shapeLowering) emitOutstandingCompute() {
	var todo []*primSlot
	for _, v := range l.ready {
		for _, u := range v.users {
			u.outstanding--
			if u.outstanding == 0 {
				todo = append(todo, u)
			}
		}
	}
	l.ready = l.ready[:0]
	if len(todo) == 0 {
		return
	}
	size := ir.I64(int64(len(l.slots)))
	param := ir.NewPrimVar("H", ir.Handle)
	heap := ir.NewBuffer("H", []ir.PrimExpr{size}, ir.Int64)
	load := map[*ir.PrimVar]ir.PrimExpr{}
	for v, s := range l.byVar {
		load[v] = &ir.BufferLoad{Buffer: heap, Indices: []ir.PrimExpr{ir.I64(int64(s.index))}}
	}
	stmts := make([]ir.Stmt, 0, len(todo))
	for _, s := range todo {
		s.computed = true
		stmts = append(stmts, &ir.BufferStore{Buffer: heap, Indices: []ir.PrimExpr{ir.I64(int64(s.index))}, Value: ir.SubstitutePrim(s.expr, load)})
	}
	var body ir.Stmt = &ir.SeqStmt{Stmts: stmts}
	if len(stmts) == 1 {
		body = stmts[0]
	}
	pf := &ir.PrimFunc{
		Params:    []*ir.PrimVar{param},
		BufferMap: map[*ir.PrimVar]*ir.Buffer{param: heap},
		Body:      body,
		Ret:       ir.Void,
		Attrs:     ir.Attrs{attrIsHostFunc: true},
	}
	name := l.adder.add(pf, "shape_func")
	l.stats.ShapeFuncs++
	l.rw.B.Emit(ir.NewCall(ir.NewGlobalVar(name), l.heap), "_")
}

// attrIsHostFunc marks the generated PrimFuncs as host code (TVM's
// tir::attr::kIsHostFunc): they read and write the shape heap on the CPU.
const attrIsHostFunc = "tir.is_host_func"

// slotState is what a point in a function knows about every slot.
type slotState struct {
	computed    []bool
	outstanding []int
}

func (l *shapeLowering) saveSlots() slotState {
	st := slotState{computed: make([]bool, len(l.slots)), outstanding: make([]int, len(l.slots))}
	for i, s := range l.slots {
		st.computed[i], st.outstanding[i] = s.computed, s.outstanding
	}
	return st
}

func (l *shapeLowering) restoreSlots(st slotState) {
	for i, s := range l.slots {
		s.computed, s.outstanding = st.computed[i], st.outstanding[i]
	}
}

// ifFork holds the slot states of one If: before it, and at the end of its
// then branch.
type ifFork struct{ before, then slotState }

// branch forks the slot state at an If and joins it after: each branch
// starts from what was known before the If, and after it a slot is known
// only when both branches stored it. (TVM's VMShapeLower keeps one state
// across both branches, so a variable first matched in the then branch is
// asserted against a slot the else branch never filled.)
func (l *shapeLowering) branch(_ *ir.Rewriter, _ *ir.If, at ir.BranchPoint) {
	switch at {
	case ir.BeforeThen:
		l.forks = append(l.forks, ifFork{before: l.saveSlots()})
	case ir.BeforeElse:
		f := &l.forks[len(l.forks)-1]
		f.then = l.saveSlots()
		l.restoreSlots(f.before)
	case ir.AfterIf:
		f := l.forks[len(l.forks)-1]
		l.forks = l.forks[:len(l.forks)-1]
		for i, s := range l.slots {
			s.computed = s.computed && f.then.computed[i]
			s.outstanding = max(s.outstanding, f.then.outstanding[i])
		}
	}
}
