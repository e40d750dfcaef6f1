package kernel_test

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

// takeFuncs are take nests as LegalizeOps writes R.take: along the first
// axis (an embedding lookup), along a middle axis with a 2-D int32 index
// (cast to int64), a 1-D table (slabs of one element), int64 data, and an
// embedding big enough to split across cores.
const takeFuncs = `
    @T.prim_func(private=True)
    def take0(A: T.Buffer((T.int64(37), T.int64(53)), "float32"), B: T.Buffer((T.int64(9),), "int64"), T_take: T.Buffer((T.int64(9), T.int64(53)), "float32")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1 in T.grid(T.int64(9), T.int64(53)):
            with T.block("T_take"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_take[v_ax0, v_ax1] = A[B[v_ax0], v_ax1]

    @T.prim_func(private=True)
    def take1(A: T.Buffer((T.int64(3), T.int64(11), T.int64(5)), "float32"), B: T.Buffer((T.int64(2), T.int64(4)), "int32"), T_take: T.Buffer((T.int64(3), T.int64(2), T.int64(4), T.int64(5)), "float32")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1, ax2, ax3 in T.grid(T.int64(3), T.int64(2), T.int64(4), T.int64(5)):
            with T.block("T_take"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T_take[v_ax0, v_ax1, v_ax2, v_ax3] = A[v_ax0, T.Cast("int64", B[v_ax1, v_ax2]), v_ax3]

    @T.prim_func(private=True)
    def take_vec(A: T.Buffer((T.int64(10),), "float32"), B: T.Buffer((T.int64(7),), "int64"), T_take: T.Buffer((T.int64(7),), "float32")):
        T.func_attr({"tir.noalias": True})
        for ax0 in range(T.int64(7)):
            with T.block("T_take"):
                v_ax0 = T.axis.spatial(T.int64(7), ax0)
                T_take[v_ax0] = A[B[v_ax0]]

    @T.prim_func(private=True)
    def take_int(A: T.Buffer((T.int64(6), T.int64(3)), "int64"), B: T.Buffer((T.int64(1),), "int64"), T_take: T.Buffer((T.int64(1), T.int64(3)), "int64")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1 in T.grid(T.int64(1), T.int64(3)):
            with T.block("T_take"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_take[v_ax0, v_ax1] = A[B[v_ax0], v_ax1]

    @T.prim_func(private=True)
    def take_big(A: T.Buffer((T.int64(1000), T.int64(768)), "float32"), B: T.Buffer((T.int64(513),), "int64"), T_take: T.Buffer((T.int64(513), T.int64(768)), "float32")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1 in T.grid(T.int64(513), T.int64(768)):
            with T.block("T_take"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T_take[v_ax0, v_ax1] = A[B[v_ax0], v_ax1]
`

// takeArgs makes random arguments with every index in [0, rows).
func takeArgs(t *testing.T, name string, rng *rand.Rand) []abi.Arg {
	f := parseFunc(t, takeFuncs, name)
	args := makeArgs(t, f, nil, rng)
	rows := map[string]int{"take0": 37, "take1": 11, "take_vec": 10, "take_int": 6, "take_big": 1000}[name]
	ix := args[1].T
	for k := range int(ix.NumElements()) {
		ix.SetFloat64(k, float64(rng.IntN(rows)))
	}
	return args
}

// TestTake: the take path against the reference and the general path (in
// both its modes), on every shape class; an index out of bounds (past the
// end, or negative: the legalized TIR does not wrap) leaves the call to
// the general path, which fails as the reference does.
func TestTake(t *testing.T) {
	mod := parseModule(t, takeFuncs)
	for _, name := range []string{"take0", "take1", "take_vec", "take_int", "take_big"} {
		t.Run(name, func(t *testing.T) {
			if name == "take_big" && testing.Short() {
				t.Skip("the reference and scalar modes on 394k elements: TestTakeConcurrent checks it in -short")
			}
			f := mod.PrimFunc(name)
			rng := rand.New(rand.NewPCG(3, 5))
			args := takeArgs(t, name, rng)
			k := checkAll(t, f, args)
			require.Equal(t, "take", k.Pattern())
			before := kernel.FastTaken()
			require.NoError(t, k.Call(cloneArgs(args)))
			require.Greater(t, kernel.FastTaken(), before, "fast path taken")

			for _, bad := range []int64{-1, 1 << 40} {
				a := cloneArgs(args)
				ix := a[1].T
				if ix.DType == tensor.Int32 && bad > 1<<30 {
					bad = 1 << 30
				}
				ix.SetFloat64(int(ix.NumElements())-1, float64(bad))
				checkAll(t, f, a) // the reference fails; every mode must
				before := kernel.FastTaken()
				require.Error(t, k.Call(a))
				require.Equal(t, before, kernel.FastTaken(), "fast path declined")
			}
		})
	}
}

// TestTakeConcurrent calls a take that splits across cores from several
// goroutines (run with -race) and checks every slab.
func TestTakeConcurrent(t *testing.T) {
	f := parseFunc(t, takeFuncs, "take_big")
	k, err := kernel.Compile(f, "take_big")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			args := takeArgs(t, "take_big", rand.New(rand.NewPCG(9, uint64(g))))
			if !assertNoError(t, k.Call(args)) {
				return
			}
			a, ix, out := tensor.Data[float32](args[0].T), tensor.Data[int64](args[1].T), tensor.Data[float32](args[2].T)
			for j, i := range ix {
				for c := range 768 {
					if out[j*768+c] != a[int(i)*768+c] {
						t.Errorf("goroutine %d: out[%d, %d] = %v, want A[%d, %d] = %v", g, j, c, out[j*768+c], i, c, a[int(i)*768+c])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}

// BenchmarkTakeSideBySide times, interleaved in every iteration, an
// embedding lookup (513 rows of a 1000x768 table) on the general path, on
// the take path and copy() of its output bytes (the roofline: the take
// reads and writes each output byte once), and reports the medians
// µs-wall (take), x-general and copy-frac (copy time / take time):
//
//	go test ./vm/kernel -run '^$' -bench TakeSideBySide -benchtime 50x -cpu 1
func BenchmarkTakeSideBySide(b *testing.B) {
	f := parseFunc(b, takeFuncs, "take_big")
	fast, err := kernel.Compile(f, "take_big")
	must(b, err)
	general, err := kernel.CompileWith(f, "take_big", kernel.Options{General: true})
	must(b, err)
	args := makeArgs(b, f, nil, rand.New(rand.NewPCG(1, 2)))
	ix := tensor.Data[int64](args[1].T)
	for k := range ix {
		ix[k] = int64(k*7919) % 1000
	}
	src, dst := make([]byte, len(args[2].T.Bytes())), make([]byte, len(args[2].T.Bytes()))
	runs := []func(){
		func() { must(b, general.Call(args)) },
		func() { must(b, fast.Call(args)) },
		func() { copy(dst, src) },
	}
	var wall [3][]float64
	for range b.N {
		for i, run := range runs {
			t0 := time.Now()
			run()
			wall[i] = append(wall[i], float64(time.Since(t0)))
		}
	}
	for i := range wall {
		slices.Sort(wall[i])
	}
	med := func(x []float64) float64 { return x[len(x)/2] }
	b.ReportMetric(med(wall[1])/1e3, "µs-wall")
	b.ReportMetric(med(wall[0])/med(wall[1]), "x-general")
	b.ReportMetric(med(wall[2])/med(wall[1]), "copy-frac")
}

// TestTakeDoesNotAllocate: after a warm-up call, the take path allocates
// nothing, serial or split across the worker pool.
func TestTakeDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, name := range []string{"take1", "take_big"} {
		f := parseFunc(t, takeFuncs, name)
		k, err := kernel.Compile(f, name)
		require.NoError(t, err)
		args := takeArgs(t, name, rand.New(rand.NewPCG(4, 4)))
		require.NoError(t, k.Call(args))
		require.Zero(t, testing.AllocsPerRun(20, func() { _ = k.Call(args) }), name)
	}
}
