package op

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests go through the real op registry: inference of
// registered ops with symbolic shapes, inside the normalizer.

func realOp(t *testing.T, name string) *ir.Op {
	t.Helper()
	op, ok := ir.LookupOp(name)
	require.True(t, ok, "op %s is not registered with inference", name)
	require.NotNil(t, op.Infer, "op %s is not registered with inference", name)
	return op
}

func TestNormalizeRealOpsSymbolicShapes(t *testing.T) {
	n, k, m := ir.SymVar("n"), ir.SymVar("k"), ir.SymVar("m")
	cases := []struct {
		name string
		op   string
		args []ir.StructInfo
		want ir.StructInfo
	}{
		{"matmul", "relax.matmul", []ir.StructInfo{f32(n, k), f32(k, m)}, f32(n, m)},
		{"batched matmul", "relax.matmul", []ir.StructInfo{f32(ir.I64(2), n, k), f32(k, ir.I64(5))}, f32(ir.I64(2), n, ir.I64(5))},
		{"broadcast add", "relax.add", []ir.StructInfo{f32(n, ir.I64(1), ir.I64(4)), f32(ir.I64(3), ir.I64(1))}, f32(n, ir.I64(3), ir.I64(4))},
		{"relu keeps shape", "relax.nn.relu", []ir.StructInfo{f32(n, m)}, f32(n, m)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			op := realOp(t, tc.op)
			var params []*ir.Var
			var args []ir.Expr
			for i, s := range tc.args {
				p := ir.NewVar(string(rune('a'+i)), s)
				params = append(params, p)
				args = append(args, p)
			}
			// Nest the call in a tuple so the normalizer has to hoist it.
			f := &ir.Function{Params: params, Pure: true, Body: ir.NewTuple(ir.NewCall(op, args...))}
			nf, diags := ir.NormalizeFunction(nil, f)
			noDiags(t, diags)
			got := nf.Ret.(*ir.TupleInfo).Fields[0]
			assert.Equal(t, sinfoString(tc.want), sinfoString(got))
		})
	}
}

func TestNormalizeRealOpErrorsCarrySpans(t *testing.T) {
	n := ir.SymVar("n")
	matmul := realOp(t, "relax.matmul")
	a := ir.NewVar("a", f32(n, ir.I64(3)))
	b := ir.NewVar("b", f32(ir.I64(4), ir.I64(5)))
	call := ir.NewCall(matmul, a, b)
	call.SetSpan(span(12))
	y := ir.NewVar("y", nil)
	ann := ir.NewVar("z", f32(n, ir.I64(6)))
	good := ir.NewCall(matmul, a, ir.NewVar("w", f32(ir.I64(3), ir.I64(7))))
	good.SetSpan(span(13))
	bz := ir.NewVarBinding(ann, good)
	bz.SetSpan(span(13))
	f := &ir.Function{Params: []*ir.Var{a, b}, Pure: true, Body: &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: []ir.Binding{
		ir.NewVarBinding(y, call), bz}}}, Body: y}}
	_, diags := ir.NormalizeFunction(nil, f)
	// w is not a parameter: it has struct info, so it is not a diagnostic
	// for the normalizer (the well-formed checker reports the undefined var).
	require.Len(t, diags, 2, "want 2 diagnostics, got %v", diags)
	assert.Equal(t, span(12), diags[0].Span, "matmul mismatch: %s", diags[0])
	assert.Equal(t, ir.DiagInference, diags[0].Code, "matmul mismatch: %s", diags[0])
	assert.Equal(t, span(13), diags[1].Span, "annotation: %s", diags[1])
	assert.Equal(t, ir.DiagAnnotation, diags[1].Code, "annotation: %s", diags[1])
	assert.Contains(t, diags[1].Msg, "contradicts", "annotation: %s", diags[1])
	assert.IsType(t, &ir.ObjectInfo{}, y.StructInfo(), "the failed call's var gets R.Object")
}

func f32(dims ...ir.PrimExpr) *ir.TensorInfo { return ir.TensorInfoOf(ir.Float32, dims...) }

func span(line int) diag.Span { return diag.Span{File: "t.py", Line: line, Col: 5} }

func sinfoString(s ir.StructInfo) string { return ir.FormatStructInfo(s, nil) }

func noDiags(t *testing.T, d diag.List) {
	t.Helper()
	assert.Empty(t, d, "unexpected diagnostics: %v", d)
}
