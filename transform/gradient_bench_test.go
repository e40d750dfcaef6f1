package transform_test

import (
	"fmt"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/syntax"
)

// gradientChain is a loss of n bindings: a chain cycling through matmul,
// add (broadcast), relu and multiply over (4, 4), summed at the end. Its
// adjoint has about three bindings per forward binding.
func gradientChain(n int) *ir.Module {
	var src strings.Builder
	src.WriteString(`@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 4), "float32"), w: R.Tensor((4, 4), "float32"), b: R.Tensor((4,), "float32")):
        with R.dataflow():
            v0 = x
`)
	ops := []string{"R.matmul(v%d, w)", "R.add(v%d, b)", "R.nn.relu(v%d)", "R.multiply(v%d, x)"}
	for i := 1; i < n-1; i++ {
		fmt.Fprintf(&src, "            v%d = "+ops[i%4]+"\n", i, i-1)
	}
	fmt.Fprintf(&src, "            gv = R.sum(v%d)\n            R.output(gv)\n        return gv\n", n-2)
	mod, diags := syntax.Parse("chain.tvms", []byte(src.String()))
	if len(diags) > 0 {
		panic(diags[0])
	}
	return irgen.MustNormalize(mod)
}
