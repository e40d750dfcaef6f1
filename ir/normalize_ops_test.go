package ir

import (
	"strings"
	"testing"
)

// These tests go through the real op registry (ops*.go): inference of
// registered ops with symbolic shapes, inside the normalizer.

func realOp(t *testing.T, name string) *Op {
	t.Helper()
	op, ok := LookupOp(name)
	if !ok || op.Infer == nil {
		t.Fatalf("op %s is not registered with inference", name)
	}
	return op
}

func TestNormalizeRealOpsSymbolicShapes(t *testing.T) {
	n, k, m := SymVar("n"), SymVar("k"), SymVar("m")
	cases := []struct {
		name string
		op   string
		args []StructInfo
		want StructInfo
	}{
		{"matmul", "relax.matmul", []StructInfo{f32(n, k), f32(k, m)}, f32(n, m)},
		{"batched matmul", "relax.matmul", []StructInfo{f32(I64(2), n, k), f32(k, I64(5))}, f32(I64(2), n, I64(5))},
		{"broadcast add", "relax.add", []StructInfo{f32(n, I64(1), I64(4)), f32(I64(3), I64(1))}, f32(n, I64(3), I64(4))},
		{"relu keeps shape", "relax.nn.relu", []StructInfo{f32(n, m)}, f32(n, m)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			op := realOp(t, tc.op)
			var params []*Var
			var args []Expr
			for i, s := range tc.args {
				p := NewVar(string(rune('a'+i)), s)
				params = append(params, p)
				args = append(args, p)
			}
			// Nest the call in a tuple so the normalizer has to hoist it.
			f := &Function{Params: params, Pure: true, Body: NewTuple(NewCall(op, args...))}
			nf, diags := NormalizeFunction(nil, f)
			noDiags(t, diags)
			got := nf.Ret.(*TupleInfo).Fields[0]
			if sinfoString(got) != sinfoString(tc.want) {
				t.Errorf("got %s, want %s", sinfoString(got), sinfoString(tc.want))
			}
		})
	}
}

func TestNormalizeRealOpErrorsCarrySpans(t *testing.T) {
	n := SymVar("n")
	matmul := realOp(t, "relax.matmul")
	a := NewVar("a", f32(n, I64(3)))
	b := NewVar("b", f32(I64(4), I64(5)))
	call := NewCall(matmul, a, b)
	call.SetSpan(span(12))
	y := NewVar("y", nil)
	ann := NewVar("z", f32(n, I64(6)))
	good := NewCall(matmul, a, NewVar("w", f32(I64(3), I64(7))))
	good.SetSpan(span(13))
	bz := NewVarBinding(ann, good)
	bz.SetSpan(span(13))
	f := &Function{Params: []*Var{a, b}, Pure: true, Body: &SeqExpr{Blocks: []*BindingBlock{{Bindings: []Binding{
		NewVarBinding(y, call), bz}}}, Body: y}}
	_, diags := NormalizeFunction(nil, f)
	// w is not a parameter: it has struct info, so it is not a diagnostic
	// for the normalizer (the well-formed checker reports the undefined var).
	if len(diags) != 2 {
		t.Fatalf("want 2 diagnostics, got %v", diags)
	}
	if diags[0].Span != span(12) || diags[0].Code != DiagInference {
		t.Errorf("matmul mismatch: %s", diags[0])
	}
	if diags[1].Span != span(13) || diags[1].Code != DiagAnnotation || !strings.Contains(diags[1].Msg, "contradicts") {
		t.Errorf("annotation: %s", diags[1])
	}
	if _, ok := y.StructInfo().(*ObjectInfo); !ok {
		t.Errorf("the failed call's var gets R.Object")
	}
}
