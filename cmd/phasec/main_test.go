package main

import (
	"bytes"
	"strings"
	"testing"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpListsCommands(t *testing.T) {
	code, out, _ := runCLI(t, "", "help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, c := range commands {
		if !strings.Contains(out, "  "+c.name+" ") {
			t.Errorf("help does not list %q:\n%s", c.name, out)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	code, out, errOut := runCLI(t, "", "frobnicate")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if out != "" {
		t.Errorf("unexpected stdout %q", out)
	}
	if !strings.Contains(errOut, `unknown command "frobnicate"`) || !strings.Contains(errOut, "usage: phasec") {
		t.Errorf("stderr lacks diagnosis and usage:\n%s", errOut)
	}
}

func TestNoArgs(t *testing.T) {
	if code, _, errOut := runCLI(t, ""); code != 2 || !strings.Contains(errOut, "usage:") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
