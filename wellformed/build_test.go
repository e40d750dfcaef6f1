package wellformed

import (
	"errors"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// Hand-built IR for the rule tests: rules that text cannot express (scoping,
// SSA, shared parameters, missing struct info) need IR the parser would never
// produce.

const testFile = "t.tvms"

func at(line int) diag.Span { return diag.Span{File: testFile, Line: line, Col: 5} }

func f32(dims ...int64) *ir.TensorInfo {
	ds := make([]ir.PrimExpr, len(dims))
	for i, d := range dims {
		ds[i] = ir.I64(d)
	}
	return ir.TensorInfoOf(ir.Float32, ds...)
}

func symTensor(dims ...ir.PrimExpr) *ir.TensorInfo { return ir.TensorInfoOf(ir.Float32, dims...) }

func newVar(name string, si ir.StructInfo, line int) *ir.Var {
	v := ir.NewVar(name, si)
	v.SetSpan(at(line))
	return v
}

func newDFVar(name string, si ir.StructInfo, line int) *ir.Var {
	v := ir.NewDataflowVar(name, si)
	v.SetSpan(at(line))
	return v
}

func bind(v *ir.Var, value ir.Expr) *ir.VarBinding {
	b := ir.NewVarBinding(v, value)
	b.SetSpan(v.Span())
	return b
}

func block(dataflow bool, line int, bs ...ir.Binding) *ir.BindingBlock {
	b := &ir.BindingBlock{Bindings: bs, Dataflow: dataflow}
	b.SetSpan(at(line))
	return b
}

func seqOf(body ir.Expr, blocks ...*ir.BindingBlock) *ir.SeqExpr {
	s := &ir.SeqExpr{Blocks: blocks, Body: body}
	if body != nil {
		s.SetStructInfo(body.StructInfo())
	}
	return s
}

// tuple builds a normalized tuple of the fields.
func tuple(fields ...ir.Expr) *ir.Tuple {
	t := ir.NewTuple(fields...)
	infos := make([]ir.StructInfo, len(fields))
	for i, f := range fields {
		infos[i] = f.StructInfo()
	}
	t.SetStructInfo(ir.NewTupleInfo(infos...))
	return t
}

func getItem(t ir.Expr, i int) *ir.TupleGetItem {
	g := &ir.TupleGetItem{Tuple: t, Index: i}
	if ti, ok := t.StructInfo().(*ir.TupleInfo); ok && i < len(ti.Fields) {
		g.SetStructInfo(ti.Fields[i])
	}
	return g
}

// callWith builds a call annotated with si.
func callWith(si ir.StructInfo, op ir.Expr, args ...ir.Expr) *ir.Call {
	c := ir.NewCall(op, args...)
	c.SetStructInfo(si)
	return c
}

// extern returns an impure opaque extern function, as R.call_packed uses.
func extern(name string) *ir.ExternFunc {
	e := ir.NewExternFunc(name)
	e.SetStructInfo(ir.OpaqueFuncInfo(ir.Object(), false))
	return e
}

func function(params []*ir.Var, ret ir.StructInfo, body *ir.SeqExpr, line int) *ir.Function {
	f := &ir.Function{Params: params, Body: body, Ret: ret, Pure: true, Attrs: ir.Attrs{}}
	f.SetSpan(at(line))
	pinfo := make([]ir.StructInfo, len(params))
	for i, p := range params {
		pinfo[i] = p.StructInfo()
	}
	f.SetStructInfo(ir.NewFuncInfo(pinfo, ret, true))
	return f
}

func withAttr(f *ir.Function, key string, v any) *ir.Function {
	f.Attrs = f.Attrs.With(key, v)
	return f
}

func moduleOf(funcs map[string]ir.BaseFunc) *ir.Module {
	m := ir.NewModule()
	m.Source = testFile
	for name, f := range funcs {
		if err := m.Add(name, f); err != nil {
			panic(err)
		}
	}
	return m
}

// primFunc builds "def name(A: T.Buffer((n,), f32), B: T.Buffer((n,), f32))"
// whose body stores into B.
func primFunc(n int64) *ir.PrimFunc {
	a := ir.NewBuffer("A", []ir.PrimExpr{ir.I64(n)}, ir.Float32)
	b := ir.NewBuffer("B", []ir.PrimExpr{ir.I64(n)}, ir.Float32)
	i := ir.NewPrimVar("i", ir.Int64)
	store := &ir.BufferStore{Buffer: b, Indices: []ir.PrimExpr{i}, Value: &ir.BufferLoad{Buffer: a, Indices: []ir.PrimExpr{i}}}
	body := &ir.For{Var: i, Min: ir.I64(0), Extent: ir.I64(n), Body: store}
	pa, pb := ir.NewPrimVar("var_A", ir.Handle), ir.NewPrimVar("var_B", ir.Handle)
	return &ir.PrimFunc{
		Params:    []*ir.PrimVar{pa, pb},
		BufferMap: map[*ir.PrimVar]*ir.Buffer{pa: a, pb: b},
		Body:      body,
		Attrs:     ir.Attrs{ir.AttrGlobalSymbol: "kernel"},
	}
}

// Test ops with hooks the rules exercise. Registered once for the package.
var (
	opTestTensor = ir.RegisterOp(&ir.Op{Name: "relax.wftest.tensor_op", Pure: true, Category: ir.CatTensor,
		Infer: func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) { return call.Args[0].StructInfo(), nil }})
	opTestRewrites = ir.RegisterOp(&ir.Op{Name: "relax.wftest.rewrites", Pure: true, Category: ir.CatMisc,
		Normalize: func(_ *ir.InferCtx, call *ir.Call) (ir.Expr, error) {
			c := *call
			return &c, nil
		}})
	opTestInvalid = ir.RegisterOp(&ir.Op{Name: "relax.wftest.invalid", Pure: true, Category: ir.CatMisc,
		Validate: func(*ir.InferCtx, *ir.Call) error { return errors.New("argument 0 must be a shape") }})
	opTestNoInfer = ir.RegisterOp(&ir.Op{Name: "relax.wftest.no_infer", Pure: true, Category: ir.CatMisc,
		Infer: func(*ir.InferCtx, *ir.Call) (ir.StructInfo, error) { return nil, errors.New("rank mismatch") }})
	opTestPanics = ir.RegisterOp(&ir.Op{Name: "relax.wftest.panics", Pure: true, Category: ir.CatMisc,
		Validate: func(*ir.InferCtx, *ir.Call) error { panic("boom") }})
)
