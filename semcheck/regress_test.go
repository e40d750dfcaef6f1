package semcheck

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/randmod"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
)

// regressDir receives the reduced reproducer of every failure the
// differential test and the fuzz target find; TestRegressions replays it.
var regressDir = flag.String("difftest.regress", "../testdata/semcheck/regress",
	"directory receiving reduced reproducers of differential-test failures")

// difftestPipeline is what the differential test and the fuzz target
// run: the whole default compile, the Optimize phase included.
const difftestPipeline = "canonicalize,optimize,lower,build"

// diffOne checks one generated module and, on a failure, writes the reduced
// reproducer to dir and fails t naming it.
func diffOne(t *testing.T, gm *randmod.Module, origin string, in Inputs, dir string) bool {
	t.Helper()
	report, ok := diffModule(t, gm, difftestPipeline, origin, in, dir)
	assert.True(t, ok, report)
	return ok
}

// diffModule runs gm through pipeline with DiffCheck; on a failure it
// writes the reduced reproducer to dir and returns the report.
func diffModule(t *testing.T, gm *randmod.Module, pipeline, origin string, in Inputs, dir string) (string, bool) {
	t.Helper()
	mod, diags := syntax.Parse("randmod.tvms", []byte(gm.Text))
	require.Empty(t, diags, "%s does not parse:\n%s", origin, gm.Text)
	r, err := DiffCheck(testPasses, mod, pipeline, origin, in, 300)
	if err == nil {
		return "", true
	}
	if r == nil {
		return fmt.Sprintf("%s: the generated module cannot be checked: %v\n%s", origin, err, gm.Text), false
	}
	path, werr := r.Write(dir)
	require.NoError(t, werr)
	return fmt.Sprintf("%s: %v\n%s\nreduced reproducer written to %s:\n%s", origin, err, gm.Text, path, r.Text()), false
}

// TestDifferentialWritesRegressions: the differential test's path with
// the broken pass in the pipeline: a generated module whose result depends
// on its first add fails, its reproducer is written (one file per distinct reduced module),
// is small, names the broken pass and replays the failure.
func TestDifferentialWritesRegressions(t *testing.T) {
	dir := t.TempDir()
	failed := 0
	for seed := range uint64(100) {
		gm := randmod.Generate(seed)
		report, ok := diffModule(t, gm, "canonicalize,FlipSignForTest,lower,build", fmt.Sprintf("randmod seed %d", seed),
			Inputs{Seed: seed, Dim: 1 + int64(seed%4)}, dir)
		if !ok {
			failed++
			assert.Contains(t, report, "reduced reproducer written to "+dir)
		}
	}
	require.Positive(t, failed, "some generated module has an add the broken pass flips")
	files, err := filepath.Glob(filepath.Join(dir, "*.tvms"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	assert.LessOrEqual(t, len(files), failed)
	for _, f := range files {
		mod, replay, _, err := ReadRegression(f)
		require.NoError(t, err)
		assert.Equal(t, "FlipSignForTest", replay, f)
		assert.LessOrEqual(t, len(topLevelBindings(mod.Func("main"))), 2, "%s:\n%s", f, printer.Print(mod))
		cu, err := Replay(testPasses, f)
		require.NoError(t, err)
		require.NotNil(t, cu, "%s replays the failure", f)
		assert.Equal(t, "FlipSignForTest", cu.Name)
	}
	t.Logf("%d of 100 modules failed the broken pipeline; %d distinct reproducers", failed, len(files))
}

// TestRegressionWritten: a failure (the deliberately broken pass) is
// reduced and written with its header; the file reads back and replays
// the failure, and the pipeline without the broken pass passes on it.
func TestRegressionWritten(t *testing.T) {
	mod, diags := syntax.Parse("small.tvms", []byte(smallModule))
	require.Empty(t, diags)
	in := Inputs{Seed: 4, Dim: 3}
	r, err := DiffCheck(testPasses, mod, "canonicalize,FlipSignForTest,lower,build", "smallModule", in, 200)
	require.Error(t, err)
	require.NotNil(t, r)
	assert.Equal(t, "FlipSignForTest", r.Culprit.Name)
	assert.Equal(t, 1, CountBindings(r.Module))

	dir := t.TempDir()
	path, err := r.Write(dir)
	require.NoError(t, err)
	again, err := r.Write(dir)
	require.NoError(t, err)
	assert.Equal(t, path, again, "the same reproducer is one file")
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(src)
	for _, want := range []string{"# semcheck regression from smallModule", "# pipeline: canonicalize,FlipSignForTest,lower,build",
		"# culprit pass: FlipSignForTest", "# failure: semantic", "# replay pipeline: FlipSignForTest", "# seed: 4",
		"# symbolic: n=1", "# replay: phasec opt --passes FlipSignForTest --verify-semantics --random-inputs --seed 4 --symbolic n=1 FILE"} {
		assert.Contains(t, text, want)
	}

	got, replay, rin, err := ReadRegression(path)
	require.NoError(t, err)
	assert.Equal(t, "FlipSignForTest", replay)
	assert.Equal(t, Inputs{Seed: 4, Dims: map[string]int64{"n": 1}}, rin)
	assert.Equal(t, printer.Print(r.Module), printer.Print(got))
	cu, err := Replay(testPasses, path)
	require.NoError(t, err)
	require.NotNil(t, cu, "the reproducer still fails")
	assert.Equal(t, "FlipSignForTest", cu.Name)

	// Fixed (no broken pass): the same module passes.
	p, diags := testPasses.ParseAndBuild("pipeline", "canonicalize")
	require.Empty(t, diags)
	cu, err = FindCulprit(got, p, rin)
	require.NoError(t, err)
	assert.Nil(t, cu)
}

// TestRegressions replays every reproducer under testdata/semcheck/regress:
// each recorded a failure that is fixed now and must stay fixed.
func TestRegressions(t *testing.T) {
	files, err := filepath.Glob("../testdata/semcheck/regress/*.tvms")
	require.NoError(t, err)
	require.NotEmpty(t, files, "the regression directory has its first case")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cu, err := Replay(testPasses, f)
			require.NoError(t, err)
			require.Nil(t, cu, "fails again")
		})
	}
}

var crashTwoWaysForTest = passes.Define(passes.Info{Name: "CrashTwoWaysForTest", Doc: "broken on purpose: fails on an R.multiply, and differently on an R.add"},
	passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
		text := printer.Print(mod)
		switch {
		case strings.Contains(text, "R.multiply("):
			return nil, errors.New("cannot schedule multiply over the broadcast operand")
		case strings.Contains(text, "R.add("):
			return nil, errors.New("add: unsupported layout")
		}
		return mod, nil
	}))

// TestReduceKeepsFailure: reduction keeps only candidates failing with the
// same kind and a similar message. smallModule fails CrashTwoWaysForTest on
// its multiply; deleting the multiplies would still fail, on the add, for
// another reason, which the reducer must not accept.
func TestReduceKeepsFailure(t *testing.T) {
	mod, diags := syntax.Parse("small.tvms", []byte(smallModule))
	require.Empty(t, diags)
	p, diags := testPasses.ParseAndBuild("pipeline", "canonicalize,CrashTwoWaysForTest")
	require.Empty(t, diags)
	in := Inputs{Seed: 4}
	cu, err := FindCulprit(mod, p, in)
	require.NoError(t, err)
	require.NotNil(t, cu)
	require.Equal(t, PassCrash, cu.Kind)
	assert.Contains(t, cu.Detail, "multiply")
	small := cu.Reduce(in, 200)
	text := printer.Print(small)
	assert.Contains(t, text, "R.multiply(", "the reduced module fails for the original reason")
	assert.NotContains(t, text, "R.add(", "the add is not needed for the multiply failure")
	assert.Equal(t, 1, CountBindings(small), text)
}

func TestSimilar(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"small.tvms:12:5: cannot schedule multiply over v3", "small.tvms:4:9: cannot schedule multiply over v17", true},
		{`match_shape: dimension 0 of "x": got 3, want 4`, `match_shape: dimension 1 of "lv2": got 1, want 2`, true},
		{"cannot schedule multiply over the broadcast operand", "add: unsupported layout", false},
		{"VM code generation: unknown builtin vm.builtin.alloc", "index out of range [3] with length 2", false},
		{"", "", true},
		{"", "x", false},
	} {
		assert.Equal(t, tc.want, Similar(tc.a, tc.b), "%q vs %q", tc.a, tc.b)
	}
}

// FuzzDifferential: the fuzzer's bytes choose a random module
// (randmod.GenerateFrom), which goes through difftestPipeline and
// runs on the VM against the evaluator at ingest, as in TestDifferential;
// a failure is reduced and written under testdata/semcheck/regress.
func FuzzDifferential(f *testing.F) {
	for _, s := range []string{"", "\x00", "0123456789abcdef", "\xff\xff\xff\xff\xff\xff\xff\xff\x01\x02\x03\x04\x05\x06\x07\x08", strings.Repeat("\x80", 64)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		gm := randmod.GenerateFrom(data)
		seed := uint64(len(data))
		for _, b := range data {
			seed = seed*131 + uint64(b)
		}
		diffOne(t, gm, fmt.Sprintf("fuzz input %x (randmod.GenerateFrom)", data), Inputs{Seed: seed, Dim: 1 + int64(seed%4)}, *regressDir)
	})
}

var wrapsFlipSignForTest = passes.Define(passes.Info{Name: "WrapsFlipSignForTest", Doc: "broken on purpose: runs FlipSignForTest as a nested step, as a barrier runs its steps"},
	passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
		return env.Run(flipSignForTest, mod)
	}))

// TestCulpritInsideCompoundPass: when the checker fails a nested step, the
// enclosing pass fails with the checker's error; the culprit is the step,
// a semantic failure, not a crash of the enclosing pass (bug: a LegalizeOps
// mismatch inside the lower barrier was reported as "lower" crashing and
// could not be reduced).
func TestCulpritInsideCompoundPass(t *testing.T) {
	mod, diags := syntax.Parse("small.tvms", []byte(smallModule))
	require.Empty(t, diags)
	r, err := DiffCheck(testPasses, mod, "canonicalize,WrapsFlipSignForTest,lower,build", "smallModule", Inputs{Seed: 4}, 200)
	require.Error(t, err)
	require.NotNil(t, r)
	assert.Equal(t, "FlipSignForTest", r.Culprit.Name)
	assert.Equal(t, Semantic, r.Culprit.Kind)
	assert.Equal(t, "FlipSignForTest", r.Replay)
	assert.Equal(t, 1, CountBindings(r.Module))
}
