package transform_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/syntax/printer"
)

const rewriteTarget = `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((16,), "float32")):
        y = R.add(x, x)
        return y
`

// runRewriter runs PatternMatchingRewriter with the rule file rules on
// rewriteTarget.
func runRewriter(t *testing.T, rules string) *passtest.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.tvms")
	require.NoError(t, os.WriteFile(path, []byte(rules), 0o644))
	return passtest.Execute(barrier.Registry, "main.tvms", []byte(rewriteTarget), fmt.Sprintf("PatternMatchingRewriter{file=%q}", path), passtest.Options{})
}

// TestPatternMatchingRewriterBadRules: the rule files TVM's from_module
// rejects (tests/python/relax/test_dataflow_rewriter.py: a missing or
// non-Relax pattern or replacement, signatures that differ) and those a
// pattern cannot be made of are positioned diagnostics.
func TestPatternMatchingRewriterBadRules(t *testing.T) {
	const add = "    @R.function\n    def pattern(A: R.Tensor((16,), \"float32\")):\n        return A + A\n\n"
	const mul = "    @R.function\n    def replacement(A: R.Tensor((16,), \"float32\")):\n        return A * R.const(2.0, \"float32\")\n\n"
	const head = "@I.ir_module\nclass Rules:\n"
	for _, c := range []struct {
		name, rules, code, msg string
	}{
		{"no pattern", head + mul, "OPT760", "has no function pattern"},
		{"no replacement", head + add, "OPT760", "has no function replacement"},
		{"pattern is a PrimFunc", head + "    @T.prim_func\n    def pattern(A: T.Buffer((16,), \"float32\")):\n        T.evaluate(0)\n\n" + mul,
			"OPT760", "pattern of"},
		{"signatures differ", head + add + "    @R.function\n    def replacement(A: R.Tensor((32,), \"float32\")):\n        return A\n",
			"OPT761", "must have the same signature"},
		{"public subroutine", head + add + mul + "    @R.function\n    def helper(A: R.Tensor((16,), \"float32\")):\n        return A\n",
			"OPT762", "public function helper"},
		{"pattern returns a parameter", head + "    @R.function\n    def pattern(A: R.Tensor((16,), \"float32\")):\n        return A\n\n" +
			"    @R.function\n    def replacement(A: R.Tensor((16,), \"float32\")):\n        return A\n",
			"OPT763", "would match every expression"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runRewriter(t, c.rules)
			require.Error(t, res.Err)
			d := findCode(res.Diags, c.code)
			require.NotNil(t, d, "want %s in %v", c.code, res.Diags)
			assert.Contains(t, d.Msg, c.msg)
			assert.True(t, d.Span.IsValid(), "positioned: %v", d)
			assert.True(t, strings.HasSuffix(d.Span.File, "rules.tvms"), "at the rule file: %v", d.Span)
		})
	}
	res := passtest.Execute(barrier.Registry, "main.tvms", []byte(rewriteTarget), `PatternMatchingRewriter{file="no/such/rules.tvms"}`, passtest.Options{})
	require.Error(t, res.Err)
	assert.NotNil(t, findCode(res.Diags, "OPT760"))
	assert.Contains(t, res.Err.Error(), "cannot read the rule file")
	res = passtest.Execute(barrier.Registry, "main.tvms", []byte(rewriteTarget), `PatternMatchingRewriter`, passtest.Options{})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), `needs file="rules.tvms"`)
}

func findCode(ds diag.List, code string) *diag.Diagnostic {
	for _, d := range ds {
		if string(d.Code) == code {
			return d
		}
	}
	return nil
}

// TestPatternMatchingRewriterRewrites: TVM's first from_module case (an
// add of two (16,) tensors into another computation) rewrites the add and
// keeps the rewritten binding's var.
func TestPatternMatchingRewriterRewrites(t *testing.T) {
	rules := "@I.ir_module\nclass Rules:\n" +
		"    @R.function\n    def pattern(A: R.Tensor((16,), \"float32\"), B: R.Tensor((16,), \"float32\")):\n        C = R.add(A, B)\n        return C\n\n" +
		"    @R.function\n    def replacement(A: R.Tensor((16,), \"float32\"), B: R.Tensor((16,), \"float32\")):\n        D = R.multiply(A, R.const(2.0, \"float32\"))\n        C = R.subtract(D, R.subtract(A, B))\n        return C\n"
	res := runRewriter(t, rules)
	require.NoError(t, res.Err)
	main := res.Output.Func("main")
	require.NotNil(t, main)
	text := printer.Print(res.Output)
	assert.NotContains(t, text, "R.add(")
	assert.Contains(t, text, "y: R.Tensor((16,), dtype=\"float32\") = R.subtract(", "the rewritten binding keeps its var")
	assert.Contains(t, text, "R.multiply(x, R.const(2.0")
}

// TestPatternMatchingRewriterCommutes: as TVM's matcher, a pattern add
// matches an add with its operands swapped, the struct info of each
// parameter deciding which way round (here the scalar comes first in the
// module, last in the pattern); a subtract does not commute.
func TestPatternMatchingRewriterCommutes(t *testing.T) {
	rules := "@I.ir_module\nclass Rules:\n" +
		"    @R.function\n    def pattern(A: R.Tensor((16,), \"float32\"), s: R.Tensor((), \"float32\")):\n        C = R.add(A, s)\n        return C\n\n" +
		"    @R.function\n    def replacement(A: R.Tensor((16,), \"float32\"), s: R.Tensor((), \"float32\")):\n        C = R.subtract(A, R.negative(s))\n        return C\n"
	path := filepath.Join(t.TempDir(), "rules.tvms")
	require.NoError(t, os.WriteFile(path, []byte(rules), 0o644))
	src := `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((16,), "float32"), s: R.Tensor((), "float32")):
        y = R.add(s, x)
        z = R.subtract(s, x)
        return (y, z)
`
	res := passtest.Execute(barrier.Registry, "main.tvms", []byte(src), fmt.Sprintf("PatternMatchingRewriter{file=%q}", path), passtest.Options{})
	require.NoError(t, res.Err)
	text := printer.Print(res.Output)
	assert.NotContains(t, text, "R.add(")
	assert.Contains(t, text, "= R.negative(s)")
	assert.Contains(t, text, "R.subtract(x, ")
	assert.Contains(t, text, "R.subtract(s, x)", "the subtract is left")
}
