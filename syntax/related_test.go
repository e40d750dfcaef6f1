package syntax

import (
	"testing"

	"github.com/phasec/phasec/diag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A name defined twice is reported at the second definition with a note
// at the first: the two positions of the conflict.
func TestDuplicatesCarryTheFirstDefinitionAsANote(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      diag.Diagnostic
	}{{
		name: "duplicate function",
		src: `@I.ir_module
class Module:
    @R.function
    def f(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x

    @R.function
    def f(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x
`,
		want: diag.Diagnostic{Span: diag.Span{File: "m.tvms", Line: 8, Col: 5, EndLine: 8, EndCol: 5}, Msg: "duplicate function f in the module",
			Related: []diag.Related{{Span: diag.Span{File: "m.tvms", Line: 4, Col: 5, EndLine: 4, EndCol: 5}, Msg: "function f is first defined here"}}},
	}, {
		name: "extern function after a def of its name",
		src: `@I.ir_module
class Module:
    @R.function
    def f(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x

    f = R.ExternFunc("f_impl")
`,
		want: diag.Diagnostic{Span: diag.Span{File: "m.tvms", Line: 7, Col: 5, EndLine: 7, EndCol: 7}, Msg: "duplicate function f in the module",
			Related: []diag.Related{{Span: diag.Span{File: "m.tvms", Line: 4, Col: 5, EndLine: 4, EndCol: 5}, Msg: "function f is first defined here"}}},
	}, {
		name: "duplicate parameter",
		src: `@I.ir_module
class Module:
    @R.function
    def f(x: R.Tensor((2,), "float32"), x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x
`,
		want: diag.Diagnostic{Span: diag.Span{File: "m.tvms", Line: 4, Col: 41, EndLine: 4, EndCol: 69}, Msg: "duplicate parameter x",
			Related: []diag.Related{{Span: diag.Span{File: "m.tvms", Line: 4, Col: 11, EndLine: 4, EndCol: 39}, Msg: "parameter x is first declared here"}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := Parse("m.tvms", []byte(tc.src))
			require.Len(t, diags, 1, "%v", diags)
			assert.Equal(t, tc.want, *diags[0])
		})
	}
}

func TestFormatDiagnosticsShowsTheNoteWithItsSourceLine(t *testing.T) {
	src := "def f(x, x):\n    pass\n"
	d := &diag.Diagnostic{Span: diag.Span{File: "m.tvms", Line: 1, Col: 10, EndLine: 1, EndCol: 11}, Msg: "duplicate parameter x",
		Related: []diag.Related{{Span: diag.Span{File: "m.tvms", Line: 1, Col: 7, EndLine: 1, EndCol: 8}, Msg: "parameter x is first declared here"}}}
	assert.Equal(t, `m.tvms:1:10: error: duplicate parameter x
    def f(x, x):
             ^
m.tvms:1:7: note: parameter x is first declared here
    def f(x, x):
          ^
`, FormatDiagnostics(diag.List{d}, []byte(src)))
}
