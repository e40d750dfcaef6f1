package ir

import (
	"testing"
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
	if m.Function(f) != f {
		t.Fatal("no-op mutator must return the same function")
	}
	allocs := testing.AllocsPerRun(20, func() { m.Function(f) })
	if allocs != 0 {
		t.Errorf("no-op mutation allocated %.0f times", allocs)
	}
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
	if nf == f {
		t.Fatal("the function changed")
	}
	nb := nf.Body.(*SeqExpr).Blocks[0].Bindings
	for i := range binds {
		if (nb[i] == binds[i]) != (i != 5) {
			t.Errorf("binding %d: shared=%v", i, nb[i] == binds[i])
		}
	}
	if nb[5].(*VarBinding).Value != repl || nb[5].BoundVar() != binds[5].BoundVar() {
		t.Errorf("the replaced binding keeps its var and gets the new value")
	}
	if f.Body.(*SeqExpr).Blocks[0].Bindings[5].(*VarBinding).Value != target {
		t.Errorf("the input must not change")
	}
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
	if nf.Params[0] != x2 {
		t.Fatal("param not replaced")
	}
	if nf.Body == f.Body || nf.Body.StructInfo() != f.Body.StructInfo() {
		t.Errorf("KeepStructInfo: the rebuilt body keeps the old body's struct info")
	}
	Inspect(nf, func(e Expr) bool {
		if e == x {
			t.Errorf("a use of the old param survived")
		}
		return true
	})
	if _, diags := NormalizeFunction(nil, nf); len(diags) != 0 {
		t.Errorf("renamed function should normalize cleanly: %v", diags)
	}
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
	if got := len(nf.Body.(*SeqExpr).Blocks[0].Bindings); got != 1 {
		t.Errorf("want the dead binding dropped, got %d bindings", got)
	}
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
	if len(defs) != 5 || defs[0] != "x" || defs[1] != "c" || defs[3] != "y" || defs[4] != "z" {
		t.Errorf("defs = %v", defs)
	}
	if calls != 1 || bindings != 3 || blocks != 2 {
		t.Errorf("calls=%d bindings=%d blocks=%d", calls, bindings, blocks)
	}
	// 5 var infos + match_cast target + function return.
	if infos != 7 {
		t.Errorf("struct info callbacks = %d, want 7", infos)
	}
	var got []*PrimVar
	InspectStructInfoPrims(z.StructInfo(), func(e PrimExpr) bool {
		if v, ok := e.(*PrimVar); ok {
			got = append(got, v)
		}
		return true
	})
	if len(got) != 1 || got[0] != m {
		t.Errorf("InspectStructInfoPrims found %v", got)
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
	if skipped != 0 {
		t.Errorf("returning false must skip the If's children")
	}
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
	if nf == f || mod.Func("main") != f {
		t.Fatal("rewriting must produce a new function and leave the input alone")
	}
	binds := nf.Body.(*SeqExpr).Blocks[0].Bindings
	if len(binds) != 9 { // 4 originals + 4 extras + the output binding
		t.Fatalf("want 9 bindings, got %d", len(binds))
	}
	if !binds[0].BoundVar().Dataflow || binds[0].BoundVar().StructInfo() == nil {
		t.Errorf("extra bindings are emitted as normalized dataflow vars")
	}
	if again, diags := NormalizeFunction(mod, nf); again != nf || len(diags) > 0 {
		t.Errorf("the rewriter's output must already be normalized")
	}

	// A rewriter that changes nothing returns the same function.
	if same := NewRewriter(mod).Function(f); same != f {
		t.Errorf("a no-op rewriter must return the same function")
	}
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
	if ny == y || ny.Name != "y" {
		t.Fatalf("y must be replaced by a fresh var named y")
	}
	if binds[1].(*VarBinding).Value.(*Tuple).Fields[0] != ny {
		t.Errorf("later uses must be remapped to the fresh var")
	}
	noDiags(t, rw.B.Diagnostics())
}

func TestBindAndSymbolicSubstitution(t *testing.T) {
	f := normalizedChain(t, 3)
	x := f.Params[0]
	d := x.StructInfo().(*TensorInfo).Shape.(*ShapeExpr).Values[0].(*PrimVar)
	c := NewVar("c", f32(I64(7), I64(4)))
	bound := Bind(f, map[*Var]Expr{x: c}).(*Function)
	if len(bound.Params) != 0 {
		t.Errorf("bound params are removed")
	}
	Inspect(bound, func(e Expr) bool {
		if e == x {
			t.Errorf("x survived Bind")
		}
		return true
	})
	if Bind(f, map[*Var]Expr{NewVar("other", nil): c}) != Expr(f) {
		t.Errorf("Bind without occurrences returns its input")
	}

	s := f32(d, Mul(d, I64(2)))
	got := SubstituteSymVars(s, map[*PrimVar]PrimExpr{d: I64(3)})
	if want := sinfoString(f32(I64(3), I64(6))); sinfoString(got) != want {
		t.Errorf("SubstituteSymVars = %s, want %s", sinfoString(got), want)
	}
	if SubstituteSymVars(s, map[*PrimVar]PrimExpr{SymVar("q"): I64(1)}) != StructInfo(s) {
		t.Errorf("substitution without occurrences must return the same info")
	}
	tup := NewTupleInfo(s, NewPrimInfo(Int64))
	if ti := SubstituteSymVars(tup, map[*PrimVar]PrimExpr{d: I64(1)}).(*TupleInfo); ti.Fields[1] != tup.Fields[1] {
		t.Errorf("unchanged tuple fields are shared")
	}
	fi := NewFuncInfo([]StructInfo{s, NewPrimInfo(Int64)}, s, true)
	if got, want := sinfoString(SubstituteSymVars(fi, map[*PrimVar]PrimExpr{d: I64(3)})),
		sinfoString(NewFuncInfo([]StructInfo{f32(I64(3), I64(6)), NewPrimInfo(Int64)}, f32(I64(3), I64(6)), true)); got != want {
		t.Errorf("SubstituteSymVars(callable) = %s, want %s", got, want)
	}
	if defs := DefinableSymVars(NewTupleInfo(s, ShapeInfoOf(d, I64(1)), PrimInfoOf(d))); len(defs) != 1 || defs[0] != d {
		t.Errorf("DefinableSymVars = %v; d*2 defines nothing and d is listed once", defs)
	}

	// Substituting through a function gives fresh params with concrete info.
	sf := SubstituteSymVarsInExpr(f, map[*PrimVar]PrimExpr{d: I64(5)}).(*Function)
	if sf.Params[0] == x || sinfoString(sf.Params[0].StructInfo()) != sinfoString(f32(I64(5), I64(4))) {
		t.Errorf("param info after substitution: %s", sinfoString(sf.Params[0].StructInfo()))
	}
	nf, diags := NormalizeFunction(nil, sf)
	noDiags(t, diags)
	if sinfoString(nf.Ret) != sinfoString(f32(I64(5), I64(4))) {
		t.Errorf("re-normalized Ret = %s", sinfoString(nf.Ret))
	}
}
