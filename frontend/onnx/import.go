package onnx

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/frontend/onnx/onnxpb"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
)

var codes = diag.NewFamily("ONNX", "the ONNX importer (frontend/onnx): unsupported models, malformed graphs")

// Diagnostic codes of the importer.
var (
	DiagUnsupported = codes.Define("ONNX001", "an ONNX op, attribute, opset or element type phasec does not import")
	DiagGraph       = codes.Define("ONNX002", "a malformed graph: a tensor used before any node, input or initializer defines it")
	DiagInitializer = codes.Define("ONNX003", "an initializer contradicts the graph's declared type or shape, or its data is corrupt")
	DiagNode        = codes.Define("ONNX004", "a node's inputs or attributes are invalid for its op")
	DiagInternal    = codes.Define("ONNX900", "a bug in phasec's ONNX importer: a converter panicked")
)

// Options configure Import.
type Options struct {
	// KeepParamsInModule makes every initializer a constant of the module
	// instead of a parameter of main.
	KeepParamsInModule bool
	// FuncName is the function's name ("main" when empty).
	FuncName string
	// Bind fixes graph inputs, by ONNX name, to values: they become
	// constants (and fold), not parameters. It specializes a model whose
	// shapes depend on an input's value (Reshape's shape, Slice's starts,
	// reduction axes given as inputs).
	Bind map[string]*ir.NDArray
}

// NeedsValue reports the graph input or tensor whose value an import
// failed for want of (a shape, axes, pads computed at run time): err's
// first diagnostic names it. Binding it (Options.Bind), when it is a
// graph input, lets the import proceed.
func NeedsValue(err error) (string, bool) {
	l, ok := err.(diag.List)
	if !ok || len(l) == 0 || l[0].Code != DiagUnsupported {
		return "", false
	}
	m := neededValueRE.FindStringSubmatch(l[0].Msg)
	if m == nil {
		return "", false
	}
	name, err := strconv.Unquote(m[1])
	return name, err == nil
}

// neededValueRE matches notConstant's message.
var neededValueRE = regexp.MustCompile(`input \d+ \(("(?:[^"\\]|\\.)*")\) must be a constant`)

// Result is an imported model.
type Result struct {
	Module *ir.Module
	// Inputs are the ONNX names of main's leading parameters, in order;
	// Params the weights that follow them (empty with
	// KeepParamsInModule), named as the parameters are.
	Inputs []string
	Params []Param
	// Outputs are the ONNX names of main's results, in order (a single
	// output is returned as is, several as a tuple).
	Outputs []string
}

// foldLimit is the largest constant (in elements) an op is evaluated on at
// import: shape computations, not weights.
const foldLimit = 1 << 16

// importer is the state of one Import.
type importer struct {
	m     *Model
	opts  Options
	b     *ir.Builder
	errs  diag.List
	env   map[string]ir.Expr // tensor name -> its value
	known map[string]*ir.NDArray
	// symbolic holds the values of int tensors of rank 0 or 1 computed
	// from symbolic dimensions (Shape of a tensor with a dim_param, and
	// Gather, Concat, Unsqueeze, arithmetic over those), so that a
	// Reshape target or Expand shape built from them is a symbolic shape.
	symbolic map[string][]ir.PrimExpr
	syms     map[string]*ir.PrimVar
	names    map[string]int // parameter names in use
	ndyn     int            // fresh dimensions made (freshDim)
	span     diag.Span
}

// Import converts a read model into a Relax module.
func Import(m *Model, opts Options) (*Result, error) {
	if opts.FuncName == "" {
		opts.FuncName = "main"
	}
	g := m.Proto.GetGraph()
	imp := &importer{
		m: m, opts: opts,
		env:      make(map[string]ir.Expr, len(g.GetNode())+len(g.GetInitializer())+len(g.GetInput())),
		known:    map[string]*ir.NDArray{},
		symbolic: map[string][]ir.PrimExpr{},
		syms:     map[string]*ir.PrimVar{},
		names:    map[string]int{},
		span:     diag.Span{File: m.Path},
	}
	mod := ir.NewModule()
	imp.b = ir.NewBuilder(mod)
	res := &Result{Module: mod}

	// Parameters: graph inputs that are not initializers, then weights.
	inits := map[string]*onnxpb.TensorProto{}
	for _, t := range g.GetInitializer() {
		inits[t.GetName()] = t
	}
	declared := map[string]*onnxpb.ValueInfoProto{}
	var params []*ir.Var
	for i, in := range g.GetInput() {
		declared[in.GetName()] = in
		if _, ok := inits[in.GetName()]; ok {
			continue
		}
		if a, ok := opts.Bind[in.GetName()]; ok {
			if err := checkDeclared(in, a); err != nil {
				imp.errorf(fmt.Sprintf("graph.input[%d]", i), DiagInitializer, "bound input %q: %v", in.GetName(), err)
				continue
			}
			imp.env[in.GetName()] = imp.b.Normalize(&ir.Constant{Data: a})
			imp.known[in.GetName()] = a
			continue
		}
		sinfo, err := imp.valueInfo(in)
		if err != nil {
			imp.errorf(fmt.Sprintf("graph.input[%d]", i), DiagUnsupported, "graph input %q: %v", in.GetName(), err)
			continue
		}
		v := ir.NewVar(imp.paramName(in.GetName()), sinfo)
		params = append(params, v)
		imp.env[in.GetName()] = v
		res.Inputs = append(res.Inputs, in.GetName())
	}
	numInput := len(params)
	for i, t := range g.GetInitializer() {
		path := fmt.Sprintf("graph.initializer[%d]", i)
		a, err := TensorData(t, m.Dir, m.Limits)
		if err != nil {
			imp.errorf(path, DiagInitializer, "%v", err)
			continue
		}
		if d, ok := declared[t.GetName()]; ok {
			if err := checkDeclared(d, a); err != nil {
				imp.errorf(path, DiagInitializer, "initializer %q: %v", t.GetName(), err)
				continue
			}
		}
		imp.known[t.GetName()] = a
		if opts.KeepParamsInModule || !a.DType.IsFloat() {
			imp.env[t.GetName()] = imp.b.Normalize(&ir.Constant{Data: a})
			continue
		}
		dims := make([]ir.PrimExpr, len(a.Shape))
		for j, d := range a.Shape {
			dims[j] = ir.I64(d)
		}
		v := ir.NewVar(imp.paramName(t.GetName()), ir.TensorInfoOf(a.DType, dims...))
		params = append(params, v)
		imp.env[t.GetName()] = v
		res.Params = append(res.Params, Param{Name: v.Name, Data: a})
	}
	if imp.errs.HasErrors() {
		return nil, imp.errs
	}

	imp.b.BeginScope(params)
	imp.b.BeginBlock(true)
	ok := imp.nodes(g.GetNode())
	var outs []ir.Expr
	if ok {
		for i, o := range g.GetOutput() {
			e, found := imp.env[o.GetName()]
			if !found {
				imp.errorf(fmt.Sprintf("graph.output[%d]", i), DiagGraph, "graph output %q is not produced by any node, input or initializer", o.GetName())
				continue
			}
			res.Outputs = append(res.Outputs, o.GetName())
			outs = append(outs, e)
		}
		if len(outs) == 0 && !imp.errs.HasErrors() {
			imp.errorf("graph.output", DiagGraph, "the graph has no outputs")
		}
	}
	if imp.errs.HasErrors() {
		return nil, imp.errs
	}
	// Outputs leave the dataflow block through bindings of their own.
	for i, e := range outs {
		outs[i] = imp.b.EmitOutput(e, "gv")
	}
	block := imp.b.EndBlock()
	var result ir.Expr
	if len(outs) == 1 {
		result = outs[0]
	} else {
		result = ir.NewTuple(outs...)
	}
	seq := imp.b.FinishScope([]*ir.BindingBlock{block}, result)
	attrs := ir.Attrs{ir.AttrGlobalSymbol: opts.FuncName}
	if !opts.KeepParamsInModule && len(params) > numInput {
		attrs = attrs.With(ir.AttrNumInput, int64(numInput))
	}
	f := &ir.Function{Params: params, Body: seq, Ret: seq.StructInfo(), Pure: true, Attrs: attrs}
	nf, isFn := imp.b.Normalize(f).(*ir.Function)
	if d := imp.b.Diagnostics(); d.HasErrors() {
		imp.errs = append(imp.errs, d...)
	}
	if !isFn || imp.errs.HasErrors() {
		return nil, imp.errs
	}
	mod.Set(opts.FuncName, nf)
	return res, nil
}

// nodes converts the graph's nodes in order; false after an error.
func (imp *importer) nodes(nodes []*onnxpb.NodeProto) bool {
	// Unsupported op types are reported once each, all of them, before
	// anything else: that is the list a user needs.
	seen := map[string]bool{}
	for i, n := range nodes {
		if _, ok := converters[n.GetOpType()]; ok && (n.GetDomain() == "" || n.GetDomain() == "ai.onnx") {
			continue
		}
		key := n.GetDomain() + "." + n.GetOpType()
		if seen[key] {
			continue
		}
		seen[key] = true
		what := n.GetOpType()
		if d := n.GetDomain(); d != "" && d != "ai.onnx" {
			what = d + "." + what
		}
		imp.errorf(nodePath(i), DiagUnsupported, "%s: op %s (opset %d) is not supported", nodeDesc(i, n), what, imp.m.Opset)
	}
	if imp.errs.HasErrors() {
		return false
	}
	for i, n := range nodes {
		if !imp.node(i, n) {
			return false
		}
	}
	return true
}

func nodePath(i int) string { return fmt.Sprintf("graph.node[%d]", i) }

// nodeDesc names a node for messages: node 3 "conv1" (Conv).
func nodeDesc(i int, n *onnxpb.NodeProto) string {
	if n.GetName() != "" {
		return fmt.Sprintf("node %d %q (%s)", i, n.GetName(), n.GetOpType())
	}
	return fmt.Sprintf("node %d (%s)", i, n.GetOpType())
}

// node converts one node and binds its outputs.
func (imp *importer) node(i int, n *onnxpb.NodeProto) bool {
	c := &nodeCtx{imp: imp, node: n, index: i, opset: imp.m.Opset, attrs: map[string]*onnxpb.AttributeProto{}}
	for _, a := range n.GetAttribute() {
		c.attrs[a.GetName()] = a
	}
	c.in = make([]ir.Expr, len(n.GetInput()))
	for j, name := range n.GetInput() {
		if name == "" {
			continue // an omitted optional input
		}
		e, ok := imp.env[name]
		if !ok {
			imp.errorf(nodePath(i), DiagGraph, "%s: input %d, tensor %q, is not defined by an earlier node, a graph input or an initializer (the graph is not topologically sorted, has a cycle, or names an undefined tensor)", nodeDesc(i, n), j, name)
			return false
		}
		c.in[j] = e
	}
	before := len(imp.b.Diagnostics())
	outs, err := imp.convert(c)
	if err == nil && len(imp.b.Diagnostics()) > before {
		err = errors.New(imp.b.Diagnostics()[before].Msg)
	}
	if err != nil {
		code := DiagNode
		var u *unsupportedError
		var ie *internalError
		switch {
		case errors.As(err, &u):
			code = DiagUnsupported
		case errors.As(err, &ie):
			code = DiagInternal
		}
		imp.errorf(nodePath(i), code, "%s, opset %d: %v", nodeDesc(i, n), imp.m.Opset, err)
		return false
	}
	for j, name := range n.GetOutput() {
		if name == "" {
			continue
		}
		if j >= len(outs) || outs[j] == nil {
			imp.errorf(nodePath(i), DiagUnsupported, "%s, opset %d: output %d (%q) is not supported", nodeDesc(i, n), imp.m.Opset, j, name)
			return false
		}
		e := outs[j]
		if k, ok := e.(*ir.Constant); ok && k.StructInfo() == nil {
			e = imp.b.Normalize(k)
		}
		imp.env[name] = e
		if k, ok := e.(*ir.Constant); ok {
			imp.known[name] = k.Data
		}
		if j < len(c.outSym) && c.outSym[j] != nil {
			imp.symbolic[name] = c.outSym[j]
		}
	}
	return true
}

// convert runs the node's converter; a panic (a bug) becomes an error.
func (imp *importer) convert(c *nodeCtx) (outs []ir.Expr, err error) {
	defer func() {
		if p := recover(); p != nil {
			outs, err = nil, &internalError{fmt.Sprint(p)}
		}
	}()
	return converters[c.node.GetOpType()](c)
}

type internalError struct{ msg string }

func (e *internalError) Error() string { return "internal error (a bug in phasec): " + e.msg }

// errorf records an error diagnostic at path.
func (imp *importer) errorf(path string, code diag.Code, format string, args ...any) *diag.Diagnostic {
	d := imp.errs.Add(imp.span, code, format, args...)
	d.Path = path
	return d
}

// paramName makes an ONNX name a unique identifier.
func (imp *importer) paramName(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || unicode.IsLetter(r) && r < 128 || unicode.IsDigit(r) && r < 128 && i > 0:
			b.WriteRune(r)
		case unicode.IsDigit(r) && r < 128:
			b.WriteByte('_') // "0" becomes "_0"
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" {
		s = "_"
	}
	if n, used := imp.names[s]; used {
		imp.names[s] = n + 1
		for {
			cand := fmt.Sprintf("%s_%d", s, n+1)
			if _, taken := imp.names[cand]; !taken {
				imp.names[cand] = 0
				return cand
			}
			n++
		}
	}
	imp.names[s] = 0
	return s
}

// valueInfo is the struct info of a declared tensor: its element type,
// and its dimensions (dim_value, a symbolic var per dim_param, or a fresh
// symbolic var for a dimension ONNX leaves unnamed).
func (imp *importer) valueInfo(vi *onnxpb.ValueInfoProto) (ir.StructInfo, error) {
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		switch {
		case vi.GetType().GetSequenceType() != nil:
			return nil, unsupported("sequence types are not supported")
		case vi.GetType().GetOptionalType() != nil:
			return nil, unsupported("optional types are not supported")
		}
		return nil, unsupported("only tensor types are supported")
	}
	dt, ok := DType(tt.GetElemType())
	if !ok {
		return nil, unsupported("element type %s is not supported", dtypeName(tt.GetElemType()))
	}
	if tt.GetShape() == nil {
		return ir.TensorInfoNDim(dt, -1), nil
	}
	dims := make([]ir.PrimExpr, len(tt.GetShape().GetDim()))
	for i, d := range tt.GetShape().GetDim() {
		switch {
		case d.GetDimParam() != "":
			name := d.GetDimParam()
			v, ok := imp.syms[name]
			if !ok {
				v = ir.SymVar(imp.paramName(name))
				imp.syms[name] = v
			}
			dims[i] = v
		case d.Value != nil && d.GetDimValue() >= 0:
			dims[i] = ir.I64(d.GetDimValue())
		default:
			v := ir.SymVar(imp.paramName(fmt.Sprintf("%s_dim%d", vi.GetName(), i)))
			dims[i] = v
		}
	}
	return ir.TensorInfoOf(dt, dims...), nil
}

// checkDeclared compares an initializer with the graph input declaring it.
func checkDeclared(vi *onnxpb.ValueInfoProto, a *ir.NDArray) error {
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return nil
	}
	if dt, ok := DType(tt.GetElemType()); ok && dt != a.DType {
		return fmt.Errorf("declared %s, its data is %s", dt, a.DType)
	}
	if tt.GetShape() == nil {
		return nil
	}
	dims := tt.GetShape().GetDim()
	if len(dims) != len(a.Shape) {
		return fmt.Errorf("declared with rank %d, its data has shape %v", len(dims), a.Shape)
	}
	for i, d := range dims {
		if _, fixed := d.Value.(*onnxpb.TensorShapeProto_Dimension_DimValue); fixed && d.GetDimValue() != a.Shape[i] {
			return fmt.Errorf("declared dimension %d is %d, its data has shape %v", i, d.GetDimValue(), a.Shape)
		}
	}
	return nil
}

// ndarrayTensor views an array as a tensor (sharing its bytes when they
// are suitably sized; tensor storage is its own allocation otherwise).
func ndarrayTensor(a *ir.NDArray) (*tensor.Tensor, error) {
	dt, err := op.TensorDType(a.DType)
	if err != nil {
		return nil, err
	}
	t, err := tensor.NewChecked(dt, a.Shape)
	if err != nil {
		return nil, err
	}
	if len(t.Bytes()) != len(a.Data) {
		return nil, fmt.Errorf("data of shape %v has %d bytes, want %d", a.Shape, len(a.Data), len(t.Bytes()))
	}
	copy(t.Bytes(), a.Data)
	return t, nil
}

// unsupportedError is a converter's refusal of something valid ONNX that
// phasec does not import (as opposed to an invalid node).
type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string { return e.msg }

func unsupported(format string, args ...any) error {
	return &unsupportedError{msg: fmt.Sprintf(format, args...)}
}
