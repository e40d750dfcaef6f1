package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// renamed is fmtInput with every local name changed and the functions
// swapped: alpha-equivalent, so structurally equal.
const renamed = `@I.ir_module
class Module:
    @R.function(private=True)
    def helper(q: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        r = R.nn.relu(q)
        return r

    @R.function
    def main(inp: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        cls = Module
        out = cls.helper(inp)
        return out
`

// changed differs from fmtInput in helper only (sigmoid for relu).
var changed = strings.Replace(fmtInput, "R.nn.relu(a)", "R.sigmoid(a)", 1)

func TestEqualAlphaEquivalentExits0(t *testing.T) {
	a := writeTemp(t, "a.tvms", fmtInput)
	b := writeTemp(t, "b.tvms", renamed)
	for _, args := range [][]string{
		{"equal", a, b},
		{"equal", a, "-"},
		{"equal", "--map-free-vars", a, b},
		{"equal", a, b, "--function", "main"},
	} {
		stdin := ""
		if args[len(args)-1] == "-" {
			stdin = renamed
		}
		code, out, errOut := runCLI(t, stdin, args...)
		assert.Equal(t, 0, code, "%v: exit code, stderr %q", args, errOut)
		assert.Empty(t, out, "%v: stdout", args)
		assert.Empty(t, errOut, "%v: stderr", args)
	}
}

func TestEqualDifferenceExits1WithPath(t *testing.T) {
	a := writeTemp(t, "a.tvms", fmtInput)
	b := writeTemp(t, "b.tvms", changed)
	code, out, errOut := runCLI(t, "", "equal", a, b)
	require.Equal(t, 1, code, "exit code, stderr %q", errOut)
	require.Empty(t, errOut, "stderr")
	// "path: left vs right", the path leading into helper.
	line := strings.TrimSpace(out)
	path, sides, ok := strings.Cut(line, ": ")
	assert.True(t, ok, "difference not reported as path: left vs right:\n%s", out)
	assert.True(t, strings.HasPrefix(path, "helper"), "difference not reported as path: left vs right:\n%s", out)
	assert.Contains(t, sides, " vs ", "difference not reported as path: left vs right:\n%s", out)
	assert.Contains(t, sides, "relu", "difference not reported as path: left vs right:\n%s", out)
	assert.Contains(t, sides, "sigmoid", "difference not reported as path: left vs right:\n%s", out)
	// Restricted to main, which is the same in both, the modules agree.
	code, out, _ = runCLI(t, "", "equal", "--function", "main", a, b)
	assert.Equal(t, 0, code, "--function main: exit code, stdout %q", out)
}

func TestEqualErrorsExit2(t *testing.T) {
	a := writeTemp(t, "a.tvms", fmtInput)
	bad := writeTemp(t, "bad.tvms", strings.Replace(fmtInput, "R.nn.relu(a)", "R.nn.relu(undefined_var)", 1))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"equal", a}, "usage: phasec equal"},
		{[]string{"equal", a, a, a}, "usage: phasec equal"},
		{[]string{"equal", "--bogus", a, a}, "usage: phasec equal"},
		{[]string{"equal", "-", "-"}, "only one of A and B"},
		{[]string{"equal", a, bad}, "undefined_var"},
		{[]string{"equal", "--function", "nope", a, a}, `no function "nope"`},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, "", c.args...)
		assert.Equal(t, 2, code, "%v: exit code, stderr %q", c.args, errOut)
		assert.Empty(t, out, "%v: stdout", c.args)
		assert.Contains(t, errOut, c.want, "%v: stderr", c.args)
	}
}
