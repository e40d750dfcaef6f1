package ir

import (
	"fmt"
	"testing"
)

// benchFunc builds a Relax function of n bindings, a chain of calls
//
//	def main(x: R.Tensor((s, 4), "float32"), y: R.Tensor((s, 4), "float32")):
//	    lv0 = R.add(x, y)
//	    lv1 = R.multiply(lv0, x)   # alternating add / multiply
//	    lv2 = R.add(lv1, lv0)
//	    ...
//	    return lv{n-1}
//
// with struct info set by hand on every var. prefix renames every variable.
func benchFunc(n int, prefix string) *Function {
	add, mul := testOp("relax.add"), testOp("relax.multiply")
	s := SymVar(prefix + "s")
	ti := TensorInfoOf(Float32, s, I64(4))
	x := NewVar(prefix+"x", ti)
	y := NewVar(prefix+"y", ti)
	bindings := make([]Binding, n)
	prev, prev2 := x, y
	for i := range n {
		op := add
		if i%2 == 1 {
			op = mul
		}
		call := NewCall(op, prev, prev2)
		call.SetStructInfo(ti)
		v := NewVar(fmt.Sprintf("%slv%d", prefix, i), ti)
		bindings[i] = NewVarBinding(v, call)
		prev, prev2 = v, prev
	}
	return &Function{
		Params: []*Var{x, y},
		Body:   &SeqExpr{Blocks: []*BindingBlock{{Bindings: bindings}}, Body: prev},
		Ret:    ti,
		Pure:   true,
		Attrs:  Attrs{AttrGlobalSymbol: "main"},
	}
}

var benchSizes = []int{1000, 10000, 100000}

func BenchmarkStructuralEqual(b *testing.B) {
	for _, n := range benchSizes {
		f, g := benchFunc(n, "a"), benchFunc(n, "b")
		b.Run(fmt.Sprintf("bindings=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !StructuralEqual(f, g, EqualOptions{}) {
					b.Fatal("not equal")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/binding")
		})
	}
}

func BenchmarkStructuralHash(b *testing.B) {
	for _, n := range benchSizes {
		f := benchFunc(n, "a")
		b.Run(fmt.Sprintf("bindings=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				StructuralHash(f)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/binding")
		})
	}
}
