package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// makeVar returns the default of a `NAME ?= value` line of the Makefile, so
// the test follows the demo wherever it goes.
func makeVar(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^` + name + `\s*\?=\s*(\S+)\s*$`).FindSubmatch(src)
	require.NotNil(t, m, "Makefile has no %s ?= line", name)
	return string(m[1])
}

// The demo pipeline (make demo compiles EXAMPLE with `phasec build --passes
// $(DEMO_PASSES)`) passes --verify-each: every property the contracts claim
// after every pass holds, and the module is the same as without the flag.
func TestDemoVerifyEach(t *testing.T) {
	example := "../../" + makeVar(t, "EXAMPLE")
	pipeline := makeVar(t, "DEMO_PASSES")
	code, plain, errOut := runCLI(t, "", "opt", "--passes", pipeline, example)
	require.Equal(t, 0, code, "make demo's pipeline %s fails on %s: %s", pipeline, example, errOut)
	code, verified, errOut := runCLI(t, "", "opt", "--passes", pipeline, "--verify-each", example)
	require.Equal(t, 0, code, "make demo's pipeline %s with --verify-each: exit code:\n%s", pipeline, errOut)
	assert.Equal(t, plain, verified, "--verify-each changed the output")
}

// The commands of issue 15: pipelines that succeed without --verify-each
// succeed with it, a false phase claim is refused before any pass, and the
// build barrier on the example stops for the same reason with or without
// --verify-each (a pending pass, never a broken contract).
func TestIssue15Commands(t *testing.T) {
	for _, args := range [][]string{
		{"opt", "--passes", "canonicalize,lower", "--verify-each", "../../testdata/models/mlp_legalized.tvms"},
		{"opt", "--passes", "canonicalize", "--verify-each", "../../testdata/relax_closure_capture.tvms"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		assert.Equal(t, 0, code, "%v: exit code:\n%s", args, errOut)
	}

	code, out, errOut := runCLI(t, "", "opt", "--passes", "AttachGlobalSymbol", "../../testdata/wellformed/fail/build_ops.tvms")
	assert.Equal(t, 1, code, "false build claim: exit code, stderr:\n%s", errOut)
	assert.Empty(t, out, "false build claim: stdout")
	assert.Contains(t, errOut, "CHK004: the module records phase build but does not satisfy it", "false build claim: stderr")
	assert.Contains(t, errOut, "WF035", "false build claim: stderr")

	build := []string{"opt", "--passes", "canonicalize,lower,build", "../../testdata/models/mlp_legalized.tvms"}
	code, _, plainErr := runCLI(t, "", build...)
	vcode, _, verifyErr := runCLI(t, "", append(build[:3:3], "--verify-each", build[3])...)
	assert.Equal(t, code, vcode, "build with --verify-each: exit code (want the same as without):\n%s", verifyErr)
	assert.NotContains(t, verifyErr, "module broken after pass", "build with --verify-each")
	assert.Equal(t, plainErr, verifyErr, "--verify-each changed the build barrier's diagnostics")
}
