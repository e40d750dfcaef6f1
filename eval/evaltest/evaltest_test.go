package evaltest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

func readModule(t *testing.T, path string) *ir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	return Parse(t, path, string(src))
}

// The lowered corpus modules compute what they computed before lowering:
// the evaluator runs both the dataflow form and the lowered form
// (explicit allocations, direct kernel calls).
func TestLoweringPreservesResults(t *testing.T) {
	for _, path := range []string{
		"../../testdata/models/mlp_legalized.tvms",
		"../../testdata/lowered_legalized_symbolic.tvms",
		"../../testdata/lowered_legalized_static.tvms",
	} {
		t.Run(path, func(t *testing.T) {
			mod := readModule(t, path)
			CheckPipeline(t, mod, "canonicalize,lower", Options{Seed: 3})
		})
	}
}

// A wrong rewrite is caught and the first differing element named.
// fakeT records the failure testify reports (Errorf, then FailNow) instead
// of failing the real test.
type fakeT struct {
	testing.TB
	msg string
}

func (f *fakeT) Errorf(format string, args ...any) { f.msg += fmt.Sprintf(format, args...) }

func (f *fakeT) FailNow() { panic(f) }

func (f *fakeT) Helper() {}

func TestCheckSameNamesFirstDifference(t *testing.T) {
	a := Parse(t, "a", `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 2), dtype="int32")):
        y = R.add(x, x)
        return y
`)
	b := Parse(t, "b", `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 2), dtype="int32")):
        y = R.multiply(x, x)
        return y
`)
	x := mustArgs(t, a)
	ft := &fakeT{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != ft {
				panic(r)
			}
		}()
		CheckSame(ft, a, b, Options{Args: x})
	}()
	// x = [[-8+..]]: RandomArgs gives small integers; find the first
	// element where 2v != v*v (v not in {0, 2}).
	// The error, before the message with the printed module, names it.
	failure, _, _ := strings.Cut(ft.msg, "Messages:")
	require.NotEmpty(t, failure, "CheckSame did not fail")
	assert.Contains(t, failure, "result[", "want a message naming the element")
	assert.Contains(t, failure, "got ", "want a message naming the element")
}

func mustArgs(t *testing.T, mod *ir.Module) []op.Value {
	args, err := eval.RandomArgs(mod.Func("main"), 1, nil, 2)
	require.NoError(t, err)
	return args
}
