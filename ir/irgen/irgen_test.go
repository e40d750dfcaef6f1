package irgen

import (
	"testing"

	"github.com/phasec/phasec/ir"
)

func TestChainNormalizes(t *testing.T) {
	for _, n := range []int{1, 4, 9} {
		mod := MustNormalize(Chain(n))
		f := mod.Func("main")
		seq := f.Body.(*ir.SeqExpr)
		if len(seq.Blocks) != 1 || !seq.Blocks[0].Dataflow || len(seq.Blocks[0].Bindings) != n {
			t.Fatalf("n=%d: want one dataflow block of %d bindings", n, n)
		}
		last := seq.Blocks[0].Bindings[n-1].BoundVar()
		if last.Dataflow || seq.Body != last {
			t.Errorf("n=%d: the last binding must be the block's output and the result", n)
		}
		if got, want := ir.FormatStructInfo(last.StructInfo(), nil), ir.FormatStructInfo(f.Ret, nil); got != want {
			t.Errorf("n=%d: result info %s, want %s", n, got, want)
		}
	}
}

func TestMultiFuncNormalizes(t *testing.T) {
	mod := MustNormalize(MultiFunc(3, 5))
	if mod.Len() != 4 {
		t.Fatalf("want 3 functions and main, got %d", mod.Len())
	}
	main := mod.Func("main")
	binds := main.Body.(*ir.SeqExpr).Blocks[0].Bindings
	if len(binds) != 3 {
		t.Fatalf("main should call each function once")
	}
	// The callee's batch is bound to main's at each call.
	if got, want := ir.FormatStructInfo(binds[2].BoundVar().StructInfo(), nil), ir.FormatStructInfo(main.Ret, nil); got != want {
		t.Errorf("call result %s, want %s", got, want)
	}
}

func TestDeterministic(t *testing.T) {
	a, b := Chain(12), Chain(12)
	if !ir.StructuralEqual(a, b, ir.EqualOptions{}) {
		t.Errorf("two runs of Chain differ: %v", ir.Diff(a, b, ir.EqualOptions{}))
	}
}

func TestDNNGeneratorsNormalize(t *testing.T) {
	for _, sym := range []bool{false, true} {
		opts := DNNOptions{Batch: 4, Symbolic: sym}
		for name, gen := range map[string]func() *ir.Module{
			"resnet":      func() *ir.Module { return ResNet(3, 2, opts) },
			"transformer": func() *ir.Module { return Transformer(2, opts) },
			"chain":       func() *ir.Module { return LegalizedChain(9, opts) },
			"dag":         func() *ir.Module { return RandomDAG(3, 30, opts) },
		} {
			mod := MustNormalize(gen())
			main := mod.Func("main")
			if main == nil {
				t.Fatalf("%s: no main", name)
			}
			if _, bounded := main.Attrs[ir.AttrTIRVarUpperBound]; bounded != sym {
				t.Errorf("%s symbolic=%v: tir_var_upper_bound present=%v", name, sym, bounded)
			}
			if !ir.StructuralEqual(MustNormalize(gen()), mod, ir.EqualOptions{}) {
				t.Errorf("%s: two runs differ", name)
			}
		}
	}
}
