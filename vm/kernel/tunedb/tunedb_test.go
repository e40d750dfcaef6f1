package tunedb_test

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/tirenc"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
	"github.com/phasec/phasec/vm/kernel/tunedb"
	"github.com/phasec/phasec/vm/loader"
)

const src = `# from tvm.script import ir as I
# from tvm.script import tir as T
@I.ir_module
class Module:
    @T.prim_func
    def transpose(A: T.Buffer((T.int64(300), T.int64(500)), "float32"), B: T.Buffer((T.int64(500), T.int64(300)), "float32")):
        for i, j in T.grid(T.int64(300), T.int64(500)):
            with T.block("t"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vj, vi] = A[vi, vj] + A[vi, 499 - vj]

    @T.prim_func
    def renamed(X: T.Buffer((T.int64(300), T.int64(500)), "float32"), Y: T.Buffer((T.int64(500), T.int64(300)), "float32")):
        for a, b in T.grid(T.int64(300), T.int64(500)):
            with T.block("other"):
                va, vb = T.axis.remap("SS", [a, b])
                Y[vb, va] = X[va, vb] + X[va, 499 - vb]

    @T.prim_func
    def smaller(A: T.Buffer((T.int64(300), T.int64(400)), "float32"), B: T.Buffer((T.int64(400), T.int64(300)), "float32")):
        for i, j in T.grid(T.int64(300), T.int64(400)):
            with T.block("t"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vj, vi] = A[vi, vj] + A[vi, 399 - vj]

    @T.prim_func
    def mm(A: T.Buffer((T.int64(16), T.int64(16)), "float32"), B: T.Buffer((T.int64(16), T.int64(16)), "float32"), C: T.Buffer((T.int64(16), T.int64(16)), "float32")):
        for i, j, k in T.grid(T.int64(16), T.int64(16), T.int64(16)):
            with T.block("mm"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
`

func funcs(t *testing.T) *ir.Module {
	mod, diags := syntax.Parse("t.tvms", []byte(src))
	require.False(t, diags.HasErrors(), "%v", diags)
	return mod
}

// executable wraps PrimFuncs as an executable's kernel records.
func executable(t *testing.T, fs ...*ir.PrimFunc) *vm.Executable {
	exe := &vm.Executable{}
	for i, f := range fs {
		data, err := tirenc.Encode(f)
		require.NoError(t, err)
		k, err := kernel.Compile(f, "k")
		require.NoError(t, err)
		exe.Kernels = append(exe.Kernels, vm.Kernel{Name: []string{"transpose", "renamed", "smaller", "mm"}[i], TIR: data, Params: k.Signature()})
	}
	return exe
}

func TestKeyIgnoresNamesNotShapes(t *testing.T) {
	mod := funcs(t)
	a, b, c := mod.PrimFunc("transpose"), mod.PrimFunc("renamed"), mod.PrimFunc("smaller")
	assert.Equal(t, tunedb.Key(a), tunedb.Key(b), "names change the key")
	assert.NotEqual(t, tunedb.Key(a), tunedb.Key(c), "shapes do not change the key")
	s := &kernel.Schedule{Nests: []*kernel.NestSchedule{{Order: []int{1, 0}, Vector: true, Parallel: -1}}}
	assert.Equal(t, tunedb.Key(a), tunedb.Key(kernel.WithSchedule(a, s)), "a carried schedule changes the key")
}

// TestTuneApplyLoad runs the whole path: tune an executable's kernels
// into a database, save and reload it, apply it, load the kernels
// through vm/loader and check they compute what the untuned ones do.
func TestTuneApplyLoad(t *testing.T) {
	mod := funcs(t)
	exe := executable(t, mod.PrimFunc("transpose"), mod.PrimFunc("renamed"), mod.PrimFunc("smaller"), mod.PrimFunc("mm"))
	db := &tunedb.DB{Version: tunedb.Version}
	res, err := tunedb.Tune(exe, db, tunedb.Options{Budget: time.Second, Seed: 1})
	require.NoError(t, err)
	require.Len(t, res, 4)
	assert.NotNil(t, res[0].Tune, "transpose was not tuned: %s", res[0].Skipped)
	assert.Contains(t, res[1].Skipped, "same structure")
	assert.NotNil(t, res[2].Tune, "smaller was not tuned: %s", res[2].Skipped)
	assert.Contains(t, res[3].Skipped, "fast path")
	require.Len(t, db.Records, 2)

	path := filepath.Join(t.TempDir(), "db.json")
	require.NoError(t, db.Save(path))
	back, err := tunedb.Load(path, false)
	require.NoError(t, err)
	assert.Equal(t, db, back)

	// A second run finds everything in the database.
	res, err = tunedb.Tune(exe, back, tunedb.Options{Budget: time.Second})
	require.NoError(t, err)
	assert.Contains(t, res[0].Skipped, "in the database")

	// Force a schedule so that Apply has something to write, whatever
	// the machine measured.
	rec, ok := back.Lookup(tunedb.Key(mod.PrimFunc("transpose")))
	require.True(t, ok)
	rec.Schedule = &kernel.Schedule{Nests: []*kernel.NestSchedule{{Order: []int{0, 1}, Vector: true, Tile: []int64{8, 64}, Parallel: -1}}}
	n, err := tunedb.Apply(exe, back)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n, 2, "both transpose kernels share the record")
	for i, k := range exe.Kernels[:2] {
		f, err := tirenc.Decode(k.TIR)
		require.NoError(t, err)
		s, err := kernel.ScheduleOf(f)
		require.NoError(t, err)
		assert.Equal(t, rec.Schedule, s, "kernel %d", i)

		tuned, err := loader.CompileKernel(k)
		require.NoError(t, err)
		plain, err := kernel.Compile(mod.PrimFunc("transpose"), "plain")
		require.NoError(t, err)
		a := tensor.New(tensor.Float32, 300, 500)
		r := rand.New(rand.NewPCG(1, 2))
		for e := range 300 * 500 {
			a.SetFloat64(e, r.Float64())
		}
		b1, b2 := tensor.New(tensor.Float32, 500, 300), tensor.New(tensor.Float32, 500, 300)
		require.NoError(t, tuned.Call([]abi.Arg{{T: a}, {T: b1}}))
		require.NoError(t, plain.Call([]abi.Arg{{T: a}, {T: b2}}))
		assert.Equal(t, b2.Bytes(), b1.Bytes())
	}
}

// TestBadDatabase: malformed files are errors naming the problem.
func TestBadDatabase(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{``, "not a tuning database"},
		{`[]`, "not a tuning database"},
		{`{"version": 1, "records": [], "extra": 1}`, "unknown field"},
		{`{"version": 9, "records": []}`, "version 9"},
		{`{"version": 1, "records": [{"hash": "xyz"}]}`, "not 16 hex digits"},
		{`{"version": 1, "records": [{"hash": "00000000000000aa"}, {"hash": "00000000000000aa"}]}`, "duplicated"},
		{`{"version": 1, "records": [{"hash": "00000000000000aa", "schedule": {"nests": [{"order": "x"}]}}]}`, "not a tuning database"},
		{`{"version": 1, "records": []} {}`, "data after"},
	} {
		_, err := tunedb.Parse([]byte(c.data))
		require.Error(t, err, c.data)
		assert.Contains(t, err.Error(), c.want, c.data)
	}
	// Every truncation of a valid file is an error or a database, never
	// a panic.
	db := &tunedb.DB{Version: tunedb.Version, Records: []tunedb.Record{{Hash: "0123456789abcdef", Name: "k",
		Schedule: &kernel.Schedule{Nests: []*kernel.NestSchedule{{Order: []int{1, 0}, Vector: true, Parallel: -1}}}}}}
	data := db.Marshal()
	for i := range data {
		_, _ = tunedb.Parse(data[:i])
	}
	_, err := tunedb.Load(filepath.Join(t.TempDir(), "missing.json"), false)
	assert.Error(t, err)
	empty, err := tunedb.Load(filepath.Join(t.TempDir(), "missing.json"), true)
	require.NoError(t, err)
	assert.Empty(t, empty.Records)

	// A record whose schedule does not fit its kernel.
	mod := funcs(t)
	exe := executable(t, mod.PrimFunc("transpose"))
	bad := &tunedb.DB{Version: tunedb.Version, Records: []tunedb.Record{{Hash: tunedb.Key(mod.PrimFunc("transpose")),
		Schedule: &kernel.Schedule{Nests: []*kernel.NestSchedule{{Order: []int{0, 0}, Parallel: -1}}}}}}
	_, err = tunedb.Apply(exe, bad)
	assert.ErrorContains(t, err, "not a permutation")

	// A kernel record carrying a malformed schedule fails to load.
	f := mod.PrimFunc("transpose")
	g := *f
	g.Attrs = f.Attrs.With(kernel.ScheduleAttr, `{"nests": [{"order": [5]}]}`)
	data, err = tirenc.Encode(&g)
	require.NoError(t, err)
	k := exe.Kernels[0]
	k.TIR = data
	_, err = loader.CompileKernel(k)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "kernel transpose"), err.Error())
}
