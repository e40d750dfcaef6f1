package main

import (
	"strings"
	"testing"
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
		if code != 0 || out != "" || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

func TestEqualDifferenceExits1WithPath(t *testing.T) {
	a := writeTemp(t, "a.tvms", fmtInput)
	b := writeTemp(t, "b.tvms", changed)
	code, out, errOut := runCLI(t, "", "equal", a, b)
	if code != 1 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// "path: left vs right", the path leading into helper.
	line := strings.TrimSpace(out)
	path, sides, ok := strings.Cut(line, ": ")
	if !ok || !strings.HasPrefix(path, "helper") || !strings.Contains(sides, " vs ") ||
		!strings.Contains(sides, "relu") || !strings.Contains(sides, "sigmoid") {
		t.Errorf("difference not reported as path: left vs right:\n%s", out)
	}
	// Restricted to main, which is the same in both, the modules agree.
	if code, out, _ := runCLI(t, "", "equal", "--function", "main", a, b); code != 0 {
		t.Errorf("--function main: exit %d, stdout %q", code, out)
	}
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
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want it to mention %q)", c.args, code, out, errOut, c.want)
		}
	}
}
