package ir

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// isArithFile reports whether a file of package ir belongs to the symbolic
// arithmetic (see arith.go).
func isArithFile(name string) bool { return strings.HasPrefix(filepath.Base(name), "arith") }

// TestArithBoundary keeps the symbolic arithmetic a separable unit of ir:
// the other files of the package may use only its exported API, never an
// unexported function, type, variable or field declared in an arith*.go
// file. (The arithmetic itself may use all of ir's model.) Were the rest of
// ir to reach into the simplifier, moving the arithmetic to its own
// package would be a rewrite instead of a move.
func TestArithBoundary(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	var files []*ast.File
	arithFiles := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
		if isArithFile(name) {
			arithFiles++
		}
	}
	require.NotZero(t, arithFiles, "no arith*.go files: update isArithFile")

	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	_, err = conf.Check("github.com/phasec/phasec/ir", fset, files, info)
	require.NoError(t, err)

	crossings := map[string]bool{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() == nil || obj.Pkg().Path() != "github.com/phasec/phasec/ir" || obj.Exported() {
			continue
		}
		use, decl := fset.Position(id.Pos()), fset.Position(obj.Pos())
		if !isArithFile(use.Filename) && isArithFile(decl.Filename) {
			crossings[use.Filename+": "+obj.Name()+" (declared in "+decl.Filename+")"] = true
		}
	}
	var list []string
	for c := range crossings {
		list = append(list, c)
	}
	sort.Strings(list)
	require.Empty(t, list, "non-arith files of ir use the arithmetic's internals; use its exported API or move the helper out of arith*.go")
}
