package ir

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		assert.Equal(t, 1, kinds[k], "%s visits", k)
	}
	assert.Equal(t, 2, nUses, "n seen in the loop extent and the iter var domain")
	assert.Equal(t, 4, buffers, "buffers seen in the read region, write region, store and load")
	loads := 0
	InspectPrim(Add(&BufferLoad{Buffer: f.BufferMap[f.Params[0]]}, Mul(n, n)), func(e PrimExpr) bool {
		if _, ok := e.(*BufferLoad); ok {
			loads++
		}
		return true
	})
	assert.Equal(t, 1, loads, "InspectPrim loads")
}

func TestTIRMutatorNoopIsIdentityWithoutAllocating(t *testing.T) {
	f, _ := addOneFunc()
	m := &TIRMutator{
		PostPrim: func(e PrimExpr) PrimExpr { return e },
		PostStmt: func(s Stmt) Stmt { return s },
		Buffer:   func(b *Buffer) *Buffer { return b },
		Var:      func(v *PrimVar) *PrimVar { return v },
	}
	require.Same(t, f, m.PrimFunc(f), "no-op TIR mutation must return the same PrimFunc")
	assert.Zero(t, testing.AllocsPerRun(20, func() { m.PrimFunc(f) }), "no-op TIR mutation allocated")
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
	require.NotSame(t, f, nf, "buffer map must be remapped in a copy")
	require.Same(t, a2, nf.BufferMap[f.Params[0]], "buffer map must be remapped in a copy")
	require.Same(t, a, f.BufferMap[f.Params[0]], "the original's buffer map must be kept")
	seq := nf.Body.(*SeqStmt)
	loop := seq.Stmts[0].(*For)
	v, _ := IntValue(loop.Extent)
	assert.Equal(t, int64(8), v, "loop extent not substituted")
	assert.Same(t, f.Body.(*SeqStmt).Stmts[1], seq.Stmts[1], "the unchanged Evaluate must be shared")
	blk := loop.Body.(*BlockRealize).Block
	assert.Same(t, a2, blk.Reads[0].Buffer, "read region not remapped")
	assert.NotSame(t, a2, blk.Writes[0].Buffer, "write region remapped wrongly")
	ld := blk.Body.(*BufferStore).Value.(*Binary).A.(*BufferLoad)
	assert.Same(t, a2, ld.Buffer, "load not remapped")
	v, _ = IntValue(blk.IterVars[0].Dom.Extent)
	assert.Equal(t, int64(8), v, "iter var domain not substituted")
	assert.Equal(t, int64(3), SubstituteSymVarsPrim(Add(n, I64(1)), map[*PrimVar]PrimExpr{n: I64(2)}).(*IntImm).Value,
		"SubstituteSymVarsPrim should simplify what changed")
}
