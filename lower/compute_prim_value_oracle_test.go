package lower_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/syntax/printer"
)

// ComputePrimValue keeps what a module computes: the host PrimFuncs it
// generates end in T.ret, and the reference evaluator runs them.
func TestComputePrimValueOracle(t *testing.T) {
	mod := evaltest.Parse(t, "prim.tvms", `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "m"), dtype="float32")) -> R.Prim("int64"):
        n = T.int64()
        m = T.int64()
        p = R.prim_value(n * m + T.int64(7))
        q = R.prim_value(T.floordiv(n * T.int64(5), m))
        return q
`)
	lowered := evaltest.CheckPipeline(t, mod, "canonicalize,lower", evaltest.Options{Dims: map[string]int64{"n": 7, "m": 3}})
	out := evaltest.CheckPipeline(t, lowered, "ComputePrimValue", evaltest.Options{Dims: map[string]int64{"n": 7, "m": 3}})
	require.Contains(t, printer.Print(out), "T.ret(", "ComputePrimValue generated no host function")
}
