package barrier_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/wellformed"
)

// reach runs the barriers in order and returns the furthest phase reached
// and, when a barrier stopped, its error.
func reach(mod *ir.Module) (phase.Phase, *barrier.Error, error) {
	reached := phase.None
	for _, b := range barrier.Barriers() {
		out, err := b.Run(t0, mod)
		if err != nil {
			var be *barrier.Error
			if errors.As(err, &be) {
				return reached, be, nil
			}
			return reached, nil, err
		}
		mod, reached = out, b.To
		if got, _ := phase.Recorded(out); got != b.To {
			return reached, nil, fmt.Errorf("barrier %s returned a module recording phase %v", b.Name, got)
		}
		if errs := wellformed.Check(out, b.To); errs.HasErrors() {
			return reached, nil, fmt.Errorf("barrier %s recorded phase %v but the check fails:\n%s", b.Name, b.To, errs)
		}
	}
	return reached, nil, nil
}

// TestCorpusReachesFurthestPhase runs the barriers (canonicalize, optimize,
// lower, build) on every corpus module and pins, per file, the phase
// reached and what the stopping barrier reports missing (testdata/passes/barriers/corpus.golden;
// -update rewrites it). It also checks that the report is exact: the
// missing properties are precisely the target invariants the checker finds
// violated, and each names the pass that would establish it.
func TestCorpusReachesFurthestPhase(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*.tvms")
	models, _ := filepath.Glob("../testdata/models/*.tvms")
	files = append(files, models...)
	require.NotEmpty(t, files, "no corpus files")
	var b strings.Builder
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		mod, perrs := syntax.Parse(f, src)
		name := strings.TrimPrefix(filepath.ToSlash(f), "../testdata/")
		if perrs.HasErrors() || mod == nil {
			fmt.Fprintf(&b, "%s: does not parse\n", name)
			continue
		}
		reached, be, err := reach(mod)
		if !assert.NoError(t, err, name) {
			continue
		}
		fmt.Fprintf(&b, "%s: reaches %v", name, reached)
		if be != nil && be.Failed {
			first, _, _ := strings.Cut(be.Err.Error(), "\n")
			fmt.Fprintf(&b, "; %s barrier: %s fails: %s", be.Barrier.Name, be.LastPass, first)
		} else if be != nil {
			var why []string
			for _, m := range be.Missing {
				why = append(why, m.Reason())
			}
			fmt.Fprintf(&b, "; %s barrier stops after %s: missing %s", be.Barrier.Name, be.LastPass, strings.Join(why, "; "))
			checkExact(t, name, be)
		}
		b.WriteString("\n")
	}
	golden := "../testdata/passes/barriers/corpus.golden"
	if passtest.Updating() {
		os.MkdirAll(filepath.Dir(golden), 0o755)
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
		return
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./barrier -update")
	if string(want) != b.String() {
		assert.Failf(t, "corpus results differ from "+golden+" (go test ./barrier -update)", "%s",
			unified(string(want), b.String()))
	}
}

// checkExact verifies a barrier error against the checker.
func checkExact(t *testing.T, name string, be *barrier.Error) {
	t.Helper()
	if be.Failed {
		return
	}
	if assert.NotEmpty(t, be.Diags, "%s: barrier error without its summary diagnostic", name) {
		assert.Equal(t, barrier.CodeBarrier, be.Diags[0].Code, "%s: barrier error without its summary diagnostic", name)
	}
	for _, m := range be.Missing {
		assert.NotEmpty(t, m.By, "%s: missing %v names no pass", name, m.Property)
		found := false
		for _, d := range be.Diags[1:] {
			if r, ok := wellformed.LookupRule(d.Code); ok && r.Property == m.Property {
				found = true
			}
		}
		assert.True(t, found, "%s: missing %v has no diagnostic", name, m.Property)
	}
}
