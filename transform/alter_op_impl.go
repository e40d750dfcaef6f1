package transform

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
)

// AttrOperatorName is the PrimFunc attribute naming the operator a kernel
// implements (TVM's kOperatorName): AlterOpImpl finds the kernels to
// replace by it and keeps it on their replacements.
const AttrOperatorName = "operator_name"

// Codes of AlterOpImpl.
var (
	codeAlterOpOption    = optCodes.Define("OPT700", "an option is malformed (an index map that does not parse, a separator list that is not integers)")
	codeAlterOpFile      = optCodes.Define("OPT701", "the replacement file cannot be read, or lacks a PrimFunc op_impl_map names")
	codeAlterOpUnknownOp = optCodes.Define("OPT702", "an operator name no PrimFunc of the module carries")
	codeAlterOpSignature = optCodes.Define("OPT703", "a replacement does not fit the kernel it replaces (parameter count, index maps, buffer shapes)")
	codeAlterOpArity     = optCodes.Define("OPT704", "an index map takes another number of indices than its tensor has axes")
)

// AlterOpImpl is TVM's relax.transform.AlterOpImpl
// (src/relax/transform/alter_op_impl.cc, tests in
// tests/python/relax/test_transform_alter_op_impl.py).
//
// Every R.call_tir of a PrimFunc whose operator_name attribute is a key of
// op_impl_map calls the replacement PrimFunc instead: one module function
// per operator, named after it (relax.add -> relax_add_replacement) and
// carrying its operator_name. When op_buffer_transforms gives index maps
// for the operator (one per buffer of the replacement, inputs then
// outputs; null for a buffer that keeps its layout), each input goes
// through R.layout_transform with its map, the call's outputs take the
// mapped shapes, and each output comes back through the inverse map. A map
// that pads (i // 4, i % 4 over 14 elements) has an inverse whose image is
// larger than the original tensor: the padding is then cut off by a call
// of remove_pad, a PrimFunc the pass adds once per rank and dtype, as TVM
// does. op_buffer_axis_separators and op_buffer_input_axis_separators give
// the axis_separators and input_axis_separators of those layout_transform
// calls, per buffer; the inverse transform of an output takes the same
// ones as the forward map of its buffer, as in TVM.
//
// The options, as text (TVM passes Python objects):
//
//	AlterOpImpl{file="impls.tvms",
//	    op_impl_map={"relax.add": "add_2d"},
//	    op_buffer_transforms={"relax.add": ["lambda i: (i // 4, i % 4)", "lambda i: (i // 4, i % 4)", null]},
//	    op_buffer_axis_separators={"relax.add": [[1], [1], []]},
//	    op_buffer_input_axis_separators={"relax.add": [[], [], [1]]}}
//
// file is a TVMScript module (read relative to the working directory)
// holding the replacement PrimFuncs op_impl_map names; index maps are
// TVMScript lambdas, optionally wrapped in T.index_map(...).
//
// Bad input is an error, where TVM ignores it or stops on an internal
// check: an operator name no PrimFunc of the module carries (OPT702, with
// the closest one), a replacement PrimFunc missing from the file (OPT701),
// a replacement with another number of parameters than the kernel, index
// maps or separators whose number is not the replacement's number of
// buffers, a mapped shape that differs from the replacement's buffer
// (OPT703, at the replacement), an index map taking another number of
// indices than its tensor has axes (OPT704, at the call), and an
// output map the pass cannot invert (it inverts permutations and splits:
// results p, p // c with p % c, and p % c alone).
//
// Phase: it rewrites call_tir bindings, so it runs after legalization and
// FuseTIR (it Requires NoPrimitiveFunctions: a FuseOps group awaiting
// FuseTIR would get layout_transform calls FuseTIR cannot fuse), and the
// R.layout_transform calls it inserts are high-level ops: it invalidates
// Legalized, so LegalizeOps (or the optimize barrier) runs after it:
// `canonicalize,LegalizeOps,AlterOpImpl{...},optimize,lower,build`.
var AlterOpImpl = passes.Define(passes.Info{
	Name:     "AlterOpImpl",
	Doc:      "replace the PrimFuncs of an operator_name by user-given ones, with R.layout_transform of their buffers (index maps) around the calls",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized:           "it rewrites call_tir bindings and reads the arguments' and outputs' struct info (shapes the index maps transform)",
		phase.NoPrimitiveFunctions: "it works on the call_tir PrimFuncs FuseTIR leaves; a FuseOps group awaiting FuseTIR would get layout_transform calls inside",
	},
	Invalidates: phase.Of(phase.Legalized),
	Options: []passes.Option{
		{Name: "file", Type: passes.String, Default: "", Doc: "a TVMScript module holding the replacement PrimFuncs"},
		{Name: "op_impl_map", Type: passes.JSON, Default: map[string]any{}, Doc: `operator_name -> replacement PrimFunc in file, {"relax.add": "add_2d"}`,
			Check: func(v any) error { _, err := alterOpImpls(v); return err }},
		{Name: "op_buffer_transforms", Type: passes.JSON, Default: map[string]any{}, Doc: `operator_name -> an index map (or null) per buffer, {"relax.add": ["lambda i: (i // 4, i % 4)", ...]}`,
			Check: func(v any) error { _, err := alterOpTransforms(v); return err }},
		{Name: "op_buffer_axis_separators", Type: passes.JSON, Default: map[string]any{}, Doc: `operator_name -> axis_separators per buffer, {"relax.add": [[1], [1], []]}`,
			Check: func(v any) error { _, err := alterOpSeparators("op_buffer_axis_separators", v); return err }},
		{Name: "op_buffer_input_axis_separators", Type: passes.JSON, Default: map[string]any{}, Doc: "operator_name -> input_axis_separators per buffer",
			Check: func(v any) error { _, err := alterOpSeparators("op_buffer_input_axis_separators", v); return err }},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	o := env.Options()
	cfg, err := alterOpConfigOf(o)
	if err != nil {
		var errs diag.List
		errs.Add(moduleSpan(mod), codeAlterOpOption, "%v", err)
		return nil, errs
	}
	return alterOpImpl(mod, cfg)
}))

// alterOpConfig is AlterOpImpl's options, decoded.
type alterOpConfig struct {
	file          string
	impls         map[string]string         // operator name -> PrimFunc name in file
	transforms    map[string][]*ir.IndexMap // nil entries: the buffer keeps its layout
	axisSeps      map[string][][]int64
	inputAxisSeps map[string][][]int64
}

func alterOpConfigOf(o passes.Options) (*alterOpConfig, error) {
	cfg := &alterOpConfig{file: o.String("file")}
	var err error
	if cfg.impls, err = alterOpImpls(o.JSON("op_impl_map")); err != nil {
		return nil, err
	}
	if cfg.transforms, err = alterOpTransforms(o.JSON("op_buffer_transforms")); err != nil {
		return nil, err
	}
	if cfg.axisSeps, err = alterOpSeparators("op_buffer_axis_separators", o.JSON("op_buffer_axis_separators")); err != nil {
		return nil, err
	}
	if cfg.inputAxisSeps, err = alterOpSeparators("op_buffer_input_axis_separators", o.JSON("op_buffer_input_axis_separators")); err != nil {
		return nil, err
	}
	if len(cfg.impls) > 0 && cfg.file == "" {
		return nil, fmt.Errorf("op_impl_map names replacement PrimFuncs but no file holds them (file=\"impls.tvms\")")
	}
	for _, m := range []map[string]bool{keysOf(cfg.transforms), keysOf(cfg.axisSeps), keysOf(cfg.inputAxisSeps)} {
		for kind := range m {
			if _, ok := cfg.impls[kind]; !ok {
				return nil, fmt.Errorf("operator %q has buffer layouts but no replacement in op_impl_map", kind)
			}
		}
	}
	return cfg, nil
}

func keysOf[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func alterOpImpls(v any) (map[string]string, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("op_impl_map must be a JSON object from operator names to PrimFunc names")
	}
	out := make(map[string]string, len(obj))
	for k, x := range obj {
		s, ok := x.(string)
		if !ok || s == "" {
			return nil, fmt.Errorf("op_impl_map[%q] must be the name of a PrimFunc of the replacement file", k)
		}
		out[k] = s
	}
	return out, nil
}

func alterOpTransforms(v any) (map[string][]*ir.IndexMap, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("op_buffer_transforms must be a JSON object from operator names to lists of index maps")
	}
	out := make(map[string][]*ir.IndexMap, len(obj))
	for k, x := range obj {
		list, ok := x.([]any)
		if !ok {
			return nil, fmt.Errorf("op_buffer_transforms[%q] must be a list of index maps (strings, or null)", k)
		}
		maps := make([]*ir.IndexMap, len(list))
		for i, e := range list {
			if e == nil {
				continue
			}
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("op_buffer_transforms[%q][%d] must be an index map written as a lambda, or null", k, i)
			}
			m, err := ParseIndexMap(s)
			if err != nil {
				return nil, fmt.Errorf("op_buffer_transforms[%q][%d]: %v", k, i, err)
			}
			maps[i] = m
		}
		out[k] = maps
	}
	return out, nil
}

func alterOpSeparators(name string, v any) (map[string][][]int64, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a JSON object from operator names to lists of integer lists", name)
	}
	out := make(map[string][][]int64, len(obj))
	for k, x := range obj {
		if x == nil {
			continue // TVM's None: no separators
		}
		list, ok := x.([]any)
		if !ok {
			return nil, fmt.Errorf("%s[%q] must be a list of integer lists", name, k)
		}
		seps := make([][]int64, len(list))
		for i, e := range list {
			inner, ok := e.([]any)
			if !ok && e != nil {
				return nil, fmt.Errorf("%s[%q][%d] must be a list of integers", name, k, i)
			}
			seps[i] = []int64{}
			for _, n := range inner {
				d, ok := jsonInt(n)
				if !ok || d < 0 {
					return nil, fmt.Errorf("%s[%q][%d] must be a list of non-negative integers, has %v", name, k, i, n)
				}
				seps[i] = append(seps[i], d)
			}
		}
		out[k] = seps
	}
	return out, nil
}

func jsonInt(v any) (int64, bool) {
	switch n := v.(type) {
	case interface{ Int64() (int64, error) }:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), n == float64(int64(n))
	case int64:
		return n, true
	}
	return 0, false
}

// indexMapPrefix is the text before an index map in the module
// ParseIndexMap has the TVMScript parser read it in.
const indexMapPrefix = "        y = R.layout_transform(x, index_map="

// ParseIndexMap reads an index map written as TVMScript writes one:
// `lambda i, j: (j, i)` or `T.index_map(lambda i, j: (j, i))`. A syntax
// error names the column in text.
func ParseIndexMap(text string) (*ir.IndexMap, error) {
	if strings.ContainsAny(text, "\n\r") {
		return nil, fmt.Errorf("index map %q spans lines; write it on one", text)
	}
	src := "@I.ir_module\nclass Module:\n    @R.function\n    def f(x: R.Tensor(dtype=\"float32\")):\n" +
		indexMapPrefix + text + ")\n        return y\n"
	mod, errs := syntax.Parse("index map", []byte(src))
	if len(errs) > 0 {
		d := errs[0]
		col := d.Span.Col - len(indexMapPrefix)
		if d.Span.Line != 5 || col < 1 {
			return nil, fmt.Errorf("index map %q: %s", text, d.Msg)
		}
		return nil, fmt.Errorf("index map %q, column %d: %s", text, col, d.Msg)
	}
	var m *ir.IndexMap
	if f := mod.Func("f"); f != nil {
		ir.Inspect(f.Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok && c.Op == op.LayoutTransform {
				m, _ = c.Attrs["index_map"].(*ir.IndexMap)
			}
			return m == nil
		})
	}
	if m == nil {
		return nil, fmt.Errorf("index map %q is not a lambda", text)
	}
	return m, nil
}

// alterOpImpl runs AlterOpImpl on mod with cfg.
func alterOpImpl(mod *ir.Module, cfg *alterOpConfig) (*ir.Module, error) {
	if len(cfg.impls) == 0 {
		return mod, nil
	}
	var errs diag.List
	src, err := os.ReadFile(cfg.file)
	if err != nil {
		errs.Add(moduleSpan(mod), codeAlterOpFile, "cannot read the replacement file: %v", err)
		return nil, errs
	}
	lib, perrs := syntax.Parse(cfg.file, src)
	if len(perrs) > 0 {
		return nil, perrs
	}
	// The operator names the module's kernels carry.
	kinds := map[string]bool{}
	for _, name := range mod.Names() {
		if pf := mod.PrimFunc(name); pf != nil {
			if k, ok := pf.Attrs.String(AttrOperatorName); ok {
				kinds[k] = true
			}
		}
	}
	known := sortedKeys(kinds)
	var libFuncs []string
	for _, name := range lib.Names() {
		if lib.PrimFunc(name) != nil {
			libFuncs = append(libFuncs, name)
		}
	}
	repl := map[string]*ir.PrimFunc{}
	for _, kind := range sortedKeys(cfg.impls) {
		if !kinds[kind] {
			d := errs.Add(moduleSpan(mod), codeAlterOpUnknownOp, "no PrimFunc of the module has operator_name %q (the module's: %s)", kind, listOrNone(known))
			if c := diag.Closest(kind, known); c != "" {
				d.Hint = fmt.Sprintf("did you mean %q?", c)
			}
		}
		pf := lib.PrimFunc(cfg.impls[kind])
		if pf == nil {
			d := errs.Add(diag.Span{File: cfg.file, Line: 1, Col: 1}, codeAlterOpFile, "%s has no PrimFunc %s (the replacement of %s; it has %s)", cfg.file, cfg.impls[kind], kind, listOrNone(libFuncs))
			if c := diag.Closest(cfg.impls[kind], libFuncs); c != "" {
				d.Hint = fmt.Sprintf("did you mean %q?", c)
			}
			continue
		}
		n := len(pf.Params)
		check := func(what string, count int) {
			if count != 0 && count != n {
				errs.Add(pf.Span(), codeAlterOpSignature, "%s[%q] has %d entries, replacement %s has %d buffers: give one per buffer, or none", what, kind, count, cfg.impls[kind], n)
			}
		}
		check("op_buffer_transforms", len(cfg.transforms[kind]))
		check("op_buffer_axis_separators", len(cfg.axisSeps[kind]))
		check("op_buffer_input_axis_separators", len(cfg.inputAxisSeps[kind]))
		repl[kind] = pf
	}
	if len(errs) > 0 {
		return nil, errs
	}

	a := &alterer{mod: mod, cfg: cfg, repl: repl, out: mod.Clone(), globals: map[string]string{}, removePad: map[string]string{}}
	for _, name := range mod.Names() {
		f := mod.Func(name)
		if f == nil {
			continue
		}
		nf := a.function(f)
		if nf != f {
			a.out.Set(name, nf)
		}
	}
	if len(a.errs) > 0 {
		a.errs.Sort()
		return nil, a.errs
	}
	if !a.changed {
		return mod, nil
	}
	return a.out, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// alterer rewrites the calls of one run.
type alterer struct {
	mod     *ir.Module
	cfg     *alterOpConfig
	repl    map[string]*ir.PrimFunc
	out     *ir.Module
	globals map[string]string // operator name -> its replacement's global name
	// removePad maps "rank/dtype" to the remove_pad PrimFunc's name.
	removePad map[string]string
	// shapes caches MapShape by map and shape: every call of a kernel
	// has the same shapes, and the bounds analysis is not cheap.
	shapes   map[shapeKey]mapped
	inverses map[*ir.IndexMap]*ir.IndexMap // nil: not invertible
	changed  bool
	errs     diag.List
}

func (a *alterer) function(f *ir.Function) *ir.Function {
	rw := ir.NewRewriter(a.out)
	rw.Binding = func(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
		c, ok := value.(*ir.Call)
		if !ok || c.Op != op.CallTIR || len(c.Args) < 2 {
			return false
		}
		gv, ok := c.Args[0].(*ir.GlobalVar)
		if !ok {
			return false
		}
		old := a.mod.PrimFunc(gv.Name)
		if old == nil {
			return false
		}
		kind, ok := old.Attrs.String(AttrOperatorName)
		if !ok || a.repl[kind] == nil {
			return false
		}
		span := c.Span()
		if !span.IsValid() {
			span = bind.Span()
		}
		nv := a.call(rw, c, gv.Name, old, kind, span)
		if nv == nil {
			return false
		}
		a.changed = true
		rw.ReEmit(bind, nv)
		return true
	}
	nf := rw.Function(f)
	if errs := rw.B.Diagnostics(); len(errs) > 0 {
		a.errs = append(a.errs, errs...)
	}
	return nf
}

// call emits what replaces the call c of old (operator kind): the input
// transforms, the call of the replacement and the output transforms; it
// returns the value the binding takes, or nil after an error.
func (a *alterer) call(rw *ir.Rewriter, c *ir.Call, oldName string, old *ir.PrimFunc, kind string, span diag.Span) ir.Expr {
	pf := a.repl[kind]
	implName := a.cfg.impls[kind]
	if len(old.Params) != len(pf.Params) {
		a.errs.Add(pf.Span(), codeAlterOpSignature, "replacement %s of %s has %d parameters, the kernel %s it replaces has %d", implName, kind, len(pf.Params), oldName, len(old.Params))
		return nil
	}
	transforms := a.cfg.transforms[kind]
	sepsOf := func(m map[string][][]int64, i int) []int64 {
		if list := m[kind]; i < len(list) {
			return list[i]
		}
		return nil
	}
	tuple, ok := c.Args[1].(*ir.Tuple)
	if !ok {
		return nil
	}
	// The outputs: one struct info per output (out_sinfo=[...]), or a
	// tuple of them.
	sinfos := c.SInfoArgs
	if len(sinfos) == 1 {
		if tup, ok := sinfos[0].(*ir.TupleInfo); ok {
			sinfos = tup.Fields
		}
	}
	outs := make([]*ir.TensorInfo, len(sinfos))
	for k, s := range sinfos {
		t, ok := s.(*ir.TensorInfo)
		if !ok {
			return nil
		}
		outs[k] = t
	}
	if len(tuple.Fields)+len(outs) != len(pf.Params) {
		a.errs.Add(span, codeAlterOpSignature, "this call of %s passes %d inputs and %d outputs, replacement %s has %d parameters", oldName, len(tuple.Fields), len(outs), implName, len(pf.Params))
		return nil
	}
	mapOf := func(i int) *ir.IndexMap {
		if i < len(transforms) {
			return transforms[i]
		}
		return nil
	}
	// checkShape compares a tensor's shape after the map with the
	// replacement's buffer i, where both are known numbers.
	checkShape := func(i int, shape []ir.PrimExpr) bool {
		buf := pf.ParamBuffer(i)
		if buf == nil {
			return true // a scalar parameter
		}
		if len(buf.Shape) != len(shape) {
			a.errs.Add(pf.Span(), codeAlterOpSignature, "buffer %s of replacement %s has rank %d, the call of %s gives it a tensor of shape %s", buf.Name, implName, len(buf.Shape), oldName, fmtShape(shape))
			return false
		}
		for d := range shape {
			x, ok1 := ir.IntValue(ir.Simplify(shape[d]))
			y, ok2 := ir.IntValue(ir.Simplify(buf.Shape[d]))
			if ok1 && ok2 && x != y {
				a.errs.Add(pf.Span(), codeAlterOpSignature, "buffer %s of replacement %s has shape %s, the call of %s gives it a tensor of shape %s", buf.Name, implName, fmtShape(buf.Shape), oldName, fmtShape(shape))
				return false
			}
		}
		return true
	}
	b := rw.B
	inputs := make([]ir.Expr, len(tuple.Fields))
	for i, in := range tuple.Fields {
		inputs[i] = in
		t, _ := in.StructInfo().(*ir.TensorInfo)
		if t == nil {
			continue
		}
		dims, known := t.Dims()
		m := mapOf(i)
		if m == nil || isScalarConstant(in) {
			if known && !checkShape(i, dims) {
				return nil
			}
			continue
		}
		if t.NDim != len(m.Params) {
			a.errs.Add(span, codeAlterOpArity, "index map %s for input %d of %s (%s) takes %d indices, the tensor has rank %d", m, i, oldName, kind, len(m.Params), t.NDim)
			return nil
		}
		if known {
			shape, err := a.mapShape(m, dims)
			if err != nil {
				a.errs.Add(span, codeAlterOpSignature, "index map %s for input %d of %s: %v", m, i, oldName, err)
				return nil
			}
			if !checkShape(i, shape) {
				return nil
			}
		}
		inputs[i] = b.Emit(layoutTransformCall(in, m, sepsOf(a.cfg.axisSeps, i), sepsOf(a.cfg.inputAxisSeps, i)), "lv")
	}
	first := len(tuple.Fields)
	newOuts := make([]ir.StructInfo, len(outs))
	for k, t := range outs {
		newOuts[k] = t
		dims, known := t.Dims()
		m := mapOf(first + k)
		if m == nil {
			if known && !checkShape(first+k, dims) {
				return nil
			}
			continue
		}
		if !known || t.NDim != len(m.Params) {
			a.errs.Add(span, codeAlterOpArity, "index map %s for output %d of %s (%s) takes %d indices, the output %s has rank %d", m, k, oldName, kind, len(m.Params), ir.FormatStructInfo(t, nil), t.NDim)
			return nil
		}
		shape, err := a.mapShape(m, dims)
		if err != nil {
			a.errs.Add(span, codeAlterOpSignature, "index map %s for output %d of %s: %v", m, k, oldName, err)
			return nil
		}
		if !checkShape(first+k, shape) {
			return nil
		}
		newOuts[k] = ir.TensorInfoOf(t.DType, shape...)
	}
	args := append([]ir.Expr{ir.NewGlobalVar(a.replacementGlobal(kind)), ir.NewTuple(inputs...)}, c.Args[2:]...)
	nc := &ir.Call{Op: op.CallTIR, Args: args, Attrs: c.Attrs, SInfoArgs: newOuts}
	nc.SetSpan(c.Span())

	if len(transforms) == 0 {
		return nc
	}
	back := func(v ir.Expr, k int) ir.Expr {
		m := mapOf(first + k)
		if m == nil {
			return v
		}
		return a.inverse(b, v, m, outs[k], sepsOf(a.cfg.axisSeps, first+k), sepsOf(a.cfg.inputAxisSeps, first+k), span, k, oldName)
	}
	if _, isTuple := c.StructInfo().(*ir.TupleInfo); !isTuple {
		if mapOf(first) == nil {
			return nc
		}
		return back(b.Emit(nc, "lv"), 0)
	}
	res := b.Emit(nc, "lv")
	fields := make([]ir.Expr, len(outs))
	for k := range outs {
		item := b.Emit(&ir.TupleGetItem{Tuple: res, Index: k}, "lv")
		fields[k] = back(item, k)
		if fields[k] == nil {
			return nil
		}
		if _, isVar := fields[k].(*ir.Var); !isVar {
			fields[k] = b.Emit(fields[k], "lv") // a tuple holds vars in normal form
		}
	}
	return ir.NewTuple(fields...)
}

func fmtShape(dims []ir.PrimExpr) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		d = ir.Simplify(d)
		if v, ok := ir.IntValue(d); ok {
			parts[i] = fmt.Sprint(v)
		} else {
			parts[i] = ir.FormatPrim(d, nil)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func isScalarConstant(e ir.Expr) bool {
	c, ok := e.(*ir.Constant)
	if !ok {
		return false
	}
	t, ok := c.StructInfo().(*ir.TensorInfo)
	return ok && t.NDim == 0
}

// layoutTransformCall is R.layout_transform(x, m, pad_value=None, ...)
// with a fresh copy of m: the parameters of an index map are bound by it,
// and two calls do not share them (TVM's DeepCopyIndexMap).
func layoutTransformCall(x ir.Expr, m *ir.IndexMap, seps, inputSeps []int64) *ir.Call {
	attrs := ir.Attrs{"index_map": freshIndexMap(m), "pad_value": nil, "axis_separators": intsAttr(seps)}
	if len(inputSeps) > 0 {
		attrs["input_axis_separators"] = intsAttr(inputSeps)
	}
	return &ir.Call{Op: op.LayoutTransform, Args: []ir.Expr{x}, Attrs: attrs}
}

func intsAttr(list []int64) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = v
	}
	return out
}

func freshIndexMap(m *ir.IndexMap) *ir.IndexMap {
	params := make([]*ir.PrimVar, len(m.Params))
	idx := make([]ir.PrimExpr, len(m.Params))
	for i, p := range m.Params {
		params[i] = ir.NewPrimVar(p.Name, p.DType())
		idx[i] = params[i]
	}
	return &ir.IndexMap{Params: params, Results: m.Apply(idx)}
}

// inverse brings v, an output in the layout m gives, back to old: the
// inverse map, and remove_pad when that map's image is larger (m padded).
func (a *alterer) inverse(b *ir.Builder, v ir.Expr, m *ir.IndexMap, old *ir.TensorInfo, seps, inputSeps []int64, span diag.Span, k int, oldName string) ir.Expr {
	inv, ok := a.inverses[m]
	if !ok {
		inv, ok = invertIndexMap(m)
		if a.inverses == nil {
			a.inverses = map[*ir.IndexMap]*ir.IndexMap{}
		}
		a.inverses[m] = inv
	}
	ok = inv != nil
	if !ok {
		a.errs.Add(span, codeAlterOpSignature, "cannot invert index map %s of output %d of %s (AlterOpImpl inverts maps whose results are p, p // c with p %% c, or p %% c)", m, k, oldName)
		return nil
	}
	call := layoutTransformCall(v, inv, seps, inputSeps)
	oldDims, _ := old.Dims()
	t, _ := v.StructInfo().(*ir.TensorInfo)
	dims, _ := t.Dims()
	image, err := a.mapShape(inv, dims)
	if err == nil && sameDims(image, oldDims) {
		return call
	}
	padded := b.Emit(call, "lv")
	pad := &ir.Call{Op: op.CallTIR, Args: []ir.Expr{ir.NewGlobalVar(a.removePadGlobal(len(oldDims), old.DType)), ir.NewTuple(padded)}, SInfoArgs: []ir.StructInfo{old}}
	return pad
}

type shapeKey struct {
	m    *ir.IndexMap
	dims string
}

type mapped struct {
	shape []ir.PrimExpr
	err   error
}

func (a *alterer) mapShape(m *ir.IndexMap, dims []ir.PrimExpr) ([]ir.PrimExpr, error) {
	key := shapeKey{m, fmtShape(dims)}
	if r, ok := a.shapes[key]; ok {
		return r.shape, r.err
	}
	shape, _, err := m.MapShape(dims)
	if a.shapes == nil {
		a.shapes = map[shapeKey]mapped{}
	}
	a.shapes[key] = mapped{shape, err}
	return shape, err
}

func sameDims(x, y []ir.PrimExpr) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		d, ok := ir.IntValue(ir.Simplify(ir.Sub(x[i], y[i])))
		if !ok || d != 0 {
			return false
		}
	}
	return true
}

// invertIndexMap inverts the maps made of permutations and splits: each
// parameter p is a result by itself, a pair p // c, p % c, or p % c alone
// (p then ranges within [0, c)). The inverse's parameters are axis0,
// axis1, ... as TVM names them.
func invertIndexMap(m *ir.IndexMap) (*ir.IndexMap, bool) {
	type source struct {
		whole, quot, rem int
		div              ir.PrimExpr
	}
	src := make(map[*ir.PrimVar]*source, len(m.Params))
	for _, p := range m.Params {
		src[p] = &source{-1, -1, -1, nil}
	}
	for r, e := range m.Results {
		switch x := e.(type) {
		case *ir.PrimVar:
			s := src[x]
			if s == nil || s.whole >= 0 {
				return nil, false
			}
			s.whole = r
		case *ir.Binary:
			p, ok := x.A.(*ir.PrimVar)
			c, isConst := ir.IntValue(x.B)
			s := src[p]
			if !ok || s == nil || !isConst || c <= 0 || (x.Op != ir.OpFloorDiv && x.Op != ir.OpFloorMod) {
				return nil, false
			}
			if s.div != nil && !ir.StructuralEqual(s.div, x.B, ir.EqualOptions{}) {
				return nil, false
			}
			s.div = x.B
			slot := &s.rem
			if x.Op == ir.OpFloorDiv {
				slot = &s.quot
			}
			if *slot >= 0 {
				return nil, false
			}
			*slot = r
		default:
			return nil, false
		}
	}
	inv := &ir.IndexMap{Params: make([]*ir.PrimVar, len(m.Results))}
	for i := range m.Results {
		inv.Params[i] = ir.NewPrimVar(fmt.Sprintf("axis%d", i), ir.Int64)
	}
	for _, p := range m.Params {
		s := src[p]
		switch {
		case s.whole >= 0 && s.quot < 0 && s.rem < 0:
			inv.Results = append(inv.Results, inv.Params[s.whole])
		case s.whole < 0 && s.quot >= 0 && s.rem >= 0:
			inv.Results = append(inv.Results, ir.Add(ir.Mul(inv.Params[s.quot], s.div), inv.Params[s.rem]))
		case s.whole < 0 && s.quot < 0 && s.rem >= 0:
			inv.Results = append(inv.Results, inv.Params[s.rem])
		default:
			return nil, false
		}
	}
	return inv, true
}

// replacementGlobal adds the replacement of kind to the output module once
// and returns its name: the operator name as an identifier, with
// _replacement (TVM's op_kind + "_replacement").
func (a *alterer) replacementGlobal(kind string) string {
	if name, ok := a.globals[kind]; ok {
		return name
	}
	pf := *a.repl[kind]
	pf.Attrs = pf.Attrs.With(AttrOperatorName, kind).Without(ir.AttrGlobalSymbol)
	name := a.out.UniqueName(identifier(kind) + "_replacement")
	a.out.Set(name, renewDefs(&pf))
	a.globals[kind] = name
	return name
}

// identifier replaces the characters a function name cannot hold by _.
func identifier(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// removePadGlobal adds, once per rank and dtype, remove_pad: a PrimFunc
// copying the leading part of its input of any shape into its output (TVM
// builds it with te.compute over symbolic shapes).
func (a *alterer) removePadGlobal(rank int, dt ir.DataType) string {
	key := fmt.Sprintf("%d/%s", rank, dt)
	if name, ok := a.removePad[key]; ok {
		return name
	}
	var b strings.Builder
	names := func(prefix string) string {
		parts := make([]string, rank)
		for i := range parts {
			parts[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		if rank == 1 {
			return parts[0] + ","
		}
		return strings.Join(parts, ", ")
	}
	list := func(prefix string) string { return strings.TrimSuffix(names(prefix), ",") }
	fmt.Fprintf(&b, "@I.ir_module\nclass Module:\n    @T.prim_func(private=True)\n    def remove_pad(var_input: T.handle, var_output: T.handle):\n")
	fmt.Fprintf(&b, "        T.func_attr({%q: \"remove_pad\", \"tir.noalias\": True})\n", AttrOperatorName)
	for i := range rank {
		fmt.Fprintf(&b, "        p%d = T.int64()\n", i)
	}
	fmt.Fprintf(&b, "        input = T.match_buffer(var_input, (%s), %q)\n", names("p"), dt.String())
	for i := range rank {
		fmt.Fprintf(&b, "        i%d = T.int64()\n", i)
	}
	fmt.Fprintf(&b, "        output = T.match_buffer(var_output, (%s), %q)\n", names("i"), dt.String())
	if rank == 0 {
		fmt.Fprintf(&b, "        with T.block(\"output\"):\n            T.reads(input[()])\n            T.writes(output[()])\n            output[()] = input[()]\n")
	} else {
		fmt.Fprintf(&b, "        for %s in T.grid(%s):\n", list("ax"), list("i"))
		fmt.Fprintf(&b, "            with T.block(\"output\"):\n")
		fmt.Fprintf(&b, "                %s = T.axis.remap(%q, [%s])\n", list("v_ax"), strings.Repeat("S", rank), list("ax"))
		fmt.Fprintf(&b, "                T.reads(input[%s])\n                T.writes(output[%s])\n", list("v_ax"), list("v_ax"))
		fmt.Fprintf(&b, "                output[%s] = input[%s]\n", list("v_ax"), list("v_ax"))
	}
	lib, errs := syntax.Parse("remove_pad", []byte(b.String()))
	if len(errs) > 0 {
		panic(fmt.Sprintf("remove_pad does not parse: %v\n%s", errs, b.String()))
	}
	name := a.out.UniqueName("remove_pad")
	a.out.Set(name, lib.PrimFunc("remove_pad"))
	a.removePad[key] = name
	return name
}

// sortedKeys lists m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
