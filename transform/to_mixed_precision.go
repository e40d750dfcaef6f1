package transform

import (
	"fmt"
	"math"
	"slices"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/internal/ptrmap"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// ToMixedPrecision is TVM's automatic mixed precision pass
// (src/relax/transform/to_mixed_precision.cc, with the options of
// python/tvm/relax/transform/transform.py): in the dataflow blocks of a
// float32 model, the ops that dominate its cost (matmul, conv, attention:
// op.MixedAlways) take their operands in a 16-bit storage dtype and
// accumulate in out_dtype; the ops around them compute in 16 bits when all
// their operands already are (op.MixedFollow), and the numerically touchy
// ones (softmax, reductions, everything TVM does not list: op.MixedNever)
// stay in float32. Each op's policy is its op.Def's MixedPrecision.
//
// It works in two walks over each function, as TVM's:
//   - backward, it decides which tensors only MixedAlways ops use: those
//     are stored in 16 bits (cast once, right after their binding, or at
//     the start of the block for parameters) and every other tensor keeps
//     its op's natural result dtype;
//   - forward, it rewrites each binding by its op's policy, casting an
//     operand where its stored dtype is not the one the op takes. A
//     MixedAlways result is stored in 16 bits; a block's output (a
//     non-dataflow var) always gets its original dtype back, so the
//     function's signature and the values it returns keep their dtypes.
//
// Options: out_dtype is the accumulation dtype of the MixedAlways ops
// ("float32", TVM's default, or the storage dtype); fp16_input_names
// lists parameters whose dtype becomes the storage dtype (the signature
// changes: callers pass 16-bit weights). storage_dtype is phasec's
// addition: "float16" (TVM's only choice) or "bfloat16" (same exponent
// range as float32, so every finite float32 constant fits).
//
// Differences from TVM, each a fix: a tensor cast to 16 bits is a name of
// its block only (TVM keeps a block output's cast across blocks and a
// later block would use a dataflow var of an earlier one); a block's
// parameters are cast at its start only when the block uses them; the
// fp16_input_names parameters stay converted in every block (TVM forgets
// them after the first); R.nn.attention keeps its attributes (TVM's
// FInferMixedPrecision rebuilds it without its bias, scale and mask).
// Bindings outside dataflow blocks are left alone, as in TVM: run
// ConvertToDataflow first on a module without dataflow blocks.
var ToMixedPrecision = passes.Define(passes.Info{
	Name:     "ToMixedPrecision",
	Doc:      "store tensors in float16 (or bfloat16) where only matmul/conv/attention use them, compute those in 16 bits accumulating in out_dtype, and the ops around them in 16 bits when their operands are",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized:      "it rewrites dataflow blocks binding by binding and reads every operand's struct info (its dtype)",
		phase.NoOffloadGroups: "an offload group's body is the pattern its codegen matched in float32; casts inside it would break the match",
	},
	Precedes: map[phase.Property]string{
		phase.Legalized:  "it rewrites high-level ops (matmul, conv, elementwise) by each op's mixed-precision policy; LegalizeOps turns them into call_tir kernels it cannot see into",
		phase.NoDataflow: "it rewrites only dataflow blocks (TVM's pass does), which ToNonDataflow removes",
	},
	Options: []passes.Option{
		{Name: "out_dtype", Type: passes.String, Default: "float32",
			Doc:   `the accumulation dtype of matmul, conv and attention: "float32" or the storage dtype ("float16", "bfloat16")`,
			Check: oneOf("float32", "float16", "bfloat16")},
		{Name: "fp16_input_names", Type: passes.Strings, Default: []string{},
			Doc: "parameters whose dtype becomes the storage dtype (the function's signature changes)"},
		{Name: "storage_dtype", Type: passes.String, Default: "float16",
			Doc:   `the 16-bit dtype tensors are stored in: "float16" (TVM's) or "bfloat16"`,
			Check: oneOf("float16", "bfloat16")},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	o := env.Options()
	return MixedPrecision(mod, o.String("out_dtype"), o.String("storage_dtype"), o.Strings("fp16_input_names"))
}))

// Codes of ToMixedPrecision.
var (
	codeMixedOutDType   = optCodes.Define("OPT620", "ToMixedPrecision: an out_dtype that is neither float32 nor the storage dtype")
	codeMixedInputName  = optCodes.Define("OPT621", "ToMixedPrecision: an fp16_input_names entry that names no parameter")
	codeMixedInputDType = optCodes.Define("OPT622", "ToMixedPrecision: an fp16_input_names parameter that is not a float32 tensor")
)

// MixedPrecision is ToMixedPrecision on mod with the pass's options: the
// accumulation dtype, the storage dtype and the parameters to convert.
func MixedPrecision(mod *ir.Module, outDType, storageDType string, inputNames []string) (*ir.Module, error) {
	low, err := ir.ParseDataType(storageDType)
	if err != nil || (low != ir.Float16 && low != ir.BFloat16) {
		return nil, fmt.Errorf("ToMixedPrecision: storage_dtype=%s is not float16 or bfloat16", storageDType)
	}
	out, err := ir.ParseDataType(outDType)
	var errs diag.List
	if err != nil || (out != ir.Float32 && out != low) {
		errs.Add(diag.Span{File: mod.Source}, codeMixedOutDType,
			"ToMixedPrecision: out_dtype=%s: the accumulation dtype must be float32 or the storage dtype %s", outDType, low)
		return nil, errs
	}
	names := mod.Names()
	convert := map[string]bool{}
	for _, n := range inputNames {
		convert[n] = true
	}
	// Every name must be a parameter of some function, a tensor of float32.
	found := map[string]bool{}
	var params []string
	for _, name := range names {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		for _, p := range f.Params {
			params = append(params, p.Name)
			if !convert[p.Name] {
				continue
			}
			found[p.Name] = true
			if t, ok := p.StructInfo().(*ir.TensorInfo); !ok || t.DType != ir.Float32 {
				errs.Add(p.Span(), codeMixedInputDType,
					"ToMixedPrecision: fp16_input_names names parameter %s of %s, a %s, not a float32 tensor", p.Name, name, ir.FormatStructInfo(p.StructInfo(), nil))
			}
		}
	}
	for _, n := range inputNames {
		if !found[n] {
			d := errs.Add(diag.Span{File: mod.Source}, codeMixedInputName,
				"ToMixedPrecision: fp16_input_names names %q, which is no function's parameter", n)
			if c := diag.Closest(n, params); c != "" {
				d.Msg += fmt.Sprintf(" (did you mean %q?)", c)
			}
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}

	res := mod
	for _, name := range names {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		if skip, _ := f.Attrs.Bool(ir.AttrSkipOptimize); skip {
			continue
		}
		m := &mixer{low: low, out: out, convert: convert}
		nf, errs := m.function(mod, f)
		if err := errs.Err(); err != nil {
			return nil, err
		}
		if nf != f {
			if res == mod {
				res = mod.Clone()
			}
			res.Set(name, nf)
		}
	}
	return res, nil
}

// need is what the backward walk learned of a tensor's uses: nothing yet,
// only MixedAlways operands (it can be stored in 16 bits), or some other
// use (it keeps its dtype). TVM keeps a dtype per tensor (float0, float16,
// float32) and takes the wider of two; the order here is the same.
type need uint8

const (
	needUnknown need = iota
	needLow
	needHigh
)

// needs is a need per tensor of a value: a leaf, or one per field of a
// tuple (TVM's NType over nested messages). The zero value is unknown.
type needs struct {
	leaf   need
	fields []needs // non-nil: a tuple
}

// needsFrom is n for every tensor of a value of struct info s.
func needsFrom(s ir.StructInfo, n need) needs {
	if t, ok := s.(*ir.TupleInfo); ok {
		fs := make([]needs, len(t.Fields))
		for i, f := range t.Fields {
			fs[i] = needsFrom(f, n)
		}
		return needs{fields: fs}
	}
	return needs{leaf: n}
}

// merge is the wider of a and b, tensor by tensor.
func (a needs) merge(b needs) needs {
	switch {
	case a.fields == nil && b.fields == nil:
		return needs{leaf: max(a.leaf, b.leaf)}
	case a.fields == nil:
		a, b = b, a
	}
	// a is a tuple; b a tuple of the same arity or a leaf for every field.
	fs := make([]needs, len(a.fields))
	for i := range fs {
		bf := needs{leaf: b.leaf}
		if b.fields != nil && i < len(b.fields) {
			bf = b.fields[i]
		}
		fs[i] = a.fields[i].merge(bf)
	}
	return needs{fields: fs}
}

// field is the needs of field i of a tuple's needs (a leaf applies to all).
func (a needs) field(i int) needs {
	if a.fields != nil && i < len(a.fields) {
		return a.fields[i]
	}
	return needs{leaf: a.leaf}
}

// dtypes is a dtype per tensor of a value: the target of a cast (TVM's
// NType in the rewriter). Void for what is not a tensor.
type dtypes struct {
	dt     ir.DataType
	fields []dtypes // non-nil: a tuple
}

// dtypesOf is the dtypes of a value of struct info s; with all set, every
// tensor's is all instead (TVM's NTypeFrom(expr, dtype)).
func dtypesOf(s ir.StructInfo, all ir.DataType) dtypes {
	switch s := s.(type) {
	case *ir.TupleInfo:
		fs := make([]dtypes, len(s.Fields))
		for i, f := range s.Fields {
			fs[i] = dtypesOf(f, all)
		}
		return dtypes{fields: fs}
	case *ir.TensorInfo:
		if !all.IsVoid() {
			return dtypes{dt: all}
		}
		return dtypes{dt: s.DType}
	}
	return dtypes{}
}

// policyOf is the policy of a call of an op, and false for a call of
// anything else (a function, a closure).
func policyOf(c *ir.Call) (op.MixedPrecisionPolicy, bool) {
	o, ok := c.Op.(*ir.Op)
	if !ok {
		return op.MixedPrecisionPolicy{}, false
	}
	if d, ok := op.DefOf(o); ok {
		return d.MixedPrecision, true
	}
	return op.MixedPrecisionPolicy{}, true
}

// mixer rewrites one function (and the functions nested in it).
type mixer struct {
	low, out ir.DataType     // storage and accumulation dtypes
	convert  map[string]bool // fp16_input_names

	// needOf is the backward walk's decision for each var of the input.
	// (The per-var tables are ptrmaps: their locality-keeping slots stay in
	// cache on large functions, where a Go map misses on every lookup.)
	needOf ptrmap.Map[ir.Var, needs]
	// blockStart maps the first binding of each dataflow block to the
	// block and the parameters of the function it is in.
	blockStart map[ir.Binding]blockInfo

	rw *ir.Rewriter
	// local is TVM's var_remap_ within the current dataflow block: a var
	// as the rewriter's own remapping leaves it (a fresh var, a converted
	// parameter) -> its 16-bit copy. Cleared at each block's start.
	local ptrmap.Map[ir.Var, *ir.Var]
	// orig is the original struct info of each var that replaced one of
	// the input (a converted parameter, a binding's fresh var, a 16-bit
	// copy): where an op takes an operand as it was, it is cast back.
	orig ptrmap.Map[ir.Var, ir.StructInfo]
}

type blockInfo struct {
	block  *ir.BindingBlock
	params []*ir.Var
}

// function rewrites f: the backward walk, then the forward one.
func (m *mixer) function(mod *ir.Module, f *ir.Function) (*ir.Function, diag.List) {
	m.needOf.Reset()
	m.blockStart = map[ir.Binding]blockInfo{}
	m.local.Reset()
	m.orig.Reset()
	m.collect(f)

	m.rw = ir.NewRewriter(mod)
	m.rw.Binding = m.binding
	// Converted parameters: the function takes them in the storage dtype
	// (TVM's fp16_input_names); uses everywhere see the new parameter.
	in := f
	for i, p := range f.Params {
		t, ok := p.StructInfo().(*ir.TensorInfo)
		if !m.convert[p.Name] || !ok || t.DType != ir.Float32 {
			continue
		}
		if in == f {
			nf := *f
			nf.Params = slices.Clone(f.Params)
			in = &nf
		}
		np := ir.NewVar(p.Name, &ir.TensorInfo{Shape: t.Shape, DType: m.low, NDim: t.NDim, VDevice: t.VDevice})
		np.SetSpan(p.Span())
		in.Params[i] = np
		m.rw.Remap(p, np)
		m.orig.Set(np, p.StructInfo())
	}
	out := m.rw.Function(in)
	errs := m.rw.B.Diagnostics()
	errs.Sort()
	if out == in && in != f {
		return in, errs
	}
	return out, errs
}

// collect is the backward walk (TVM's DTypeDecisionCollector) over every
// scope of f, nested functions included: each tensor var's needs, and
// where each dataflow block starts.
func (m *mixer) collect(f *ir.Function) {
	var fns []*ir.Function
	ir.Walk(f, &ir.Visitor{
		Expr: func(e ir.Expr) bool {
			switch e := e.(type) {
			case *ir.Function:
				fns = append(fns, e)
			case *ir.SeqExpr:
				params := fns[len(fns)-1].Params
				m.collectSeq(e, params)
			}
			return true
		},
		PostExpr: func(e ir.Expr) {
			if _, ok := e.(*ir.Function); ok {
				fns = fns[:len(fns)-1]
			}
		},
	})
}

// collectSeq walks one scope backward: its result, then its dataflow
// blocks from the last binding to the first (TVM skips the other blocks:
// their uses never see a 16-bit copy, which is local to its block).
func (m *mixer) collectSeq(seq *ir.SeqExpr, params []*ir.Var) {
	m.requireAll(seq.Body, needHigh)
	for i := len(seq.Blocks) - 1; i >= 0; i-- {
		blk := seq.Blocks[i]
		if !blk.Dataflow || len(blk.Bindings) == 0 {
			continue
		}
		m.blockStart[blk.Bindings[0]] = blockInfo{block: blk, params: params}
		for j := len(blk.Bindings) - 1; j >= 0; j-- {
			m.collectBinding(blk.Bindings[j])
		}
	}
}

// collectBinding records what one binding needs of its operands.
func (m *mixer) collectBinding(bind ir.Binding) {
	vb, ok := bind.(*ir.VarBinding)
	if !ok {
		m.requireAll(bind.(*ir.MatchCast).Value, needHigh)
		return
	}
	switch v := vb.Value.(type) {
	case *ir.Call:
		pol, isOp := policyOf(v)
		if !isOp {
			m.requireAll(v, needHigh)
			return
		}
		n := needHigh
		if pol.Kind == op.MixedAlways {
			n = needLow
		}
		for _, a := range v.Args {
			if s := a.StructInfo(); s != nil && isNestedTensor(s) {
				m.require(a, needsFrom(s, n))
			}
		}
	case *ir.Tuple:
		// Each field is needed as the tuple's var is.
		lhs := m.needsOfVar(vb.Var)
		for i, fld := range v.Fields {
			m.require(fld, lhs.field(i))
		}
	case *ir.TupleGetItem:
		// The tuple's field is needed as the var is; its other fields
		// not at all.
		ts, ok := v.Tuple.StructInfo().(*ir.TupleInfo)
		if !ok {
			m.requireAll(v.Tuple, needHigh)
			return
		}
		fs := make([]needs, len(ts.Fields))
		for i, f := range ts.Fields {
			if i == v.Index {
				fs[i] = m.needsOfVar(vb.Var)
			} else {
				fs[i] = needsFrom(f, needUnknown)
			}
		}
		m.require(v.Tuple, needs{fields: fs})
	default:
		m.requireAll(v, needHigh)
	}
}

// needsOfVar is what the uses seen so far need of v.
func (m *mixer) needsOfVar(v *ir.Var) needs {
	if n, ok := m.needOf.Get(v); ok {
		return n
	}
	return needsFrom(v.StructInfo(), needUnknown)
}

// require merges n into the needs of the vars of operand e: a var, or a
// tuple of them, field by field (TVM's DecomposeNestedMsg). Constants can
// be cast anyway and need nothing.
func (m *mixer) require(e ir.Expr, n needs) {
	switch e := e.(type) {
	case *ir.Var:
		if s := e.StructInfo(); s == nil || !isNestedTensor(s) {
			return
		}
		if old, ok := m.needOf.Get(e); ok {
			n = old.merge(n)
		}
		m.needOf.Set(e, n)
	case *ir.Tuple:
		for i, f := range e.Fields {
			m.require(f, n.field(i))
		}
	}
}

// requireAll requires n of every tensor var e uses (TVM's VisitVars_ on
// an expression the pass does not look into).
func (m *mixer) requireAll(e ir.Expr, n need) {
	ir.Inspect(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.Var:
			if s := x.StructInfo(); s != nil && isNestedTensor(s) {
				m.require(x, needsFrom(s, n))
			}
		case *ir.Function:
			return false // its own scopes are walked on their own
		}
		return true
	})
}

// binding is the forward walk's hook (TVM's ToMixedPrecisionRewriter):
// value is the binding's value with the rewriter's remapping applied
// (converted parameters, fresh vars). Bindings outside dataflow blocks are
// re-emitted as they are.
func (m *mixer) binding(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
	if !rw.B.InDataflowBlock() {
		return false
	}
	if start, ok := m.blockStart[bind]; ok {
		m.startBlock(start)
	}
	vb, ok := bind.(*ir.VarBinding)
	if !ok {
		// A match_cast checks the value as it was; a cast back is bound
		// to a var first (A-normal form: a match_cast's value is a leaf).
		m.reEmit(bind, m.rw.B.NormalizeArgument(m.castBack(value)))
		return true
	}
	switch v := value.(type) {
	case *ir.Call:
		m.call(vb, v)
	case *ir.Tuple:
		nt := ir.NewTuple(m.remapAll(v.Fields)...)
		nt.SetSpan(v.Span())
		m.emitKeepingOutputs(vb, nt)
	case *ir.TupleGetItem:
		ng := &ir.TupleGetItem{Tuple: m.remap(v.Tuple), Index: v.Index}
		ng.SetSpan(v.Span())
		m.emitKeepingOutputs(vb, ng)
	default:
		m.reEmit(bind, m.castBack(value))
	}
	if vb.Var.Dataflow {
		m.storeLow(vb.Var)
	}
	return true
}

// startBlock clears the previous block's 16-bit copies and casts the
// parameters this block uses only as MixedAlways operands (TVM casts every
// such parameter at every block's start).
func (m *mixer) startBlock(start blockInfo) {
	m.local.Reset()
	used := map[*ir.Var]bool{}
	for _, p := range start.params {
		if n, ok := m.needOf.Get(p); ok && hasLow(n) {
			used[p] = false
		}
	}
	if len(used) == 0 {
		return
	}
	for _, bind := range start.block.Bindings {
		var val ir.Expr
		switch b := bind.(type) {
		case *ir.VarBinding:
			val = b.Value
		case *ir.MatchCast:
			val = b.Value
		}
		ir.Inspect(val, func(x ir.Expr) bool {
			if v, ok := x.(*ir.Var); ok {
				if _, ok := used[v]; ok {
					used[v] = true
				}
			}
			return true
		})
	}
	for _, p := range start.params {
		if used[p] {
			m.storeLow(p)
		}
	}
}

// hasLow reports whether some tensor of n is needed in 16 bits.
func hasLow(n needs) bool {
	if n.fields == nil {
		return n.leaf == needLow
	}
	return slices.ContainsFunc(n.fields, hasLow)
}

// call rewrites an op call by its policy (TVM's VisitBinding_ on a call).
func (m *mixer) call(vb *ir.VarBinding, c *ir.Call) {
	pol, isOp := policyOf(c)
	if !isOp {
		// A call of a function takes its arguments as they were.
		m.reEmit(vb, m.castBack(c))
		return
	}
	if c.Op == op.WrapParam {
		// R.wrap_param(w, "float32") is w itself, in its own dtype.
		m.reEmit(vb, c.Args[0])
		return
	}
	args := m.remapAll(c.Args)
	var target ir.DataType
	switch pol.Kind {
	case op.MixedAlways:
		target = m.low
		if pol.Accumulate != nil {
			c = pol.Accumulate(c, m.out)
		}
	case op.MixedFollow:
		target = ir.Float32
		if m.allCastable(args) {
			target = m.low
		}
	default:
		// The op takes its operands in their original dtypes.
		orig := vb.Value.(*ir.Call).Args
		for i, a := range args {
			if a != orig[i] {
				args[i] = m.rewrite(a, a.StructInfo(), dtypesOf(orig[i].StructInfo(), ir.Void))
			}
		}
		m.reEmit(vb, m.withArgs(c, args))
		return
	}
	for i, a := range args {
		if s := a.StructInfo(); s != nil && isNestedTensor(s) {
			args[i] = m.rewrite(a, s, dtypesOf(s, target))
		}
	}
	value := m.rw.B.Normalize(m.withArgs(c, args))
	switch {
	case !vb.Var.Dataflow:
		// A block output keeps its dtype.
		value = m.rewrite(value, value.StructInfo(), dtypesOf(vb.Var.StructInfo(), ir.Void))
	case pol.Kind == op.MixedAlways:
		// Stored in 16 bits, whatever it accumulated in.
		value = m.rewrite(value, value.StructInfo(), dtypesOf(value.StructInfo(), m.low))
	}
	m.reEmit(vb, value)
}

// withArgs is c with args (c itself when they are its own).
func (m *mixer) withArgs(c *ir.Call, args []ir.Expr) *ir.Call {
	if slices.Equal(args, c.Args) {
		return c
	}
	n := &ir.Call{Op: c.Op, Args: args, Attrs: c.Attrs, SInfoArgs: c.SInfoArgs}
	n.SetSpan(c.Span())
	return n
}

// emitKeepingOutputs emits a tuple or tuple-get-item binding over the
// 16-bit copies of its operands; a block output gets its original dtypes.
func (m *mixer) emitKeepingOutputs(vb *ir.VarBinding, value ir.Expr) {
	value = m.rw.B.Normalize(value)
	if !vb.Var.Dataflow {
		value = m.rewrite(value, value.StructInfo(), dtypesOf(vb.Var.StructInfo(), ir.Void))
	}
	m.reEmit(vb, value)
}

// reEmit emits bind with value, noting the original struct info of the
// fresh var it gets when value's dtype differs.
func (m *mixer) reEmit(bind ir.Binding, value ir.Expr) {
	m.rw.ReEmit(bind, value)
	v := bind.BoundVar()
	if nv, ok := m.rw.Lookup(v).(*ir.Var); ok && nv != v {
		m.orig.Set(nv, m.origInfo(v))
	}
}

// storeLow casts v (as remapped) to 16 bits right after its binding, or
// at its block's start for a parameter, when the backward walk found only
// MixedAlways uses (TVM's CastIfFp16Only); later operands in the block use
// the copy. Block outputs are not copied (TVM copies them): a copy is a
// dataflow var, and their later uses are outside the block.
func (m *mixer) storeLow(v *ir.Var) {
	n, ok := m.needOf.Get(v)
	if !ok || !hasLow(n) {
		return
	}
	cur := m.current(v)
	s := cur.StructInfo()
	to := m.lowWhere(dtypesOf(s, ir.Void), n)
	cast := m.rewrite(cur, s, to)
	if cast == ir.Expr(cur) {
		return
	}
	nv := m.rw.B.Emit(cast, "lv")
	m.local.Set(cur, nv)
	m.orig.Set(nv, m.origInfo(cur))
}

// lowWhere is from with the storage dtype wherever n needs 16 bits.
func (m *mixer) lowWhere(from dtypes, n needs) dtypes {
	if from.fields == nil {
		if n.fields == nil && n.leaf == needLow {
			return dtypes{dt: m.low}
		}
		return from
	}
	fs := make([]dtypes, len(from.fields))
	for i := range fs {
		fs[i] = m.lowWhere(from.fields[i], n.field(i))
	}
	return dtypes{fields: fs}
}

// current is what v's uses refer to now: its 16-bit copy in this block,
// or v as the rewriter remaps it.
func (m *mixer) current(v *ir.Var) *ir.Var {
	e := m.rw.Lookup(v)
	x, ok := e.(*ir.Var)
	if !ok {
		return v
	}
	if c, ok := m.local.Get(x); ok {
		return c
	}
	return x
}

// origInfo is the struct info v stands for in the input.
func (m *mixer) origInfo(v *ir.Var) ir.StructInfo {
	if s, ok := m.orig.Get(v); ok {
		return s
	}
	return v.StructInfo()
}

// remap replaces an operand var (or the vars of a tuple operand) by its
// 16-bit copy in this block (TVM's RemapArgs).
func (m *mixer) remap(e ir.Expr) ir.Expr {
	switch e := e.(type) {
	case *ir.Var:
		if c, ok := m.local.Get(e); ok {
			return c
		}
	case *ir.Tuple:
		fs := m.remapAll(e.Fields)
		if !slices.Equal(fs, e.Fields) {
			nt := ir.NewTuple(fs...)
			nt.SetSpan(e.Span())
			return m.rw.B.Normalize(nt)
		}
	}
	return e
}

func (m *mixer) remapAll(es []ir.Expr) []ir.Expr {
	out := make([]ir.Expr, len(es))
	for i, e := range es {
		out[i] = m.remap(e)
	}
	return out
}

// castBack is value with each operand var that stands for another in a
// different dtype cast back to the original's (TVM's VisitVar_): value is
// a var, a call or a tuple of leaves.
func (m *mixer) castBack(value ir.Expr) ir.Expr {
	back := func(e ir.Expr) ir.Expr {
		v, ok := m.remap(e).(*ir.Var)
		if !ok {
			return e
		}
		s, ok := m.orig.Get(v)
		if !ok {
			return e
		}
		return m.rewrite(v, v.StructInfo(), dtypesOf(s, ir.Void))
	}
	backAll := func(es []ir.Expr) ([]ir.Expr, bool) {
		out := make([]ir.Expr, len(es))
		changed := false
		for i, e := range es {
			out[i] = e
			if t, ok := e.(*ir.Tuple); ok {
				fs, ch := make([]ir.Expr, len(t.Fields)), false
				for j, f := range t.Fields {
					fs[j] = back(f)
					ch = ch || fs[j] != f
				}
				if ch {
					out[i] = ir.NewTuple(fs...)
				}
			} else {
				out[i] = back(e)
			}
			changed = changed || out[i] != e
		}
		return out, changed
	}
	switch v := value.(type) {
	case *ir.Var:
		return back(v)
	case *ir.Call:
		if args, ch := backAll(v.Args); ch {
			return m.withArgs(v, args)
		}
	case *ir.Tuple:
		if fs, ch := backAll(v.Fields); ch {
			nt := ir.NewTuple(fs...)
			nt.SetSpan(v.Span())
			return nt
		}
	}
	return value
}

// rewrite casts each tensor of e (of struct info s) whose dtype differs
// from to's to it (TVM's RewriteExpr): only float32 and storage-dtype
// tensors are cast, and a tuple is rebuilt field by field (a tuple var
// through its items). It returns e itself when nothing needs a cast.
func (m *mixer) rewrite(e ir.Expr, s ir.StructInfo, to dtypes) ir.Expr {
	switch s := s.(type) {
	case *ir.TupleInfo:
		if to.fields == nil {
			return e
		}
		tup, isTuple := e.(*ir.Tuple)
		fs := make([]ir.Expr, len(s.Fields))
		changed := false
		for i, fs_ := range s.Fields {
			var fld ir.Expr
			if isTuple {
				fld = tup.Fields[i]
			} else {
				fld = &ir.TupleGetItem{Tuple: e, Index: i}
			}
			fs[i] = m.rewrite(fld, fs_, to.fields[i])
			changed = changed || fs[i] != fld
		}
		if !changed {
			return e
		}
		return ir.NewTuple(fs...)
	case *ir.TensorInfo:
		if to.fields != nil || to.dt.IsVoid() || s.DType == to.dt {
			return e
		}
		if s.DType != ir.Float32 && s.DType != m.low {
			return e
		}
		c := ir.NewCall(op.AsType, e)
		c.Attrs = ir.Attrs{"dtype": to.dt}
		return c
	}
	return e
}

// allCastable reports whether a MixedFollow op can compute in 16 bits:
// every tensor operand is in the storage dtype already or a constant whose
// values it holds (TVM's AllFP16Castable).
func (m *mixer) allCastable(args []ir.Expr) bool {
	for _, a := range args {
		s := a.StructInfo()
		if s == nil || !isNestedTensor(s) {
			continue
		}
		if t, ok := s.(*ir.TensorInfo); ok && t.DType == m.low {
			continue
		}
		switch a := a.(type) {
		case *ir.Constant:
			if m.fits(a.Data) {
				continue
			}
		case *ir.Tuple:
			if m.allCastable(a.Fields) {
				continue
			}
		}
		return false
	}
	return true
}

// The largest finite values of the storage dtypes.
const (
	maxFloat16  = 65504
	maxBFloat16 = 3.3895313892515355e38
)

// fits reports whether every value of a constant is within the storage
// dtype's range (NaN passes, as in TVM; an infinity does not).
func (m *mixer) fits(a *ir.NDArray) bool {
	if a.DType == m.low {
		return true
	}
	if !a.DType.IsScalar() || !(a.DType.IsFloat() || a.DType.IsInteger()) {
		return false
	}
	limit := float64(maxFloat16)
	if m.low == ir.BFloat16 {
		limit = maxBFloat16
	}
	n := int(a.NumElements())
	for i := range n {
		var v float64
		if a.DType.IsFloat() {
			v = a.Float(i)
		} else {
			v = float64(a.Int(i))
		}
		if math.Abs(v) > limit {
			return false
		}
	}
	return true
}
