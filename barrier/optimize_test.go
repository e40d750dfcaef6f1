package barrier_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
)

// skips records the passes gating skipped.
type skips struct {
	passes.BaseInstrument
	skipped []string
}

func (*skips) Name() string { return "skips" }
func (s *skips) PassSkipped(ev *passes.Event) error {
	s.skipped = append(s.skipped, ev.Info.Name+": "+ev.Why.String())
	return nil
}

// TestOptimizeInTheBuildPipeline: canonicalize,optimize,lower,build takes
// the MLP to phase build at every opt level; at 0 the optimize step is
// skipped and the lower barrier takes the module in phase ingest.
func TestOptimizeInTheBuildPipeline(t *testing.T) {
	path := "../testdata/models/mlp.tvms"
	mod, errs := syntax.Parse(path, parse(t, path))
	require.False(t, errs.HasErrors(), "%v", errs)
	p, errs := barrier.Registry.ParseAndBuild("--passes", "canonicalize,optimize,lower,build")
	require.Nil(t, errs)
	for level := range 4 {
		sk := &skips{}
		pc := &passes.PassContext{OptLevel: level, Instruments: []passes.Instrument{sk}}
		out, err := pc.Run(context.Background(), p, mod)
		require.NoError(t, err, "opt level %d", level)
		got, _ := phase.Recorded(out)
		assert.Equal(t, phase.Build, got, "opt level %d", level)
		if level == 0 {
			assert.Equal(t, []string{"optimize: opt level 1 > 0"}, sk.skipped)
		} else {
			assert.NotContains(t, strings.Join(sk.skipped, "\n"), "optimize:", "opt level %d", level)
		}
	}
	opt, err := barrier.Optimize(mustCanonicalize(t, mod))
	require.NoError(t, err)
	got, _ := phase.Recorded(opt)
	assert.Equal(t, phase.Optimize, got)
}

// TestOptimizeRefusedStatically: the optimize step accepts ingest and
// optimize; on a lowered module, or before canonicalize, the static check
// refuses it before any IR is touched, naming what would help.
func TestOptimizeRefusedStatically(t *testing.T) {
	path := "../testdata/models/mlp.tvms"
	mod, errs := syntax.Parse(path, parse(t, path))
	require.False(t, errs.HasErrors(), "%v", errs)
	run := func(text string) error {
		p, errs := barrier.Registry.ParseAndBuild("--passes", text)
		require.Nil(t, errs)
		_, err := passes.NewPassContext().Run(context.Background(), p, mod)
		return err
	}
	require.NoError(t, run("canonicalize,optimize,optimize,lower"))
	err := run("canonicalize,lower,optimize")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--passes:1:20: error CHK001: pass optimize accepts phase ingest|optimize but would get a module in phase lower (step 3)")
}

// TestContractAuditOptimize: the contract audit covers the optimize
// barrier (it is in barrier.Registry and in the audit's pipelines); on the
// bundled models every pipeline with it is accepted, runs, and keeps every
// claim.
func TestContractAuditOptimize(t *testing.T) {
	files, _ := auditCorpus(t)
	var models []corpusModule
	for _, cm := range files {
		if strings.HasPrefix(cm.name, "testdata/models/") {
			models = append(models, cm)
		}
	}
	require.NotEmpty(t, models)
	var pipelines []*passes.Pass
	for _, text := range []string{"canonicalize,optimize", "canonicalize,optimize,lower,build", "canonicalize,optimize,optimize", "optimize"} {
		p, errs := barrier.Registry.ParseAndBuild("pipeline", text)
		require.Nil(t, errs)
		pipelines = append(pipelines, p)
	}
	res := audit(models, pipelines)
	assert.Equal(t, res.runs, res.accepted, "every model is accepted")
	assert.Empty(t, res.violations)
	assert.Empty(t, res.mutations)
	assert.Empty(t, res.panics)
	assert.Greater(t, res.checks, len(models)*len(pipelines), "the audit checked the passes nested in the barriers")
}
