package ir

import "testing"

// addOne builds: for i in range(n): B[i] = A[i] + 1 (in a block), the
// shape n symbolic.
func addOneFunc() (*PrimFunc, *PrimVar) {
	n := SymVar("n")
	a := NewBuffer("A", []PrimExpr{n}, Float32)
	b := NewBuffer("B", []PrimExpr{n}, Float32)
	i := NewPrimVar("i", Int64)
	vi := NewPrimVar("vi", Int64)
	store := &BufferStore{Buffer: b, Indices: []PrimExpr{vi},
		Value: Add(&BufferLoad{Buffer: a, Indices: []PrimExpr{vi}}, NewFloat(Float32, 1))}
	blk := &Block{Name: "add", IterVars: []*IterVar{{Var: vi, Dom: Range{Min: I64(0), Extent: n}}},
		Reads:  []BufferRegion{{Buffer: a, Region: []Range{{Min: vi, Extent: I64(1)}}}},
		Writes: []BufferRegion{{Buffer: b, Region: []Range{{Min: vi, Extent: I64(1)}}}},
		Body:   store}
	loop := &For{Var: i, Min: I64(0), Extent: n, Body: &BlockRealize{IterValues: []PrimExpr{i}, Block: blk}}
	body := &SeqStmt{Stmts: []Stmt{loop, &Evaluate{Value: I64(0)}}}
	pa, pb := NewPrimVar("a", Handle), NewPrimVar("b", Handle)
	return &PrimFunc{Params: []*PrimVar{pa, pb}, BufferMap: map[*PrimVar]*Buffer{pa: a, pb: b}, Body: body}, n
}

func TestWalkStmtVisitsAllNodes(t *testing.T) {
	f, n := addOneFunc()
	kinds := map[string]int{}
	nUses, buffers := 0, 0
	WalkStmt(f.Body, &StmtVisitor{
		Stmt: func(s Stmt) bool {
			switch s.(type) {
			case *For:
				kinds["for"]++
			case *BlockRealize:
				kinds["realize"]++
			case *Block:
				kinds["block"]++
			case *BufferStore:
				kinds["store"]++
			case *Evaluate:
				kinds["eval"]++
			}
			return true
		},
		Prim: func(e PrimExpr) bool {
			if e == n {
				nUses++
			}
			return true
		},
		Buffer: func(*Buffer) { buffers++ },
	})
	for _, k := range []string{"for", "realize", "block", "store", "eval"} {
		if kinds[k] != 1 {
			t.Errorf("%s visited %d times", k, kinds[k])
		}
	}
	if nUses != 2 { // loop extent and iter var domain
		t.Errorf("n seen %d times, want 2", nUses)
	}
	if buffers != 4 { // read region, write region, store, load
		t.Errorf("buffers seen %d times, want 4", buffers)
	}
	loads := 0
	InspectPrim(Add(&BufferLoad{Buffer: f.BufferMap[f.Params[0]]}, Mul(n, n)), func(e PrimExpr) bool {
		if _, ok := e.(*BufferLoad); ok {
			loads++
		}
		return true
	})
	if loads != 1 {
		t.Errorf("InspectPrim loads = %d", loads)
	}
}

func TestTIRMutatorNoopIsIdentityWithoutAllocating(t *testing.T) {
	f, _ := addOneFunc()
	m := &TIRMutator{
		PostPrim: func(e PrimExpr) PrimExpr { return e },
		PostStmt: func(s Stmt) Stmt { return s },
		Buffer:   func(b *Buffer) *Buffer { return b },
		Var:      func(v *PrimVar) *PrimVar { return v },
	}
	if m.PrimFunc(f) != f {
		t.Fatal("no-op TIR mutation must return the same PrimFunc")
	}
	if allocs := testing.AllocsPerRun(20, func() { m.PrimFunc(f) }); allocs != 0 {
		t.Errorf("no-op TIR mutation allocated %.0f times", allocs)
	}
}

func TestTIRMutatorSubstitutesAndRemapsBuffers(t *testing.T) {
	f, n := addOneFunc()
	a := f.BufferMap[f.Params[0]]
	a2 := NewBuffer("A2", []PrimExpr{I64(8)}, Float32)
	m := &TIRMutator{
		PostPrim: func(e PrimExpr) PrimExpr {
			if e == n {
				return I64(8)
			}
			return e
		},
		Buffer: func(b *Buffer) *Buffer {
			if b == a {
				return a2
			}
			return b
		},
	}
	nf := m.PrimFunc(f)
	if nf == f || nf.BufferMap[f.Params[0]] != a2 || f.BufferMap[f.Params[0]] != a {
		t.Fatal("buffer map must be remapped in a copy")
	}
	seq := nf.Body.(*SeqStmt)
	loop := seq.Stmts[0].(*For)
	if v, _ := IntValue(loop.Extent); v != 8 {
		t.Errorf("loop extent not substituted")
	}
	if seq.Stmts[1] != f.Body.(*SeqStmt).Stmts[1] {
		t.Errorf("the unchanged Evaluate must be shared")
	}
	blk := loop.Body.(*BlockRealize).Block
	if blk.Reads[0].Buffer != a2 || blk.Writes[0].Buffer == a2 {
		t.Errorf("regions remapped wrongly")
	}
	if ld := blk.Body.(*BufferStore).Value.(*Binary).A.(*BufferLoad); ld.Buffer != a2 {
		t.Errorf("load not remapped")
	}
	if v, _ := IntValue(blk.IterVars[0].Dom.Extent); v != 8 {
		t.Errorf("iter var domain not substituted")
	}
	if SubstituteSymVarsPrim(Add(n, I64(1)), map[*PrimVar]PrimExpr{n: I64(2)}).(*IntImm).Value != 3 {
		t.Errorf("SubstituteSymVarsPrim should simplify what changed")
	}
}
