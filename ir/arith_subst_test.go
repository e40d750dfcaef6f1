package ir

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSubstitutePrim(t *testing.T) {
	n, m, k := SymVar("n"), SymVar("m"), SymVar("k")
	A := NewBuffer("A", []PrimExpr{n}, Float32)
	e := Add(Mul(n, i64(2)), FloorDiv(m, n))
	got := SubstitutePrim(e, map[*PrimVar]PrimExpr{n: Add(k, i64(1))})
	assert.Equal(t, "(k + 1) * 2 + m // (k + 1)", FormatPrim(got, nil), "substituted")
	assert.Equal(t, "k * 2 + m // (k + 1) + 2", FormatPrim(Simplify(got), nil), "substituted and simplified")
	assert.Equal(t, "n * 2 + m // n", FormatPrim(e, nil), "SubstitutePrim edited its input")
	// Untouched trees are shared, not copied.
	assert.Same(t, e, SubstitutePrim(e, map[*PrimVar]PrimExpr{k: i64(0)}), "substitution without occurrences rebuilt the tree")
	partial := SubstitutePrim(e, map[*PrimVar]PrimExpr{m: k}).(*Binary)
	assert.Same(t, e.(*Binary).A, partial.A, "unchanged operand was not shared")
	// Every node kind carries the substitution into its children.
	x := NewPrimVar("x", Float32)
	all := &Select{
		Cond:  &Not{A: lt(n, m)},
		True:  &Cast{Type: Float32, Value: n},
		False: &PrimCall{Op: "exp", Args: []PrimExpr{&BufferLoad{Buffer: A, Indices: []PrimExpr{n}}}, Type: Float32},
	}
	sub := SubstitutePrim(all, map[*PrimVar]PrimExpr{n: k, x: x})
	assert.Equal(t, `T.Select(not k < m, T.Cast("float32", k), T.exp(A[k]))`, FormatPrim(sub, nil), "substituted through every node kind")
}

func TestPrimVarsIn(t *testing.T) {
	n, m, k := SymVar("n"), SymVar("m"), SymVar("k")
	A := NewBuffer("A", []PrimExpr{n}, Int64)
	e := Add(Mul(m, n), Max(FloorDiv(n, k), &BufferLoad{Buffer: A, Indices: []PrimExpr{m}}))
	got := PrimVarsIn(e)
	want := []*PrimVar{m, n, k}
	require.Len(t, got, len(want), "PrimVarsIn = %v, want %v", got, want)
	for i := range want {
		require.Same(t, want[i], got[i], "PrimVarsIn = %v, want %v", got, want)
	}
	assert.Empty(t, PrimVarsIn(i64(3)), "PrimVarsIn(3)")
	// Same-name variables are distinct.
	n2 := SymVar("n")
	assert.Len(t, PrimVarsIn(Add(n, n2)), 2, "PrimVarsIn(n + n'), want two variables")
}
