package syntax

import (
	"strings"
	"testing"
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
				if d.Code == CodeInternal {
					t.Fatalf("internal error: %s", d.Msg)
				}
				if strings.Contains(d.Msg, "nested too deeply") {
					found = true
					// The error points into the expression on line 5, past
					// the bound (each level is at least one character).
					if d.Span.Line != 5 || d.Span.Col <= maxExprDepth/4 || d.Span.Col > len("        y = ")+len(tt.expr)+1 {
						t.Errorf("diagnostic at %s, want line 5 inside the expression", d.Span)
					}
				}
			}
			if !found {
				t.Fatalf("no nesting diagnostic; got %v", diags)
			}
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
		if len(diags) > 0 || mod == nil {
			t.Errorf("%.40s...: %v", expr, diags)
		}
	}
}

// TestDeepNestingCrashesNoProcess: far past the bound, input is rejected
// before any recursion can exhaust the stack (this input used to be a
// fatal "goroutine stack exceeds 1000000000-byte limit").
func TestDeepNestingCrashesNoProcess(t *testing.T) {
	const n = 1_000_000
	src := nestedModule(strings.Repeat("(", n) + "x" + strings.Repeat(")", n))
	_, diags := Parse("huge.tvms", []byte(src))
	if len(diags) == 0 || !strings.Contains(diags[0].Msg, "nested too deeply") {
		t.Fatalf("want a nesting diagnostic first, got %v", diags)
	}
}
