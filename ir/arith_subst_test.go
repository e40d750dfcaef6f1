package ir

import "testing"

func TestSubstitutePrim(t *testing.T) {
	n, m, k := SymVar("n"), SymVar("m"), SymVar("k")
	A := NewBuffer("A", []PrimExpr{n}, Float32)
	e := Add(Mul(n, i64(2)), FloorDiv(m, n))
	got := SubstitutePrim(e, map[*PrimVar]PrimExpr{n: Add(k, i64(1))})
	if s := FormatPrim(got, nil); s != "(k + 1) * 2 + m // (k + 1)" {
		t.Errorf("substituted = %s", s)
	}
	if s := FormatPrim(Simplify(got), nil); s != "k * 2 + m // (k + 1) + 2" {
		t.Errorf("substituted and simplified = %s", s)
	}
	if FormatPrim(e, nil) != "n * 2 + m // n" {
		t.Error("SubstitutePrim edited its input")
	}
	// Untouched trees are shared, not copied.
	if SubstitutePrim(e, map[*PrimVar]PrimExpr{k: i64(0)}) != e {
		t.Error("substitution without occurrences rebuilt the tree")
	}
	partial := SubstitutePrim(e, map[*PrimVar]PrimExpr{m: k}).(*Binary)
	if partial.A != e.(*Binary).A {
		t.Error("unchanged operand was not shared")
	}
	// Every node kind carries the substitution into its children.
	x := NewPrimVar("x", Float32)
	all := &Select{
		Cond:  &Not{A: lt(n, m)},
		True:  &Cast{Type: Float32, Value: n},
		False: &PrimCall{Op: "exp", Args: []PrimExpr{&BufferLoad{Buffer: A, Indices: []PrimExpr{n}}}, Type: Float32},
	}
	sub := SubstitutePrim(all, map[*PrimVar]PrimExpr{n: k, x: x})
	if s := FormatPrim(sub, nil); s != `T.Select(not k < m, T.Cast("float32", k), T.exp(A[k]))` {
		t.Errorf("substituted through every node kind = %s", s)
	}
}

func TestPrimVarsIn(t *testing.T) {
	n, m, k := SymVar("n"), SymVar("m"), SymVar("k")
	A := NewBuffer("A", []PrimExpr{n}, Int64)
	e := Add(Mul(m, n), Max(FloorDiv(n, k), &BufferLoad{Buffer: A, Indices: []PrimExpr{m}}))
	got := PrimVarsIn(e)
	want := []*PrimVar{m, n, k}
	if len(got) != len(want) {
		t.Fatalf("PrimVarsIn = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("PrimVarsIn = %v, want %v", got, want)
		}
	}
	if vs := PrimVarsIn(i64(3)); len(vs) != 0 {
		t.Errorf("PrimVarsIn(3) = %v", vs)
	}
	// Same-name variables are distinct.
	n2 := SymVar("n")
	if vs := PrimVarsIn(Add(n, n2)); len(vs) != 2 {
		t.Errorf("PrimVarsIn(n + n') = %v, want two variables", vs)
	}
}
