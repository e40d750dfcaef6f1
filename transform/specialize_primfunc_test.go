package transform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/transform"
)

// TestSpecializePrimFuncBadCallSite: a call site contradicting the
// PrimFunc (which the well-formedness check refuses before any pipeline
// runs the pass) is a positioned diagnostic when the pass's function is
// called directly, not a panic.
func TestSpecializePrimFuncBadCallSite(t *testing.T) {
	mod := mustParse(specializeBadShape)
	out, errs := transform.SpecializePrimFuncsAtCallSites(mod)
	assert.Nil(t, out)
	require.True(t, errs.HasErrors())
	assert.Regexp(t, `bench.tvms:16:14: error OPT630: SpecializePrimFuncBasedOnCallSite: the call of copy: x makes n 3 in dimension 1, an earlier buffer made it 2`, errs.Error())
}

// callTIRChain is main calling one PrimFunc n times in a chain.
func callTIRChain(n int) string {
	var b strings.Builder
	b.WriteString(`@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        for i in range(n):
            with T.block("add"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            v0 = x
`)
	for i := range n {
		fmt.Fprintf(&b, "            v%d = R.call_tir(cls.add_one, (v%d,), out_sinfo=R.Tensor((4,), dtype=\"float32\"))\n", i+1, i)
	}
	fmt.Fprintf(&b, "            R.output(v%d)\n        return v%d\n", n, n)
	return b.String()
}

const specializeBadShape = `@I.ir_module
class Module:
    @T.prim_func(private=True)
    def copy(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, n))
        B = T.match_buffer(b, (n, n))
        for i, j in T.grid(n, n):
            with T.block("copy"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.copy, (x,), out_sinfo=R.Tensor((2, 3), dtype="float32"))
        return gv
`
