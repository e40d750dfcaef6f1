package transform_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
)

// checkOracle runs pass on every golden input of its directory that has an
// expected output and checks with the reference evaluator that every
// public function computes the same before and after. Inputs listed in skip (main takes
// tensors of unknown rank, which have no random arguments) are left out.
func checkOracle(t *testing.T, pass string, skip ...string) {
	t.Helper()
	dir := filepath.Join("..", "testdata", "passes", pass)
	inputs, err := filepath.Glob(filepath.Join(dir, "*.tvms"))
	require.NoError(t, err)
	checked := 0
	for _, path := range inputs {
		name := strings.TrimSuffix(filepath.Base(path), ".tvms")
		if strings.HasSuffix(name, ".out") || contains(skip, name) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, name+".out.tvms")); err != nil {
			continue // an input expected to fail
		}
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			mod := evaltest.Parse(t, path, string(src))
			p, ok := barrier.Registry.Lookup(pass)
			require.True(t, ok, "no pass %s", pass)
			after := run(t, p, mod)
			checked := 0
			for fname, f := range mod.Functions() {
				if fn, ok := f.(*ir.Function); ok && ir.IsPublic(fn) {
					evaltest.CheckSame(t, mod, after, evaltest.Options{Func: fname})
					checked++
				}
			}
			require.NotZero(t, checked, "no public function to evaluate")
		})
		checked++
	}
	require.NotZero(t, checked, "no input checked in %s", dir)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// bench times p alone on mod: the start state (a wellformed walk) is
// computed once, outside the loop.
func bench(b *testing.B, p *passes.Pass, mod *ir.Module) {
	_, props, err := passes.StartState(mod)
	require.NoError(b, err)
	pc := passes.NewPassContext()
	runtime.GC() // do not charge this size for the garbage of building mod
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pc.Execute(context.Background(), p, mod, props); err != nil {
			b.Fatal(err)
		}
	}
}

// run runs p on mod with a default context, failing the test on error.
func run(t testing.TB, p *passes.Pass, mod *ir.Module) *ir.Module {
	t.Helper()
	out, err := passes.NewPassContext().Run(context.Background(), p, mod)
	require.NoError(t, err)
	return out
}

// runErr runs p on mod with a default context and returns its error.
func runErr(p *passes.Pass, mod *ir.Module) (*ir.Module, error) {
	return passes.NewPassContext().Run(context.Background(), p, mod)
}
