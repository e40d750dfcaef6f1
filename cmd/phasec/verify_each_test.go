package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// makeVar returns the default of a `NAME ?= value` line of the Makefile, so
// the test follows the demo wherever it goes.
func makeVar(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\s*\?=\s*(\S+)\s*$`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("Makefile has no %s ?= line", name)
	}
	return string(m[1])
}

// The demo pipeline (make demo compiles EXAMPLE with `phasec build --passes
// $(DEMO_PASSES)`) passes --verify-each: every property the contracts claim
// after every pass holds, and the module is the same as without the flag.
func TestDemoVerifyEach(t *testing.T) {
	example := "../../" + makeVar(t, "EXAMPLE")
	pipeline := makeVar(t, "DEMO_PASSES")
	code, plain, errOut := runCLI(t, "", "opt", "--passes", pipeline, example)
	if code != 0 {
		t.Fatalf("make demo's pipeline %s fails on %s: %s", pipeline, example, errOut)
	}
	code, verified, errOut := runCLI(t, "", "opt", "--passes", pipeline, "--verify-each", example)
	if code != 0 {
		t.Fatalf("make demo's pipeline %s with --verify-each: exit %d:\n%s", pipeline, code, errOut)
	}
	if verified != plain {
		t.Error("--verify-each changed the output")
	}
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
		if code, _, errOut := runCLI(t, "", args...); code != 0 {
			t.Errorf("%v: exit %d:\n%s", args, code, errOut)
		}
	}

	code, out, errOut := runCLI(t, "", "opt", "--passes", "AttachGlobalSymbol", "../../testdata/wellformed/fail/build_ops.tvms")
	if code != 1 || out != "" || !strings.Contains(errOut, "CHK004: the module records phase build but does not satisfy it") ||
		!strings.Contains(errOut, "WF035") {
		t.Errorf("false build claim: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}

	build := []string{"opt", "--passes", "canonicalize,lower,build", "../../testdata/models/mlp_legalized.tvms"}
	code, _, plainErr := runCLI(t, "", build...)
	vcode, _, verifyErr := runCLI(t, "", append(build[:3:3], "--verify-each", build[3])...)
	if code != vcode || strings.Contains(verifyErr, "module broken after pass") {
		t.Errorf("build with --verify-each: exit %d (without: %d):\n%s", vcode, code, verifyErr)
	}
	if plainErr != verifyErr {
		t.Errorf("--verify-each changed the build barrier's diagnostics:\n%s\nvs\n%s", verifyErr, plainErr)
	}
}
