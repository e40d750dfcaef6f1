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

// TestAstypeMethod: x.astype(dtype) builds the same module as R.astype(x,
// dtype), inside branches too; a method of a module reference or of R is
// still an error.
func TestAstypeMethod(t *testing.T) {
	const name = "astype_method_in_branches.tvms"
	src, err := os.ReadFile(filepath.Join(corpusRoot, tvmFormsDir, name))
	require.NoError(t, err)
	explicit := strings.NewReplacer(`x.astype("float16")`, `R.astype(x, "float16")`,
		`z.astype(dtype="float16")`, `R.astype(z, dtype="float16")`).Replace(string(src))
	require.NotContains(t, explicit, "= x.astype")
	got := parseOrFail(t, name, src)
	want := parseOrFail(t, name+" (explicit)", []byte(explicit))
	assert.Nil(t, ir.Diff(want, got, ir.EqualOptions{}))

	_, diags := Parse("bad.tvms", []byte(`# from tvm.script import relax as R
@R.function
def main(x: R.Tensor((2,), dtype="float32")):
    y = R.astype.astype(x)
    return y
`))
	require.Len(t, diags, 1, "%v", diags)
	assert.Equal(t, 4, diags[0].Span.Line)
}

// TestDataflowBlockReturns: a return ending a dataflow block builds the
// same function as R.output of the block variables it uses followed by
// the return, as TVM's parser does (test_tvmscript_parser.py checks the
// two structurally equal).
func TestDataflowBlockReturns(t *testing.T) {
	const name = "dataflow_block_returns.tvms"
	src, err := os.ReadFile(filepath.Join(corpusRoot, tvmFormsDir, name))
	require.NoError(t, err)
	const inside = "            return (c, d)\n"
	require.Equal(t, 1, strings.Count(string(src), inside))
	explicit := strings.Replace(string(src), inside, "            R.output(c, d)\n        return (c, d)\n", 1)
	got := parseOrFail(t, name, src)
	want := parseOrFail(t, name+" (explicit)", []byte(explicit))
	assert.Nil(t, ir.Diff(want, got, ir.EqualOptions{}))
}
