package ir

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

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
		assert.Equal(t, c.want, c.e.DType(), "%s: NewBinary-built DType", c.name)
		assert.Equal(t, c.want, binaryLiteral(c.e).DType(), "%s: literal DType", c.name)
	}
}

// A literal on top of NewBinary-built operands, and the reverse, agree.
func TestBinaryDTypeMixedConstruction(t *testing.T) {
	i := NewPrimVar("i", Int16)
	built := Add(Add(i, i), i)
	lit := &Binary{Op: OpSub, A: built, B: i}
	assert.Equal(t, Int16, lit.DType(), "literal over built operand")
	assert.Equal(t, Int16, Mul(binaryLiteral(built), i).DType(), "built over literal operand")
}

// A Binary literal with a missing operand has no type instead of panicking.
func TestBinaryDTypeNilOperand(t *testing.T) {
	assert.Equal(t, Void, (&Binary{Op: OpAdd}).DType(), "DType of an operand-less literal")
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
