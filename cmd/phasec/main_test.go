package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpListsCommands(t *testing.T) {
	code, out, _ := runCLI(t, "", "help")
	require.Equal(t, 0, code, "exit code")
	for _, c := range commands {
		assert.Contains(t, out, "  "+c.name+" ", "help does not list %q", c.name)
	}
}

func TestUnknownCommand(t *testing.T) {
	code, out, errOut := runCLI(t, "", "frobnicate")
	assert.Equal(t, 2, code, "exit code")
	assert.Empty(t, out, "unexpected stdout")
	assert.Contains(t, errOut, `unknown command "frobnicate"`, "stderr lacks diagnosis")
	assert.Contains(t, errOut, "usage: phasec", "stderr lacks usage")
}

func TestNoArgs(t *testing.T) {
	code, _, errOut := runCLI(t, "")
	assert.Equal(t, 2, code, "exit code, stderr %q", errOut)
	assert.Contains(t, errOut, "usage:")
}
