package evaltest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
)

// FuzzEvalLegalize evaluates every module the parser accepts with seeded
// random inputs, runs LegalizeOps, and evaluates the result: the evaluator
// may reject a module or its inputs with an error, and LegalizeOps may
// report diagnostics, but neither may panic, and when both evaluations
// succeed they must agree.
//
//	go test ./eval/evaltest -run='^$' -fuzz=FuzzEvalLegalize -fuzztime=1m
func FuzzEvalLegalize(f *testing.F) {
	op.MaxElements = 1 << 16
	for _, glob := range []string{"../../testdata/*.tvms", "../../testdata/models/*.tvms"} {
		paths, err := filepath.Glob(glob)
		require.NoError(f, err)
		for _, p := range paths {
			src, err := os.ReadFile(p)
			require.NoError(f, err)
			f.Add(src, uint64(1))
		}
	}
	var err error
	fuzzLegalize, err = buildLegalize()
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, src []byte, seed uint64) { fuzzBody(t, src, seed) })
}

var fuzzLegalize *passes.Pass

func fuzzBody(t *testing.T, src []byte, seed uint64) {
	legalize := fuzzLegalize
	if legalize == nil {
		var err error
		legalize, err = buildLegalize()
		require.NoError(t, err)
	}
	{
		mod, diags := syntax.Parse("fuzz.tvms", src)
		if mod == nil || len(diags) > 0 {
			return
		}
		fn := mod.Func("main")
		if fn == nil {
			return
		}
		args, err := eval.RandomArgs(fn, seed, nil, 2)
		if err != nil {
			return
		}
		// Bound the work: generated shapes are small, but a module may
		// declare large static ones.
		for _, a := range args {
			if n := elements(a); n > 1<<16 {
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		run := func(m *eval.Machine) *eval.Machine { m.Ctx, m.MaxDepth = ctx, 200; return m }
		want, werr := run(eval.New(mod)).Call("main", args...)
		out, err := passes.NewPassContext().Run(ctx, legalize, mod)
		if err != nil {
			return
		}
		got, gerr := run(eval.New(out)).Call("main", args...)
		if werr != nil || gerr != nil {
			return
		}
		require.NoError(t, eval.Compare(got, want, eval.TranscendentalTol), "LegalizeOps changed the result\n%s", printed{out})
	}
}

func buildLegalize() (*passes.Pass, error) {
	p, errs := barrier.Registry.ParseAndBuild("--passes", "LegalizeOps")
	if errs != nil {
		return nil, errs
	}
	return p, nil
}
