package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	mlpModel       = "../../testdata/models/mlp.tvms"
	optimizeInput  = "testdata/optimize/opportunities.tvms"
	mlpInputsDir   = "../../testdata/models/mlp_inputs"
	timingOptimize = "\n  optimize " // the optimize step's row in the timing tree
)

// TestBuildRunsOptimizeByDefault: phasec build runs
// canonicalize,optimize,lower,build, and --time-passes shows the optimize
// step; -O0 (or --opt-level 0) skips it and the lower barrier takes the
// module in phase ingest; --passes still replaces the pipeline.
func TestBuildRunsOptimizeByDefault(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mlp.pvm")
	code, stdout, stderr := runCLI(t, "", "build", "--time-passes", "-o", out, mlpModel)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "wrote "+out)
	assert.Contains(t, stderr, "phase ingest: ")
	assert.Contains(t, stderr, timingOptimize)
	assert.Contains(t, stderr, "phase optimize: ", "the lower barrier gets the module in phase optimize")

	for _, flags := range [][]string{{"-O0"}, {"--opt-level", "0"}, {"-O3", "-O0"}} {
		args := append(append([]string{"build", "--time-passes"}, flags...), "-o", out, mlpModel)
		code, _, stderr = runCLI(t, "", args...)
		require.Equal(t, 0, code, stderr)
		assert.NotContains(t, stderr, timingOptimize, "%v skips the optimize step", flags)
		assert.NotContains(t, stderr, "phase optimize: ", "%v", flags)
	}

	code, _, stderr = runCLI(t, "", "build", "--time-passes", "--passes", "canonicalize,lower,build", "-o", out, mlpModel)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, timingOptimize, "--passes replaces the default pipeline")
}

// TestRunOptLevels: phasec run builds a .tvms like build, at any opt level,
// and the demo's numbers stay within tolerance of the reference.
func TestRunOptLevels(t *testing.T) {
	var inputs []string
	for _, p := range []string{"x", "w0", "b0", "w1", "b1"} {
		inputs = append(inputs, "--input", p+"="+filepath.Join(mlpInputsDir, p+".npy"))
	}
	for _, level := range []string{"-O0", "-O1", "-O2", "-O3"} {
		args := append([]string{"run", level, "--expect", filepath.Join(mlpInputsDir, "expected.npy")}, inputs...)
		code, stdout, stderr := runCLI(t, "", append(args, mlpModel)...)
		require.Equal(t, 0, code, "%s: %s", level, stderr)
		assert.Contains(t, stdout, "max error", level)
	}
}

// TestOptOptimizeGolden: phasec opt --print-changed=diff on the module the
// optimize sequence feeds on shows each pass the optimize barrier runs and
// the phase it records.
func TestOptOptimizeGolden(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "opt", "--passes", "canonicalize,optimize", "--print-changed=diff", optimizeInput)
	require.Equal(t, 0, code, stderr)
	compareGolden(t, "testdata/optimize/print_changed.golden", stderr+"// output\n"+stdout)
}

// TestOptLevelFlags: -O0 skips the optimize step (the module stays
// ingest), -O1 runs it; the last of --opt-level and -ON wins; -O takes no
// value.
func TestOptLevelFlags(t *testing.T) {
	for _, tt := range []struct {
		flags []string
		phase string
	}{
		{[]string{"-O0"}, `"phase": "ingest"`},
		{[]string{"-O1"}, `"phase": "optimize"`},
		{nil, `"phase": "optimize"`},
		{[]string{"-O0", "--opt-level", "2"}, `"phase": "optimize"`},
		{[]string{"--opt-level", "2", "-O0"}, `"phase": "ingest"`},
	} {
		args := append(append([]string{"opt"}, tt.flags...), "--passes", "canonicalize,optimize", optimizeInput)
		code, stdout, stderr := runCLI(t, "", args...)
		require.Equal(t, 0, code, "%v: %s", tt.flags, stderr)
		assert.Contains(t, stdout, tt.phase, "%v", tt.flags)
	}
	code, _, stderr := runCLI(t, "", "opt", "-Ox", "--passes", "canonicalize", optimizeInput)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `invalid argument "x" for "-O, --opt-level"`)
	code, _, stderr = runCLI(t, "", "build", "-O4", "-o", "x.pvm", optimizeInput)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "opt level 4 outside 0..3")
}

// TestOptFixpoint: fixpoint(...) runs from the command line, --time-passes
// shows its rounds, and its cap is a config key checked before any input
// is read.
func TestOptFixpoint(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "opt", "--passes", "canonicalize,fixpoint(Normalize,LambdaLift)", "--time-passes", optimizeInput)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"phase": "ingest"`)
	for _, row := range []string{"\n  fixpoint ", "\n    round 1 ", "\n      Normalize ", "\n      LambdaLift "} {
		assert.Contains(t, stderr, row)
	}
	assert.NotContains(t, stderr, "round 2", "nothing changed in round 1")

	code, _, stderr = runCLI(t, "", "opt", "--passes", "fixpoint(Normalize)", "--config", "passes.fixpoint.max_iterations=0", "missing.tvms")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "config passes.fixpoint.max_iterations wants at least 1 round, got 0")

	code, _, stderr = runCLI(t, "", "opt", "--passes", "fixpoint(Normalize", optimizeInput)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--passes:1:19: error PIPE000: expected ',' or ')' in fixpoint(...), found end of pipeline")
}

// TestPassesListsOptimize: phasec passes shows the optimize barrier with
// its opt level and the fixpoint cap among the config keys.
func TestPassesListsOptimize(t *testing.T) {
	code, stdout, _ := runCLI(t, "", "passes")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "optimize (opt level 1)\n")
	assert.Contains(t, stdout, "accepts ingest|optimize")
	assert.Contains(t, stdout, "passes.fixpoint.max_iterations int = 10")
	_, err := os.Stat(optimizeInput)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(defaultBuildPasses, "optimize,lower,build"))
}
