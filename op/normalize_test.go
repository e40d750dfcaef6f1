package op

import (
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"

	"strings"
	"testing"
)

// These tests go through the real op registry: inference of
// registered ops with symbolic shapes, inside the normalizer.

func realOp(t *testing.T, name string) *ir.Op {
	t.Helper()
	op, ok := ir.LookupOp(name)
	if !ok || op.Infer == nil {
		t.Fatalf("op %s is not registered with inference", name)
	}
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
			if sinfoString(got) != sinfoString(tc.want) {
				t.Errorf("got %s, want %s", sinfoString(got), sinfoString(tc.want))
			}
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
	if len(diags) != 2 {
		t.Fatalf("want 2 diagnostics, got %v", diags)
	}
	if diags[0].Span != span(12) || diags[0].Code != ir.DiagInference {
		t.Errorf("matmul mismatch: %s", diags[0])
	}
	if diags[1].Span != span(13) || diags[1].Code != ir.DiagAnnotation || !strings.Contains(diags[1].Msg, "contradicts") {
		t.Errorf("annotation: %s", diags[1])
	}
	if _, ok := y.StructInfo().(*ir.ObjectInfo); !ok {
		t.Errorf("the failed call's var gets R.Object")
	}
}

func f32(dims ...ir.PrimExpr) *ir.TensorInfo { return ir.TensorInfoOf(ir.Float32, dims...) }

func span(line int) diag.Span { return diag.Span{File: "t.py", Line: line, Col: 5} }

func sinfoString(s ir.StructInfo) string { return ir.FormatStructInfo(s, nil) }

func noDiags(t *testing.T, d diag.List) {
	t.Helper()
	for _, x := range d {
		t.Errorf("unexpected diagnostic: %s", x)
	}
}
