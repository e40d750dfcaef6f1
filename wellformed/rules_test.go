package wellformed

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/phase"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goodMain is a clean function: main(x) { t = (x, x); y = t[0]; return y }.
func goodMain() *ir.Function {
	x := newVar("x", f32(4), 1)
	t := newVar("t", ir.NewTupleInfo(f32(4), f32(4)), 2)
	y := newVar("y", f32(4), 3)
	body := seqOf(y, block(false, 2, bind(t, tuple(x, x)), bind(y, getItem(t, 0))))
	return withAttr(function([]*ir.Var{x}, f32(4), body, 1), ir.AttrGlobalSymbol, "main")
}

func single(f *ir.Function) *ir.Module { return moduleOf(map[string]ir.BaseFunc{"main": f}) }

func withSInfoArgs(c *ir.Call, s ...ir.StructInfo) *ir.Call {
	c.SInfoArgs = s
	return c
}

// oneBinding returns main(x) { v = value; return v } with the binding in a
// block of the given kind; extra params are appended.
func oneBinding(dataflow bool, value ir.Expr, vsi ir.StructInfo) (*ir.Function, *ir.Var) {
	x := newVar("x", f32(4), 1)
	v := newVar("v", vsi, 2) // in a dataflow block, an output: it stays visible
	body := seqOf(v, block(dataflow, 2, bind(v, value)))
	f := withAttr(function([]*ir.Var{x}, vsi, body, 1), ir.AttrGlobalSymbol, "main")
	return f, x
}

type ruleCase struct {
	name  string
	mod   func() *ir.Module
	props phase.Set // checked with CheckProperties (structural rules always)
	want  []string  // codes, in diagnostic order
}

func ruleCases() []ruleCase {
	none := phase.Set(0)
	return []ruleCase{
		{"clean", func() *ir.Module { return single(goodMain()) }, phase.Of(phase.Normalized), nil},
		{"WF001 undefined", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			ghost := newVar("ghost", f32(4), 3)
			y := newVar("y", ir.NewTupleInfo(f32(4), f32(4)), 2)
			body := seqOf(x, block(false, 2, bind(y, tuple(x, ghost))))
			return single(withAttr(function([]*ir.Var{x}, f32(4), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF001"}},
		{"WF001 branch-local", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			c := newVar("c", ir.NewPrimInfo(ir.Bool), 1)
			inner := newVar("inner", ir.NewTupleInfo(f32(4)), 3)
			r := newVar("r", f32(4), 2)
			cond := &ir.If{Cond: c, Then: seqOf(inner, block(false, 3, bind(inner, tuple(x)))), Else: seqOf(x)}
			cond.SetStructInfo(f32(4))
			cond.SetSpan(at(2))
			leak := newVar("leak", ir.NewTupleInfo(f32(4)), 5)
			use := &ir.Tuple{Fields: []ir.Expr{inner}}
			use.SetStructInfo(ir.NewTupleInfo(f32(4)))
			body := seqOf(leak, block(false, 2, bind(r, cond), bind(leak, use)))
			return single(withAttr(function([]*ir.Var{x, c}, leak.StructInfo(), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF001"}},
		{"WF002 defined twice", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			y := newVar("y", ir.NewTupleInfo(f32(4)), 2)
			body := seqOf(y, block(false, 2, bind(y, tuple(x)), bind(y, tuple(x))))
			return single(withAttr(function([]*ir.Var{x}, y.StructInfo(), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF002"}},
		{"WF003 shared param", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			f := withAttr(function([]*ir.Var{x}, f32(4), seqOf(x), 1), ir.AttrGlobalSymbol, "f")
			g := withAttr(function([]*ir.Var{x}, f32(4), seqOf(x), 5), ir.AttrGlobalSymbol, "g")
			return moduleOf(map[string]ir.BaseFunc{"f": f, "g": g})
		}, none, []string{"WF003"}},
		{"WF004 dataflow var after block", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			lv := newDFVar("lv", ir.NewTupleInfo(f32(4)), 3)
			body := seqOf(lv, block(true, 2, bind(lv, tuple(x))))
			return single(withAttr(function([]*ir.Var{x}, lv.StructInfo(), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF004"}},
		{"WF004 dataflow var in a later dataflow block", func() *ir.Module {
			// The second dataflow block is a dataflow context, but lv ended
			// with the first.
			x := newVar("x", f32(4), 1)
			lv := newDFVar("lv", ir.NewTupleInfo(f32(4)), 2)
			y := newVar("y", ir.NewTupleInfo(f32(4)), 3)
			z := newVar("z", ir.NewTupleInfo(f32(4)), 4)
			lv2 := newDFVar("lv2", ir.NewTupleInfo(ir.NewTupleInfo(f32(4))), 5)
			body := seqOf(z,
				block(true, 2, bind(lv, tuple(x)), bind(y, tuple(x))),
				block(false, 4, bind(z, tuple(x))),
				block(true, 5, bind(lv2, tuple(lv))))
			return single(withAttr(function([]*ir.Var{x}, z.StructInfo(), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF004"}},
		{"WF005 dataflow var outside block", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			lv := newDFVar("lv", ir.NewTupleInfo(f32(4)), 3)
			body := seqOf(x, block(false, 2, bind(lv, tuple(x))))
			return single(withAttr(function([]*ir.Var{x}, f32(4), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF005"}},
		{"WF006 If in dataflow", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			c := newVar("c", ir.NewPrimInfo(ir.Bool), 1)
			cond := &ir.If{Cond: c, Then: seqOf(x), Else: seqOf(x)}
			cond.SetStructInfo(f32(4))
			cond.SetSpan(at(3))
			r := newVar("r", f32(4), 3)
			body := seqOf(r, block(true, 2, bind(r, cond)))
			return single(withAttr(function([]*ir.Var{x, c}, f32(4), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF006"}},
		{"WF007 impure call in dataflow", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			f, _ := oneBinding(true, callWith(ir.Object(), extern("side_effect"), x), ir.Object())
			f.Params[0] = x
			return single(f)
		}, none, []string{"WF007"}},
		{"WF008 impure call in pure function", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			v := newVar("v", ir.Object(), 2)
			body := seqOf(v, block(false, 2, bind(v, callWith(ir.Object(), extern("print"), x))))
			return single(withAttr(function([]*ir.Var{x}, ir.Object(), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF008"}},
		{"WF008 not with force_pure", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			v := newVar("v", ir.Object(), 2)
			body := seqOf(v, block(false, 2, bind(v, callWith(ir.Object(), extern("print"), x))))
			f := withAttr(function([]*ir.Var{x}, ir.Object(), body, 1), ir.AttrGlobalSymbol, "main")
			return single(withAttr(f, ir.AttrForcePure, true))
		}, none, nil},
		{"WF009 force_pure on impure", func() *ir.Module {
			f := withAttr(goodMain(), ir.AttrForcePure, true)
			f.Pure = false
			return single(f)
		}, none, []string{"WF009"}},
		{"WF010 undefined global", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			g := ir.NewGlobalVar("missing")
			g.SetSpan(at(2))
			v := newVar("v", ir.Object(), 2)
			body := seqOf(v, block(false, 2, bind(v, callWith(ir.Object(), g, x))))
			return single(withAttr(function([]*ir.Var{x}, ir.Object(), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF010"}},
		{"WF011 global_symbol differs", func() *ir.Module {
			return single(withAttr(goodMain(), ir.AttrGlobalSymbol, "other"))
		}, none, []string{"WF011"}},
		{"WF012 undefined symbolic var", func() *ir.Module {
			n := ir.SymVar("n")
			x := newVar("x", f32(4), 1)
			sh := ir.NewShapeExpr(n) // n is never defined
			sh.SetStructInfo(ir.ShapeInfoOf(n))
			y := newVar("y", sh.StructInfo(), 2)
			body := seqOf(x, block(false, 2, bind(y, sh)))
			return single(withAttr(function([]*ir.Var{x}, f32(4), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF012"}},
		{"WF012 once per binding", func() *ir.Module {
			// y: R.Shape([n]) = R.shape([n]): the value (at its own column)
			// and y's annotation both mention n.
			n := ir.SymVar("n")
			x := newVar("x", f32(4), 1)
			sh := ir.NewShapeExpr(n)
			sh.SetStructInfo(ir.ShapeInfoOf(n))
			sh.SetSpan(diag.Span{File: testFile, Line: 2, Col: 21})
			y := newVar("y", sh.StructInfo(), 2)
			body := seqOf(x, block(false, 2, bind(y, sh)))
			return single(withAttr(function([]*ir.Var{x}, f32(4), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF012"}},
		{"WF012 symbolic var leaks into nested function", func() *ir.Module {
			n := ir.SymVar("n")
			x := newVar("x", symTensor(n), 1)
			// inner's return annotation uses m, defined only by main's parameters.
			m := ir.SymVar("m")
			x2 := newVar("x2", symTensor(m), 1)
			y := newVar("y", f32(4), 3)
			inner := function([]*ir.Var{y}, symTensor(m), seqOf(y), 3)
			fv := newVar("inner", inner.StructInfo(), 3)
			body := seqOf(x, block(false, 3, bind(fv, inner)))
			return single(withAttr(function([]*ir.Var{x, x2}, symTensor(n), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, []string{"WF012"}},
		{"WF012 not for a composite dimension before its definition", func() *ir.Module {
			// main(x: R.Tensor(("n * 2",)), y: R.Tensor(("n",))): the
			// parameters define n before any annotation's use is checked.
			n := ir.SymVar("n")
			x := newVar("x", symTensor(ir.Mul(n, ir.I64(2))), 1)
			y := newVar("y", symTensor(n), 1)
			return single(withAttr(function([]*ir.Var{x, y}, x.StructInfo(), seqOf(x), 1), ir.AttrGlobalSymbol, "main"))
		}, none, nil},
		{"WF013 missing return info", func() *ir.Module {
			f := goodMain()
			f.Ret = nil
			return single(f)
		}, none, []string{"WF013"}},
		{"WF014 float shape value", func() *ir.Module {
			s := ir.NewShapeExpr(ir.NewFloat(ir.Float32, 2))
			s.SetStructInfo(ir.ShapeInfoNDim(1))
			s.SetSpan(at(2))
			f, _ := oneBinding(false, s, ir.ShapeInfoNDim(1))
			return single(f)
		}, none, []string{"WF014"}},
		{"WF015 Validate fails", func() *ir.Module {
			f, x := oneBinding(false, nil, ir.Object())
			f.Body.(*ir.SeqExpr).Blocks[0].Bindings[0].(*ir.VarBinding).Value = callWith(ir.Object(), opTestInvalid, x)
			return single(f)
		}, none, []string{"WF015"}},
		{"WF015 hook panic is a diagnostic", func() *ir.Module {
			f, x := oneBinding(false, nil, ir.Object())
			f.Body.(*ir.SeqExpr).Blocks[0].Bindings[0].(*ir.VarBinding).Value = callWith(ir.Object(), opTestPanics, x)
			return single(f)
		}, none, []string{"WF015"}},
		{"WF018 inference fails", func() *ir.Module {
			f, x := oneBinding(false, nil, ir.Object())
			f.Body.(*ir.SeqExpr).Blocks[0].Bindings[0].(*ir.VarBinding).Value = callWith(ir.Object(), opTestNoInfer, x)
			return single(f)
		}, none, []string{"WF018"}},
		{"WF019 constant callee", func() *ir.Module {
			k := &ir.Constant{Data: nil}
			k.SetStructInfo(f32())
			f, x := oneBinding(false, nil, ir.Object())
			f.Body.(*ir.SeqExpr).Blocks[0].Bindings[0].(*ir.VarBinding).Value = callWith(ir.Object(), k, x)
			return single(f)
		}, none, []string{"WF019"}},
		{"WF020 bad phase attribute", func() *ir.Module {
			m := single(goodMain())
			m.Attrs = ir.Attrs{ir.AttrPhase: "lowered"}
			return m
		}, none, []string{"WF020"}},
		{"WF021 missing value", func() *ir.Module {
			f, _ := oneBinding(false, nil, ir.Object())
			return single(f)
		}, none, []string{"WF021"}},
		{"WF022 missing struct info", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			t := newVar("t", nil, 2)
			tup := ir.NewTuple(x)
			body := seqOf(x, block(false, 2, bind(t, tup)))
			return single(withAttr(function([]*ir.Var{x}, f32(4), body, 1), ir.AttrGlobalSymbol, "main"))
		}, phase.Of(phase.Normalized), []string{"WF022", "WF022"}},
		{"WF022 off without Normalized", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			t := newVar("t", nil, 2)
			body := seqOf(x, block(false, 2, bind(t, ir.NewTuple(x))))
			return single(withAttr(function([]*ir.Var{x}, f32(4), body, 1), ir.AttrGlobalSymbol, "main"))
		}, none, nil},
		{"WF023 nested call argument", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			inner := callWith(f32(4), opTestTensor, x)
			inner.SetSpan(at(2))
			f, _ := oneBinding(false, callWith(f32(4), opTestTensor, inner), f32(4))
			f.Params[0] = x
			return single(f)
		}, phase.Of(phase.Normalized), []string{"WF023"}},
		{"WF024 SeqExpr as binding value", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			f, _ := oneBinding(false, seqOf(x), f32(4))
			f.Params[0] = x
			return single(f)
		}, phase.Of(phase.Normalized), []string{"WF024"}},
		{"WF025 not canonical", func() *ir.Module {
			f, x := oneBinding(false, nil, ir.Object())
			f.Body.(*ir.SeqExpr).Blocks[0].Bindings[0].(*ir.VarBinding).Value = callWith(ir.Object(), opTestRewrites, x)
			return single(f)
		}, phase.Of(phase.Normalized), []string{"WF025"}},
		{"WF026 empty and adjacent blocks", func() *ir.Module {
			f := goodMain()
			s := f.Body.(*ir.SeqExpr)
			s.Blocks = append(s.Blocks, block(false, 4), block(false, 5, bind(newVar("z", f32(4), 5), f.Params[0])))
			return single(f)
		}, phase.Of(phase.Normalized), []string{"WF026", "WF026"}},
		{"WF027 nested function", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			y := newVar("y", f32(4), 3)
			inner := function([]*ir.Var{y}, f32(4), seqOf(y), 3)
			fv := newVar("inner", inner.StructInfo(), 3)
			body := seqOf(x, block(false, 3, bind(fv, inner)))
			return single(withAttr(function([]*ir.Var{x}, f32(4), body, 1), ir.AttrGlobalSymbol, "main"))
		}, phase.Of(phase.NoNestedFunctions), []string{"WF027"}},
		{"WF041 TIR variable defined twice", func() *ir.Module {
			// Two loops binding one variable object (TVM's
			// UndefinedVarVerifier: "multiple definitions"), which only IR
			// built by code can express; the first loop's use is fine.
			f := primFunc(4)
			first := f.Body.(*ir.For)
			second := &ir.For{Var: first.Var, Min: ir.I64(0), Extent: ir.I64(4), Body: first.Body}
			second.SetSpan(at(3))
			first.SetSpan(at(2))
			f.Body = &ir.SeqStmt{Stmts: []ir.Stmt{first, second}}
			f.Attrs = ir.Attrs{ir.AttrGlobalSymbol: "f"}
			return moduleOf(map[string]ir.BaseFunc{"f": f})
		}, none, []string{"WF041"}},
		{"WF028 PrimFunc as value", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			g := ir.NewGlobalVar("kernel")
			g.SetSpan(at(2))
			f, _ := oneBinding(false, tuple(x), ir.NewTupleInfo(f32(4)))
			f.Params[0] = x
			f.Body.(*ir.SeqExpr).Blocks[0].Bindings[0].(*ir.VarBinding).Value = &ir.Tuple{Fields: []ir.Expr{x, g}}
			f.Body.(*ir.SeqExpr).Blocks[0].Bindings[0].(*ir.VarBinding).Value.(*ir.Tuple).SetStructInfo(ir.NewTupleInfo(f32(4)))
			return moduleOf(map[string]ir.BaseFunc{"main": f, "kernel": primFunc(4)})
		}, phase.Of(phase.PrimFuncsViaCallTIR), []string{"WF028"}},
		{"WF029 tensor op", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			f, _ := oneBinding(false, callWith(f32(4), opTestTensor, x), f32(4))
			f.Params[0] = x
			return single(f)
		}, phase.Of(phase.Legalized), []string{"WF029"}},
		{"WF030 dataflow block", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			f, _ := oneBinding(true, tuple(x), ir.NewTupleInfo(f32(4)))
			f.Params[0] = x
			return single(f)
		}, phase.Of(phase.NoDataflow), []string{"WF030"}},
		{"WF031 pure without force_pure", func() *ir.Module { return single(goodMain()) },
			phase.Of(phase.PurityRelaxed), []string{"WF031"}},
		{"WF032 call_pure_packed", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			f, _ := oneBinding(false, withSInfoArgs(callWith(ir.Object(), op.CallPurePacked, extern("f"), x), ir.Object()), ir.Object())
			f.Params[0] = x
			return single(withAttr(f, ir.AttrForcePure, true))
		}, phase.Of(phase.PurityRelaxed), []string{"WF032"}},
		{"WF033 call_tir", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			g := ir.NewGlobalVar("kernel")
			f, _ := oneBinding(false, withSInfoArgs(callWith(f32(4), op.CallTIR, g, tuple(x)), f32(4)), f32(4))
			f.Params[0] = x
			return moduleOf(map[string]ir.BaseFunc{"main": f, "kernel": primFunc(4)})
		}, phase.Of(phase.NoCallTIR, phase.PrimFuncsViaCallTIR), []string{"WF033"}},
		{"WF034 kernel writes a constant", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			k := &ir.Constant{}
			k.SetStructInfo(f32(4))
			kv := newVar("k", f32(4), 2)
			out := newVar("out", ir.VoidInfo(), 3)
			g := ir.NewGlobalVar("kernel")
			body := seqOf(x, block(false, 2, bind(kv, k), bind(out, callWith(ir.VoidInfo(), g, x, kv))))
			f := withAttr(function([]*ir.Var{x}, f32(4), body, 1), ir.AttrGlobalSymbol, "main")
			f.Pure = false
			return moduleOf(map[string]ir.BaseFunc{"main": f, "kernel": primFunc(4)})
		}, phase.Of(phase.ExplicitMemory, phase.PrimFuncsViaCallTIR), []string{"WF034"}},
		{"WF035 op not VM legal", func() *ir.Module {
			x := newVar("x", f32(4), 1)
			f, _ := oneBinding(false, callWith(ir.ShapeInfoNDim(1), op.ShapeOf, x), ir.ShapeInfoNDim(1))
			f.Params[0] = x
			return single(f)
		}, phase.Of(phase.BuiltinsLowered), []string{"WF035"}},
		{"WF036 WF037 symbolic values", func() *ir.Module {
			n := ir.SymVar("n")
			x := newVar("x", symTensor(n), 1)
			s := ir.NewShapeExpr(n, ir.I64(2))
			s.SetStructInfo(ir.ShapeInfoOf(n, ir.I64(2)))
			pv := ir.NewPrimValue(ir.Add(n, ir.I64(1)))
			pv.SetStructInfo(ir.PrimInfoOf(pv.Value))
			sv := newVar("s", s.StructInfo(), 2)
			pvv := newVar("p", pv.StructInfo(), 3)
			body := seqOf(x, block(false, 2, bind(sv, s), bind(pvv, pv)))
			return single(withAttr(function([]*ir.Var{x}, symTensor(n), body, 1), ir.AttrGlobalSymbol, "main"))
		}, phase.Of(phase.ShapesLowered), []string{"WF036", "WF037"}},
		{"WF038 no global_symbol", func() *ir.Module {
			f := goodMain()
			f.Attrs = f.Attrs.Without(ir.AttrGlobalSymbol)
			return single(f)
		}, phase.Of(phase.GlobalSymbols), []string{"WF038"}},
	}
}

func codes(l diag.List) []string {
	var cs []string
	for _, d := range l {
		cs = append(cs, string(d.Code))
	}
	return cs
}

func TestRules(t *testing.T) {
	for _, tc := range ruleCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckProperties(tc.mod(), tc.props)
			assert.Equal(t, tc.want, codes(got), "codes\n%s", got.Error())
			for _, d := range got {
				if d.Code != "WF020" {
					assert.True(t, d.Span.IsValid(), "%s: span %v lacks a position in %s", d.Code, d.Span, testFile)
					assert.Equal(t, testFile, d.Span.File, "%s: span %v lacks a position in %s", d.Code, d.Span, testFile)
					assert.True(t, strings.HasPrefix(d.Path, "main") || strings.HasPrefix(d.Path, "f") || strings.HasPrefix(d.Path, "g"),
						"%s: path %q does not start at the function", d.Code, d.Path)
				}
				assert.NotEmpty(t, d.Hint, "%s: no hint", d.Code)
			}
			// Infer agrees with the check: a property is inferred exactly when
			// none of its rules fired (among those checked here).
			inferred := Infer(tc.mod())
			for _, d := range got {
				r, _ := LookupRule(d.Code)
				assert.False(t, inferred.Has(r.Property), "Infer = %v includes %v although %s fired", inferred, r.Property, d.Code)
			}
			for _, p := range tc.props.With(phase.WellFormed).List() {
				fired := slices.ContainsFunc(got, func(d *diag.Diagnostic) bool {
					r, _ := LookupRule(d.Code)
					return r.Property == p
				})
				assert.True(t, fired || inferred.Has(p), "Infer = %v lacks %v although no %v rule fired", inferred, p, p)
			}
		})
	}
}

func TestDiagnosticForm(t *testing.T) {
	x := newVar("x", f32(4), 1)
	f, _ := oneBinding(true, tuple(x), ir.NewTupleInfo(f32(4)))
	f.Params[0] = x
	f.Body.(*ir.SeqExpr).Blocks[0].SetSpan(at(4))
	got := Check(single(f), phase.Lower)
	var df *diag.Diagnostic
	for _, d := range got {
		if d.Code == "WF030" {
			df = d
		}
	}
	require.NotNil(t, df, "no WF030 in\n%s", got.Error())
	assert.Equal(t, "dataflow block at main:4 is not allowed in phase lower", df.Msg, "msg")
	assert.Equal(t, "run ToNonDataflow, or the lower barrier", df.Hint, "hint")
	assert.Equal(t, "main.body.blocks[0]", df.Path, "path")
	assert.Equal(t, 4, df.Span.Line, "span = %v", df.Span)
	assert.Equal(t, testFile, df.Span.File, "span = %v", df.Span)
	props := CheckProperties(single(f), phase.Of(phase.NoDataflow))
	if assert.Len(t, props, 1, "property-mode message: %v", props) {
		assert.True(t, strings.HasSuffix(props[0].Msg, "by property NoDataflow"), "property-mode message: %v", props)
	}
}

func TestCheckNoneIsStructuralOnly(t *testing.T) {
	x := newVar("x", f32(4), 1)
	f, _ := oneBinding(true, tuple(x), ir.NewTupleInfo(f32(4)))
	f.Params[0] = x
	got := Check(single(f), phase.None)
	assert.Empty(t, got, "Check(None) reported phase rules:\n%s", got.Error())
	got = Check(single(f), phase.Optimize)
	assert.Empty(t, got, "dataflow blocks are fine in optimize:\n%s", got.Error())
}

func TestCheckRecorded(t *testing.T) {
	m := single(goodMain())
	m = phase.Record(m, phase.Build)
	p, got := CheckRecorded(m)
	require.Equal(t, phase.Build, p, "phase")
	// goodMain is pure without force_pure: the build claim is false.
	assert.Contains(t, codes(got), "WF031", "recorded build phase not verified")
}

func TestAllViolationsCollectedSortedDeduped(t *testing.T) {
	x := newVar("x", f32(4), 1)
	a := newVar("a", f32(4), 30)
	b := newVar("b", f32(4), 40)
	y := newVar("y", ir.NewTupleInfo(f32(4), f32(4), f32(4)), 2)
	z := newVar("z", ir.NewTupleInfo(f32(4)), 8)
	// Undefined a and b are reported where they are used: a twice in one
	// binding (one diagnostic after de-duplication), b once, a again later.
	body := seqOf(x, block(false, 2, bind(z, tuple(a)), bind(y, tuple(a, b, a))))
	f := withAttr(function([]*ir.Var{x}, f32(4), body, 1), ir.AttrGlobalSymbol, "main")
	got := Check(single(f), phase.None)
	var where []string
	for _, d := range got {
		where = append(where, fmt.Sprintf("%d:%s", d.Span.Line, strings.Fields(d.Msg)[1]))
	}
	assert.Equal(t, []string{"2:a", "2:b", "8:a"}, where, "diagnostics (sorted, de-duplicated)\n%s", got.Error())
}

// TestSpecificRuleSuppressesNotVMLegal checks that an op an earlier phase's
// rule already rejects (naming the pass that removes it) gets no second,
// generic WF035, while Infer still finds BuiltinsLowered violated.
func TestSpecificRuleSuppressesNotVMLegal(t *testing.T) {
	x := newVar("x", f32(4), 1)
	f, _ := oneBinding(false, callWith(f32(4), opTestTensor, x), f32(4))
	f.Params[0] = x
	mod := single(withAttr(f, ir.AttrForcePure, true))
	got := codes(Check(mod, phase.Build))
	assert.Contains(t, got, "WF029", "codes = %v, want WF029 and no WF035", got)
	assert.NotContains(t, got, "WF035", "codes = %v, want WF029 and no WF035", got)
	assert.False(t, Infer(mod).Has(phase.BuiltinsLowered), "Infer claims BuiltinsLowered for a module with a tensor op")
}
