package semcheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/syntax"
)

// TestEvaluable: a module is skipped when its calls are at the VM's level
// (an op of category CatVM, an extern VM builtin), whatever its text says.
func TestEvaluable(t *testing.T) {
	cases := []struct {
		name string
		body string
		want bool
	}{
		{"tensor ops", `y = R.add(x, x)
        return y`, true},
		{"a VM-level op", `s = R.vm.alloc_storage(R.shape([16]), R.prim_value(0), R.dtype("float32"), R.str("global"))
        return x`, false},
		{"a VM builtin", `s = R.call_packed("vm.builtin.shape_of", x, sinfo_args=(R.Shape(ndim=1),))
        return x`, false},
		{"VM names in a string only", `R.print(x, format="vm.builtin. and R.vm. are only text here")
        return x`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := `# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        ` + c.body + "\n"
			mod, diags := syntax.Parse("evaluable.tvms", []byte(src))
			require.Empty(t, diags)
			assert.Equal(t, c.want, Evaluable(mod))
		})
	}
}
