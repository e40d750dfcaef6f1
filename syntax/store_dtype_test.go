package syntax

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStoreDTypeMismatch: a typed value stored into a buffer of another
// dtype is a positioned error, as in TVM. It used to be accepted, and
// A[1] = T.int32(5) into an int64 buffer printed as "A[1] = 5", which
// re-parses as an int64 store: the printer's output did not round-trip.
func TestStoreDTypeMismatch(t *testing.T) {
	src := "@I.ir_module\nclass Module:\n    @T.prim_func\n" +
		"    def f(A: T.Buffer((4,), \"int64\"), B: T.Buffer((4,), \"float32\")):\n" +
		"        A[0] = 5\n" + // a bare literal takes the buffer's dtype
		"        A[1] = T.int32(5)\n" +
		"        B[0] = 1\n" +
		"        B[1] = T.float16(1)\n"
	_, diags := Parse("store.tvms", []byte(src))
	want := map[int]string{6: "dtype int32 into buffer A of dtype int64", 8: "dtype float16 into buffer B of dtype float32"}
	for _, d := range diags {
		frag, ok := want[d.Span.Line]
		if !assert.True(t, ok, "unexpected diagnostic %s", d) || !assert.Contains(t, d.Msg, frag, "unexpected diagnostic %s", d) {
			continue
		}
		assert.Equal(t, 16, d.Span.Col, "%s: want the value's column", d)
		delete(want, d.Span.Line)
	}
	assert.Empty(t, want, "lines with no diagnostic containing the fragment")
}
