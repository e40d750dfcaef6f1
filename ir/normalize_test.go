package ir

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
)

// Test-only ops with simple, self-contained inference so the normalizer is
// tested independently of the real op registry.
var (
	// test.add(a, b): elementwise over tensors of provably equal shape.
	testAdd = RegisterOp(&Op{Name: "test.add", Pure: true, Infer: inferTestAdd})
	// test.noinfer has no Infer hook: an internal diagnostic.
	testNoInfer = RegisterOp(&Op{Name: "test.noinfer", Pure: true})
	// test.fail always fails inference.
	testFail = RegisterOp(&Op{Name: "test.fail", Pure: true, Infer: func(*InferCtx, *Call) (StructInfo, error) {
		return nil, errors.New("always fails")
	}})
	// test.panic panics in Infer.
	testPanic = RegisterOp(&Op{Name: "test.panic", Pure: true, Infer: func(*InferCtx, *Call) (StructInfo, error) {
		panic("boom")
	}})
	// test.double(a) is canonicalized by its Normalize hook to test.add(a, a).
	testDouble = RegisterOp(&Op{Name: "test.double", Pure: true,
		Infer: func(_ *InferCtx, c *Call) (StructInfo, error) { return c.Args[0].StructInfo(), nil },
		Normalize: func(_ *InferCtx, c *Call) (Expr, error) {
			return NewCall(testAdd, c.Args[0], c.Args[0]), nil
		}})
	// test.spin's Normalize hook always returns a new call to itself: it
	// never reaches a fixpoint.
	testSpin = RegisterOp(&Op{Name: "test.spin", Pure: true,
		Infer:     func(*InferCtx, *Call) (StructInfo, error) { return Object(), nil },
		Normalize: func(_ *InferCtx, c *Call) (Expr, error) { return NewCall(c.Op, c.Args...), nil }})
	// test.checked(a) infers like its argument; Validate rejects rank 0.
	testChecked = RegisterOp(&Op{Name: "test.checked", Pure: true,
		Infer: func(_ *InferCtx, c *Call) (StructInfo, error) { return c.Args[0].StructInfo(), nil },
		Validate: func(_ *InferCtx, c *Call) error {
			if t, ok := c.Args[0].StructInfo().(*TensorInfo); ok && t.NDim == 0 {
				return errors.New("rank-0 tensors are not accepted")
			}
			return nil
		}})
)

func inferTestAdd(_ *InferCtx, c *Call) (StructInfo, error) {
	if len(c.Args) != 2 {
		return nil, fmt.Errorf("expects 2 arguments, got %d", len(c.Args))
	}
	a, ok1 := c.Args[0].StructInfo().(*TensorInfo)
	b, ok2 := c.Args[1].StructInfo().(*TensorInfo)
	if !ok1 || !ok2 {
		return nil, errors.New("expects tensors")
	}
	if a.DType != b.DType {
		return nil, fmt.Errorf("dtype mismatch %s vs %s", a.DType, b.DType)
	}
	da, okA := a.Dims()
	db, okB := b.Dims()
	if !okA || !okB {
		return TensorInfoNDim(a.DType, a.NDim), nil
	}
	if len(da) != len(db) {
		return nil, fmt.Errorf("rank mismatch %d vs %d", len(da), len(db))
	}
	for i := range da {
		if !CanProveEqual(da[i], db[i]) {
			return nil, fmt.Errorf("dimension %d mismatch", i)
		}
	}
	return &TensorInfo{Shape: a.Shape, DType: a.DType, NDim: a.NDim}, nil
}

func f32(dims ...PrimExpr) *TensorInfo { return TensorInfoOf(Float32, dims...) }

func span(line int) diag.Span { return diag.Span{File: "t.py", Line: line, Col: 5} }

func sinfoString(s StructInfo) string { return FormatStructInfo(s, nil) }

func mustSeq(t *testing.T, e Expr) *SeqExpr {
	t.Helper()
	require.IsType(t, (*SeqExpr)(nil), e)
	return e.(*SeqExpr)
}

func noDiags(t *testing.T, d diag.List) {
	t.Helper()
	assert.Empty(t, d, "unexpected diagnostics")
}

func TestNormalizeHoistsNestedCallsOncePerObject(t *testing.T) {
	n := SymVar("n")
	x := NewVar("x", f32(n, I64(4)))
	inner := NewCall(testAdd, x, x)
	f := &Function{Params: []*Var{x}, Body: NewCall(testAdd, inner, inner), Pure: true}

	nf, diags := NormalizeFunction(nil, f)
	noDiags(t, diags)
	seq := mustSeq(t, nf.Body)
	require.Len(t, seq.Blocks, 1, "want one block with 2 bindings")
	require.Len(t, seq.Blocks[0].Bindings, 2, "want one block with 2 bindings")
	b0 := seq.Blocks[0].Bindings[0].(*VarBinding)
	b1 := seq.Blocks[0].Bindings[1].(*VarBinding)
	if c, ok := b0.Value.(*Call); assert.True(t, ok, "the inner call should be bound, got %v", b0.Value) {
		assert.Same(t, inner.Op, c.Op, "the inner call should be bound as it is")
		if assert.Len(t, c.Args, 2, "the inner call's operands") {
			assert.Same(t, x, c.Args[0], "the inner call should be bound with its operands as they are (leaves)")
			assert.Same(t, x, c.Args[1], "the inner call should be bound with its operands as they are (leaves)")
		}
	}
	assert.Nil(t, inner.StructInfo(), "normalization wrote struct info into its input's call")
	outer := b1.Value.(*Call)
	assert.Same(t, b0.Var, outer.Args[0], "the same operand object must be hoisted once and reused")
	assert.Same(t, b0.Var, outer.Args[1], "the same operand object must be hoisted once and reused")
	assert.Same(t, b1.Var, seq.Body, "the result must be bound and the SeqExpr body be its var")
	assert.Equal(t, sinfoString(f32(n, I64(4))), sinfoString(nf.Ret), "inferred Ret")
	assert.IsType(t, (*FuncInfo)(nil), nf.StructInfo(), "a function's struct info must be a FuncInfo")
}

func TestNormalizeTuplesOfLeavesStay(t *testing.T) {
	x := NewVar("x", f32(I64(2)))
	leafTuple := NewTuple(x, NewTuple(x, NewShapeExpr(I64(1))))
	callInTuple := NewTuple(x, NewCall(testAdd, x, x))
	f := &Function{Params: []*Var{x}, Body: NewTuple(leafTuple, callInTuple), Pure: true}

	nf, diags := NormalizeFunction(nil, f)
	noDiags(t, diags)
	seq := mustSeq(t, nf.Body)
	require.Len(t, seq.Blocks, 1, "only the call inside the tuple should be bound")
	require.Len(t, seq.Blocks[0].Bindings, 1, "only the call inside the tuple should be bound")
	body := seq.Body.(*Tuple)
	assert.Same(t, leafTuple, body.Fields[0], "a tuple of leaves must be kept as is")
	assert.NotSame(t, callInTuple, body.Fields[1], "a tuple with a call field must be rebuilt")
	assert.True(t, IsLeafOrTuple(body.Fields[1]), "a tuple with a call field must be rebuilt around a bound var")
	ti := body.StructInfo().(*TupleInfo)
	if assert.Len(t, ti.Fields, 2, "tuple struct info is structural, got %s", sinfoString(ti)) {
		assert.Len(t, ti.Fields[0].(*TupleInfo).Fields, 2, "tuple struct info is structural, got %s", sinfoString(ti))
	}
}

func TestNormalizeIfBranchesBecomeScopes(t *testing.T) {
	x := NewVar("x", f32(I64(3)))
	c := NewVar("c", NewPrimInfo(Bool))
	iff := &If{Cond: c, Then: NewCall(testAdd, x, x), Else: x}
	f := &Function{Params: []*Var{x, c}, Body: iff, Pure: true}

	nf, diags := NormalizeFunction(nil, f)
	noDiags(t, diags)
	seq := mustSeq(t, nf.Body)
	nif := seq.Blocks[0].Bindings[0].(*VarBinding).Value.(*If)
	then := mustSeq(t, nif.Then)
	els := mustSeq(t, nif.Else)
	assert.Len(t, then.Blocks, 1, "then branch should bind its call in its own scope")
	assert.Empty(t, els.Blocks, "else should be a bare SeqExpr of x")
	assert.Same(t, x, els.Body, "else should be a bare SeqExpr of x")
	assert.Equal(t, sinfoString(f32(I64(3))), sinfoString(nif.StructInfo()), "If struct info: want the LCA")
}

func TestNormalizeFlattensNestedSeqExprAndMergesBlocks(t *testing.T) {
	x := NewVar("x", f32(I64(3)))
	a := NewDataflowVar("a", nil)
	o := NewVar("o", nil)
	inner := &SeqExpr{
		Blocks: []*BindingBlock{{Dataflow: true, Bindings: []Binding{NewVarBinding(a, NewCall(testAdd, x, x))}}},
		Body:   a,
	}
	y := NewVar("y", nil)
	z := NewVar("z", nil)
	body := &SeqExpr{
		Blocks: []*BindingBlock{
			{Bindings: []Binding{NewVarBinding(y, NewCall(testAdd, x, x))}},
			{}, // empty: dropped
			{Bindings: []Binding{NewVarBinding(z, NewCall(testAdd, y, y))}}, // merged with the first
			{Dataflow: true, Bindings: []Binding{NewVarBinding(o, inner)}},  // flattened into this block
		},
		Body: o,
	}
	f := &Function{Params: []*Var{x}, Body: body, Pure: true}
	nf, diags := NormalizeFunction(nil, f)
	noDiags(t, diags)
	seq := mustSeq(t, nf.Body)
	var kinds []string
	for _, blk := range seq.Blocks {
		kinds = append(kinds, fmt.Sprintf("%v:%d", blk.Dataflow, len(blk.Bindings)))
	}
	require.Equal(t, "false:2 true:2", strings.Join(kinds, " "),
		"blocks: want the plain blocks merged and the nested seq flattened into the dataflow block")
	last := seq.Blocks[1].Bindings[1].(*VarBinding)
	assert.Same(t, o, last.Var, "the flattened binding should bind o")
	assert.Same(t, a, last.Value, "the flattened binding should bind the nested SeqExpr's result")
	assert.NotNil(t, o.StructInfo(), "unannotated vars get the inferred info")
	assert.NotNil(t, y.StructInfo(), "unannotated vars get the inferred info")
}

func TestNormalizeFlattenAcrossBlockKindsSplits(t *testing.T) {
	x := NewVar("x", f32(I64(3)))
	a := NewDataflowVar("a", nil)
	o := NewVar("o", nil)
	inner := &SeqExpr{
		Blocks: []*BindingBlock{{Dataflow: true, Bindings: []Binding{NewVarBinding(a, NewCall(testAdd, x, x))}}},
		Body:   a,
	}
	y := NewVar("y", nil)
	body := &SeqExpr{Blocks: []*BindingBlock{{Bindings: []Binding{
		NewVarBinding(y, NewCall(testAdd, x, x)),
		NewVarBinding(o, inner),
	}}}, Body: o}
	nf, diags := NormalizeFunction(nil, &Function{Params: []*Var{x}, Body: body, Pure: true})
	noDiags(t, diags)
	seq := mustSeq(t, nf.Body)
	const why = "a dataflow SeqExpr inside a plain block must split it: plain, dataflow, plain(o = a)"
	require.Len(t, seq.Blocks, 3, why)
	require.True(t, seq.Blocks[1].Dataflow, why)
	require.Same(t, a, seq.Blocks[2].Bindings[0].(*VarBinding).Value, why)
}

func TestNormalizeAnnotations(t *testing.T) {
	n := SymVar("n")
	m := SymVar("m")
	cases := []struct {
		name    string
		param   StructInfo
		ann     StructInfo
		wantErr string
	}{
		{"same", f32(I64(4)), f32(I64(4)), ""},
		{"less specific ndim", f32(I64(4)), TensorInfoNDim(Float32, 1), ""},
		{"object", f32(I64(4)), Object(), ""},
		{"unprovable symbolic (L2) allowed", f32(n), f32(m), ""},
		{"contradiction", f32(I64(4)), f32(I64(3)), "contradicts inferred"},
		{"wrong dtype", f32(I64(4)), TensorInfoOf(Int32, I64(4)), "contradicts inferred"},
		{"wrong kind", f32(I64(4)), ShapeInfoNDim(1), "contradicts inferred"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := NewVar("x", tc.param)
			y := NewVar("y", tc.ann)
			bind := NewVarBinding(y, NewCall(testAdd, x, x))
			bind.SetSpan(span(7))
			f := &Function{Params: []*Var{x}, Pure: true, Body: &SeqExpr{
				Blocks: []*BindingBlock{{Bindings: []Binding{bind}}}, Body: y}}
			_, diags := NormalizeFunction(nil, f)
			if tc.wantErr == "" {
				noDiags(t, diags)
				assert.Same(t, tc.ann, y.StructInfo(), "an annotated var keeps its annotation")
				return
			}
			require.Len(t, diags, 1)
			d := diags[0]
			assert.Equal(t, DiagAnnotation, d.Code, "got %s", d)
			assert.Equal(t, span(7), d.Span, "got %s", d)
			assert.Contains(t, d.Msg, tc.wantErr)
			assert.Contains(t, d.Msg, sinfoString(tc.ann), "message should show both infos")
			assert.Contains(t, d.Msg, sinfoString(tc.param), "message should show both infos")
		})
	}
}

func TestNormalizeReturnAnnotation(t *testing.T) {
	x := NewVar("x", f32(I64(4)))
	f := &Function{Params: []*Var{x}, Body: x, Ret: f32(I64(5)), Pure: true}
	f.SetSpan(span(2))
	_, diags := NormalizeFunction(nil, f)
	require.Len(t, diags, 1, "want a return annotation diagnostic at the function")
	require.Equal(t, DiagAnnotation, diags[0].Code, "want a return annotation diagnostic, got %s", diags[0])
	require.Equal(t, span(2), diags[0].Span, "want the diagnostic at the function, got %s", diags[0])
	ok := &Function{Params: []*Var{x}, Body: x, Ret: TensorInfoNDim(Float32, 1), Pure: true}
	nf, diags := NormalizeFunction(nil, ok)
	noDiags(t, diags)
	assert.Same(t, ok.Ret, nf.Ret, "a less specific return annotation is kept")
}

func TestNormalizeInferenceFailuresAreDiagnostics(t *testing.T) {
	x := NewVar("x", f32(I64(4)))
	s := NewVar("s", f32())
	cases := []struct {
		name string
		code diag.Code
		msg  string
		call *Call
	}{
		{"op error", DiagInference, "test.fail: always fails", NewCall(testFail, x)},
		{"shape mismatch", DiagInference, "dimension 0 mismatch", NewCall(testAdd, x, NewVar("w", f32(I64(5))))},
		{"nil Infer", DiagInternal, "op test.noinfer has no struct info inference", NewCall(testNoInfer, x)},
		{"panicking Infer", DiagInference, "panicked: boom", NewCall(testPanic, x)},
		{"validate", DiagValidate, "rank-0 tensors are not accepted", NewCall(testChecked, s)},
		{"not callable", DiagInference, "is not callable", NewCall(x, x)},
		{"unknown global", DiagUndefined, "unknown global function @nowhere", NewCall(NewGlobalVar("nowhere"), x)},
		{"no fixpoint", DiagInternal, "Normalize hook of test.spin does not reach a fixpoint", NewCall(testSpin, x)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.call.SetSpan(span(9))
			b := NewBuilder(NewModule())
			b.BeginScope([]*Var{x, s})
			b.BeginBlock(false)
			v := b.Emit(tc.call, "v")
			b.EndBlock()
			b.EndScope()
			d := b.Diagnostics()
			require.Len(t, d, 1)
			assert.Equal(t, tc.code, d[0].Code, "got %s", d[0])
			assert.Contains(t, d[0].Msg, tc.msg)
			assert.True(t, d[0].Span.IsValid(), "got %s, want a position", d[0])
			if tc.code != DiagValidate {
				assert.IsType(t, (*ObjectInfo)(nil), v.StructInfo(),
					"a failed call gets R.Object so building continues, got %s", sinfoString(v.StructInfo()))
			}
		})
	}
}

func TestNormalizeOpNormalizeHookIsRevisited(t *testing.T) {
	x := NewVar("x", f32(I64(2)))
	b := NewBuilder(nil)
	b.BeginScope([]*Var{x})
	b.BeginBlock(true)
	v := b.Emit(NewCall(testDouble, x), "v")
	blk := b.EndBlock()
	b.EndScope()
	noDiags(t, b.Diagnostics())
	c := blk.Bindings[0].(*VarBinding).Value.(*Call)
	assert.Same(t, testAdd, c.Op, "the Normalize hook's result should be bound")
	assert.Same(t, x, c.Args[0], "the Normalize hook's result should be bound")
	assert.Same(t, x, c.Args[1], "the Normalize hook's result should be bound")
	assert.True(t, v.Dataflow, "Emit in a dataflow block gives a dataflow var")
	assert.NotNil(t, v.StructInfo(), "Emit gives a var with struct info")
}

func TestMatchCastDefinesSymbolicVars(t *testing.T) {
	x := NewVar("x", TensorInfoNDim(Float32, 1))
	m := SymVar("m")
	b := NewBuilder(nil)
	b.BeginScope([]*Var{x})
	b.BeginBlock(false)
	y := b.EmitMatchCast(x, f32(m), "y")
	z := b.Emit(NewCall(testAdd, y, y), "z")
	blk := b.EndBlock()
	// Inside the function m is defined: z keeps it.
	assert.Equal(t, sinfoString(f32(m)), sinfoString(z.StructInfo()), "z")
	// Leaving the function, m is not defined by the parameters: erased.
	seq := b.FinishScope([]*BindingBlock{blk}, z)
	noDiags(t, b.Diagnostics())
	assert.Equal(t, sinfoString(TensorInfoNDim(Float32, 1)), sinfoString(seq.StructInfo()), "function result info (m erased)")
	assert.Same(t, m, y.StructInfo().(*TensorInfo).Shape.(*ShapeExpr).Values[0], "the match_cast var has exactly the target info")
}

func TestIfBranchErasesBranchLocalSymVars(t *testing.T) {
	x := NewVar("x", TensorInfoNDim(Float32, 1))
	c := NewVar("c", NewPrimInfo(Bool))
	n := SymVar("n")
	k := SymVar("k")
	outer := NewVar("outer", f32(n))
	inner := NewVar("inner", f32(k))
	// outer's n is defined before the If (visible after it); inner's k only
	// inside the branch.
	then := &SeqExpr{Blocks: []*BindingBlock{{Bindings: []Binding{NewMatchCast(inner, x, f32(k))}}}, Body: inner}
	iff := &If{Cond: c, Then: then, Else: &SeqExpr{Body: outer}}
	r := NewVar("r", nil)
	r2 := NewVar("r2", nil)
	body := &SeqExpr{Blocks: []*BindingBlock{{Bindings: []Binding{
		NewMatchCast(outer, x, f32(n)),
		NewVarBinding(r, iff),
		NewVarBinding(r2, &If{Cond: c, Then: &SeqExpr{Body: outer}, Else: &SeqExpr{Body: outer}}),
	}}}, Body: r}
	_, diags := NormalizeFunction(nil, &Function{Params: []*Var{x, c}, Body: body, Pure: true})
	noDiags(t, diags)
	assert.Equal(t, sinfoString(TensorInfoNDim(Float32, 1)), sinfoString(r.StructInfo()), "r")
	assert.Equal(t, sinfoString(f32(n)), sinfoString(r2.StructInfo()), "r2 (n is defined outside the branches)")
}

func TestNormalizeCallsThroughModule(t *testing.T) {
	n := SymVar("n")
	p := NewVar("p", f32(n))
	callee := &Function{Params: []*Var{p}, Body: NewCall(testAdd, p, p), Pure: true}
	x := NewVar("x", f32(I64(8)))
	caller := &Function{Params: []*Var{x}, Body: NewCall(NewGlobalVar("callee"), x), Pure: true}
	ext := &Function{Params: []*Var{NewVar("y", f32(I64(1)))}, Pure: false,
		Body: &Call{Op: NewExternFunc("my.packed"), Args: []Expr{NewStringImm("s")}, SInfoArgs: []StructInfo{ShapeInfoNDim(2)}}}
	mod := NewModule()
	mod.Set("callee", callee)
	mod.Set("caller", caller)
	mod.Set("ext", ext)
	out, diags := NormalizeModule(mod)
	noDiags(t, diags)
	require.Same(t, caller, mod.Func("caller"), "the input module must not change")
	require.Nil(t, caller.Ret, "the input module must not change")
	// callee's return is inferred first, then bound at the call: n := 8.
	assert.Equal(t, sinfoString(f32(I64(8))), sinfoString(out.Func("caller").Ret), "caller Ret")
	assert.Equal(t, sinfoString(ShapeInfoNDim(2)), sinfoString(out.Func("ext").Ret), "extern call Ret (from sinfo_args)")
	fi := ExternFuncInfo()
	assert.False(t, fi.Pure, "ExternFunc info must be impure")
	assert.True(t, fi.Opaque, "ExternFunc info must be opaque")
}

func TestNormalizeTupleGetItemInfo(t *testing.T) {
	x := NewVar("x", f32(I64(4)))
	p := NewVar("p", NewPrimInfo(Int64))
	tup := NewVar("t", NewTupleInfo(x.StructInfo(), p.StructInfo()))
	b := NewBuilder(nil)
	b.BeginScope([]*Var{x, p, tup})
	b.BeginBlock(false)
	for i, want := range []StructInfo{x.StructInfo(), p.StructInfo()} {
		assert.Same(t, want, b.Emit(&TupleGetItem{Tuple: tup, Index: i}, "v").StructInfo(), "t[%d]: want the field's info", i)
	}
	noDiags(t, b.Diagnostics())
	for _, g := range []*TupleGetItem{{Tuple: tup, Index: 2}, {Tuple: x, Index: 0}} {
		g.SetSpan(span(3))
		nerr := len(b.Diagnostics())
		v := b.Emit(g, "bad")
		d := b.Diagnostics()[nerr:]
		if assert.Len(t, d, 1, "%s: want one positioned %s", FormatExpr(g, nil), DiagInference) {
			assert.Equal(t, DiagInference, d[0].Code, "%s: got %s", FormatExpr(g, nil), d[0])
			assert.Equal(t, span(3), d[0].Span, "%s: got %s", FormatExpr(g, nil), d[0])
		}
		assert.IsType(t, (*ObjectInfo)(nil), v.StructInfo(), "%s: a bad projection gets R.Object, got %s", FormatExpr(g, nil), sinfoString(v.StructInfo()))
	}
	b.EndBlock()
	b.EndScope()
}

func TestNormalizeLeafInfo(t *testing.T) {
	n := SymVar("n")
	arr, _ := NewNDArray(Int32, []int64{2, 3})
	cases := []struct {
		e    Expr
		want StructInfo
	}{
		{NewShapeExpr(n, I64(2)), ShapeInfoOf(n, I64(2))},
		{NewPrimValue(n), PrimInfoOf(n)},
		{NewStringImm("a"), Object()},
		{NewDataTypeImm(Float16), Object()},
		{&Constant{Data: arr}, TensorInfoOf(Int32, I64(2), I64(3))},
	}
	b := NewBuilder(nil)
	for _, tc := range cases {
		got := b.Normalize(tc.e)
		assert.Same(t, tc.e, got, "%T: Normalize must return its input", tc.e)
		assert.Equal(t, sinfoString(tc.want), sinfoString(got.StructInfo()), "%T", tc.e)
	}
	noDiags(t, b.Diagnostics())
}

func TestNormalizeIsIdempotentAndReturnsSamePointers(t *testing.T) {
	f := chainFunction(50)
	nf, diags := NormalizeFunction(nil, f)
	noDiags(t, diags)
	again, diags := NormalizeFunction(nil, nf)
	noDiags(t, diags)
	assert.Same(t, nf, again, "normalizing a normalized function must return it unchanged")
}

// chainFunction is a dataflow chain of n test.add bindings, built without
// struct info on the bound vars; its operand is nested, so the first call
// gets hoisted.
func chainFunction(n int) *Function {
	d := SymVar("d")
	x := NewVar("x", f32(d, I64(4)))
	binds := make([]Binding, 0, n+1)
	prev := Expr(x)
	for i := 0; i < n; i++ {
		v := NewDataflowVar(fmt.Sprintf("lv%d", i), nil)
		binds = append(binds, NewVarBinding(v, NewCall(testAdd, prev, x)))
		prev = v
	}
	out := NewVar("out", nil)
	binds = append(binds, NewVarBinding(out, prev))
	return &Function{Params: []*Var{x}, Pure: true, Body: &SeqExpr{
		Blocks: []*BindingBlock{{Dataflow: true, Bindings: binds}}, Body: out}}
}

func TestNormalizeLongChainIteratively(t *testing.T) {
	if testing.Short() {
		t.Skip("100k bindings")
	}
	f := chainFunction(100_000)
	nf, diags := NormalizeFunction(nil, f)
	noDiags(t, diags)
	seq := mustSeq(t, nf.Body)
	require.Equal(t, 100_001, len(seq.Blocks[0].Bindings), "bindings")
	count := 0
	Inspect(nf, func(e Expr) bool {
		if _, ok := e.(*Call); ok {
			count++
		}
		return true
	})
	assert.Equal(t, 100_000, count, "Inspect's calls")
	assert.Same(t, nf, (&Mutator{}).Function(nf), "no-op mutator must return the same function")
}

// Normalizing twice gives the same result: the first run must not leave
// the input's calls with struct info but without their canonical form
// (a call with struct info is taken as normalized).
func TestNormalizeDoesNotFillInputCalls(t *testing.T) {
	x := NewVar("x", f32(I64(2), I64(4)))
	call := NewCall(testAdd, x, x)
	f := &Function{Params: []*Var{x}, Body: call, Pure: true}
	first, diags := NormalizeFunction(nil, f)
	noDiags(t, diags)
	require.Nil(t, call.StructInfo(), "normalization wrote struct info into its input's call")
	second, diags := NormalizeFunction(nil, f)
	noDiags(t, diags)
	assert.True(t, StructuralEqual(first, second, EqualOptions{}), "normalizing the same input twice differs")
}

// Every reference to a global shares the struct info computed once from its
// function, until the module's entry changes.
func TestNormalizeGlobalInfoSharedPerFunction(t *testing.T) {
	mod := NewModule()
	mod.Set("k", loopFunc(loopSpec{block: "b"}))
	b := NewBuilder(mod)
	first := b.Normalize(NewGlobalVar("k")).StructInfo()
	second := b.Normalize(NewGlobalVar("k")).StructInfo()
	require.NotNil(t, first)
	require.Same(t, first, second, "want one shared struct info")
	want := PrimFuncInfo(mod.PrimFunc("k"))
	require.True(t, StructuralEqual(first, want, EqualOptions{}), "struct info %v, want %v", first, want)
	// A replaced function is seen: the 2-D version has a 2-D tensor param.
	m, n := NewPrimVar("m", Int64), NewPrimVar("n", Int64)
	a := NewBuffer("A", []PrimExpr{m, n}, Float32)
	pa := NewPrimVar("a", Handle)
	mod.Set("k", &PrimFunc{Params: []*PrimVar{pa}, BufferMap: map[*PrimVar]*Buffer{pa: a}, Body: &Evaluate{Value: NewInt(Int32, 0)}})
	third := b.Normalize(NewGlobalVar("k")).StructInfo()
	require.True(t, StructuralEqual(third, PrimFuncInfo(mod.PrimFunc("k")), EqualOptions{}), "after replacing k: struct info %v, want the new function's", third)
	require.False(t, StructuralEqual(third, first, EqualOptions{}), "after replacing k: struct info %v, want the new function's", third)
}

// EmitVar binds like EmitBinding(NewVarBinding(...)); the call it is given
// is completed in place (the caller gave it away) rather than copied.
func TestEmitVarMatchesEmitBinding(t *testing.T) {
	x := NewVar("x", f32(I64(2), I64(4)))
	emit := func(viaVar bool) (*BindingBlock, *Call) {
		b := NewBuilder(nil)
		b.BeginBlock(false)
		call := NewCall(testAdd, x, x)
		v := NewVar("y", nil)
		if viaVar {
			b.EmitVar(v, call, diag.Span{})
		} else {
			b.EmitBinding(NewVarBinding(v, call))
		}
		noDiags(t, b.Diagnostics())
		return b.EndBlock(), call
	}
	want, given := emit(false)
	require.Nil(t, given.StructInfo(), "EmitBinding wrote struct info into its input's call")
	got, given := emit(true)
	require.True(t, StructuralEqual(got, want, EqualOptions{}), "EmitVar bound\n%v\nEmitBinding bound\n%v", got, want)
	vb := got.Bindings[0].(*VarBinding)
	assert.Same(t, given, vb.Value, "EmitVar copied the call it was given instead of completing it")
	assert.NotNil(t, given.StructInfo(), "EmitVar must complete the call it was given")
	assert.True(t, StructuralEqual(vb.Var.StructInfo(), f32(I64(2), I64(4)), EqualOptions{}), "y has struct info %v", vb.Var.StructInfo())
}

// TestNormalizeNoCascade: a failed inference is reported once. Unannotated
// uses of its result (directly, in a tuple operand, through a projection)
// add no diagnostics of their own, while a genuine R.Object operand (an
// opaque value, not a failure) is still rejected by the op that needs a
// tensor.
func TestNormalizeNoCascade(t *testing.T) {
	x := NewVar("x", f32(I64(4)))
	obj := NewVar("o", Object())
	b := NewBuilder(nil)
	b.BeginScope([]*Var{x, obj})
	b.BeginBlock(false)
	bad := b.Emit(NewCall(testFail, x), "bad")
	require.Len(t, b.Diagnostics(), 1)
	_, isObject := bad.StructInfo().(*ObjectInfo)
	require.True(t, isObject, "a failed inference reads as R.Object")
	use := b.Emit(NewCall(testAdd, bad, x), "use")
	b.Emit(NewCall(testAdd, use, x), "use2")
	tup := b.Emit(&Tuple{Fields: []Expr{bad, x}}, "tup")
	b.Emit(NewCall(testAdd, tup, x), "use3")
	b.Emit(&TupleGetItem{Tuple: bad, Index: 0}, "proj")
	assert.Len(t, b.Diagnostics(), 1, "uses of a failed result must not report again: %v", b.Diagnostics())

	b.Emit(NewCall(testAdd, obj, x), "opaque")
	d := b.Diagnostics()
	require.Len(t, d, 2, "an opaque R.Object operand is still an error")
	assert.Contains(t, d[1].Msg, "expects tensors")
	b.EndBlock()
	b.EndScope()
}
