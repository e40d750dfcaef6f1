package op

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/ir"
)

// Layout inference for ConvertLayout, after TVM v0.23's
// src/relax/transform/infer_layout_utils.{h,cc} and the FRelaxInferLayout
// functions of src/relax/op/** (InferLayoutConv2d, InferLayoutPool2d,
// InferLayoutBinaryEwise, InferLayoutStatistical, ...).
//
// A layout decision names, in order, which axis of the tensor as the
// program first wrote it each axis of the tensor as it is now holds. The
// initial layout of a rank-4 tensor is "ABCD"; converted from NCHW to NHWC
// it is "ACDB" (now axis 1 holds what was axis 2, and so on). Letters are
// independent of what the axes mean, so one rule serves every rank and
// every op. A rank-0 tensor's layout is "" (nothing to convert); a tensor
// of unknown rank, or a value that is not a tensor, has LayoutUnknown.
//
// A decision may split an axis, in the notation of layout strings
// (op/layout_split.go): "ABCD4b" is a rank-4 tensor held as rank 5, its
// axis B in blocks of 4 (NCHW4c of an NCHW tensor). Only the rules that
// take such decisions see them (TVM's InferLayoutConv2d, InferLayoutPool2d,
// InferLayoutBinaryEwise, InferLayoutUnaryEwise); the others see a split
// argument as not laid out (leafOf), and ConvertLayout converts it back to
// its initial layout first. Conversions to and from a split decision are
// R.layout_transform (LayoutTransformMap), as TVM's.
//
// A rule (an op's Def.Layout) receives the call, the desired layouts of
// the pass (by op name) and the current layout of each argument, and
// decides the layouts the arguments must be converted to, the layout of
// the result, and the call's attributes in the new layout. Rules only
// rewrite calls whose tensor arguments all have a known rank
// (ConvertLayout gives the other calls their initial layouts); a rule
// returns nil to leave a call in its arguments' initial layouts.

// LayoutUnknown is the layout of a tensor of unknown rank or of a
// non-tensor value: never converted.
const LayoutUnknown = "?"

// NLayout is the layout of a value: a leaf layout for a tensor, one
// NLayout per field for a tuple (TVM's NLayout, a NestedMsg of
// LayoutDecision).
type NLayout struct {
	Leaf   string
	Fields []NLayout
	Tuple  bool
}

// LeafLayout is the NLayout of a tensor in layout s.
func LeafLayout(s string) NLayout { return NLayout{Leaf: s} }

// TupleLayout is the NLayout of a tuple.
func TupleLayout(fields ...NLayout) NLayout { return NLayout{Fields: fields, Tuple: true} }

// Equal reports whether a and b are the same nested layout.
func (a NLayout) Equal(b NLayout) bool {
	if a.Tuple != b.Tuple || a.Leaf != b.Leaf || len(a.Fields) != len(b.Fields) {
		return false
	}
	for i := range a.Fields {
		if !a.Fields[i].Equal(b.Fields[i]) {
			return false
		}
	}
	return true
}

// HasUnknown reports whether some leaf of a is LayoutUnknown.
func (a NLayout) HasUnknown() bool {
	if !a.Tuple {
		return a.Leaf == LayoutUnknown
	}
	return slices.ContainsFunc(a.Fields, NLayout.HasUnknown)
}

func (a NLayout) String() string {
	if !a.Tuple {
		return a.Leaf
	}
	parts := make([]string, len(a.Fields))
	for i, f := range a.Fields {
		parts[i] = f.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// InitialLayout is the layout of a rank-n tensor as written: "ABC..."
// (TVM's InitialLayout). Ranks above 26 have no layout (LayoutUnknown).
func InitialLayout(n int) string {
	if n < 0 || n > 26 {
		return LayoutUnknown
	}
	return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:n]
}

// InitialNLayout is the initial layout of a value of struct info s.
func InitialNLayout(s ir.StructInfo) NLayout {
	switch s := s.(type) {
	case *ir.TensorInfo:
		return LeafLayout(InitialLayout(s.NDim))
	case *ir.TupleInfo:
		fields := make([]NLayout, len(s.Fields))
		for i, f := range s.Fields {
			fields[i] = InitialNLayout(f)
		}
		return TupleLayout(fields...)
	}
	return LeafLayout(LayoutUnknown)
}

// InitialOf is the initial layout of a value of struct info s now in
// layout l: a tensor in a split layout has as many axes as its primal ones
// (ABCD4b: ABCD), others those of s.
func InitialOf(l NLayout, s ir.StructInfo) NLayout {
	if !l.Tuple && IsSplitLayout(l.Leaf) {
		return LeafLayout(InitialLayout(primalRank(l.Leaf)))
	}
	if t, ok := s.(*ir.TupleInfo); ok && l.Tuple && len(t.Fields) == len(l.Fields) {
		fields := make([]NLayout, len(l.Fields))
		for i, f := range l.Fields {
			fields[i] = InitialOf(f, t.Fields[i])
		}
		return TupleLayout(fields...)
	}
	return InitialNLayout(s)
}

// InitialInfo is the struct info in the initial layout of a tensor of
// struct info s in layout l (a permutation or a split decision: the
// shape is permuted back, split axes joined); s itself for other values.
func InitialInfo(l NLayout, s ir.StructInfo) ir.StructInfo {
	t, ok := s.(*ir.TensorInfo)
	if l.Tuple || !ok || l.Leaf == LayoutUnknown || IsInitial(l.Leaf) {
		return s
	}
	pl, err := parseLayout(l.Leaf)
	if err != nil {
		return s
	}
	dims, known := t.Dims()
	if !known {
		out := ir.TensorInfoNDim(t.DType, len(pl.pos))
		out.VDevice = t.VDevice
		return out
	}
	if len(dims) != pl.rank() {
		return s
	}
	pd, err := pl.unsplitShape(dims)
	if err != nil {
		return s
	}
	out := make([]ir.PrimExpr, len(pd))
	for j, pos := range pl.pos {
		k := int(pl.axes[pos].letter - 'A')
		if k >= len(out) {
			return s
		}
		out[k] = pd[j]
	}
	nt := newTensor(t.DType, out, true, len(out))
	nt.VDevice = t.VDevice
	return nt
}

// IsInitial reports whether layout is the initial layout of its rank.
func IsInitial(layout string) bool { return layout == InitialLayout(len(layout)) }

// TransposeLike permutes input as dst permutes src: output axis i is the
// axis of input at the position src has dst[i] (TVM's TransposeLike and
// TransposeStrLike). src and dst are permutations of one set of letters,
// input as long as them.
func TransposeLike(input, src, dst string) string {
	out := make([]byte, len(dst))
	for i := range len(dst) {
		out[i] = input[strings.IndexByte(src, dst[i])]
	}
	return string(out)
}

// FindAxis is where axis (of the initial layout, negative from the end)
// now is in layout (TVM's FindAxis).
func FindAxis(layout string, axis int) int {
	n := len(layout)
	if n == 0 {
		return 0
	}
	axis = ((axis % n) + n) % n
	return strings.IndexByte(layout, byte('A'+axis))
}

// FollowDecision is the layout a rank-n tensor broadcast against a tensor
// in layout src takes: its leading n-len(src) axes in place, the trailing
// ones permuted as src (TVM's FollowDecision).
func FollowDecision(src string, n int) string {
	if len(src) >= n {
		return src
	}
	lead := n - len(src)
	out := []byte(InitialLayout(lead))
	for i := range len(src) {
		out = append(out, src[i]+byte(lead))
	}
	return string(out)
}

// isPermutationLayout reports whether s is a primal layout: distinct
// upper-case letters, no split axes.
func isPermutationLayout(s string) bool {
	for i := range len(s) {
		if s[i] < 'A' || s[i] > 'Z' || strings.IndexByte(s[:i], s[i]) >= 0 {
			return false
		}
	}
	return true
}

// --- the desired layouts an op takes -----------------------------------------

// desiredSpec describes the desired_layouts entry an op takes: one layout
// per role (data, kernel, output), each a permutation of the canonical
// layout of the role; the last role (output) is optional and defaults to
// the first.
type desiredSpec struct {
	roles     []string // "data", "kernel", "output"
	canonical []string
	min       int
	// allowed, when set, are the only layouts of the first role the op
	// computes in (resize2d: NCHW or NHWC).
	allowed []string
	// split: the layouts may split axes (NCHW4c, OIHW4o).
	split bool
}

var desiredSpecs = map[string]desiredSpec{}

func init() {
	for spatial, sp := range []string{"W", "HW", "DHW"} {
		n := itoa(spatial + 1)
		desiredSpecs["relax.nn.conv"+n+"d"] = desiredSpec{roles: []string{"data", "kernel", "output"}, canonical: []string{"NC" + sp, "OI" + sp, "NC" + sp}, min: 2, split: true}
		desiredSpecs["relax.nn.conv"+n+"d_transpose"] = desiredSpec{roles: []string{"data", "kernel", "output"}, canonical: []string{"NC" + sp, "IO" + sp, "NC" + sp}, min: 2, split: true}
	}
	desiredSpecs["relax.image.resize2d"] = desiredSpec{roles: []string{"data"}, canonical: []string{"NCHW"}, min: 1, allowed: []string{"NCHW", "NHWC"}}
}

// DesiredLayoutOps lists the ops a desired_layouts entry may name.
func DesiredLayoutOps() []string {
	out := make([]string, 0, len(desiredSpecs))
	for name := range desiredSpecs {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// DesiredLayoutError is a desired_layouts entry an op cannot take.
type DesiredLayoutError struct {
	Op, Layout string
	// Unknown: the layout names an axis the op's layouts do not have (or
	// is not a layout at all), as opposed to a layout the op cannot take.
	Unknown bool
	Msg     string
}

func (e *DesiredLayoutError) Error() string { return e.Msg }

// CheckDesiredLayouts checks a desired_layouts entry: opName must be an op
// with a desired-layout rule and layouts the layouts it takes, each a
// permutation of the canonical layout of its role (NHWC for conv2d's data,
// OHWI for its kernel). The error names the op, the layout and what it
// accepts.
func CheckDesiredLayouts(opName string, layouts []string) error {
	spec, ok := desiredSpecs[opName]
	if !ok {
		if _, exists := ir.LookupOp(opName); !exists {
			return &DesiredLayoutError{Op: opName, Msg: fmt.Sprintf("%s is not an op", opName)}
		}
		return &DesiredLayoutError{Op: opName, Msg: fmt.Sprintf("%s takes no desired layout: it follows its arguments' layouts (ops that take one: %s)", opName, strings.Join(DesiredLayoutOps(), ", "))}
	}
	accepts := func() string {
		parts := make([]string, len(spec.roles))
		for i, r := range spec.roles {
			c := spec.canonical[i]
			if i == 0 && spec.allowed != nil {
				parts[i] = r + " " + strings.Join(spec.allowed, " or ")
				continue
			}
			parts[i] = r + " a permutation of " + c
			if spec.split {
				parts[i] += " (axes may be split: " + c + "4" + strings.ToLower(c[1:2]) + ")"
			}
			if i >= spec.min {
				parts[i] += " (optional)"
			}
		}
		return strings.Join(parts, ", ")
	}
	if len(layouts) < spec.min || len(layouts) > len(spec.roles) {
		return &DesiredLayoutError{Op: opName, Msg: fmt.Sprintf("%s takes %d to %d layouts (%s), got %d", opName, spec.min, len(spec.roles), accepts(), len(layouts))}
	}
	for i, l := range layouts {
		canon := spec.canonical[i]
		for j := range len(l) {
			c := l[j]
			isAxis := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
			if !isAxis || (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') && !strings.ContainsRune(canon, rune(c&^0x20)) {
				return &DesiredLayoutError{Op: opName, Layout: l, Unknown: true,
					Msg: fmt.Sprintf("unknown layout %q for %s's %s: %q is not one of its axes %s (it accepts %s)", l, opName, spec.roles[i], c, strings.Join(strings.Split(canon, ""), ", "), accepts())}
			}
		}
		if spec.split && IsSplitLayout(l) {
			pl, err := parseLayout(l)
			if err == nil {
				err = pl.checkPrimal(canon)
			}
			if err != nil {
				return &DesiredLayoutError{Op: opName, Layout: l,
					Msg: fmt.Sprintf("%s cannot take layout %q for its %s: %v (it accepts %s)", opName, l, spec.roles[i], err, accepts())}
			}
			continue
		}
		if !isPermutationLayout(l) || len(l) != len(canon) {
			return &DesiredLayoutError{Op: opName, Layout: l,
				Msg: fmt.Sprintf("%s cannot take layout %q for its %s: it accepts %s", opName, l, spec.roles[i], accepts())}
		}
		if i == 0 && spec.allowed != nil && !slices.Contains(spec.allowed, l) {
			return &DesiredLayoutError{Op: opName, Layout: l,
				Msg: fmt.Sprintf("%s cannot take layout %q for its %s: it accepts %s", opName, l, spec.roles[i], accepts())}
		}
	}
	return nil
}

// --- helpers for rules -----------------------------------------------------

// withCall returns call with attributes attrs (nil: unchanged) and the
// given arguments replaced.
func withCall(call *ir.Call, attrs ir.Attrs, args map[int]ir.Expr) *ir.Call {
	c := *call
	if attrs != nil {
		c.Attrs = attrs
	}
	if len(args) > 0 {
		c.Args = slices.Clone(call.Args)
		for i, a := range args {
			c.Args[i] = a
		}
	}
	return &c
}

func intsAttr[T int | int64](v []T) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// argNDim is the rank of tensor argument i, -1 when not known.
func argNDim(call *ir.Call, i int) int {
	if i >= len(call.Args) {
		return -1
	}
	if t, ok := call.Args[i].StructInfo().(*ir.TensorInfo); ok {
		return t.NDim
	}
	return -1
}

// leafOf is the leaf layout of in[i], false past the end and for a split
// layout.
func leafOf(in []NLayout, i int) (string, bool) {
	l, ok := anyLeafOf(in, i)
	if !ok || IsSplitLayout(l) {
		return "", false
	}
	return l, true
}

// anyLeafOf is leafOf for the rules that take split layouts.
func anyLeafOf(in []NLayout, i int) (string, bool) {
	if i >= len(in) || in[i].Tuple || in[i].Leaf == LayoutUnknown {
		return "", false
	}
	return in[i].Leaf, true
}

// stringAttr reads a string attribute of call (its default when absent).
func stringAttr(call *ir.Call, name string) string {
	s, _ := opAttr(opOf(call), call, name).(string)
	return s
}

// layoutAxes reads the axis attribute name as axes in [0, n) (all of them
// when None), false when malformed.
func layoutAxes(call *ir.Call, name string, n int) ([]int, bool) {
	list, present, err := opAttrInts(opOf(call), call, name)
	if err != nil {
		return nil, false
	}
	if !present {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all, true
	}
	out := make([]int, len(list))
	for i, a := range list {
		if a < -int64(n) || a >= int64(n) {
			return nil, false
		}
		out[i] = int((a + int64(n)) % int64(n))
	}
	return out, true
}

// --- rules -------------------------------------------------------------------

// layoutUnary: an elementwise op of one tensor works in whatever layout
// its argument is in (TVM's InferLayoutUnaryEwise).
func layoutUnary(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := anyLeafOf(in, 0)
	if !ok {
		return nil, nil
	}
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: LeafLayout(l), Call: call}, nil
}

// layoutDropout: elementwise, the result a (data, mask) pair.
func layoutDropout(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := leafOf(in, 0)
	if !ok {
		return nil, nil
	}
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: TupleLayout(LeafLayout(l), LeafLayout(l)), Call: call}, nil
}

// layoutBinary: a broadcasting elementwise op follows its operand of
// higher rank (the first on a tie); the other operand is converted to the
// same layout, its missing leading axes kept in front (TVM's
// InferLayoutBinaryEwise). A rank-0 operand is never converted.
func layoutBinary(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l1, ok1 := anyLeafOf(in, 0)
	l2, ok2 := anyLeafOf(in, 1)
	n1, n2 := argNDim(call, 0), argNDim(call, 1)
	if !ok1 || !ok2 || n1 < 0 || n2 < 0 {
		return nil, nil
	}
	if IsSplitLayout(l1) || IsSplitLayout(l2) {
		// An operand in a split layout: both take it when they have the
		// same rank and its blocks divide the other's axes; otherwise the
		// split operand goes back to its initial layout (TVM's
		// InferLayoutBinaryEwise).
		if d := splitBinary(call, l1, l2, n1, n2); d != nil {
			return d, nil
		}
		if IsSplitLayout(l1) {
			l1 = InitialLayout(n1)
		}
		if IsSplitLayout(l2) {
			l2 = InitialLayout(n2)
		}
	}
	if n1 <= n2 {
		if n1 == 0 {
			return &LayoutDecision{In: []NLayout{LeafLayout(""), LeafLayout(l2)}, Out: LeafLayout(l2), Call: call}, nil
		}
		out := FollowDecision(l1, n2)
		return &LayoutDecision{In: []NLayout{LeafLayout(l1), LeafLayout(out)}, Out: LeafLayout(out), Call: call}, nil
	}
	if n2 == 0 {
		return &LayoutDecision{In: []NLayout{LeafLayout(l1), LeafLayout("")}, Out: LeafLayout(l1), Call: call}, nil
	}
	out := FollowDecision(l2, n1)
	return &LayoutDecision{In: []NLayout{LeafLayout(out), LeafLayout(l2)}, Out: LeafLayout(out), Call: call}, nil
}

// splitBinary is layoutBinary's decision for operands in split layouts,
// nil when they cannot share one.
func splitBinary(call *ir.Call, l1, l2 string, n1, n2 int) *LayoutDecision {
	if n1 != n2 {
		return nil
	}
	_, d1, ok1 := knownTensor(call.Args[0])
	_, d2, ok2 := knownTensor(call.Args[1])
	both := func(l string) *LayoutDecision {
		return &LayoutDecision{In: []NLayout{LeafLayout(l), LeafLayout(l)}, Out: LeafLayout(l), Call: call}
	}
	// Strictly: a symbolic extent that may be 1 broadcasts, and padding it
	// into a block would add zeros where the operand repeats (TVM pads it).
	switch {
	case layoutRank(l1) >= layoutRank(l2) && ok2:
		if canProveLayoutTransform(InitialLayout(n2), l1, d2, true) {
			return both(l1)
		}
	case ok1:
		if canProveLayoutTransform(InitialLayout(n1), l2, d1, true) {
			return both(l2)
		}
	}
	return nil
}

// primalRank is the number of primal axes of a layout decision (the rank
// of the tensor as written).
func primalRank(l string) int {
	n := 0
	for i := range len(l) {
		if c := l[i]; c >= 'A' && c <= 'Z' {
			n++
		}
	}
	return n
}

// layoutRank is the number of axes of a layout decision.
func layoutRank(l string) int {
	n := 0
	for i := range len(l) {
		if c := l[i]; c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			n++
		}
	}
	return n
}

// layoutWhere: R.where(cond, x1, x2) with operands of one rank (rank-0
// ones aside) works in the layout of the first operand that was
// converted; operands of different ranks broadcast along trailing axes,
// so the call keeps the initial layouts.
func layoutWhere(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	n, lead := -1, ""
	for i := range 3 {
		l, ok := leafOf(in, i)
		r := argNDim(call, i)
		if !ok || r < 0 {
			return nil, nil
		}
		if r == 0 {
			continue
		}
		if n >= 0 && r != n {
			return nil, nil
		}
		n = r
		if lead == "" || IsInitial(lead) && !IsInitial(l) {
			lead = l
		}
	}
	if n < 0 {
		return nil, nil
	}
	ins := make([]NLayout, 3)
	for i := range 3 {
		if argNDim(call, i) == 0 {
			ins[i] = LeafLayout("")
		} else {
			ins[i] = LeafLayout(lead)
		}
	}
	return &LayoutDecision{In: ins, Out: LeafLayout(lead), Call: call}, nil
}

// layoutConv is the rule of the convolutions and transposed convolutions
// (TVM's InferLayoutConv{1,2,3}d, InferLayoutConv{1,2}dTranspose): with a
// desired layout, data and weight are converted to it and the result is in
// it; without one the convolution works in its data's layout, its weight
// in the weight's.
func layoutConv(call *ir.Call, desired map[string][]string, in []NLayout) (*LayoutDecision, error) {
	o := opOf(call)
	n := argNDim(call, 0)
	if n < 0 || argNDim(call, 1) != n {
		return nil, nil
	}
	dataAttr, kernelAttr := stringAttr(call, "data_layout"), stringAttr(call, "kernel_layout")
	outAttr := stringAttr(call, "out_layout")
	if outAttr == "" {
		outAttr = dataAttr
	}
	if !isPermutationLayout(dataAttr) || !isPermutationLayout(kernelAttr) || !isPermutationLayout(outAttr) || len(dataAttr) != n {
		return nil, nil
	}
	init := InitialLayout(n)
	attrs := call.Attrs
	if want, ok := desired[o.Name]; ok && len(want) >= 2 {
		if err := CheckDesiredLayouts(o.Name, want); err != nil {
			return nil, err
		}
		wantOut := want[0]
		if len(want) == 3 {
			wantOut = want[2]
		}
		attrs = attrs.With("data_layout", want[0]).With("kernel_layout", want[1]).With("out_layout", wantOut)
		if !IsSplitLayout(want[0]) && !IsSplitLayout(want[1]) && !IsSplitLayout(wantOut) {
			data := TransposeLike(init, dataAttr, want[0])
			weight := TransposeLike(init, kernelAttr, want[1])
			out := TransposeLike(init, outAttr, wantOut)
			return &LayoutDecision{In: []NLayout{LeafLayout(data), LeafLayout(weight)}, Out: LeafLayout(out), Call: withCall(call, attrs, nil)}, nil
		}
		// Split layouts: only where the blocks divide the data's and the
		// weight's axes (TVM's CanProveLayoutTransform; where they do not,
		// or the shapes are unknown, the call stays as it is).
		_, dx, ok1 := knownTensor(call.Args[0])
		_, dw, ok2 := knownTensor(call.Args[1])
		if !ok1 || !ok2 || !canProveLayoutTransform(dataAttr, want[0], dx, false) || !canProveLayoutTransform(kernelAttr, want[1], dw, false) {
			return nil, nil
		}
		// The result too, which TVM does not check: a padded result would
		// let the ops that follow it compute on the padding.
		si, err := o.Infer(nil, call)
		_, dout, known := knownTensorInfo(si)
		if err != nil || !known || !canProveLayoutTransform(outAttr, wantOut, dout, false) {
			return nil, nil
		}
		data := transposeSubLayoutLike(init, dataAttr, want[0])
		weight := transposeSubLayoutLike(init, kernelAttr, want[1])
		out := transposeSubLayoutLike(init, outAttr, wantOut)
		return &LayoutDecision{In: []NLayout{LeafLayout(data), LeafLayout(weight)}, Out: LeafLayout(out), Call: withCall(call, attrs, nil)}, nil
	}
	data, ok1 := leafOf(in, 0)
	weight, ok2 := leafOf(in, 1)
	if !ok1 || !ok2 || !isPermutationLayout(data) || !isPermutationLayout(weight) {
		return nil, nil
	}
	attrs = attrs.With("data_layout", TransposeLike(dataAttr, init, data)).
		With("kernel_layout", TransposeLike(kernelAttr, init, weight)).
		With("out_layout", TransposeLike(outAttr, init, data))
	return &LayoutDecision{In: []NLayout{LeafLayout(data), LeafLayout(weight)}, Out: LeafLayout(data), Call: withCall(call, attrs, nil)}, nil
}

// layoutPool is the rule of the pools and adaptive pools (TVM's
// InferLayoutPool{1,2,3}d, InferLayoutAdaptiveAvgPool{1,2,3}D): the pool
// works in its data's layout.
func layoutPool(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := anyLeafOf(in, 0)
	layout := stringAttr(call, "layout")
	outLayout := stringAttr(call, "out_layout")
	if outLayout == "" {
		outLayout = layout
	}
	if ok && IsSplitLayout(l) {
		// Data in a split layout: the pool works in it when the blocks
		// divide the data's axes (TVM's InferLayoutPool2d; the pool must
		// not change layouts, which TVM's rule would lose).
		_, dims, known := knownTensor(call.Args[0])
		if !known || outLayout != layout || !isPermutationLayout(layout) || len(layout) != len(dims) {
			return nil, nil
		}
		want := transposeSubLayoutLike(layout, InitialLayout(len(layout)), l)
		if !canProveLayoutTransform(layout, want, dims, false) {
			return nil, nil
		}
		attrs := call.Attrs.With("layout", want).With("out_layout", want)
		return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: LeafLayout(l), Call: withCall(call, attrs, nil)}, nil
	}
	if !ok || len(l) != len(layout) || !isPermutationLayout(l) || !isPermutationLayout(layout) || !isPermutationLayout(outLayout) {
		return nil, nil
	}
	init := InitialLayout(len(l))
	attrs := call.Attrs.With("layout", TransposeLike(layout, init, l)).With("out_layout", TransposeLike(outLayout, init, l))
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: LeafLayout(l), Call: withCall(call, attrs, nil)}, nil
}

// layoutResize2D: with a desired layout (NCHW or NHWC) the data is
// converted to it; without, the resize works in its data's layout when it
// can compute in it (TVM's InferLayoutResize2d).
func layoutResize2D(call *ir.Call, desired map[string][]string, in []NLayout) (*LayoutDecision, error) {
	o := opOf(call)
	layout := stringAttr(call, "layout")
	if len(layout) != 4 || !isPermutationLayout(layout) {
		return nil, nil
	}
	init := InitialLayout(4)
	var data, newLayout string
	if want, ok := desired[o.Name]; ok && len(want) >= 1 {
		if err := CheckDesiredLayouts(o.Name, want); err != nil {
			return nil, err
		}
		data, newLayout = TransposeLike(init, layout, want[0]), want[0]
	} else {
		l, ok := leafOf(in, 0)
		if !ok || len(l) != 4 || !isPermutationLayout(l) {
			return nil, nil
		}
		data, newLayout = l, TransposeLike(layout, init, l)
		if newLayout != "NCHW" && newLayout != "NHWC" {
			data, newLayout = init, layout
		}
	}
	ins := []NLayout{LeafLayout(data)}
	if len(call.Args) > 1 {
		ins = append(ins, InitialNLayout(call.Args[1].StructInfo()))
	}
	return &LayoutDecision{In: ins, Out: LeafLayout(data), Call: withCall(call, call.Attrs.With("layout", newLayout), nil)}, nil
}

// axisRule returns a rule for an op working along the int attribute key
// (softmax, prelu, flip, cumsum, ...): the axis moves with the layout. The
// arguments after the first keep their initial layouts, except those
// listed in follow, which take the first's.
func axisRule(key string, follow ...int) LayoutFunc {
	return func(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
		l, ok := leafOf(in, 0)
		if !ok || !isPermutationLayout(l) || len(l) == 0 {
			return nil, nil
		}
		axis, present, err := opAttrInt(opOf(call), call, key)
		if err != nil || !present {
			return nil, nil
		}
		ins := []NLayout{LeafLayout(l)}
		for i := 1; i < len(call.Args); i++ {
			if slices.Contains(follow, i) {
				if argNDim(call, i) != len(l) {
					return nil, nil
				}
				ins = append(ins, LeafLayout(l))
			} else {
				ins = append(ins, InitialNLayout(call.Args[i].StructInfo()))
			}
		}
		attrs := call.Attrs.With(key, int64(FindAxis(l, int(axis))))
		return &LayoutDecision{In: ins, Out: LeafLayout(l), Call: withCall(call, attrs, nil)}, nil
	}
}

// layoutScan: cumsum/cumprod along an axis keep the layout; without an
// axis they flatten, which only the initial layout computes.
func layoutScan(call *ir.Call, desired map[string][]string, in []NLayout) (*LayoutDecision, error) {
	if _, present, _ := opAttrInt(opOf(call), call, "axis"); !present {
		return nil, nil
	}
	return axisRule("axis")(call, desired, in)
}

// layoutNorm returns the rule of a normalization over axes (TVM's
// InferLayoutLayerNorm, InferLayoutGroupNorm, InferLayoutRMSNorm): the
// data keeps its layout, the axes (and channel_axis) move with it, the
// nParams parameters keep theirs.
func layoutNorm(nParams int, channelAxis bool) LayoutFunc {
	return func(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
		l, ok := leafOf(in, 0)
		n := len(l)
		if !ok || !isPermutationLayout(l) || n == 0 || len(call.Args) < 1+nParams {
			return nil, nil
		}
		axes, ok := layoutAxes(call, "axes", n)
		if !ok {
			return nil, nil
		}
		newAxes := make([]int, len(axes))
		for i, a := range axes {
			newAxes[i] = FindAxis(l, a)
		}
		attrs := call.Attrs.With("axes", intsAttr(newAxes))
		if channelAxis {
			c, present, err := opAttrInt(opOf(call), call, "channel_axis")
			if err != nil || !present {
				return nil, nil
			}
			attrs = attrs.With("channel_axis", int64(FindAxis(l, int(c))))
		}
		ins := []NLayout{LeafLayout(l)}
		for i := 1; i <= nParams; i++ {
			ins = append(ins, InitialNLayout(call.Args[i].StructInfo()))
		}
		return &LayoutDecision{In: ins, Out: LeafLayout(l), Call: withCall(call, attrs, nil)}, nil
	}
}

// layoutBatchNorm: the data keeps its layout and axis moves with it; the
// statistics and parameters keep theirs (TVM's InferLayoutBatchNorm).
func layoutBatchNorm(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := leafOf(in, 0)
	if !ok || !isPermutationLayout(l) || len(l) == 0 || len(call.Args) < 5 {
		return nil, nil
	}
	axis, present, err := opAttrInt(opOf(call), call, "axis")
	if err != nil || !present {
		return nil, nil
	}
	ins := []NLayout{LeafLayout(l)}
	for i := 1; i < 5; i++ {
		ins = append(ins, InitialNLayout(call.Args[i].StructInfo()))
	}
	attrs := call.Attrs.With("axis", int64(FindAxis(l, int(axis))))
	return &LayoutDecision{In: ins, Out: TupleLayout(LeafLayout(l), ins[3], ins[4]), Call: withCall(call, attrs, nil)}, nil
}

// layoutReduce is the rule of the reductions over axes (TVM's
// InferLayoutStatistical): the axes move with the layout; without
// keepdims the result's layout is the input's without the reduced axes.
func layoutReduce(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := anyLeafOf(in, 0)
	if !ok {
		return nil, nil
	}
	pl, err := parseLayout(l)
	if err != nil || !IsSplitLayout(l) && !isPermutationLayout(l) {
		return nil, nil
	}
	n := len(pl.pos) // the initial rank
	keep, _ := opAttrBool(opOf(call), call, "keepdims")
	axes, ok := layoutAxes(call, "axis", n)
	if !ok {
		return nil, nil
	}
	// marks: for each initial axis, '#' if reduced, else its letter in the
	// result's initial layout.
	marks := make([]byte, n)
	for i, j := 0, 0; i < n; i++ {
		if slices.Contains(axes, i) {
			marks[i] = '#'
		} else {
			marks[i] = byte('A' + j)
			j++
		}
	}
	// A split axis reduced is reduced in both its parts; one kept keeps
	// its block (TVM's InferLayoutStatistical).
	var newAxes []int
	var out []byte
	for i, a := range pl.axes {
		m := marks[a.letter-'A']
		switch {
		case m == '#' && a.factor > 0 && keep:
			return nil, nil // a block of extent 1: back to the initial layout first
		case m == '#':
			newAxes = append(newAxes, i)
		case a.factor > 0:
			out = append(append(out, itoa(int(a.factor))...), m-'A'+'a')
		default:
			out = append(out, m)
		}
	}
	outLayout := string(out)
	if keep {
		outLayout = l
	}
	attrs := call.Attrs.With("axis", intsAttr(newAxes))
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: LeafLayout(outLayout), Call: withCall(call, attrs, nil)}, nil
}

// layoutArgReduce: argmax/argmin along one axis, as a reduction; without
// an axis (over the flattened tensor) they need the initial layout.
func layoutArgReduce(call *ir.Call, desired map[string][]string, in []NLayout) (*LayoutDecision, error) {
	axis, present, err := opAttrInt(opOf(call), call, "axis")
	if err != nil || !present {
		return nil, nil
	}
	d, err := layoutReduce(withCall(call, call.Attrs.With("axis", []any{axis}), nil), desired, in)
	if d == nil || err != nil {
		return d, err
	}
	ax, _ := ir.AttrAsInts(d.Call.Attrs["axis"])
	d.Call = withCall(call, call.Attrs.With("axis", ax[0]), nil)
	return d, nil
}

// layoutConcat: every tensor is converted to the first one's layout and
// the axis moves with it (TVM's InferLayoutConcat).
func layoutConcat(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	if len(in) == 0 || !in[0].Tuple || len(in[0].Fields) == 0 || in[0].Fields[0].Tuple {
		return nil, nil
	}
	l := in[0].Fields[0].Leaf
	axis, _, err := opAttrInt(opOf(call), call, "axis")
	if err != nil {
		return nil, nil
	}
	if split := concatSplitLayout(call, in[0].Fields); split != "" {
		fields := make([]NLayout, len(in[0].Fields))
		for i := range fields {
			fields[i] = LeafLayout(split)
		}
		// Along the outer part of a split axis: whole blocks follow blocks.
		attrs := call.Attrs.With("axis", int64(FindAxis(stripDigits(split), int(axis))))
		return &LayoutDecision{In: []NLayout{TupleLayout(fields...)}, Out: LeafLayout(split), Call: withCall(call, attrs, nil)}, nil
	}
	if IsSplitLayout(l) { // the first regular layout, as TVM picks
		for _, f := range in[0].Fields {
			if !f.Tuple && isPermutationLayout(f.Leaf) {
				l = f.Leaf
				break
			}
		}
	}
	if !isPermutationLayout(l) || len(l) == 0 {
		return nil, nil
	}
	fields := make([]NLayout, len(in[0].Fields))
	for i, f := range in[0].Fields {
		if f.Tuple || f.Leaf == LayoutUnknown || primalRank(f.Leaf) != len(l) {
			return nil, nil
		}
		fields[i] = LeafLayout(l)
	}
	attrs := call.Attrs.With("axis", int64(FindAxis(l, int(axis))))
	return &LayoutDecision{In: []NLayout{TupleLayout(fields...)}, Out: LeafLayout(l), Call: withCall(call, attrs, nil)}, nil
}

// concatSplitLayout is the split layout a concatenation works in: the
// first field's in a split layout, when every field's blocks provably
// divide its axes (padding would land between the parts); "" otherwise
// (TVM's InferLayoutConcat).
func concatSplitLayout(call *ir.Call, fields []NLayout) string {
	var split string
	for _, f := range fields {
		if !f.Tuple && IsSplitLayout(f.Leaf) {
			split = f.Leaf
			break
		}
	}
	tup, ok := call.Args[0].(*ir.Tuple)
	if split == "" || !ok || len(tup.Fields) != len(fields) {
		return ""
	}
	for i, f := range fields {
		if f.Tuple || f.Leaf == LayoutUnknown {
			return ""
		}
		_, dims, known := knownTensorInfo(InitialInfo(f, argStructInfo(tup.Fields[i])))
		if !known || !canProveLayoutTransform(InitialLayout(len(dims)), split, dims, true) {
			return ""
		}
	}
	return split
}

// stripDigits is a layout decision without its block sizes, one letter
// per axis (TVM's FindAxis reads it so).
func stripDigits(l string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, l)
}

// layoutStack: every tensor is converted to the first one's layout; the
// new axis stays where it was, the others follow the layout.
func layoutStack(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	if len(in) == 0 || !in[0].Tuple || len(in[0].Fields) == 0 || in[0].Fields[0].Tuple {
		return nil, nil
	}
	l := in[0].Fields[0].Leaf
	if !isPermutationLayout(l) {
		return nil, nil
	}
	axis, _, err := opAttrInt(opOf(call), call, "axis")
	if err != nil || axis < -int64(len(l)+1) || axis > int64(len(l)) {
		return nil, nil
	}
	fields := make([]NLayout, len(in[0].Fields))
	for i, f := range in[0].Fields {
		if f.Tuple || len(f.Leaf) != len(l) {
			return nil, nil
		}
		fields[i] = LeafLayout(l)
	}
	out := expandedLayout(l, []int{int(axis)})
	return &LayoutDecision{In: []NLayout{TupleLayout(fields...)}, Out: LeafLayout(out), Call: call}, nil
}

// expandedLayout is the layout of a tensor in layout l with new axes
// inserted at positions axes of the result (TVM's InferLayoutExpandDims):
// the new axes stay in place, the old ones follow l.
func expandedLayout(l string, axes []int) string {
	n := len(l) + len(axes)
	isNew := make([]bool, n)
	for _, a := range axes {
		isNew[((a%n)+n)%n] = true
	}
	var old []byte // the letters of the old axes in the result's initial layout
	for i := range n {
		if !isNew[i] {
			old = append(old, byte('A'+i))
		}
	}
	moved := TransposeLike(string(old), InitialLayout(len(l)), l)
	out := make([]byte, n)
	for i, j := 0, 0; i < n; i++ {
		if isNew[i] {
			out[i] = byte('A' + i)
		} else {
			out[i] = moved[j]
			j++
		}
	}
	return string(out)
}

// layoutExpandDims: the new axes stay where they were written (TVM's
// InferLayoutExpandDims).
func layoutExpandDims(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := leafOf(in, 0)
	if !ok || !isPermutationLayout(l) {
		return nil, nil
	}
	axes, _, err := opAttrInts(opOf(call), call, "axis")
	if err != nil {
		return nil, nil
	}
	n := len(l) + len(axes)
	ax := make([]int, len(axes))
	seen := map[int]bool{}
	for i, a := range axes {
		if a < -int64(n) || a >= int64(n) {
			return nil, nil
		}
		ax[i] = int((a + int64(n)) % int64(n))
		if seen[ax[i]] {
			return nil, nil
		}
		seen[ax[i]] = true
	}
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: LeafLayout(expandedLayout(l, ax)), Call: call}, nil
}

// layoutSqueeze: the squeezed axes move with the layout and the result
// keeps the order of the others (TVM's InferLayoutSqueeze).
func layoutSqueeze(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := leafOf(in, 0)
	n := len(l)
	if !ok || !isPermutationLayout(l) {
		return nil, nil
	}
	var axes []int
	if _, present, _ := opAttrInts(opOf(call), call, "axis"); present {
		axes, ok = layoutAxes(call, "axis", n)
		if !ok {
			return nil, nil
		}
	} else {
		t, _ := call.Args[0].StructInfo().(*ir.TensorInfo)
		dims, known := t.Dims()
		if !known {
			return nil, nil
		}
		for i, d := range dims {
			if v, ok := ir.IntValue(d); ok && v == 1 {
				axes = append(axes, i)
			}
		}
	}
	marks := make([]byte, n)
	for i, j := 0, 0; i < n; i++ {
		if slices.Contains(axes, i) {
			marks[i] = '#'
		} else {
			marks[i] = byte('A' + j)
			j++
		}
	}
	var newAxes []int
	var out []byte
	for i := range n {
		if m := marks[l[i]-'A']; m == '#' {
			newAxes = append(newAxes, i)
		} else {
			out = append(out, m)
		}
	}
	attrs := call.Attrs.With("axis", intsAttr(newAxes))
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: LeafLayout(string(out)), Call: withCall(call, attrs, nil)}, nil
}

// layoutPermuteDims: the permutation absorbs the layout, so the result is
// in its initial layout (TVM's InferLayoutPermuteDims).
func layoutPermuteDims(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := leafOf(in, 0)
	n := len(l)
	if !ok || !isPermutationLayout(l) {
		return nil, nil
	}
	order, present, err := opAttrInts(opOf(call), call, "axes")
	if err != nil {
		return nil, nil
	}
	if !present {
		order = make([]int64, n)
		for i := range order {
			order[i] = int64(n - 1 - i)
		}
	}
	if len(order) != n {
		return nil, nil
	}
	newOrder := make([]int, n)
	for i, a := range order {
		if a < -int64(n) || a >= int64(n) {
			return nil, nil
		}
		newOrder[i] = strings.IndexByte(l, byte('A'+(a+int64(n))%int64(n)))
	}
	attrs := call.Attrs.With("axes", intsAttr(newOrder))
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: LeafLayout(InitialLayout(n)), Call: withCall(call, attrs, nil)}, nil
}

// layoutSplit: every part keeps the layout; the axis moves with it (TVM's
// InferLayoutSplit).
func layoutSplit(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := leafOf(in, 0)
	if !ok || !isPermutationLayout(l) || len(l) == 0 {
		return nil, nil
	}
	// The number of parts: sections, or one more than the indices.
	parts := 0
	v := opAttr(opOf(call), call, "indices_or_sections")
	if n, ok := ir.AttrAsInt(v); ok {
		parts = int(n)
	} else if idx, ok := ir.AttrAsInts(v); ok {
		parts = len(idx) + 1
	} else {
		return nil, nil
	}
	axis, _, err := opAttrInt(opOf(call), call, "axis")
	if err != nil {
		return nil, nil
	}
	fields := make([]NLayout, parts)
	for i := range fields {
		fields[i] = LeafLayout(l)
	}
	attrs := call.Attrs.With("axis", int64(FindAxis(l, int(axis))))
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: TupleLayout(fields...), Call: withCall(call, attrs, nil)}, nil
}

// layoutStridedSlice: the sliced axes (a tuple of constants, argument 1)
// move with the layout (TVM's InferLayoutStridedSlice).
func layoutStridedSlice(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := leafOf(in, 0)
	if !ok || !isPermutationLayout(l) || len(l) == 0 || len(call.Args) < 2 {
		return nil, nil
	}
	tup, ok := call.Args[1].(*ir.Tuple)
	if !ok {
		return nil, nil
	}
	fields := make([]ir.Expr, len(tup.Fields))
	for i, f := range tup.Fields {
		pv, ok := f.(*ir.PrimValue)
		if !ok {
			return nil, nil
		}
		a, ok := ir.IntValue(pv.Value)
		if !ok {
			return nil, nil
		}
		fields[i] = &ir.PrimValue{Value: ir.I64(int64(FindAxis(l, int(a))))}
	}
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: LeafLayout(l),
		Call: withCall(call, nil, map[int]ir.Expr{1: &ir.Tuple{Fields: fields}})}, nil
}

// layoutRepeat: along an axis the layout is kept and the axis moves;
// without one the result is flat (TVM's InferLayoutRepeat).
func layoutRepeat(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := leafOf(in, 0)
	if !ok || !isPermutationLayout(l) || len(l) == 0 {
		return nil, nil
	}
	axis, present, err := opAttrInt(opOf(call), call, "axis")
	if err != nil {
		return nil, nil
	}
	if !present {
		return &LayoutDecision{In: []NLayout{LeafLayout(InitialLayout(len(l)))}, Out: LeafLayout("A"), Call: call}, nil
	}
	attrs := call.Attrs.With("axis", int64(FindAxis(l, int(axis))))
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: LeafLayout(l), Call: withCall(call, attrs, nil)}, nil
}

// layoutTile: the repeats are permuted with the layout; repeats for new
// leading axes stay in front (TVM's InferLayoutTile).
func layoutTile(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	l, ok := leafOf(in, 0)
	n := len(l)
	if !ok || !isPermutationLayout(l) {
		return nil, nil
	}
	reps, _, err := opAttrInts(opOf(call), call, "repeats")
	if err != nil {
		return nil, nil
	}
	k := len(reps)
	var newReps []int
	if k <= n {
		for i := range n {
			pos := int(l[i] - 'A')
			if pos >= n-k {
				newReps = append(newReps, int(reps[pos-(n-k)]))
			} else {
				newReps = append(newReps, 1)
			}
		}
	} else {
		lead := k - n
		for i := range lead {
			newReps = append(newReps, int(reps[i]))
		}
		for i := range n {
			newReps = append(newReps, int(reps[int(l[i]-'A')+lead]))
		}
	}
	attrs := call.Attrs.With("repeats", intsAttr(newReps))
	return &LayoutDecision{In: []NLayout{LeafLayout(l)}, Out: LeafLayout(FollowDecision(l, max(n, k))), Call: withCall(call, attrs, nil)}, nil
}

// layoutGatherElements: data and indices share a layout (the indices' when
// only they were converted) and the axis moves (TVM's
// InferLayoutGatherElements).
func layoutGatherElements(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	d, ok1 := leafOf(in, 0)
	ix, ok2 := leafOf(in, 1)
	if !ok1 || !ok2 || len(d) != len(ix) || len(d) == 0 {
		return nil, nil
	}
	l := d
	if IsInitial(d) && !IsInitial(ix) {
		l = ix
	}
	if !isPermutationLayout(l) {
		return nil, nil
	}
	axis, _, err := opAttrInt(opOf(call), call, "axis")
	if err != nil {
		return nil, nil
	}
	attrs := call.Attrs.With("axis", int64(FindAxis(l, int(axis))))
	return &LayoutDecision{In: []NLayout{LeafLayout(l), LeafLayout(l)}, Out: LeafLayout(l), Call: withCall(call, attrs, nil)}, nil
}

// layoutScatterElements: data, indices and updates share a layout (the
// indices' and updates' when they agree) and the axis moves (TVM's
// InferLayoutScatterElements).
func layoutScatterElements(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	d, ok1 := leafOf(in, 0)
	ix, ok2 := leafOf(in, 1)
	up, ok3 := leafOf(in, 2)
	if !ok1 || !ok2 || !ok3 || len(d) != len(ix) || len(d) != len(up) || len(d) == 0 {
		return nil, nil
	}
	l := d
	if ix == up {
		l = ix
	}
	if !isPermutationLayout(l) {
		return nil, nil
	}
	axis, _, err := opAttrInt(opOf(call), call, "axis")
	if err != nil {
		return nil, nil
	}
	attrs := call.Attrs.With("axis", int64(FindAxis(l, int(axis))))
	return &LayoutDecision{In: []NLayout{LeafLayout(l), LeafLayout(l), LeafLayout(l)}, Out: LeafLayout(l), Call: withCall(call, attrs, nil)}, nil
}

// layoutScatterND: data and updates of the same rank share data's layout
// (TVM's InferLayoutScatterND) when the axes the indices address, the
// leading indices.shape[-1] ones, are still in place (TVM converts them
// too, which addresses the wrong axes once they moved); the indices keep
// their layout.
func layoutScatterND(call *ir.Call, _ map[string][]string, in []NLayout) (*LayoutDecision, error) {
	d, ok1 := leafOf(in, 0)
	ix, ok2 := leafOf(in, 1)
	_, ok3 := leafOf(in, 2)
	if !ok1 || !ok2 || !ok3 || !isPermutationLayout(d) || argNDim(call, 2) != len(d) {
		return nil, nil
	}
	t, _ := call.Args[1].StructInfo().(*ir.TensorInfo)
	dims, known := t.Dims()
	if !known || len(dims) == 0 {
		return nil, nil
	}
	m, ok := ir.IntValue(dims[len(dims)-1])
	if !ok || m < 0 || int(m) > len(d) || d[:m] != InitialLayout(int(m)) {
		return nil, nil
	}
	return &LayoutDecision{In: []NLayout{LeafLayout(d), LeafLayout(ix), LeafLayout(d)}, Out: LeafLayout(d), Call: call}, nil
}
