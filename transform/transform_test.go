package transform_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes/passtest"
)

// goldens maps each golden directory under testdata/passes to the pipeline
// its inputs run.
var goldens = map[string]string{
	"DeadCodeElimination":                        "DeadCodeElimination",
	"DeadCodeElimination/entry_foo":              `DeadCodeElimination{entry_functions=["foo"]}`,
	"DeadCodeElimination/entry_main":             `DeadCodeElimination{entry_functions=["main"]}`,
	"DeadCodeElimination/bad_entry":              `DeadCodeElimination{entry_functions=["mian"]}`,
	"DeadCodeElimination/canonicalized":          "canonicalize,DeadCodeElimination",
	"EliminateCommonSubexpr":                     "EliminateCommonSubexpr",
	"ConvertToDataflow":                          "ConvertToDataflow",
	"TopologicalSort":                            "TopologicalSort",
	"TopologicalSort/depth_first_from_inputs":    `TopologicalSort{order=depth-first,direction=from-inputs}`,
	"TopologicalSort/depth_first_from_outputs":   `TopologicalSort{order=depth-first,direction=from-outputs}`,
	"TopologicalSort/breadth_first_from_inputs":  `TopologicalSort{order=breadth-first,direction=from-inputs}`,
	"TopologicalSort/breadth_first_from_outputs": `TopologicalSort{order=breadth-first,direction=from-outputs}`,
	"ConvertToDataflow/min_size_3":               "ConvertToDataflow{min_size=3}",
	"EliminateCommonSubexpr/call_only":           "EliminateCommonSubexpr{call_only=true}",
	"EliminateCommonSubexpr/with_dce":            "EliminateCommonSubexpr,DeadCodeElimination",
}

func TestGoldens(t *testing.T) {
	for dir, pipeline := range goldens {
		t.Run(dir, func(t *testing.T) {
			passtest.Run(t, barrier.Registry, "../testdata/passes/"+dir, pipeline)
		})
	}
}

// TestGoldensCompute is the semantic oracle on the golden inputs: every
// public function the evaluator can run (on random arguments) computes the
// same before and after the pass. Each pass must have evaluated cases.
func TestGoldensCompute(t *testing.T) {
	evaluated := map[string]int{}
	for dir, pipeline := range goldens {
		pass := strings.SplitN(dir, "/", 2)[0]
		inputs, err := passtest.Inputs("../testdata/passes/" + dir)
		require.NoError(t, err)
		for _, path := range inputs {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			if strings.Contains(string(src), "# want") {
				continue
			}
			t.Run(dir+"/"+filepath.Base(path), func(t *testing.T) {
				before := evaltest.Parse(t, path, string(src))
				res := passtest.Execute(barrier.Registry, path, src, pipeline, passtest.Options{})
				require.NoError(t, res.Err)
				for _, name := range before.Names() {
					f := before.Func(name)
					if f == nil || !ir.IsPublic(f) || res.Output.Func(name) == nil {
						continue
					}
					args, err := eval.RandomArgs(f, 1, nil, 3)
					if err != nil {
						continue
					}
					if _, err := eval.New(before).Call(name, args...); err != nil {
						t.Logf("%s: not evaluable: %v", name, err)
						continue
					}
					evaltest.CheckSame(t, before, res.Output, evaltest.Options{Func: name, Args: args})
					evaluated[pass]++
				}
			})
		}
	}
	for dir := range goldens {
		pass := strings.SplitN(dir, "/", 2)[0]
		assert.Positive(t, evaluated[pass], "no golden input of %s could be evaluated", pass)
	}
}

// benchLinear runs one benchmark per module size (10k and 100k bindings):
// setup builds the input of n bindings, run transforms it (and fails when
// nothing changed). It reports cpu-ns/op too: on a shared machine the
// 100k/10k ratio of CPU time measures the pass, where wall time also
// measures the other processes.
func benchLinear[T any](b *testing.B, setup func(n int) T, run func(b *testing.B, in T)) {
	for _, n := range []int{10_000, 100_000} {
		in := setup(n)
		b.Run(fmt.Sprintf("bindings=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				run(b, in)
			}
		})
	}
}

// BenchmarkReferenceWalk is the yardstick for the passes' 100k/10k
// ratios: one walk over the module recording every var use in a map, the
// least any pass here does. Its ratio is what cache and memory effects
// alone give on the machine at hand.
func BenchmarkReferenceWalk(b *testing.B) {
	benchLinear(b, func(n int) *ir.Module { return withDeadBindings(n / 2) }, func(b *testing.B, mod *ir.Module) {
		seen := map[*ir.Var]bool{}
		ir.Inspect(mod.Func("main").Body, func(e ir.Expr) bool {
			if v, ok := e.(*ir.Var); ok {
				seen[v] = true
			}
			return true
		})
		if len(seen) == 0 {
			b.Fatal("no var seen")
		}
	})
}
