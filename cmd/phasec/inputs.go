package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
)

// Binding the user's input files to a function's parameters, the same way
// in run (on an executable's recorded signatures), eval, opt
// --verify-semantics and bisect (on the Relax function).
//
// A parameter is given by its name. A tuple parameter (the params of the
// transform_params function LiftTransformParams makes, say) is given
// element by element: element i of parameter params is params.i, and
// params.1.0 in a nested tuple, both as --input params.0=w0.npy and as
// the key params.0 of an --inputs .npz. Every value given is checked
// against its annotation (dtype, rank, constant dimensions) and a tuple
// given in part names the elements missing, in the user's terms.

// inputLeaf is one value a user gives: a parameter that is not a tuple,
// or an element (at any depth) of a tuple parameter.
type inputLeaf struct {
	path  string // x, params.0, params.1.0
	param int    // the parameter it belongs to
	// sig is the leaf's annotation; known is false for an executable that
	// recorded none (nothing is checked then).
	sig   vm.ParamSig
	known bool
}

// inputBinder collects the values given for one function's parameters.
type inputBinder struct {
	fn     string           // the function, for messages
	params []string         // its parameter names
	infos  []ir.StructInfo  // the parameters' struct info (nil: not a tuple, or unknown)
	leaves []inputLeaf      // every parameter's leaves, in parameter order
	byPath map[string]int   // leaf index by path
	values []*tensor.Tensor // given leaf values
	flags  []string         // the flag that gave each leaf
}

// newIRBinder binds the parameters of a Relax function.
func newIRBinder(f *ir.Function, name string) *inputBinder {
	b := &inputBinder{fn: name}
	for i, p := range f.Params {
		b.add(i, p.Name, p.StructInfo(), vm.ParamSig{}, true)
	}
	return b
}

// newVMBinder binds the parameters of an executable's function from its
// recorded signatures; a tuple parameter's elements come from its
// annotation, read back as TVMScript.
func newVMBinder(f *vm.Function) (*inputBinder, error) {
	b := &inputBinder{fn: f.Name}
	for i, name := range f.ParamNames {
		if i >= len(f.Sigs) {
			b.add(i, name, nil, vm.ParamSig{NDim: -1}, false)
			continue
		}
		sg := f.Sigs[i]
		if !strings.HasPrefix(sg.Annotation, "R.Tuple(") {
			b.add(i, name, nil, sg, true)
			continue
		}
		si, err := parseAnnotation(sg.Annotation)
		if err != nil {
			return nil, fmt.Errorf("parameter %s of %s: cannot read its annotation %s: %v", name, f.Name, sg.Annotation, err)
		}
		b.add(i, name, si, vm.ParamSig{}, true)
	}
	return b, nil
}

// add records parameter i: one leaf (with sig, or the signature of si when
// si is given), or one per element of a tuple si.
func (b *inputBinder) add(i int, name string, si ir.StructInfo, sig vm.ParamSig, known bool) {
	b.params = append(b.params, name)
	if _, isTuple := si.(*ir.TupleInfo); !isTuple {
		if si != nil {
			sig = sigOf(si)
		}
		b.infos = append(b.infos, nil)
		b.addLeaf(inputLeaf{path: name, param: i, sig: sig, known: known})
		return
	}
	b.infos = append(b.infos, si)
	// Struct info nests as deep as the annotation is written, not as the
	// function is long.
	var walk func(path string, si ir.StructInfo)
	walk = func(path string, si ir.StructInfo) {
		t, ok := si.(*ir.TupleInfo)
		if !ok {
			b.addLeaf(inputLeaf{path: path, param: i, sig: sigOf(si), known: true})
			return
		}
		for j, f := range t.Fields {
			walk(path+"."+strconv.Itoa(j), f)
		}
	}
	walk(name, si)
}

func (b *inputBinder) addLeaf(l inputLeaf) {
	if b.byPath == nil {
		b.byPath = map[string]int{}
	}
	b.byPath[l.path] = len(b.leaves)
	b.leaves = append(b.leaves, l)
	b.values = append(b.values, nil)
	b.flags = append(b.flags, "")
}

// sigOf is the signature of struct info si, as VM code generation records
// it (codegen's signatures).
func sigOf(si ir.StructInfo) vm.ParamSig {
	name := func(v *ir.PrimVar) string { return v.Name }
	sg := vm.ParamSig{NDim: -1}
	if si == nil {
		return sg
	}
	sg.Annotation = ir.FormatStructInfo(si, name)
	if t, ok := si.(*ir.TensorInfo); ok {
		sg.Tensor, sg.NDim = true, t.NDim
		if !t.DType.IsVoid() {
			sg.DType = t.DType.String()
		}
		if dims, ok := t.Dims(); ok {
			sg.NDim = len(dims)
			sg.Dims = make([]string, len(dims))
			for j, d := range dims {
				sg.Dims[j] = ir.FormatPrim(d, name)
			}
		}
	}
	return sg
}

// parseAnnotation reads a recorded parameter annotation back into struct
// info, as the annotation of a one-parameter function.
func parseAnnotation(annotation string) (ir.StructInfo, error) {
	src := "@I.ir_module\nclass Module:\n    @R.function\n    def f(p: " + quoteSymbolicDims(annotation) + "):\n        return p\n"
	mod, diags := syntax.Parse("annotation", []byte(src))
	if err := diags.Err(); err != nil {
		return nil, err
	}
	f := mod.Func("f")
	if f == nil || len(f.Params) != 1 {
		return nil, fmt.Errorf("not a parameter annotation")
	}
	return f.Params[0].StructInfo(), nil
}

// quoteSymbolicDims writes the symbolic dimensions of a recorded
// annotation (R.Tensor((n, 2 * n), ...), R.Shape([n])) as a parameter
// annotation declares them: quoted, ("n", "2 * n").
func quoteSymbolicDims(annotation string) string {
	var out strings.Builder
	rest := annotation
	for {
		i, open, close := -1, "", byte(0)
		for _, o := range []struct {
			s string
			c byte
		}{{"R.Tensor((", ')'}, {"R.Shape([", ']'}} {
			if j := strings.Index(rest, o.s); j >= 0 && (i < 0 || j < i) {
				i, open, close = j, o.s, o.c
			}
		}
		if i < 0 {
			out.WriteString(rest)
			return out.String()
		}
		out.WriteString(rest[:i+len(open)])
		rest = rest[i+len(open):]
		end := strings.IndexByte(rest, close)
		if end < 0 {
			out.WriteString(rest)
			return out.String()
		}
		dims := strings.Split(rest[:end], ",")
		for j, d := range dims {
			t := strings.TrimSpace(d)
			if _, err := strconv.ParseInt(t, 10, 64); err != nil && t != "" && !strings.HasPrefix(t, `"`) {
				dims[j] = strings.Replace(d, t, strconv.Quote(t), 1)
			}
		}
		out.WriteString(strings.Join(dims, ","))
		rest = rest[end:]
	}
}

// give binds the leaf at path (a parameter or tuple element name) to t,
// which flag gave.
func (b *inputBinder) give(flag, path string, t *tensor.Tensor) error {
	i, ok := b.byPath[path]
	if !ok {
		return fmt.Errorf("%s: %s", flag, b.noLeaf(path))
	}
	return b.giveLeaf(flag, i, t)
}

// check reports a path that names no parameter or tuple element, before
// its file is read.
func (b *inputBinder) check(flag, path string) error {
	if _, ok := b.byPath[path]; !ok {
		return fmt.Errorf("%s: %s", flag, b.noLeaf(path))
	}
	return nil
}

// giveNext binds the first leaf without a value (an --input without
// name=): parameters and tuple elements in order.
func (b *inputBinder) giveNext(flag string, t *tensor.Tensor) error {
	for i, v := range b.values {
		if v == nil {
			return b.giveLeaf(flag, i, t)
		}
	}
	return fmt.Errorf("%s: %s takes only %d values (%s)", flag, b.fn, len(b.leaves), strings.Join(b.paths(), ", "))
}

func (b *inputBinder) giveLeaf(flag string, i int, t *tensor.Tensor) error {
	l := b.leaves[i]
	if l.known {
		what := "parameter " + l.path
		if l.path != b.params[l.param] {
			what = "element " + l.path + " of parameter " + b.params[l.param]
		}
		if err := checkSig(what, l.sig, t); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	b.values[i], b.flags[i] = t, flag
	return nil
}

// noLeaf explains a name that is neither a parameter nor a tuple element.
func (b *inputBinder) noLeaf(path string) string {
	if p := slices.Index(b.params, path); p >= 0 && b.infos[p] != nil {
		return fmt.Sprintf("parameter %s of %s is %s: give its elements as %s",
			path, b.fn, sigOf(b.infos[p]).Annotation, strings.Join(b.leafPaths(p), ", "))
	}
	return fmt.Sprintf("%s has no parameter %s (parameters: %s)", b.fn, path, strings.Join(b.paths(), ", "))
}

// paths are the names every leaf is given by.
func (b *inputBinder) paths() []string {
	out := make([]string, len(b.leaves))
	for i, l := range b.leaves {
		out[i] = l.path
	}
	return out
}

func (b *inputBinder) leafPaths(p int) []string {
	var out []string
	for _, l := range b.leaves {
		if l.param == p {
			out = append(out, l.path)
		}
	}
	return out
}

// isTuple reports whether parameter p is a tuple given by elements.
func (b *inputBinder) isTuple(p int) bool { return b.infos[p] != nil }

// value returns parameter p built from the values given: a tensor, or a
// tuple of them; ok is false when nothing was given for p, and an error
// names the elements missing from a tuple given in part.
func (b *inputBinder) value(p int) (v op.Value, ok bool, err error) {
	var leaves []op.Value
	var missing, given []string
	for i, l := range b.leaves {
		if l.param != p {
			continue
		}
		if b.values[i] == nil {
			missing = append(missing, l.path)
			leaves = append(leaves, nil)
			continue
		}
		given = append(given, l.path)
		leaves = append(leaves, b.values[i])
	}
	switch {
	case len(given) == 0:
		return nil, false, nil
	case len(missing) > 0:
		return nil, false, fmt.Errorf("parameter %s of %s is a tuple given in part (%s): give %s too (as --input %s=FILE.npy or an .npz key)",
			b.params[p], b.fn, strings.Join(given, ", "), strings.Join(missing, ", "), missing[0])
	}
	if !b.isTuple(p) {
		return leaves[0], true, nil
	}
	return assemble(b.infos[p], leaves, func(fields []op.Value) op.Value { return op.Tuple(fields) }), true, nil
}

// assemble builds a value of struct info si from its leaves in order,
// making tuples with tuple.
func assemble[T any](si ir.StructInfo, leaves []T, tuple func([]T) T) T {
	next := 0
	var build func(si ir.StructInfo) T
	build = func(si ir.StructInfo) T {
		t, ok := si.(*ir.TupleInfo)
		if !ok {
			next++
			return leaves[next-1]
		}
		fields := make([]T, len(t.Fields))
		for i, f := range t.Fields {
			fields[i] = build(f)
		}
		return tuple(fields)
	}
	return build(si)
}

// checkSig compares a given tensor with the annotation of the value what
// names ("parameter x", "element params.0 of parameter params").
func checkSig(what string, sg vm.ParamSig, t *tensor.Tensor) error {
	if !sg.Tensor {
		return fmt.Errorf("%s is %s, not a tensor", what, sg.Annotation)
	}
	if sg.DType != "" && t.DType.String() != sg.DType {
		return fmt.Errorf("%s has dtype %s, expected %s (%s)", what, t.DType, sg.DType, sg.Annotation)
	}
	if sg.Dims == nil {
		return nil
	}
	if len(sg.Dims) != len(t.Shape) {
		return fmt.Errorf("%s has shape %s, expected rank %d (%s)", what, tensor.FormatShape(t.Shape), len(sg.Dims), sg.Annotation)
	}
	for j, d := range sg.Dims {
		if n, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64); err == nil && n != t.Shape[j] {
			return fmt.Errorf("%s has shape %s, expected %d in dimension %d (%s)", what, tensor.FormatShape(t.Shape), n, j, sg.Annotation)
		}
	}
	return nil
}
