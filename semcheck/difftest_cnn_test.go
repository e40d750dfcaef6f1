package semcheck

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
)

var difftestCNN = flag.Int("difftest.cnn", 12, "random CNNs (conv, pool, norms, residual adds) the differential test runs (make difftest CNN=500)")

// highLevelOptions are option sets the pipeline search draws from for
// the high-level passes that need options to do anything (a pass not
// listed runs with its defaults). An entry naming an option a pass does
// not declare is refused when the pipeline is built, and the search drops
// that variant, saying so.
var highLevelOptions = map[string][]string{
	"ConvertLayout":    {`{desired_layouts={"relax.nn.conv2d":["NHWC","OHWI"]}}`, `{desired_layouts={"relax.nn.conv2d":["NHWC","HWIO"]}}`},
	"ToMixedPrecision": {`{out_dtype="float32"}`, `{out_dtype="float16"}`},
}

// highLevelPasses are the registered passes that work on high-level ops:
// those whose contract says they precede Legalized (ConvertLayout,
// FoldBatchnormToConv2D, ToMixedPrecision, ...), as pipeline steps with
// their option variants, each checked to build.
func highLevelPasses(t *testing.T, reg *passes.Registry) []string {
	t.Helper()
	var out []string
	for _, p := range reg.Passes() {
		in := p.Info()
		if _, ok := in.Precedes[phase.Legalized]; !ok || in.AlwaysRun || in.Leaves != passes.Unchanged {
			continue
		}
		if _, ok := notShuffled[p.Name()]; ok {
			continue
		}
		variants := highLevelOptions[p.Name()]
		if len(variants) == 0 {
			variants = []string{""}
		}
		for _, v := range variants {
			step := p.Name() + v
			if _, errs := reg.ParseAndBuild("pipeline", "canonicalize,"+step); errs.HasErrors() {
				t.Logf("pipeline search: %s does not build (%v); dropped", step, errs)
				continue
			}
			out = append(out, step)
		}
	}
	sort.Strings(out)
	return out
}

// cnnPipeline draws a pipeline: canonicalize, some of the high-level steps
// (each pass at most once, in an order order gives: shuffle respects the
// documented constraints), then optimize, lower and build.
func cnnPipeline(rng *rand.Rand, steps []string, order func(*rand.Rand, []string) []string) string {
	byPass := map[string][]string{}
	var names []string
	for _, s := range steps {
		name, _, _ := strings.Cut(s, "{")
		if byPass[name] == nil {
			names = append(names, name)
		}
		byPass[name] = append(byPass[name], s)
	}
	var chosen []string
	for _, name := range names {
		if rng.IntN(2) == 0 {
			chosen = append(chosen, name)
		}
	}
	parts := []string{"canonicalize"}
	for _, name := range order(rng, chosen) {
		v := byPass[name]
		parts = append(parts, v[rng.IntN(len(v))])
	}
	return strings.Join(append(parts, "optimize", "lower", "build"), ",")
}

// TestDifferentialCNN is the differential test on the CNN family
// (GenerateCNN): each network goes through a pipeline drawn from the
// high-level passes before optimize, lower and build, with the semantic
// checker after every pass; a pass that computes in float16 is checked
// with float16 tolerances from then on (HalfComputeTol). Failures are
// reduced and written as regressions like TestDifferential's.
func TestDifferentialCNN(t *testing.T) {
	steps := highLevelPasses(t, barrier.Registry)
	t.Logf("high-level passes in the pipeline search: %s", strings.Join(steps, ", "))
	rng := rand.New(rand.NewPCG(22, 25))
	prog := newTestProgress()
	defer prog.done()
	covered := map[string]int{}
	pipelines := map[string]int{}
	failures := 0
	for seed := range uint64(*difftestCNN) {
		prog.printf("difftest CNN: %d/%d networks, %d failures", seed, *difftestCNN, failures)
		gm := GenerateCNN(seed)
		spec := cnnPipeline(rng, steps, shuffle)
		pipelines[spec]++
		in := Inputs{Seed: seed, TolFor: HalfComputeTol}
		report, ok := diffModule(t, gm, spec, fmt.Sprintf("CNN seed %d", seed), in, *regressDir)
		if !assert.True(t, ok, report) {
			failures++
			continue
		}
		for k, v := range gm.Ops {
			covered[k] += v
		}
	}
	var names []string
	for k, v := range covered {
		names = append(names, fmt.Sprintf("%s %d", strings.TrimPrefix(k, "R."), v))
	}
	sort.Strings(names)
	t.Logf("%d networks, %d failures, %d distinct pipelines; ops: %s", *difftestCNN, failures, len(pipelines), strings.Join(names, ", "))
}

// GenerateCNN's networks parse, type-check and evaluate, use every layer
// kind over a few seeds, and are the same for the same seed.
func TestGenerateCNN(t *testing.T) {
	ops := map[string]int{}
	grouped, strided, dilated := 0, 0, 0
	for seed := range uint64(40) {
		gm := GenerateCNN(seed)
		assert.Equal(t, gm.Text, GenerateCNN(seed).Text)
		mod, diags := syntax.Parse("cnn.tvms", []byte(gm.Text))
		require.Empty(t, diags, gm.Text)
		norm, diags := ir.NormalizeModule(mod)
		require.Empty(t, diags, gm.Text)
		in := Inputs{Seed: seed}
		args, err := in.Args(norm)
		require.NoError(t, err)
		_, err = eval.New(norm).Call("main", args...)
		require.NoError(t, err, gm.Text)
		for k, v := range gm.Ops {
			ops[k] += v
		}
		grouped += strings.Count(gm.Text, "groups=") - strings.Count(gm.Text, "groups=1)")
		strided += strings.Count(gm.Text, "strides=[2, 2]")
		dilated += strings.Count(gm.Text, "dilation=[2, 2]")
	}
	for _, op := range []string{"R.nn.conv2d", "R.nn.max_pool2d", "R.nn.avg_pool2d", "R.nn.batch_norm", "R.nn.layer_norm", "R.nn.relu", "R.add"} {
		assert.Positive(t, ops[op], "no %s in 40 networks", op)
	}
	assert.Positive(t, grouped, "no grouped convolution")
	assert.Positive(t, strided, "no strided layer")
	assert.Positive(t, dilated, "no dilated convolution")
}

// The search takes every registered pass that precedes Legalized, with
// its option variants, and nothing else; a drawn pipeline passes the
// static check.
func TestHighLevelPassSearch(t *testing.T) {
	hl := passes.Define(passes.Info{Name: "HighLevelForTest", Doc: "a pass on high-level ops",
		Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
		Requires: map[phase.Property]string{phase.Normalized: "it reads A-normal form"},
		Precedes: map[phase.Property]string{phase.Legalized: "it rewrites high-level ops"}},
		passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) { return mod, nil }))
	reg := barrier.Registry.With(hl)
	steps := highLevelPasses(t, reg)
	assert.Contains(t, steps, "HighLevelForTest")
	for _, s := range steps {
		name, _, _ := strings.Cut(s, "{")
		p, ok := reg.Lookup(name)
		require.True(t, ok)
		_, precedes := p.Info().Precedes[phase.Legalized]
		assert.True(t, precedes, s)
	}
	mod, diags := syntax.Parse("cnn.tvms", []byte(GenerateCNN(3).Text))
	require.Empty(t, diags)
	ph, props, err := passes.StartState(mod)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	seen := false
	for range 20 {
		spec := cnnPipeline(rng, steps, func(_ *rand.Rand, s []string) []string { return s })
		p, errs := reg.ParseAndBuild("pipeline", spec)
		require.Empty(t, errs, spec)
		assert.False(t, passes.Check(p, passes.NewPassContext(), ph, props).HasErrors(), spec)
		seen = seen || strings.Contains(spec, "HighLevelForTest,optimize")
	}
	assert.True(t, seen, "the search places the pass before optimize")
	p, _ := reg.ParseAndBuild("pipeline", "canonicalize,HighLevelForTest,optimize,lower,build")
	_, err = passes.NewPassContext().Run(context.Background(), p, mod)
	require.NoError(t, err)
}

// HalfComputeTol picks float16 tolerances for a module computing in
// float16 and leaves a float32 module to the default.
func TestHalfComputeTol(t *testing.T) {
	f32, diags := syntax.Parse("a.tvms", []byte(smallModule))
	require.Empty(t, diags)
	_, ok := HalfComputeTol(f32)
	assert.False(t, ok)
	half := strings.ReplaceAll(smallModule, `"float32"`, `"float16"`)
	f16, diags := syntax.Parse("b.tvms", []byte(half))
	require.Empty(t, diags)
	tol, ok := HalfComputeTol(f16)
	assert.True(t, ok)
	assert.Equal(t, Float16Tol, tol)
	c := &Checker{Inputs: Inputs{TolFor: HalfComputeTol}}
	assert.Equal(t, Float16Tol, c.tolerance(f32, f16))
	assert.NotEqual(t, Float16Tol, c.tolerance(f32, f32), "the default, by what the module computes")
}

// testProgress shows a test's progress on the terminal the test was
// started from (go test pipes the test binary's output), when
// -difftest.progress asks for it (make difftest sets it when its output
// is a terminal); silent otherwise.
type testProgress struct {
	tty  *os.File
	last time.Time
}

var difftestProgress = flag.Bool("difftest.progress", false, "show progress on /dev/tty (make difftest sets it when run on a terminal)")

func newTestProgress() *testProgress {
	if !*difftestProgress {
		return &testProgress{}
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return &testProgress{}
	}
	return &testProgress{tty: tty}
}

func (p *testProgress) printf(format string, args ...any) {
	if p.tty != nil && time.Since(p.last) >= 100*time.Millisecond {
		p.last = time.Now()
		fmt.Fprintf(p.tty, "\r\033[K"+format, args...)
	}
}

func (p *testProgress) done() {
	if p.tty != nil {
		fmt.Fprint(p.tty, "\r\033[K")
		p.tty.Close()
	}
}
