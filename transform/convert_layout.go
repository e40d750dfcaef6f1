package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// ConvertLayout is TVM's ConvertLayout
// (src/relax/transform/convert_layout.cc, with the layout rules of
// src/relax/transform/infer_layout_utils.cc and the ops' FRelaxInferLayout
// functions, here op.Def.Layout in op/layout_infer.go): the ops named in
// desired_layouts compute in the layouts asked for
// ({"relax.nn.conv2d": ["NHWC", "OHWI"]}), and the ops around them follow
// the new layout as far as their rules allow, so layout conversions
// (R.permute_dims) appear only at the boundaries. Desired layouts may split
// axes ({"relax.nn.conv2d": ["NCHW4c", "OIHW4o"]}, where the blocks divide
// the channels); conversions to and from them are R.layout_transform, as
// TVM's, and only elementwise ops, pools and broadcasting binary ops of the
// same rank follow a split layout (op/layout_infer.go).
//
// The pass works on dataflow blocks, as TVM's does, in one forward walk
// over each block's bindings: for each call it asks the op's rule, given
// the current layouts of the arguments, for the layouts the arguments must
// be in, the layout of the result and the call's new attributes;
// arguments are converted where their layout differs. An op without a
// rule, a call whose tensor arguments have an unknown rank, and any use
// of a var other than as an argument of a call, a tuple field or a
// match_cast value get the initial layout back. Vars that leave the block
// (non-dataflow vars) are always in their initial layout, so the block's
// interface, and what the function computes, are unchanged.
//
// Only dataflow blocks are converted: a function without one is left as
// it is (run ConvertToDataflow first). The pass does not precede
// NoDataflow, so that a module without dataflow blocks is accepted.
//
// Invariants: every dataflow var has one layout (op.NLayout) fixed at its
// binding; a conversion is emitted right before the binding that needs
// it; the walk is linear in the number of bindings.
var ConvertLayout = passes.Define(passes.Info{
	Name:     "ConvertLayout",
	Doc:      "convert the layouts of the ops named in desired_layouts (conv2d to NHWC, ...) and let the ops around them follow, with permute_dims at the boundaries",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it reads every argument's struct info (rank, shape) and rewrites bindings of calls in A-normal form",
	},
	Precedes: map[phase.Property]string{
		phase.Legalized: "it rewrites high-level ops, which LegalizeOps turns into call_tir",
	},
	Options: []passes.Option{{
		Name: "desired_layouts", Type: passes.JSON, Default: map[string]any{},
		Doc:   `a JSON object from op names to the layouts they should compute in: {"relax.nn.conv2d":["NHWC","OHWI"]} (data, kernel[, output]); a convolution's layouts may split axes: ["NCHW4c","OIHW4o"]`,
		Check: func(v any) error { _, err := desiredLayouts(v); return err },
	}},
}, passes.Functions(func(env *passes.Env, mod *ir.Module, _ string, f *ir.Function) (*ir.Function, error) {
	desired, err := desiredLayouts(env.Options().JSON("desired_layouts"))
	if err != nil {
		return nil, err
	}
	return convertLayout(mod, f, desired)
}).InParallel())

// DiagLayoutRule: an op's layout rule refused the desired layouts.
var DiagLayoutRule = optCodes.Define("OPT430", "a desired layout an op cannot take")

// desiredLayouts decodes and checks the desired_layouts option.
func desiredLayouts(v any) (map[string][]string, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`want a JSON object from op names to lists of layouts, as {"relax.nn.conv2d":["NHWC","OHWI"]}`)
	}
	out := make(map[string][]string, len(obj))
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		list, ok := obj[name].([]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a list of layout strings, got %v", name, obj[name])
		}
		layouts := make([]string, len(list))
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s: want a list of layout strings, got %v", name, obj[name])
			}
			layouts[i] = s
		}
		if err := op.CheckDesiredLayouts(name, layouts); err != nil {
			if _, exists := ir.LookupOp(name); !exists {
				if s := closestOpName(name); s != "" {
					return nil, fmt.Errorf("%v (did you mean %s?)", err, s)
				}
			}
			return nil, err
		}
		out[name] = layouts
	}
	return out, nil
}

// closestOpName suggests the op a misspelt desired_layouts key meant.
func closestOpName(name string) string {
	best, bestD := "", 4
	for _, cand := range op.DesiredLayoutOps() {
		if d := editDistance(name, cand); d < bestD {
			best, bestD = cand, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// layoutConverter is the state of one function's conversion.
type layoutConverter struct {
	rw      *ir.Rewriter
	desired map[string][]string
	// layouts are the current layouts of the vars bound so far (keyed by
	// the vars of the output); absent: the initial layout.
	layouts map[*ir.Var]op.NLayout
	errs    diag.List
}

func convertLayout(mod *ir.Module, f *ir.Function, desired map[string][]string) (*ir.Function, error) {
	if skip, _ := f.Attrs.Bool(ir.AttrSkipOptimize); skip {
		return f, nil
	}
	c := &layoutConverter{rw: ir.NewRewriter(mod), desired: desired, layouts: map[*ir.Var]op.NLayout{}}
	c.rw.Binding = c.binding
	nf := c.rw.Function(f)
	errs := c.rw.B.Diagnostics()
	errs = append(errs, c.errs...)
	if err := errs.Err(); err != nil {
		errs.Sort()
		return nil, errs
	}
	return nf, nil
}

// layoutOf is the current layout of e (TVM's GetNLayout).
func (c *layoutConverter) layoutOf(e ir.Expr) op.NLayout {
	switch e := e.(type) {
	case *ir.Var:
		if l, ok := c.layouts[e]; ok {
			return l
		}
		return op.InitialNLayout(e.StructInfo())
	case *ir.Constant:
		return op.InitialNLayout(e.StructInfo())
	case *ir.Tuple:
		fields := make([]op.NLayout, len(e.Fields))
		for i, f := range e.Fields {
			fields[i] = c.layoutOf(f)
		}
		return op.TupleLayout(fields...)
	}
	return op.LeafLayout(op.LayoutUnknown)
}

// convert returns e in layout to, emitting the permute_dims it takes
// (TVM's RewriteExpr).
func (c *layoutConverter) convert(e ir.Expr, to op.NLayout) ir.Expr { return c.convertTo(e, to, false) }

// convertTo is convert; with value set, a tensor's conversion is returned
// as the permute_dims call itself, for the caller to bind.
func (c *layoutConverter) convertTo(e ir.Expr, to op.NLayout, value bool) ir.Expr {
	from := c.layoutOf(e)
	if from.Equal(to) {
		return e
	}
	if t, ok := e.(*ir.Tuple); ok {
		if !to.Tuple || len(to.Fields) != len(t.Fields) {
			return e
		}
		fields, changed := make([]ir.Expr, len(t.Fields)), false
		for i, f := range t.Fields {
			fields[i] = c.convert(f, to.Fields[i])
			changed = changed || fields[i] != f
		}
		if !changed {
			return e
		}
		nt := &ir.Tuple{Fields: fields}
		nt.SetSpan(t.Span())
		return nt
	}
	if from.Tuple || to.Tuple {
		if !from.Tuple || !to.Tuple || len(from.Fields) != len(to.Fields) {
			return e
		}
		fields := make([]ir.Expr, len(from.Fields))
		for i := range from.Fields {
			item := c.rw.B.Emit(&ir.TupleGetItem{Tuple: e, Index: i}, "lv")
			if !from.Fields[i].Equal(op.InitialNLayout(item.StructInfo())) {
				c.layouts[item] = from.Fields[i]
			}
			fields[i] = c.convert(item, to.Fields[i])
		}
		return &ir.Tuple{Fields: fields}
	}
	f, t := from.Leaf, to.Leaf
	if f == "" || t == "" || f == op.LayoutUnknown || t == op.LayoutUnknown {
		return e
	}
	var p *ir.Call
	if op.IsSplitLayout(f) || op.IsSplitLayout(t) {
		m, ok := op.LayoutTransformMap(f, t)
		if !ok {
			return e
		}
		p = &ir.Call{Op: op.LayoutTransform, Args: []ir.Expr{e}, Attrs: ir.Attrs{"index_map": m}}
	} else {
		if len(f) != len(t) {
			return e
		}
		p = permute(e, f, t)
	}
	if value {
		return p
	}
	v := c.rw.B.Emit(p, "lv")
	if !op.IsInitial(t) {
		c.layouts[v] = to
	}
	return v
}

// permute is R.permute_dims taking e from layout from to layout to.
func permute(e ir.Expr, from, to string) *ir.Call {
	axes := make([]any, len(to))
	for i := range len(to) {
		axes[i] = int64(strings.IndexByte(from, to[i]))
	}
	return &ir.Call{Op: op.PermuteDims, Args: []ir.Expr{e}, Attrs: ir.Attrs{"axes": axes}}
}

// toInitial converts e back to its initial layout.
func (c *layoutConverter) toInitial(e ir.Expr) ir.Expr { return c.convert(e, c.initialOf(e)) }

// valueToInitial is e in its initial layout as a value to bind.
func (c *layoutConverter) valueToInitial(e ir.Expr) ir.Expr {
	return c.convertTo(e, c.initialOf(e), true)
}

// initialOf is the initial layout of e; a tuple expression's from its
// fields (one the rewriter rebuilt has no struct info yet); a value in a
// split layout has the rank of its primal axes.
func (c *layoutConverter) initialOf(e ir.Expr) op.NLayout {
	if t, ok := e.(*ir.Tuple); ok {
		fields := make([]op.NLayout, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = c.initialOf(f)
		}
		return op.TupleLayout(fields...)
	}
	return op.InitialOf(c.layoutOf(e), e.StructInfo())
}

// setLayout records the layout of the var bind now binds.
func (c *layoutConverter) setLayout(bind ir.Binding, l op.NLayout) {
	v := c.rw.Lookup(bind.BoundVar())
	if nv, ok := v.(*ir.Var); ok {
		if l.Equal(op.InitialNLayout(nv.StructInfo())) {
			delete(c.layouts, nv)
		} else {
			c.layouts[nv] = l
		}
	}
}

// binding rewrites one binding of a dataflow block.
func (c *layoutConverter) binding(rw *ir.Rewriter, bind ir.Binding, value ir.Expr) bool {
	if !rw.B.InDataflowBlock() {
		return false
	}
	switch bd := bind.(type) {
	case *ir.VarBinding:
		switch v := value.(type) {
		case *ir.Call:
			c.call(bd, v)
		case *ir.Tuple:
			c.tuple(bd, v)
		case *ir.TupleGetItem:
			c.tupleGetItem(bd, v)
		default:
			rw.ReEmit(bd, c.valueToInitial(value))
		}
		return true
	case *ir.MatchCast:
		c.matchCast(bd, value)
		return true
	}
	return false
}

// tupleGetItem rewrites a binding of a tuple field: the field keeps its
// layout in a dataflow var, and only it is converted back for an output
// var (TVM converts the whole tuple first).
func (c *layoutConverter) tupleGetItem(bind *ir.VarBinding, v *ir.TupleGetItem) {
	from := c.layoutOf(v.Tuple)
	if !from.Tuple || v.Index >= len(from.Fields) {
		c.rw.ReEmit(bind, v)
		return
	}
	field := from.Fields[v.Index]
	if bind.Var.Dataflow || field.Equal(op.InitialNLayout(bind.Var.StructInfo())) {
		c.rw.ReEmit(bind, v)
		c.setLayout(bind, field)
		return
	}
	lv := c.rw.B.Emit(v, "lv")
	c.layouts[lv] = field
	c.rw.ReEmit(bind, c.valueToInitial(lv))
}

// isNestedTensor reports whether s is a tensor or a tuple of them.
func isNestedTensor(s ir.StructInfo) bool {
	switch s := s.(type) {
	case *ir.TensorInfo:
		return true
	case *ir.TupleInfo:
		for _, f := range s.Fields {
			if !isNestedTensor(f) {
				return false
			}
		}
		return true
	}
	return false
}

// isNestedTensorExpr is isNestedTensor of e's struct info, a tuple
// expression's from its fields.
func isNestedTensorExpr(e ir.Expr) bool {
	if t, ok := e.(*ir.Tuple); ok {
		for _, f := range t.Fields {
			if !isNestedTensorExpr(f) {
				return false
			}
		}
		return true
	}
	return e.StructInfo() != nil && isNestedTensor(e.StructInfo())
}

// decide asks the op's rule for call's layouts; nil when the op has no
// rule or an argument is a tensor of unknown rank.
func (c *layoutConverter) decide(call *ir.Call) *op.LayoutDecision {
	o, ok := call.Op.(*ir.Op)
	if !ok {
		return nil
	}
	def, ok := op.DefOf(o)
	if !ok || def.Layout == nil {
		return nil
	}
	in := make([]op.NLayout, len(call.Args))
	for i, a := range call.Args {
		in[i] = c.layoutOf(a)
		if isNestedTensorExpr(a) && in[i].HasUnknown() {
			return nil
		}
	}
	// The rule sees the arguments as the program wrote them (TVM's rules
	// read the original call's struct info): each var in a converted
	// layout stands in with its struct info in the initial layout.
	orig, real := call, map[ir.Expr]ir.Expr{}
	for i, a := range call.Args {
		v, ok := a.(*ir.Var)
		if !ok || in[i].Tuple || in[i].Equal(c.initialOf(a)) {
			continue
		}
		if orig == call {
			orig = &ir.Call{Op: call.Op, Args: slices.Clone(call.Args), Attrs: call.Attrs, SInfoArgs: call.SInfoArgs}
			orig.SetSpan(call.Span())
		}
		p := ir.NewVar(v.Name, op.InitialInfo(in[i], v.StructInfo()))
		orig.Args[i], real[p] = p, v
	}
	d, err := def.Layout(orig, c.desired, in)
	if err != nil {
		c.errs.Add(call.Span(), DiagLayoutRule, "%v", err)
		return nil
	}
	if d == nil || len(d.In) > len(call.Args) {
		return nil
	}
	if len(real) > 0 {
		nc := *d.Call
		nc.Args = slices.Clone(d.Call.Args)
		for i, a := range nc.Args {
			if r, ok := real[a]; ok {
				nc.Args[i] = r
			}
		}
		d.Call = &nc
	}
	return d
}

// call rewrites a binding of a call (TVM's VisitBinding_ of a call).
func (c *layoutConverter) call(bind *ir.VarBinding, call *ir.Call) {
	rw := c.rw
	d := c.decide(call)
	if d == nil || !isNestedTensor(bind.Var.StructInfo()) && !bind.Var.Dataflow {
		args, changed := make([]ir.Expr, len(call.Args)), false
		for i, a := range call.Args {
			args[i] = c.toInitial(a)
			changed = changed || args[i] != a
		}
		value := ir.Expr(call)
		if changed {
			value = withArgs(call, args)
		}
		rw.ReEmit(bind, value)
		c.setLayout(bind, op.InitialNLayout(bind.Var.StructInfo()))
		return
	}
	args, changed := slices.Clone(d.Call.Args), d.Call != call
	for i, to := range d.In {
		args[i] = c.convert(d.Call.Args[i], to)
		changed = changed || args[i] != call.Args[i]
	}
	var value ir.Expr = call
	if changed {
		nc := withArgs(d.Call, args)
		if !ir.StructuralEqual(nc, call, ir.EqualOptions{}) {
			value = nc
		}
	}
	if bind.Var.Dataflow {
		rw.ReEmit(bind, value)
		c.setLayout(bind, d.Out)
		return
	}
	// An output var: computed in the new layout, converted back.
	if !d.Out.Equal(op.InitialNLayout(bind.Var.StructInfo())) {
		lv := rw.B.Emit(value, "lv")
		c.layouts[lv] = d.Out
		value = c.valueToInitial(lv)
	}
	rw.ReEmit(bind, value)
	c.setLayout(bind, op.InitialNLayout(bind.Var.StructInfo()))
}

func withArgs(call *ir.Call, args []ir.Expr) *ir.Call {
	nc := &ir.Call{Op: call.Op, Args: args, Attrs: call.Attrs, SInfoArgs: call.SInfoArgs}
	nc.SetSpan(call.Span())
	return nc
}

// tuple rewrites a binding of a tuple: a dataflow tuple keeps its fields'
// layouts, an output one gets them in their initial layouts.
func (c *layoutConverter) tuple(bind *ir.VarBinding, t *ir.Tuple) {
	if bind.Var.Dataflow && isNestedTensor(bind.Var.StructInfo()) {
		c.rw.ReEmit(bind, t)
		c.setLayout(bind, c.layoutOf(t))
		return
	}
	c.rw.ReEmit(bind, c.toInitial(t))
}

// matchCast rewrites a match_cast of a dataflow var: the cast value keeps
// its layout, and the cast's struct info is permuted into it.
func (c *layoutConverter) matchCast(bind *ir.MatchCast, value ir.Expr) {
	rw := c.rw
	if !bind.Var.Dataflow {
		rw.ReEmit(bind, c.toInitial(value))
		return
	}
	from := c.initialOf(value)
	to := c.layoutOf(value)
	if from.Equal(to) {
		rw.ReEmit(bind, value)
		return
	}
	sinfo, ok := permuteStructInfo(bind.SInfo, from, to)
	if !ok {
		rw.ReEmit(bind, c.toInitial(value))
		return
	}
	nv := rw.B.EmitMatchCast(value, sinfo, bind.Var.Name)
	rw.Remap(bind.Var, nv)
	c.layouts[nv] = to
}

// permuteStructInfo is s, the struct info of a value in layout from, for
// the value in layout to.
func permuteStructInfo(s ir.StructInfo, from, to op.NLayout) (ir.StructInfo, bool) {
	if from.Tuple || to.Tuple {
		t, ok := s.(*ir.TupleInfo)
		if !ok || !from.Tuple || !to.Tuple || len(t.Fields) != len(to.Fields) || len(from.Fields) != len(to.Fields) {
			return nil, false
		}
		fields := make([]ir.StructInfo, len(t.Fields))
		for i, f := range t.Fields {
			nf, ok := permuteStructInfo(f, from.Fields[i], to.Fields[i])
			if !ok {
				return nil, false
			}
			fields[i] = nf
		}
		return ir.NewTupleInfo(fields...), true
	}
	if from.Leaf == to.Leaf {
		return s, true
	}
	t, ok := s.(*ir.TensorInfo)
	if !ok || len(from.Leaf) != len(to.Leaf) || op.IsSplitLayout(from.Leaf) || op.IsSplitLayout(to.Leaf) {
		return nil, false // a split layout: the value is converted back instead
	}
	shape, ok := t.Shape.(*ir.ShapeExpr)
	if !ok {
		return s, true
	}
	if len(shape.Values) != len(to.Leaf) {
		return nil, false
	}
	dims := make([]ir.PrimExpr, len(shape.Values))
	for i := range dims {
		dims[i] = shape.Values[strings.IndexByte(from.Leaf, to.Leaf[i])]
	}
	nt := ir.TensorInfoOf(t.DType, dims...)
	nt.VDevice = t.VDevice
	return nt, true
}
