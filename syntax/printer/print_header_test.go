package printer

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrintHeaderPrefixes: the import comments name exactly the prefixes
// the text uses, as TVM's HeaderWrapper does with d->ir_usage. A module
// without PrimFuncs uses T only where its Relax text does; a "T." inside a
// string literal is not a use. Fprint, whose header waits for the chunks
// that decide it, prints the same text with any chunk size.
func TestPrintHeaderPrefixes(t *testing.T) {
	const (
		ir    = "# from tvm.script import ir as I\n"
		tir   = "# from tvm.script import tir as T\n"
		relax = "# from tvm.script import relax as R\n"
	)
	cases := []struct {
		name, body, header string
	}{
		{"relax only", `
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        return x
`, ir + relax},
		{"symbolic vars use T", `
    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        return x
`, ir + tir + relax},
		{"float prim value uses T", `
    @R.function
    def main() -> R.Prim("float32"):
        gv: R.Prim("float32") = R.prim_value(T.float32(1.5))
        return gv
`, ir + tir + relax},
		{"T. in a string is no use", `
    @R.function(pure=False)
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        gv: R.Tensor((2,), dtype="float32") = R.call_packed("T.f", x, sinfo_args=(R.Tensor((2,), dtype="float32"),))
        return gv
`, ir + relax},
		{"tir only", `
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1.0)
`, ir + tir},
		{"empty module", `
    pass
`, ir},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := c.header + "\n@I.ir_module\nclass Module:" + c.body
			mod := parseOrFail(t, "header.tvms", []byte(src))
			assert.Equal(t, src, Print(mod))
			for _, size := range []int{1, 64, 1 << 20} {
				savedSize, savedCap := chunkSize, chunkCap
				chunkSize, chunkCap = size, size+64
				var buf bytes.Buffer
				require.NoError(t, Fprint(&buf, mod))
				chunkSize, chunkCap = savedSize, savedCap
				assert.Equal(t, src, buf.String(), "chunk size %d", size)
			}
		})
	}
}

func TestUsesPrefix(t *testing.T) {
	for text, want := range map[string]bool{
		"n = T.int64()\n":             true,
		"(T.max(n, 1),)":              true,
		"x = R.Tensor\n":              false,
		"lv_T.x":                      false,
		"a.T.b":                       false,
		`R.call_packed("T.f")`:        false,
		`R.str("\"T.f")`:              false,
		"# with T.block(\"root\"):\n": false,
	} {
		assert.Equal(t, want, usesPrefix([]byte(text), 'T'), "%q", text)
	}
	assert.False(t, strings.Contains(scriptHeader(false, false), "tir"))
}
