package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
)

// TestUpdateParamStructInfoBadOptions: struct info that is no TVMScript
// annotation, or not a string, is refused when the pipeline is built,
// at the option.
func TestUpdateParamStructInfoBadOptions(t *testing.T) {
	requireBadPipelines(t, map[string]string{
		`UpdateParamStructInfo{sinfo={"x": "R.Tensor((4,), 'float32'"}}`: `pipeline:1:1: error PIPE002: pass UpdateParamStructInfo: option sinfo: .*struct info \{x: R.Tensor\(\(4,\), 'float32'\} does not parse`,
		`UpdateParamStructInfo{sinfo={"x": 4}}`:                          `pipeline:1:1: error PIPE002: pass UpdateParamStructInfo: option sinfo: .*parameter x: want struct info as a TVMScript string, got 4`,
		`UpdateParamStructInfo{sinfo=["x"]}`:                             `pipeline:1:1: error PIPE002: pass UpdateParamStructInfo: option sinfo: .*want a JSON object from parameter name to struct info`,
	})
}

// TestUpdateParamStructInfoSharesSymbolicVars: names given in several
// annotations are one variable, shared with the function's own.
func TestUpdateParamStructInfoSharesSymbolicVars(t *testing.T) {
	mod := irgen.MustNormalize(mustParse(`@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((4,), "float32"), b: R.Tensor((4,), "float32"), c: R.Tensor(("m",), "float32")) -> R.Tensor((4,), "float32"):
        return R.add(a, b)
`))
	out, err := runPipeline(t, `UpdateParamStructInfo{sinfo={"a": "R.Tensor(('m',), 'float32')", "b": "R.Tensor(('m',), 'float32')"}}`, mod)
	require.NoError(t, err)
	f := out.Func("main")
	dimOf := func(i int) ir.PrimExpr {
		dims, ok := f.Params[i].StructInfo().(*ir.TensorInfo).Dims()
		require.True(t, ok)
		return dims[0]
	}
	assert.Same(t, dimOf(2), dimOf(0), "a's m is c's")
	assert.Same(t, dimOf(2), dimOf(1), "b's m is c's")
	assert.Equal(t, `R.Tensor((m,), dtype="float32")`, f.Ret.(*ir.TensorInfo).String())
}

// wideParamsChain is a function of n parameters of shape (2,), each added
// to a running value: n bindings.
func wideParamsChain(n int) *ir.Module {
	var b strings.Builder
	b.WriteString("@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((2,), \"float32\")")
	for i := range n {
		fmt.Fprintf(&b, ", w%d: R.Tensor((2,), \"float32\")", i)
	}
	b.WriteString(") -> R.Tensor((2,), \"float32\"):\n        with R.dataflow():\n            v0 = x\n")
	for i := range n {
		fmt.Fprintf(&b, "            v%d = R.add(v%d, w%d)\n", i+1, i, i)
	}
	fmt.Fprintf(&b, "            R.output(v%d)\n        return v%d\n", n, n)
	return irgen.MustNormalize(mustParse(b.String()))
}
