package ir

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func normalizedChain(t *testing.T, n int) *Function {
	t.Helper()
	f, diags := NormalizeFunction(nil, chainFunction(n))
	noDiags(t, diags)
	return f
}

func TestMutatorNoopReturnsSamePointerWithoutAllocating(t *testing.T) {
	f := normalizedChain(t, 200)
	m := &Mutator{
		PostExpr: func(e Expr) Expr { return e },
		Binding:  func(b Binding) Binding { return b },
		DefVar:   func(v *Var) *Var { return v },
	}
	require.Same(t, f, m.Function(f), "no-op mutator must return the same function")
	assert.Zero(t, testing.AllocsPerRun(20, func() { m.Function(f) }), "no-op mutation allocated")
}

func TestMutatorCopiesOnlyTheChangedPath(t *testing.T) {
	f := normalizedChain(t, 10)
	seq := f.Body.(*SeqExpr)
	binds := seq.Blocks[0].Bindings
	target := binds[5].(*VarBinding).Value.(*Call)
	repl := NewCall(testAdd, target.Args[1], target.Args[1])
	m := &Mutator{PostExpr: func(e Expr) Expr {
		if e == target {
			return repl
		}
		return e
	}}
	nf := m.Function(f)
	require.NotSame(t, f, nf, "the function must change")
	nb := nf.Body.(*SeqExpr).Blocks[0].Bindings
	for i := range binds {
		assert.Equal(t, i != 5, nb[i] == binds[i], "binding %d shared", i)
	}
	assert.Same(t, repl, nb[5].(*VarBinding).Value, "the replaced binding gets the new value")
	assert.Same(t, binds[5].BoundVar(), nb[5].BoundVar(), "the replaced binding keeps its var")
	assert.Same(t, target, f.Body.(*SeqExpr).Blocks[0].Bindings[5].(*VarBinding).Value, "the input must not change")
}

func TestMutatorDefVarRemapsUses(t *testing.T) {
	f := normalizedChain(t, 3)
	x := f.Params[0]
	x2 := NewVar("x2", x.StructInfo())
	m := &Mutator{DefVar: func(v *Var) *Var {
		if v == x {
			return x2
		}
		return v
	}, KeepStructInfo: true}
	nf := m.Function(f)
	require.Same(t, x2, nf.Params[0], "param not replaced")
	assert.NotSame(t, f.Body, nf.Body, "the body must be rebuilt")
	assert.Same(t, f.Body.StructInfo(), nf.Body.StructInfo(), "KeepStructInfo: the rebuilt body keeps the old body's struct info")
	oldUses := 0
	Inspect(nf, func(e Expr) bool {
		if e == x {
			oldUses++
		}
		return true
	})
	assert.Zero(t, oldUses, "uses of the old param survived")
	_, diags := NormalizeFunction(nil, nf)
	assert.Empty(t, diags, "renamed function should normalize cleanly")
}

func TestMutatorBindingHookDrops(t *testing.T) {
	x := NewVar("x", f32(I64(2)))
	dead := NewVar("dead", nil)
	out := NewVar("out", nil)
	f, _ := NormalizeFunction(nil, &Function{Params: []*Var{x}, Pure: true, Body: &SeqExpr{
		Blocks: []*BindingBlock{{Bindings: []Binding{
			NewVarBinding(dead, NewCall(testAdd, x, x)),
			NewVarBinding(out, NewCall(testAdd, x, x)),
		}}}, Body: out}})
	m := &Mutator{Binding: func(b Binding) Binding {
		if b.BoundVar() == dead {
			return nil
		}
		return b
	}}
	nf := m.Function(f)
	assert.Len(t, nf.Body.(*SeqExpr).Blocks[0].Bindings, 1, "want the dead binding dropped")
}

func TestWalkVisitsEverythingInOrder(t *testing.T) {
	x := NewVar("x", f32(I64(3)))
	c := NewVar("c", NewPrimInfo(Bool))
	y := NewVar("y", nil)
	m := SymVar("m")
	z := NewVar("z", nil)
	f, diags := NormalizeFunction(nil, &Function{Params: []*Var{x, c}, Pure: true, Body: &SeqExpr{
		Blocks: []*BindingBlock{{Bindings: []Binding{
			NewVarBinding(y, &If{Cond: c, Then: NewCall(testAdd, x, x), Else: x}),
			NewMatchCast(z, y, f32(m)),
		}}}, Body: z}})
	noDiags(t, diags)
	var defs []string
	var infos, calls, bindings, blocks int
	Walk(f, &Visitor{
		Expr: func(e Expr) bool {
			if _, ok := e.(*Call); ok {
				calls++
			}
			return true
		},
		Block:      func(*BindingBlock) bool { blocks++; return true },
		Binding:    func(Binding) bool { bindings++; return true },
		DefVar:     func(v *Var) { defs = append(defs, v.Name) },
		StructInfo: func(StructInfo) { infos++ },
	})
	// params x, c; the branch's hoisted var; y; z.
	if assert.Len(t, defs, 5) {
		assert.Equal(t, []string{"x", "c", "y", "z"}, []string{defs[0], defs[1], defs[3], defs[4]}, "defs = %v", defs)
	}
	assert.Equal(t, 1, calls, "calls")
	assert.Equal(t, 3, bindings, "bindings")
	assert.Equal(t, 2, blocks, "blocks")
	// 5 var infos + match_cast target + function return.
	assert.Equal(t, 7, infos, "struct info callbacks")
	var got []*PrimVar
	InspectStructInfoPrims(z.StructInfo(), func(e PrimExpr) bool {
		if v, ok := e.(*PrimVar); ok {
			got = append(got, v)
		}
		return true
	})
	if assert.Len(t, got, 1, "InspectStructInfoPrims") {
		assert.Same(t, m, got[0], "InspectStructInfoPrims")
	}
	skipped := 0
	Walk(f, &Visitor{Expr: func(e Expr) bool {
		if _, ok := e.(*If); ok {
			return false
		}
		if _, ok := e.(*Call); ok {
			skipped++
		}
		return true
	}})
	assert.Zero(t, skipped, "returning false must skip the If's children")
}

func TestRewriterEmitsExtraBindingsAndRemaps(t *testing.T) {
	f := normalizedChain(t, 4)
	mod := NewModule()
	mod.Set("main", f)
	// Replace every test.add(a, b) by test.add(test.add(a, a), b) with the
	// inner call emitted as an extra binding.
	rw := NewRewriter(mod)
	rw.Binding = func(rw *Rewriter, bind Binding, value Expr) bool {
		c, ok := value.(*Call)
		if !ok || c.Op != testAdd {
			return false
		}
		tmp := rw.B.Emit(NewCall(testAdd, c.Args[0], c.Args[0]), "tmp")
		rw.ReEmit(bind, NewCall(testAdd, tmp, c.Args[1]))
		return true
	}
	out, diags := rw.Module(mod)
	noDiags(t, diags)
	nf := out.Func("main")
	require.NotSame(t, f, nf, "rewriting must produce a new function")
	require.Same(t, f, mod.Func("main"), "rewriting must leave the input alone")
	binds := nf.Body.(*SeqExpr).Blocks[0].Bindings
	require.Len(t, binds, 9, "4 originals + 4 extras + the output binding")
	assert.True(t, binds[0].BoundVar().Dataflow, "extra bindings are emitted as dataflow vars")
	assert.NotNil(t, binds[0].BoundVar().StructInfo(), "extra bindings are emitted normalized")
	again, diags := NormalizeFunction(mod, nf)
	assert.Same(t, nf, again, "the rewriter's output must already be normalized")
	assert.Empty(t, diags, "the rewriter's output must already be normalized")

	// A rewriter that changes nothing returns the same function.
	assert.Same(t, f, NewRewriter(mod).Function(f), "a no-op rewriter must return the same function")
}

func TestRewriterFreshVarWhenInfoChanges(t *testing.T) {
	x := NewVar("x", f32(I64(2)))
	w := NewVar("w", TensorInfoOf(Int32, I64(2)))
	y := NewVar("y", nil)
	out := NewVar("out", nil)
	// The return is annotated R.Object so that the result's change of type
	// is legal (a kept annotation is checked against the new body).
	f, diags := NormalizeFunction(nil, &Function{Params: []*Var{x, w}, Pure: true, Ret: Object(), Body: &SeqExpr{
		Blocks: []*BindingBlock{{Bindings: []Binding{
			NewVarBinding(y, NewCall(testAdd, x, x)),
			NewVarBinding(out, NewTuple(y)),
		}}}, Body: out}})
	noDiags(t, diags)
	rw := NewRewriter(nil)
	rw.PostExpr = func(rw *Rewriter, e Expr) Expr {
		if c, ok := e.(*Call); ok && c.Args[0] == x {
			return NewCall(testAdd, w, w) // int32 now: y's float32 info no longer fits
		}
		return e
	}
	nf := rw.Function(f)
	binds := nf.Body.(*SeqExpr).Blocks[0].Bindings
	ny := binds[0].BoundVar()
	require.NotSame(t, y, ny, "y must be replaced by a fresh var")
	require.Equal(t, "y", ny.Name, "the fresh var keeps the name")
	assert.Same(t, ny, binds[1].(*VarBinding).Value.(*Tuple).Fields[0], "later uses must be remapped to the fresh var")
	noDiags(t, rw.B.Diagnostics())
}

func TestBindAndSymbolicSubstitution(t *testing.T) {
	f := normalizedChain(t, 3)
	x := f.Params[0]
	d := x.StructInfo().(*TensorInfo).Shape.(*ShapeExpr).Values[0].(*PrimVar)
	c := NewVar("c", f32(I64(7), I64(4)))
	bound := Bind(f, map[*Var]Expr{x: c}).(*Function)
	assert.Empty(t, bound.Params, "bound params are removed")
	xUses := 0
	Inspect(bound, func(e Expr) bool {
		if e == x {
			xUses++
		}
		return true
	})
	assert.Zero(t, xUses, "x survived Bind")
	assert.Same(t, f, Bind(f, map[*Var]Expr{NewVar("other", nil): c}), "Bind without occurrences returns its input")

	s := f32(d, Mul(d, I64(2)))
	got := SubstituteSymVars(s, map[*PrimVar]PrimExpr{d: I64(3)})
	assert.Equal(t, sinfoString(f32(I64(3), I64(6))), sinfoString(got), "SubstituteSymVars")
	assert.Same(t, s, SubstituteSymVars(s, map[*PrimVar]PrimExpr{SymVar("q"): I64(1)}), "substitution without occurrences must return the same info")
	tup := NewTupleInfo(s, NewPrimInfo(Int64))
	ti := SubstituteSymVars(tup, map[*PrimVar]PrimExpr{d: I64(1)}).(*TupleInfo)
	assert.Same(t, tup.Fields[1], ti.Fields[1], "unchanged tuple fields are shared")
	fi := NewFuncInfo([]StructInfo{s, NewPrimInfo(Int64)}, s, true)
	assert.Equal(t, sinfoString(NewFuncInfo([]StructInfo{f32(I64(3), I64(6)), NewPrimInfo(Int64)}, f32(I64(3), I64(6)), true)),
		sinfoString(SubstituteSymVars(fi, map[*PrimVar]PrimExpr{d: I64(3)})), "SubstituteSymVars(callable)")
	defs := DefinableSymVars(NewTupleInfo(s, ShapeInfoOf(d, I64(1)), PrimInfoOf(d)))
	if assert.Len(t, defs, 1, "DefinableSymVars: d*2 defines nothing and d is listed once") {
		assert.Same(t, d, defs[0], "DefinableSymVars")
	}

	// Substituting through a function gives fresh params with concrete info.
	sf := SubstituteSymVarsInExpr(f, map[*PrimVar]PrimExpr{d: I64(5)}).(*Function)
	assert.NotSame(t, x, sf.Params[0], "substitution must give a fresh param")
	assert.Equal(t, sinfoString(f32(I64(5), I64(4))), sinfoString(sf.Params[0].StructInfo()), "param info after substitution")
	nf, diags := NormalizeFunction(nil, sf)
	noDiags(t, diags)
	assert.Equal(t, sinfoString(f32(I64(5), I64(4))), sinfoString(nf.Ret), "re-normalized Ret")
}
