package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/transform"
)

// The benchmarks run each pass on modules of 10k and 100k bindings, every
// binding affected; time and allocations per run must grow linearly (see
// measureLinear).

// BenchmarkBindParams binds w and b of irgen's chain: every use is
// rewritten and the function re-normalized.
func BenchmarkBindParams(b *testing.B) {
	arrays := []tensor.Named{
		{Name: "w", Tensor: tensor.New(tensor.Float32, irgen.Width, irgen.Width)},
		{Name: "b", Tensor: tensor.New(tensor.Float32, irgen.Width)},
	}
	benchLinear(b, func(n int) *ir.Module { return irgen.MustNormalize(irgen.Chain(n)) }, func(b *testing.B, mod *ir.Module) {
		out, errs := transform.BindParamArrays(mod, "main", "bench", arrays)
		if errs.HasErrors() || len(out.Func("main").Params) != 1 {
			b.Fatalf("BindParams: %v", errs)
		}
	})
}

// BenchmarkBindSymbolicVars binds batch in irgen's chain: the struct info
// of every binding changes.
func BenchmarkBindSymbolicVars(b *testing.B) {
	benchLinear(b, func(n int) *ir.Module { return irgen.MustNormalize(irgen.Chain(n)) }, func(b *testing.B, mod *ir.Module) {
		out, errs := transform.BindSymbolicVarsModule(mod, map[string]any{"batch": "4"}, "main")
		if errs.HasErrors() || out == mod {
			b.Fatalf("BindSymbolicVars: %v", errs)
		}
	})
}

// BenchmarkDecomposeOps decomposes a chain of batch_norm, tuple-get and
// layer_norm bindings for training (every composite op decomposed).
func BenchmarkDecomposeOps(b *testing.B) {
	benchPass(b, transform.DecomposeOpsForTraining, func(n int) *ir.Module { return normChain(b, n) })
}

// normChain parses a function of about n bindings: groups of batch_norm,
// its first result, layer_norm of that.
func normChain(b *testing.B, n int) *ir.Module {
	var src strings.Builder
	src.WriteString(`@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 16), dtype="float32"), g: R.Tensor((16,), dtype="float32")):
        with R.dataflow():
`)
	prev := "x"
	for i := 0; i+3 <= n; i += 3 {
		fmt.Fprintf(&src, "            bn%d = R.nn.batch_norm(%s, g, g, g, g, axis=1)\n", i, prev)
		fmt.Fprintf(&src, "            t%d = bn%d[0]\n", i, i)
		fmt.Fprintf(&src, "            ln%d = R.nn.layer_norm(t%d, g, g, axes=[-1])\n", i, i)
		prev = fmt.Sprintf("ln%d", i)
	}
	fmt.Fprintf(&src, "            gv = %s\n            R.output(gv)\n        return gv\n", prev)
	mod, diags := syntax.Parse("chain", []byte(src.String()))
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	return mod
}
