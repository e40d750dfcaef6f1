package syntax

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

// TestTVMFormsMatchExplicit parses the starred-argument and dtype= forms of
// testdata/tvm_forms and the same modules written out explicitly, as TVM's
// parser sees them after evaluating the Python (a star spliced, dtype=
// dropped or passed first): the two must build the same IR.
func TestTVMFormsMatchExplicit(t *testing.T) {
	cases := []struct {
		file     string
		replacer *strings.Replacer
	}{
		{"tir_star_arguments.tvms", strings.NewReplacer(
			"T.grid(*A.shape)", "T.grid(16, 8)",
			"T.grid(*(A.shape[0], B.shape[1]))", "T.grid(T.int64(4), T.int64(6))",
			"[*[i], j]", "[i, j]")},
		{"tir_intrinsic_dtype_keyword.tvms", strings.NewReplacer(
			`, dtype="float32")`, ")",
			`T.reinterpret(A[vi], dtype="int32")`, `T.reinterpret("int32", A[vi])`)},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(corpusRoot, tvmFormsDir, c.file))
			require.NoError(t, err)
			explicit := c.replacer.Replace(string(src))
			require.NotEqual(t, string(src), explicit, "the replacements changed nothing")
			require.NotContains(t, explicit, "*A", "a star left in the explicit module")
			got := parseOrFail(t, c.file, src)
			want := parseOrFail(t, c.file+" (explicit)", []byte(explicit))
			assert.Nil(t, ir.Diff(want, got, ir.EqualOptions{}))
		})
	}
}

// TestStarAndDtypeErrors: a star phasec cannot expand statically and a
// dtype= that names no type are positioned errors (the negative corpus,
// testdata/errors/tir_star_dtype_errors.tvms, checks the messages).
func TestStarAndDtypeErrors(t *testing.T) {
	src := `# from tvm.script import tir as T
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.grid(*A):
        A[i] = T.float32(0)
`
	_, diags := Parse("f.tvms", []byte(src))
	require.Len(t, diags, 1, "%v", diags)
	assert.Equal(t, 4, diags[0].Span.Line)
	assert.Equal(t, 22, diags[0].Span.Col, "the error points at the operand")
	assert.Contains(t, diags[0].Msg, "cannot expand the starred name A statically")
}
