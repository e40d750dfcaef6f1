package vm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuiltinsMatchTheABI: the VM registers exactly the builtins vm/abi
// names, so the compiler can emit every name the contract lists and the
// VM registers nothing the contract does not state.
func TestBuiltinsMatchTheABI(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "abi/abi.go", nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if !strings.HasPrefix(id.Name, "Builtin") {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				require.True(t, ok, "abi.%s is not a string literal", id.Name)
				name, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				names = append(names, name)
			}
		}
	}
	require.NotEmpty(t, names)
	for _, n := range names {
		assert.NotNil(t, LookupBuiltin(n), "vm/abi names %s, the VM does not register it", n)
	}
	var registered []string
	for _, n := range Builtins() {
		if !strings.HasPrefix(n, "test.") { // this package's tests register those
			registered = append(registered, n)
		}
	}
	assert.ElementsMatch(t, names, registered, "the registered builtins and vm/abi's differ")
}
