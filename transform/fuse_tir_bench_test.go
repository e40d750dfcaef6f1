package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/transform"
)

// fusedGroupsModule is a legalized module of `groups` Primitive functions
// of three call_tir bindings each (add -> exp -> relu, three shared
// kernels), called in a chain from main: 4 bindings per group.
func fusedGroupsModule(groups int) string {
	var src strings.Builder
	src.WriteString(`@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32"), C: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("T_add"):
                vi = T.axis.spatial(T.int64(4), i)
                C[vi] = A[vi] + B[vi]

    @T.prim_func(private=True)
    def exp(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("compute"):
                vi = T.axis.spatial(T.int64(4), i)
                B[vi] = T.exp(A[vi])

    @T.prim_func(private=True)
    def relu(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("compute"):
                vi = T.axis.spatial(T.int64(4), i)
                B[vi] = T.max(A[vi], T.float32(0.0))
`)
	for g := range groups {
		fmt.Fprintf(&src, `
    @R.function(private=True)
    def fused_%d(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"Primitive": 1})
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((4,), dtype="float32"))
            e = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((4,), dtype="float32"))
            gv = R.call_tir(cls.relu, (e,), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(gv)
        return gv
`, g)
	}
	src.WriteString(`
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            v0 = x
`)
	for g := range groups {
		fmt.Fprintf(&src, "            v%d = cls.fused_%d(v%d, y)\n", g+1, g, g)
	}
	fmt.Fprintf(&src, "            R.output(v%d)\n        return v%d\n", groups, groups)
	return src.String()
}

// BenchmarkFuseTIR: 10k and 100k bindings as 2.5k and 25k groups of three
// call_tir bindings plus their call in main, the whole FuseTIR sequence
// (ExpandTupleArguments, RemoveUnusedParameters, FuseTIRInner,
// DeadCodeElimination) and FuseTIRInner alone.
func BenchmarkFuseTIR(b *testing.B) {
	build := func(n int) *ir.Module {
		mod, diags := syntax.Parse("groups.tvms", []byte(fusedGroupsModule(n/4)))
		if len(diags) > 0 {
			b.Fatal(diags[0])
		}
		return irgen.MustNormalize(mod)
	}
	for _, p := range []*passes.Pass{transform.FuseTIR, transform.FuseTIRInner} {
		b.Run(p.Name(), func(b *testing.B) { benchPass(b, p, build) })
	}
}
