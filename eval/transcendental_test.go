package eval

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/syntax"
)

func TestUsesTranscendental(t *testing.T) {
	kernel := func(name, value string) string {
		return `
    @T.prim_func(private=True)
    def ` + name + `(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            B[i] = ` + value + `
`
	}
	const call = `gv = R.call_tir(cls.k, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))`
	for _, c := range []struct {
		name, funcs, body string
		want              bool
	}{
		{"relax op", "", "gv = R.exp(x)", true},
		{"norm op", "", "gv = R.nn.rms_norm(x, x)", true},
		{"arithmetic op", "", "gv = R.add(x, x)", false},
		{"tir intrinsic", kernel("k", "T.tanh(A[i])"), call, true},
		{"tir arithmetic", kernel("k", "A[i] * T.float32(2)"), call, false},
		{"kernel named after the op", kernel("k", "A[i]") + kernel("softmax", "A[i]"), call, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "@I.ir_module\nclass Module:" + c.funcs + `
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")):
        cls = Module
        ` + c.body + `
        return gv
`
			mod, diags := syntax.Parse("m.tvms", []byte(src))
			require.Empty(t, diags)
			assert.Equal(t, c.want, UsesTranscendental(mod))
		})
	}
}
