package syntax

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nestedModule is a module whose one binding's value is expr.
func nestedModule(expr string) string {
	return "@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((2, 3), dtype=\"float32\")):\n" +
		"        y = " + expr + "\n        return y\n"
}

// TestDeepNestingIsADiagnostic: expressions nested (or chained) deeper than
// maxExprDepth are one positioned syntax error, not a fatal stack overflow
// (10 000 levels used to parse slowly; 1 000 000 crashed the process).
func TestDeepNestingIsADiagnostic(t *testing.T) {
	const n = 10000
	tests := []struct {
		name string
		expr string
	}{
		{"parentheses", strings.Repeat("(", n) + "x" + strings.Repeat(")", n)},
		{"brackets", strings.Repeat("[", n) + "x" + strings.Repeat("]", n)},
		{"tuples", strings.Repeat("(", n) + "x," + strings.Repeat(")", n)},
		{"calls", strings.Repeat("R.exp(", n) + "x" + strings.Repeat(")", n)},
		{"subscripts", "x" + strings.Repeat("[0]", n)},
		{"attributes", "x" + strings.Repeat(".a", n)},
		{"unary minus", strings.Repeat("-", n) + "x"},
		{"not", strings.Repeat("not ", n) + "x"},
		{"operator chain", "x" + strings.Repeat(" + x", n)},
		{"power chain", "x" + strings.Repeat(" ** x", n)},
		{"unclosed", strings.Repeat("(", n) + "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Parse("deep.tvms", []byte(nestedModule(tt.expr)))
			var found bool
			for _, d := range diags {
				require.False(t, d.Code == CodeInternal, "internal error: %s", d.Msg)
				if strings.Contains(d.Msg, "nested too deeply") {
					found = true
					// The error points into the expression on line 5, past
					// the bound (each level is at least one character).
					assert.Equal(t, 5, d.Span.Line, "diagnostic at %s, want line 5", d.Span)
					assert.Greater(t, d.Span.Col, maxExprDepth/4, "diagnostic at %s, want a column past the bound", d.Span)
					assert.LessOrEqual(t, d.Span.Col, len("        y = ")+len(tt.expr)+1, "diagnostic at %s, want a column inside the expression", d.Span)
				}
			}
			require.True(t, found, "no nesting diagnostic; got %v", diags)
		})
	}
}

// TestNestingBelowTheBoundParses: the bound leaves room for real programs.
func TestNestingBelowTheBoundParses(t *testing.T) {
	for _, expr := range []string{
		strings.Repeat("(", 300) + "x" + strings.Repeat(")", 300),
		strings.Repeat("R.exp(", 100) + "x" + strings.Repeat(")", 100),
		"x" + strings.Repeat(" + x", 300),
		strings.Repeat("-", 300) + "x",
	} {
		mod, diags := Parse("ok.tvms", []byte(nestedModule(expr)))
		assert.Empty(t, diags, "%.40s...", expr)
		assert.NotNil(t, mod, "%.40s...", expr)
	}
}

// TestDeepNestingCrashesNoProcess: far past the bound, input is rejected
// before any recursion can exhaust the stack (this input used to be a
// fatal "goroutine stack exceeds 1000000000-byte limit").
func TestDeepNestingCrashesNoProcess(t *testing.T) {
	const n = 1_000_000
	src := nestedModule(strings.Repeat("(", n) + "x" + strings.Repeat(")", n))
	_, diags := Parse("huge.tvms", []byte(src))
	require.NotEmpty(t, diags, "want a nesting diagnostic")
	require.Contains(t, diags[0].Msg, "nested too deeply", "want a nesting diagnostic first, got %v", diags)
}
