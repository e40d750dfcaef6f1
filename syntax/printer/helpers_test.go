package printer

import (
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"

	"github.com/stretchr/testify/require"
)

// The printer's tests that start from text parse it with syntax.Parse (the
// printer does not import the parser; its tests may).

// header is the import comment block every printed module starts with.
const header = "# from tvm.script import ir as I\n# from tvm.script import tir as T\n# from tvm.script import relax as R\n\n"

func mustParse(t *testing.T, src string) *ir.Module {
	t.Helper()
	mod, diags := syntax.Parse("test.tvms", []byte(src))
	require.Empty(t, diags, "unexpected diagnostics:\n%s", syntax.FormatDiagnostics(diags, []byte(src)))
	return mod
}

func parseOrFail(t *testing.T, name string, src []byte) *ir.Module {
	t.Helper()
	mod, diags := syntax.Parse(name, src)
	require.False(t, diags.HasErrors(), "parse %s:\n%s", name, syntax.FormatDiagnostics(diags, src))
	require.NotNil(t, mod, "parse %s", name)
	return mod
}
