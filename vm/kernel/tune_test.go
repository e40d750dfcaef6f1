package kernel_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/vm/kernel"
)

const tuneFuncs = `
    @T.prim_func
    def corr(X: T.Buffer((T.int64(40), T.int64(40)), "float32"), Y: T.Buffer((T.int64(36), T.int64(36)), "float32")):
        for i, j, r, s in T.grid(T.int64(36), T.int64(36), T.int64(5), T.int64(5)):
            with T.block("corr"):
                vi, vj, vr, vs = T.axis.remap("SSRR", [i, j, r, s])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi + vr, vj + vs] * X[vi, vj]

    @T.prim_func
    def transpose(n: T.int64, A: T.Buffer((n, T.int64(700)), "float32"), B: T.Buffer((T.int64(700), n), "float32")):
        for i, j in T.grid(n, T.int64(700)):
            with T.block("t"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vj, vi] = A[vi, vj] * T.float32(2) + A[vi, 699 - vj]
`

// TestTune searches two kernels no fast path takes: every candidate's
// outputs agree with the untuned kernel's, the budget holds, and the
// result is a valid schedule whose kernel computes the same outputs.
func TestTune(t *testing.T) {
	for _, name := range []string{"corr", "transpose"} {
		f := parseFunc(t, tuneFuncs, name)
		ok, why := kernel.Tunable(f)
		require.True(t, ok, "%s: %s", name, why)
		budget := 600 * time.Millisecond
		res, err := kernel.Tune(f, kernel.TuneOptions{Budget: budget, Seed: 1, Dims: map[string]int64{"n": 600}})
		require.NoError(t, err, name)
		assert.Positive(t, res.Measured, name)
		assert.Zero(t, res.Rejected, "%s: candidates disagreed with the untuned kernel", name)
		assert.Less(t, res.Elapsed, budget+400*time.Millisecond, "%s: budget overrun", name)
		assert.LessOrEqual(t, res.Best, res.Baseline, name)
		t.Logf("%s: baseline %v best %v (%.2fx) after %d candidates in %v: %v", name, res.Baseline, res.Best,
			float64(res.Baseline)/float64(res.Best), res.Measured, res.Elapsed, res.Schedule)
		if res.Schedule == nil {
			continue
		}
		require.NoError(t, res.Schedule.Validate(f))
		args := makeArgs(t, f, spec{"n": 600, "A": []int64{600, 700}, "B": []int64{700, 600}}, rand.New(rand.NewPCG(2, 3)))
		checkScheduled(t, f, args, res.Schedule)
	}
}

// TestTuneCandidates: the candidate order is a function of the seed; the
// written order comes first; reductions keep their order unless
// reassociation is allowed.
func TestTuneCandidates(t *testing.T) {
	f := parseFunc(t, tuneFuncs, "corr")
	info := kernel.Nests(f)[0]
	a := kernel.NestCandidates(info, false, 7)
	b := kernel.NestCandidates(info, false, 7)
	c := kernel.NestCandidates(info, false, 8)
	require.NotEmpty(t, a)
	assert.Equal(t, a, b, "same seed, different candidate order")
	assert.NotEqual(t, a, c, "the seed does not change the order")
	assert.Equal(t, []int{0, 1, 2, 3}, a[0].Order)
	s := &kernel.Schedule{}
	for _, ns := range a {
		s.Nests = []*kernel.NestSchedule{ns}
		require.NoError(t, s.Validate(f), "%s", s)
		assert.False(t, s.ReordersReduction(f), "%s", s)
	}
	re := kernel.NestCandidates(info, true, 7)
	assert.Greater(t, len(re), len(a))
}

// TestTuneNotTunable: kernels a fast path takes are left alone.
func TestTuneNotTunable(t *testing.T) {
	ok, why := kernel.Tunable(parseFunc(t, schedMatmul, "mm"))
	assert.False(t, ok)
	assert.Contains(t, why, "fast path")
}

// TestTuneCorpus tunes every tunable PrimFunc of the bundled models
// (their general path) briefly: no candidate may disagree with the
// untuned kernel.
func TestTuneCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("tunes every corpus PrimFunc")
	}
	tuned := 0
	for name, f := range corpusFuncs(t) {
		// The corpus's kernels all have fast paths: tune their general
		// closures.
		res, err := kernel.Tune(f, kernel.TuneOptions{Budget: 100 * time.Millisecond, Seed: 3, DefaultDim: 16, General: true})
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		tuned++
		assert.Zero(t, res.Rejected, name)
		if res.Schedule != nil {
			assert.NoError(t, res.Schedule.Validate(f), name)
		}
	}
	assert.Positive(t, tuned)
}
