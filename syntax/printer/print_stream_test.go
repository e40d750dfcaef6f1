package printer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/phasec/phasec/syntax"
	"github.com/stretchr/testify/require"
)

// chunkWriter records the size of each write.
type chunkWriter struct {
	strings.Builder
	writes []int
}

func (w *chunkWriter) Write(b []byte) (int, error) {
	w.writes = append(w.writes, len(b))
	return w.Builder.Write(b)
}

// bigClosureSource is a module whose main has n bindings, a symbolic
// variable declared above them, and a nested function (capturing x) after
// them, next to a small global function: the nested function's body and
// the declaration must land in the right place however the body is
// chunked.
func bigClosureSource(n int) string {
	var b strings.Builder
	b.WriteString("@I.ir_module\nclass Module:\n")
	b.WriteString("    @R.function\n    def helper(a: R.Tensor((3,), dtype=\"float32\")) -> R.Tensor((3,), dtype=\"float32\"):\n        return a\n\n")
	b.WriteString("    @R.function\n    def main(x: R.Tensor((\"n\", 3), dtype=\"float32\")) -> R.Tensor((\"n\", 3), dtype=\"float32\"):\n")
	b.WriteString("        lv0 = R.add(x, x)\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "        lv%d = R.add(lv%d, x)\n", i, i-1)
	}
	b.WriteString("        @R.function\n        def add_x(z: R.Tensor((\"n\", 3), dtype=\"float32\")) -> R.Tensor((\"n\", 3), dtype=\"float32\"):\n")
	b.WriteString("            s = R.add(z, x)\n            return s\n\n")
	fmt.Fprintf(&b, "        r = add_x(lv%d)\n        return r\n", n-1)
	return b.String()
}

// The printed text does not depend on how the printer chunks it: printing
// with chunking off (one chunk per function, the reference), with the
// default chunk size and with tiny chunks gives the same bytes through
// Print and Fprint, and Fprint writes a large body in many pieces.
func TestPrintChunkingInvisible(t *testing.T) {
	const n = 3000
	mod, diags := syntax.Parse("big.tvms", []byte(bigClosureSource(n)))
	require.Empty(t, diags)

	savedSize, savedCap := chunkSize, chunkCap
	defer func() { chunkSize, chunkCap = savedSize, savedCap }()
	chunkSize, chunkCap = 1<<62, 4<<10
	want := Print(mod)
	require.Contains(t, want, "        n = T.int64()\n        lv0: R.Tensor((n, 3), dtype=\"float32\") = R.add(x, x)\n")
	require.Contains(t, want, "        @R.function\n        def add_x(")
	require.Equal(t, n+1, strings.Count(want, " = R.add("))

	for _, size := range []int{savedSize, 256} {
		chunkSize, chunkCap = size, size+size/16
		require.Equal(t, want, Print(mod), "Print, chunk size %d", size)
		var w chunkWriter
		require.NoError(t, Fprint(&w, mod))
		require.Equal(t, want, w.String(), "Fprint, chunk size %d", size)
		require.Greater(t, len(w.writes), len(want)/(size+size/16+200), "Fprint writes with chunk size %d", size)
	}

	// And the text is canonical: it parses back to itself.
	back, diags := syntax.Parse("back.tvms", []byte(want))
	require.Empty(t, diags)
	require.Equal(t, want, Print(back))
}
