package kernel_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

// randomSchedule draws a valid schedule for f, independently of the
// tuner's candidate generator: random loop orders, vector mode on or off,
// random tile sizes (odd ones included) and a random parallel loop.
func randomSchedule(f *ir.PrimFunc, r *rand.Rand) *kernel.Schedule {
	s := &kernel.Schedule{}
	for _, info := range kernel.Nests(f) {
		if info.NotSchedulable != "" || r.IntN(5) == 0 {
			s.Nests = append(s.Nests, nil)
			continue
		}
		n := info.Depth
		ns := &kernel.NestSchedule{Order: r.Perm(n), Vector: r.IntN(4) > 0, Parallel: -1}
		tiled := n >= 2 && r.IntN(2) == 0
		if tiled {
			sizes := []int64{1, 2, 3, 5, 8, 16, 64}
			ns.Tile = []int64{sizes[r.IntN(len(sizes))], sizes[r.IntN(len(sizes))]}
		}
		var can []int
		for pos, l := range ns.Order {
			if info.CanParallel[l] && (!tiled || pos < n-2) {
				can = append(can, pos)
			}
		}
		if len(can) > 0 && r.IntN(2) == 0 {
			ns.Parallel = can[r.IntN(len(can))]
		}
		s.Nests = append(s.Nests, ns)
	}
	return s
}

// checkScheduled compiles f untuned and with schedule s on the general
// path, runs both on the same inputs and compares: bit-identical results
// when s keeps every reduction's order, else within the error bound of a
// reordered fp32 sum of n terms, n·2⁻²³·Σ|terms|, bounded here by
// 1e-4·max(1, |want|, max|output|) for the corpus's sums (≤ 4096 terms
// of magnitude ≤ 4). Both also agree with the reference interpreter.
func checkScheduled(t *testing.T, f *ir.PrimFunc, args []abi.Arg, s *kernel.Schedule) {
	t.Helper()
	require.NoError(t, s.Validate(f), "schedule %s", s)
	base, err := kernel.CompileWith(f, "f", kernel.Options{General: true})
	require.NoError(t, err)
	tuned, err := kernel.CompileWith(f, "f", kernel.Options{General: true, Schedule: s})
	require.NoError(t, err, "schedule %s", s)
	want, got := cloneArgs(args), cloneArgs(args)
	errBase := base.Call(want)
	errTuned := tuned.Call(got)
	if errBase != nil {
		require.Error(t, errTuned, "untuned failed with %v", errBase)
		return
	}
	require.NoError(t, errTuned, "schedule %s", s)
	exact := !s.ReordersReduction(f)
	for i := range got {
		if got[i].T == nil {
			continue
		}
		what := fmt.Sprintf("schedule %s exact=%v buffer %d", s, exact, i)
		if exact || !got[i].T.DType.IsFloat() {
			require.Equal(t, want[i].T.Bytes(), got[i].T.Bytes(), what)
			continue
		}
		scale := maxAbs(want[i].T)
		for k := range int(want[i].T.NumElements()) {
			w, g := want[i].T.Float64At(k), got[i].T.Float64At(k)
			require.LessOrEqual(t, math.Abs(w-g), 1e-4*max(1, math.Abs(w), scale), "%s [%d]", what, k)
		}
	}
	ref := cloneArgs(args)
	if _, err := runRef(f, ref); err == nil {
		for i := range ref {
			if ref[i].T != nil {
				compareTensors(t, ref[i].T, got[i].T, maxAbs(ref[i].T), "reference vs scheduled")
			}
		}
	}
}

// FuzzSchedules applies a random schedule to a random nest.
func FuzzSchedules(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		g := &gen{r: rand.New(rand.NewPCG(seed, 7))}
		fn, vals := g.program()
		args := makeArgs(t, fn, withVars(fn, nil, vals), rand.New(rand.NewPCG(seed, 9)))
		checkScheduled(t, fn, args, randomSchedule(fn, rand.New(rand.NewPCG(seed, 13))))
	})
}

// TestScheduleRandomNests applies random schedules to the fuzz
// generator's random nests (which are checked against the reference
// interpreter by TestRandomKernels).
func TestScheduleRandomNests(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	scheduled := 0
	for seed := range uint64(n) {
		g := &gen{r: rand.New(rand.NewPCG(seed, 7))}
		f, vals := g.program()
		args := makeArgs(t, f, withVars(f, nil, vals), rand.New(rand.NewPCG(seed, 9)))
		r := rand.New(rand.NewPCG(seed, 11))
		for range 3 {
			s := randomSchedule(f, r)
			for _, ns := range s.Nests {
				if ns != nil {
					scheduled++
				}
			}
			t.Run(fmt.Sprint(seed), func(t *testing.T) { checkScheduled(t, f, args, s) })
		}
	}
	assert.Greater(t, scheduled, n/2, "too few random nests were schedulable")
}

// corpusFuncs is every PrimFunc of the bundled legalized models and the
// kernel tests' TVMScript files.
func corpusFuncs(t *testing.T) map[string]*ir.PrimFunc {
	out := map[string]*ir.PrimFunc{}
	files, err := filepath.Glob("../../testdata/models/*.tvms")
	require.NoError(t, err)
	for _, file := range files {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		mod, diags := syntax.Parse(file, src)
		require.False(t, diags.HasErrors(), "%v", diags)
		for _, name := range mod.Names() {
			if f := mod.PrimFunc(name); f != nil {
				out[filepath.Base(file)+":"+name] = f
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestScheduleCorpus applies random schedules to the bundled models'
// PrimFuncs (symbolic dimensions at 7).
func TestScheduleCorpus(t *testing.T) {
	funcs := corpusFuncs(t)
	scheduled := 0
	for name, f := range funcs {
		vars := map[string]int64{}
		for _, p := range f.Params {
			if b := f.BufferMap[p]; b != nil {
				for _, d := range b.Shape {
					if v, ok := d.(*ir.PrimVar); ok {
						vars[v.Name] = 7
					}
				}
			}
		}
		if !fits(f, vars) {
			continue
		}
		args := makeArgs(t, f, withVars(f, nil, vars), rand.New(rand.NewPCG(1, 2)))
		r := rand.New(rand.NewPCG(3, uint64(len(name))))
		for i := range 4 {
			s := randomSchedule(f, r)
			for _, ns := range s.Nests {
				if ns != nil {
					scheduled++
				}
			}
			t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) { checkScheduled(t, f, args, s) })
		}
	}
	assert.Greater(t, scheduled, len(funcs), "too few corpus nests were scheduled")
	t.Logf("%d PrimFuncs, %d nest schedules", len(funcs), scheduled)
}

// fits reports whether f's buffers are small enough for a quick test.
func fits(f *ir.PrimFunc, vars map[string]int64) bool {
	for _, p := range f.Params {
		b := f.BufferMap[p]
		if b == nil {
			return false
		}
		n := int64(1)
		for _, d := range b.Shape {
			switch d := d.(type) {
			case *ir.IntImm:
				n *= d.Value
			case *ir.PrimVar:
				n *= vars[d.Name]
			default:
				return false
			}
		}
		if n > 1<<20 {
			return false
		}
	}
	return true
}

const schedMatmul = `
    @T.prim_func
    def mm(A: T.Buffer((T.int64(37), T.int64(29)), "float32"), B: T.Buffer((T.int64(29), T.int64(45)), "float32"), C: T.Buffer((T.int64(37), T.int64(45)), "float32")):
        for i, j, k in T.grid(T.int64(37), T.int64(45), T.int64(29)):
            with T.block("mm"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func
    def conv(X: T.Buffer((T.int64(20), T.int64(20)), "float32"), W: T.Buffer((T.int64(3), T.int64(3)), "float32"), Y: T.Buffer((T.int64(18), T.int64(18)), "float32")):
        for i, j, r, s in T.grid(T.int64(18), T.int64(18), T.int64(3), T.int64(3)):
            with T.block("conv"):
                vi, vj, vr, vs = T.axis.remap("SSRR", [i, j, r, s])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi + vr, vj + vs] * W[vr, vs]
`

// TestScheduleExactAndReordered checks the two promises on hand-written
// schedules: spatial reordering, tiling and parallelism are bit-identical;
// swapping two reduction loops is reported and agrees within rounding.
func TestScheduleExactAndReordered(t *testing.T) {
	mm := parseFunc(t, schedMatmul, "mm")
	conv := parseFunc(t, schedMatmul, "conv")
	rng := rand.New(rand.NewPCG(5, 6))
	mmArgs := makeArgs(t, mm, nil, rng)
	convArgs := makeArgs(t, conv, nil, rng)

	info := kernel.Nests(mm)
	require.Len(t, info, 1)
	assert.Equal(t, []bool{false, false, true}, info[0].Reduce)
	assert.Equal(t, []bool{true, true, false}, info[0].CanParallel)
	assert.Equal(t, []int64{37, 45, 29}, info[0].Extent)

	for _, ns := range []*kernel.NestSchedule{
		{Order: []int{0, 2, 1}, Vector: true, Parallel: -1},
		{Order: []int{0, 2, 1}, Vector: true, Tile: []int64{8, 16}, Parallel: 0},
		{Order: []int{1, 0, 2}, Vector: false, Tile: []int64{5, 3}, Parallel: 0},
		{Order: []int{2, 1, 0}, Vector: true, Parallel: 2},
	} {
		s := &kernel.Schedule{Nests: []*kernel.NestSchedule{ns}}
		assert.False(t, s.ReordersReduction(mm), "%s", s)
		checkScheduled(t, mm, mmArgs, s)
	}
	swap := &kernel.Schedule{Nests: []*kernel.NestSchedule{{Order: []int{0, 1, 3, 2}, Vector: true, Parallel: -1}}}
	assert.True(t, swap.ReordersReduction(conv))
	checkScheduled(t, conv, convArgs, swap)
	tileRed := &kernel.Schedule{Nests: []*kernel.NestSchedule{{Order: []int{0, 1, 2, 3}, Vector: true, Tile: []int64{2, 2}, Parallel: -1}}}
	assert.True(t, tileRed.ReordersReduction(conv))
	checkScheduled(t, conv, convArgs, tileRed)
}

// TestScheduleErrors: a schedule that does not fit is a compile error
// naming the problem, never a panic or a wrong kernel.
func TestScheduleErrors(t *testing.T) {
	mm := parseFunc(t, schedMatmul, "mm")
	for _, c := range []struct {
		json, want string
	}{
		{`{"nests": []}`, "0 nest entries for a PrimFunc with 1"},
		{`{"nests": [{"order": [0, 1], "vector": true, "parallel": -1}]}`, "has 2 loops"},
		{`{"nests": [{"order": [0, 1, 1], "vector": true, "parallel": -1}]}`, "not a permutation"},
		{`{"nests": [{"order": [0, 1, 2], "vector": true, "parallel": 2}]}`, "cannot run in parallel"},
		{`{"nests": [{"order": [0, 1, 2], "vector": true, "parallel": 7}]}`, "out of range"},
		{`{"nests": [{"order": [0, 1, 2], "vector": true, "parallel": -1, "tile": [0, 4]}]}`, "two sizes >= 1"},
		{`{"nests": [{"order": [0, 1, 2], "vector": true, "parallel": 1, "tile": [4, 4]}]}`, "cannot be a tiled one"},
	} {
		s, err := kernel.ParseSchedule([]byte(c.json))
		require.NoError(t, err, c.json)
		_, err = kernel.CompileWith(mm, "mm", kernel.Options{Schedule: s})
		require.Error(t, err, c.json)
		assert.Contains(t, err.Error(), c.want, c.json)
	}
	for _, bad := range []string{`{"nests": [{"ordr": [0]}]}`, `{"nests": 3}`, `[`, ``} {
		_, err := kernel.ParseSchedule([]byte(bad))
		assert.Error(t, err, bad)
	}
	// A nest whose body is not one block cannot be scheduled.
	plain := parseFunc(t, `
    @T.prim_func
    def p(A: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            A[i] = A[i] + T.float32(1)
            A[i] = A[i] * T.float32(2)
`, "p")
	info := kernel.Nests(plain)
	require.Len(t, info, 1)
	assert.NotEmpty(t, info[0].NotSchedulable)
	s := &kernel.Schedule{Nests: []*kernel.NestSchedule{{Order: []int{0}, Parallel: -1}}}
	assert.ErrorContains(t, s.Validate(plain), "cannot be scheduled")
}

// TestScheduleAttr: a schedule travels as a PrimFunc attribute.
func TestScheduleAttr(t *testing.T) {
	mm := parseFunc(t, schedMatmul, "mm")
	none, err := kernel.ScheduleOf(mm)
	require.NoError(t, err)
	assert.Nil(t, none)
	s := &kernel.Schedule{Nests: []*kernel.NestSchedule{{Order: []int{0, 2, 1}, Vector: true, Tile: []int64{4, 8}, Parallel: 0}}}
	g := kernel.WithSchedule(mm, s)
	assert.NotContains(t, mm.Attrs, kernel.ScheduleAttr, "WithSchedule changed its argument")
	back, err := kernel.ScheduleOf(g)
	require.NoError(t, err)
	assert.Equal(t, s, back)
	bad := kernel.WithSchedule(mm, &kernel.Schedule{})
	_, err = kernel.ScheduleOf(bad)
	assert.ErrorContains(t, err, "nest entries")
	assert.True(t, strings.HasPrefix(s.String(), `{"nests":[`), s.String())
}
