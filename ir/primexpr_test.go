package ir

import "testing"

// binaryLiteral rebuilds e's Binary nodes as literals (no recorded type),
// as code outside NewBinary may build them.
func binaryLiteral(e PrimExpr) PrimExpr {
	if b, ok := e.(*Binary); ok {
		return &Binary{Op: b.Op, A: binaryLiteral(b.A), B: binaryLiteral(b.B)}
	}
	return e
}

func TestBinaryDType(t *testing.T) {
	n := SymVar("n")
	i := NewPrimVar("i", Int32)
	v := NewPrimVar("v", Float32.WithLanes(4))
	p := NewPrimVar("p", Bool)
	cases := []struct {
		name string
		e    PrimExpr
		want DataType
	}{
		{"int64 sum", Add(n, I64(1)), Int64},
		{"int32 product", Mul(i, NewInt(Int32, 3)), Int32},
		{"comparison", NewBinary(OpLT, i, NewInt(Int32, 3)), Bool},
		{"vector comparison", NewBinary(OpEQ, v, v), Bool.WithLanes(4)},
		{"vector sum", Add(v, v), Float32.WithLanes(4)},
		{"logical", NewBinary(OpAnd, p, p), Bool},
		{"sum of a comparison", Add(NewBinary(OpLT, n, n), p), Bool},
		{"nested min over sums", Min(Add(Sub(i, i), i), i), Int32},
	}
	for _, c := range cases {
		if got := c.e.DType(); got != c.want {
			t.Errorf("%s: NewBinary-built DType = %s, want %s", c.name, got, c.want)
		}
		if got := binaryLiteral(c.e).DType(); got != c.want {
			t.Errorf("%s: literal DType = %s, want %s", c.name, got, c.want)
		}
	}
}

// A literal on top of NewBinary-built operands, and the reverse, agree.
func TestBinaryDTypeMixedConstruction(t *testing.T) {
	i := NewPrimVar("i", Int16)
	built := Add(Add(i, i), i)
	lit := &Binary{Op: OpSub, A: built, B: i}
	if got := lit.DType(); got != Int16 {
		t.Errorf("literal over built operand: DType = %s, want int16", got)
	}
	if got := Mul(binaryLiteral(built), i).DType(); got != Int16 {
		t.Errorf("built over literal operand: DType = %s, want int16", got)
	}
}

// A Binary literal with a missing operand has no type instead of panicking.
func TestBinaryDTypeNilOperand(t *testing.T) {
	if got := (&Binary{Op: OpAdd}).DType(); got != Void {
		t.Errorf("DType of an operand-less literal = %s, want void", got)
	}
}

// BenchmarkBinaryDTypeLongChain asks every node of an n-deep left-nested
// sum for its type: linear overall with NewBinary, quadratic if DType
// walked the spine.
func BenchmarkBinaryDTypeLongChain(b *testing.B) {
	n := SymVar("n")
	nodes := make([]PrimExpr, 0, 10_000)
	var e PrimExpr = n
	for range cap(nodes) {
		e = Add(e, n)
		nodes = append(nodes, e)
	}
	b.ResetTimer()
	for range b.N {
		for _, x := range nodes {
			if x.DType() != Int64 {
				b.Fatal("wrong type")
			}
		}
	}
}
