package syntax

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax/printer"
)

// TestMetadataSectionValues reads the constants of the two JSON layouts
// and compares them with the values the test files were written from
// (float32 [[1, 2, 3], [4, 5, 6]] and int64 [7, -8, 9]); a constant
// referenced twice is one object, as one metadata entry is in TVM.
func TestMetadataSectionValues(t *testing.T) {
	read := func(rel string) *ir.Module {
		path := filepath.Join(corpusRoot, rel)
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		return parseOrFail(t, path, src)
	}
	values := func(c *ir.Constant) []float64 {
		out := make([]float64, c.Data.NumElements())
		for i := range out {
			out[i] = c.Data.Float(i)
		}
		return out
	}
	mod := read("tvm_printed/metadata_show_meta.tvms")
	require.NotNil(t, mod.Meta)
	require.Len(t, mod.Meta.Constants, 2)
	c0, c1 := mod.Meta.Constants[0], mod.Meta.Constants[1]
	require.Equal(t, ir.Float32, c0.Data.DType)
	require.Equal(t, []int64{2, 3}, c0.Data.Shape)
	require.Equal(t, []float64{1, 2, 3, 4, 5, 6}, values(c0))
	require.Equal(t, ir.Int64, c1.Data.DType)
	require.Equal(t, []float64{7, -8, 9}, values(c1))
	bs := bindings(t, mod, "main")
	use := func(i int) ir.Expr { return valueOf(t, bs[i]).(*ir.Call).Args[1] }
	require.Same(t, c0, use(0))
	require.Same(t, c0, use(1))
	require.Same(t, c1, use(2))

	ffi := read("tvm_forms/metadata_ffi_layout.tvms")
	require.Len(t, ffi.Meta.Constants, 1)
	require.Equal(t, []float64{7, -8, 9}, values(ffi.Meta.Constants[0]))
}

// TestMetadataRegenerated: once the constants differ from the section's
// (here one is dropped), the printer writes its own section, which reads
// back to the same values.
func TestMetadataRegenerated(t *testing.T) {
	path := filepath.Join(corpusRoot, "tvm_printed/metadata_show_meta.tvms")
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	mod := parseOrFail(t, path, src)
	mod.Meta = &ir.MetaSection{JSON: mod.Meta.JSON, Constants: mod.Meta.Constants[1:]}
	out := printer.Print(mod)
	require.NotEqual(t, string(src), out)
	back := parseOrFail(t, "regenerated.tvms", []byte(out))
	require.Nil(t, ir.Diff(mod, back, ir.EqualOptions{}))
	require.Len(t, back.Meta.Constants, 2)
	require.Equal(t, out, printer.Print(back))
}
