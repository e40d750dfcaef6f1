package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptAndBuildWriteTheHTMLView(t *testing.T) {
	in := writeInput(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "opt.html")
	code, _, stderr := runCLI(t, "", "opt", "--passes", "canonicalize,lower", "--html", page, "-o", filepath.Join(dir, "out.tvms"), in)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "wrote "+page)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(b), `data-pass="LegalizeOps"`)
	assert.Contains(t, string(b), `data-step="lower"`)

	page = filepath.Join(dir, "build.html")
	code, _, stderr = runCLI(t, "", "build", "--html", page, "-o", filepath.Join(dir, "m.pvm"), in)
	require.Equal(t, 0, code, stderr)
	b, err = os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(b), `data-pass="VMShapeLower"`)
}

func TestHTMLViewEndsInTheFailingPass(t *testing.T) {
	in := writeInput(t)
	page := filepath.Join(t.TempDir(), "fail.html")
	code, _, stderr := runCLI(t, "", "opt", "--passes", "canonicalize,CLIFail", "--html", page, in)
	require.Equal(t, 1, code, stderr)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	i := strings.Index(string(b), `data-pass="CLIFail"`)
	require.GreaterOrEqual(t, i, 0)
	assert.Contains(t, string(b)[i:], "cli boom")
	assert.Contains(t, string(b)[i-40:i], "failed")
}
