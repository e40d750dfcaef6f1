package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/phasec/phasec/diag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDocPhasesWritesFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "P.md")
	var stdout, stderr strings.Builder
	code := run([]string{"doc", "phases", "-o", out}, nil, &stdout, &stderr)
	require.Equal(t, 0, code, "exit code: %s", stderr.String())
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	for _, want := range []string{"## Phases and their invariants", "`WF030` no dataflow blocks remain",
		"### `lower`: ingest, optimize, lower → lower", "1. `LegalizeOps`: replace high-level tensor ops by call_tir to generated PrimFuncs",
		"`ToNonDataflow` before `RemovePurityChecking`: RemovePurityChecking requires NoDataflow", "## Adding a pass"} {
		assert.Contains(t, string(got), want, "generated PHASES.md lacks %q", want)
	}
	assert.Equal(t, 2, run([]string{"doc", "nothing"}, nil, &stdout, &stderr), "doc nothing: exit code")
}

func TestDocCodesGolden(t *testing.T) {
	var stdout, stderr strings.Builder
	require.Equal(t, 0, run([]string{"doc", "codes"}, nil, &stdout, &stderr), stderr.String())
	compareGolden(t, filepath.Join("testdata", "doc", "codes.golden"), stdout.String())
}

// TestDocCodesJSON: --json lists the same families and codes as the text,
// every family with at least one code and a doc.
func TestDocCodesJSON(t *testing.T) {
	var stdout, stderr strings.Builder
	require.Equal(t, 0, run([]string{"doc", "codes", "--json"}, nil, &stdout, &stderr), stderr.String())
	var got []codeFamilyJSON
	require.NoError(t, json.Unmarshal([]byte(stdout.String()), &got))
	assert.Empty(t, cmp.Diff(codeFamilies(), got), "--json differs from the registry (-want +got)")
	prefixes := map[string]bool{}
	for _, f := range got {
		prefixes[f.Prefix] = true
		assert.NotEmpty(t, f.Codes, "family %s", f.Prefix)
		assert.NotEmpty(t, f.Doc, "family %s", f.Prefix)
		assert.True(t, strings.HasPrefix(f.Owner, "github.com/phasec/phasec/"), "family %s owned by %s", f.Prefix, f.Owner)
	}
	for _, want := range []string{"BAR", "CHK", "CTX", "LOW", "NORM", "PIPE", "VMC", "WF", "internal"} {
		assert.True(t, prefixes[want], "family %s is registered", want)
	}
	require.Equal(t, 2, run([]string{"doc", "codes", "extra"}, nil, &stdout, &stderr))
}

// codeLiteral is how a diagnostic code is spelled: a family prefix and three
// digits.
var codeLiteral = regexp.MustCompile(`^[A-Z]{2,5}[0-9]{3}$`)

// buildIgnored reports whether f carries the `//go:build ignore` constraint
// of a code generator run with go run.
func buildIgnored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

// TestEveryCodeIsRegisteredOnce walks the module's Go source (tests
// excluded) for string literals spelled like a diagnostic code: each must
// be a registered code (so no code is reported that phasec doc codes does
// not list) and spelled once, where it is defined (so every use goes
// through the registered name, not a second inline string).
func TestEveryCodeIsRegisteredOnce(t *testing.T) {
	root := filepath.Join("..", "..")
	where := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		if buildIgnored(f) {
			return nil // a generator (go run gen_x.go), not part of phasec
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && codeLiteral.MatchString(s) {
					where[s] = append(where[s], path)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, where, "the walk found no code literals: is the root right?")
	for code, files := range where {
		_, ok := diag.LookupCode(diag.Code(code))
		assert.True(t, ok, "%s (in %v) is not registered: define it with its family's Define", code, files)
		assert.Len(t, files, 1, "%s is spelled in %v: use the name Define returned", code, files)
	}
	for _, c := range diag.Codes() {
		if codeLiteral.MatchString(string(c.Code)) {
			assert.Contains(t, where, string(c.Code), "registered code %s not found in the source walk", c.Code)
		}
	}
}
