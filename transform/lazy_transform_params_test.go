package transform_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes/passtest"
	"github.com/phasec/phasec/semcheck"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
)

// lazyCallbacks serve the weights to the fetch callback and record what
// the output callback receives, checking indices and names.
type lazyCallbacks struct {
	t       *testing.T
	weights []op.Value
	names   []string // parameter names fget_param must pass, when known
	outputs map[int]op.Value
}

func (c *lazyCallbacks) get(args []op.Value) (op.Value, error) {
	i, err := lazyIndex(args)
	if err != nil {
		return nil, err
	}
	if i >= len(c.weights) {
		return nil, fmt.Errorf("fetch of weight %d: there are %d", i, len(c.weights))
	}
	if len(args) == 2 && c.names != nil {
		assert.Equal(c.t, op.Str(c.names[i]), args[1], "name passed with weight %d", i)
	}
	return c.weights[i], nil
}

func (c *lazyCallbacks) set(args []op.Value) (op.Value, error) {
	i, err := lazyIndex(args)
	if err != nil {
		return nil, err
	}
	if len(args) != 2 {
		return nil, fmt.Errorf("set takes (index, value), got %d arguments", len(args))
	}
	_, twice := c.outputs[i]
	assert.False(c.t, twice, "output %d handed over twice", i)
	c.outputs[i] = args[1]
	return op.Tuple{}, nil
}

func lazyIndex(args []op.Value) (int, error) {
	if len(args) == 0 {
		return 0, fmt.Errorf("no index")
	}
	p, ok := args[0].(op.Prim)
	if !ok {
		return 0, fmt.Errorf("index is %s", op.KindOf(args[0]))
	}
	return int(p.I), nil
}

// collected is the outputs as a tuple, requiring indices 0..n-1.
func (c *lazyCallbacks) collected(n int) op.Tuple {
	c.t.Helper()
	require.Len(c.t, c.outputs, n, "outputs handed over")
	out := make(op.Tuple, n)
	for i := range n {
		v, ok := c.outputs[i]
		require.True(c.t, ok, "output %d never handed over", i)
		out[i] = v
	}
	return out
}

// TestLazyPassesCompute is the semantic oracle of the three lazy passes
// on their golden inputs: with Go callbacks serving the weights and
// collecting the outputs, the rewritten function computes what the
// original did on the same weights.
func TestLazyPassesCompute(t *testing.T) {
	checked := map[string]int{}
	for dir, pipeline := range goldens {
		pass := strings.SplitN(dir, "/", 2)[0]
		if !strings.HasPrefix(pass, "Lazy") {
			continue
		}
		inputs, err := passtest.Inputs("../testdata/passes/" + dir)
		require.NoError(t, err)
		for _, path := range inputs {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			if strings.Contains(string(src), "# want") {
				continue
			}
			t.Run(dir+"/"+filepath.Base(path), func(t *testing.T) {
				before := evaltest.Parse(t, path, string(src))
				res := passtest.Execute(barrier.Registry, path, src, pipeline, passtest.Options{})
				require.NoError(t, res.Err)
				for _, name := range before.Names() {
					f, g := before.Func(name), res.Output.Func(name)
					if f == nil || g == nil || !ir.IsPublic(f) {
						continue
					}
					if pass == "LazyTransformParams" && !strings.HasSuffix(name, "transform_params") {
						continue
					}
					checkLazy(t, pass, pipeline, f, before, res.Output, name)
					checked[pass]++
				}
			})
		}
	}
	for _, pass := range []string{"LazyTransformParams", "LazyGetInput", "LazySetOutput"} {
		assert.GreaterOrEqual(t, checked[pass], 3, "functions of %s checked", pass)
	}
}

// checkLazy compares function name of before and after on seeded random
// arguments (m, a symbolic dimension, is 4).
func checkLazy(t *testing.T, pass, pipeline string, f *ir.Function, before, after *ir.Module, name string) {
	args, err := eval.RandomArgs(f, 5, map[string]int64{"m": 4, "rank": 1}, 3)
	require.NoError(t, err)
	want, err := eval.New(before).Call(name, args...)
	require.NoError(t, err)
	n := 0
	if k, ok := f.Attrs.Int(ir.AttrNumInput); ok {
		n = int(k)
	}
	cb := &lazyCallbacks{t: t, outputs: map[int]op.Value{}}
	m := eval.New(after)
	m.Register("fget", cb.get)
	m.Register("fset", cb.set)
	m.Register("get_item", cb.get)
	m.Register("set_item", cb.set)
	var got op.Value
	switch pass {
	case "LazyTransformParams":
		cb.weights = args[n:]
		if len(cb.weights) == 1 {
			if tup, ok := cb.weights[0].(op.Tuple); ok {
				cb.weights = tup
			}
		}
		got, err = m.Call(name, args[:n]...)
		require.NoError(t, err)
		if strings.Contains(pipeline, `fset_item=""`) {
			break
		}
		wt, ok := want.(op.Tuple)
		require.True(t, ok, "a transform function returns a tuple")
		assert.Equal(t, op.Tuple{}, got, "the lazy function returns R.tuple()")
		got = cb.collected(len(wt))
	case "LazyGetInput":
		cb.weights = args[n:]
		for _, p := range f.Params[n:] {
			cb.names = append(cb.names, p.Name)
		}
		got, err = m.Call(name, append(append([]op.Value{}, args[:n]...), eval.PackedRef{Symbol: "fget"})...)
		require.NoError(t, err)
	case "LazySetOutput":
		at := len(args)
		if _, ok := f.Attrs.Int(ir.AttrNumInput); ok {
			at = n
		}
		largs := append(append(append([]op.Value{}, args[:at]...), eval.PackedRef{Symbol: "fset"}), args[at:]...)
		got, err = m.Call(name, largs...)
		require.NoError(t, err)
		assert.Equal(t, op.Tuple{}, got, "the lazy function returns R.tuple()")
		if _, isTuple := f.Body.(*ir.SeqExpr).Body.(*ir.Tuple); isTuple {
			got = cb.collected(len(want.(op.Tuple)))
		} else {
			got = cb.collected(1)[0]
		}
	}
	require.NoError(t, eval.Compare(got, want, eval.Float32Tol), "%s after %s", name, pass)
}

// The VM side: packed functions registered in Go serve the weights to
// get_item and receive set_item's outputs, as TVM's tests register
// Python functions under those names.
var (
	vmLazyOnce sync.Once
	vmLazyMu   sync.Mutex
	vmLazy     struct {
		weights []*tensor.Tensor
		outputs map[int64]*tensor.Tensor
	}
)

func registerVMLazy(t *testing.T) {
	vmLazyOnce.Do(func() {
		require.NoError(t, vm.RegisterBuiltin(&vm.Builtin{Name: "phasec.test.get_item", MinArgs: 1, MaxArgs: 1,
			Fn: func(_ *vm.Machine, args []vm.Value) (vm.Value, error) {
				i, ok := args[0].Int()
				vmLazyMu.Lock()
				defer vmLazyMu.Unlock()
				if !ok || i < 0 || i >= int64(len(vmLazy.weights)) {
					return vm.Value{}, fmt.Errorf("get_item(%v): no such weight", args[0])
				}
				return vm.TensorValue(vmLazy.weights[i].Clone()), nil
			}}))
		require.NoError(t, vm.RegisterBuiltin(&vm.Builtin{Name: "phasec.test.set_item", MinArgs: 2, MaxArgs: 2,
			Fn: func(_ *vm.Machine, args []vm.Value) (vm.Value, error) {
				i, ok := args[0].Int()
				x, isTensor := args[1].Tensor()
				if !ok || !isTensor {
					return vm.Value{}, fmt.Errorf("set_item(%v, %v): want an index and a tensor", args[0], args[1])
				}
				vmLazyMu.Lock()
				defer vmLazyMu.Unlock()
				if _, twice := vmLazy.outputs[i]; twice {
					return vm.Value{}, fmt.Errorf("set_item(%d) called twice", i)
				}
				vmLazy.outputs[i] = x.Clone() // the VM recycles the header
				return vm.TupleValue(), nil
			}}))
	})
}

// TestLazyTransformParamsOnTheVM builds lifted weight transforms made lazy
// and runs them on the VM with Go get_item/set_item: what set_item
// receives is what the function returned before, on the same weights.
func TestLazyTransformParamsOnTheVM(t *testing.T) {
	registerVMLazy(t)
	for _, file := range []string{"lazy_transform_params.tvms", "duplicate_outputs.tvms", "output_with_use_site.tvms", "params_without_tuple.tvms"} {
		t.Run(file, func(t *testing.T) {
			path := "../testdata/passes/LazyTransformParams/" + file
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			before := evaltest.Parse(t, path, string(src))
			name := "main_transform_params"
			if before.Func(name) == nil {
				name = "transform_params"
			}
			f := before.Func(name)
			args, err := eval.RandomArgs(f, 9, nil, 3)
			require.NoError(t, err)
			want, err := eval.New(before).Call(name, args...)
			require.NoError(t, err)

			weights := args
			if tup, ok := args[0].(op.Tuple); ok && len(args) == 1 {
				weights = tup
			}
			vmLazyMu.Lock()
			vmLazy.weights = vmLazy.weights[:0]
			for _, w := range weights {
				x, ok := w.(*tensor.Tensor)
				require.True(t, ok, "weights are tensors")
				vmLazy.weights = append(vmLazy.weights, x)
			}
			vmLazy.outputs = map[int64]*tensor.Tensor{}
			vmLazyMu.Unlock()

			built, err := runPipeline(t, `LazyTransformParams{fget_item="phasec.test.get_item",fset_item="phasec.test.set_item"},canonicalize,optimize,lower,build`, before)
			require.NoError(t, err)
			out, err := semcheck.Evaluate(built, name, nil, nil)
			require.NoError(t, err)
			assert.Equal(t, op.Tuple{}, out, "the lazy function returns R.tuple()")

			vmLazyMu.Lock()
			defer vmLazyMu.Unlock()
			wt := want.(op.Tuple)
			require.Len(t, vmLazy.outputs, len(wt), "outputs set")
			got := make(op.Tuple, len(wt))
			for i := range wt {
				x, ok := vmLazy.outputs[int64(i)]
				require.True(t, ok, "output %d never set", i)
				got[i] = x
			}
			require.NoError(t, eval.Compare(got, want, eval.Float32Tol))
		})
	}
}

// TestLazyCallbacksOnTheVM runs LazyGetInput's and LazySetOutput's
// results on the VM: a driver function added after the pass passes a
// private Relax function as the callback, which calls the Go builtins
// serving the weights and receiving the outputs.
func TestLazyCallbacksOnTheVM(t *testing.T) {
	registerVMLazy(t)
	const callbacks = `
    @R.function(private=True)
    def fget(i: R.Prim("int64"), name: R.Object) -> R.Object:
        return R.call_pure_packed("phasec.test.get_item", i, sinfo_args=(R.Object,))

    @R.function(pure=False, private=True)
    def fset(i: R.Prim("int64"), v: R.Object) -> R.Tuple:
        _ = R.call_packed("phasec.test.set_item", i, v, sinfo_args=(R.Object,))
        return R.tuple()
`
	for _, c := range []struct{ pass, file, driver string }{
		{"LazyGetInput", "get_item_callback.tvms", `
    @R.function
    def driver() -> R.Tuple(R.Tensor((4, 4), "float32"), R.Tensor((4, 4), "float32")):
        cls = Module
        r = cls.transform_params(cls.fget)
        return r
`},
		{"LazySetOutput", "set_output_callback.tvms", `
    @R.function(pure=False)
    def driver(A: R.Tensor((4, 4), "float32"), B: R.Tensor((4, 4), "float32")) -> R.Tuple:
        cls = Module
        r = cls.transform_params(A, B, cls.fset)
        return r
`},
		{"LazySetOutput", "of_param.tvms", `
    @R.function(pure=False)
    def driver(A: R.Tensor((4, 4), "float32"), B: R.Tensor((4, 4), "float32")) -> R.Tuple:
        cls = Module
        r = cls.transform_params(A, B, cls.fset)
        return r
`},
	} {
		t.Run(c.pass+"/"+c.file, func(t *testing.T) {
			path := "../testdata/passes/" + c.pass + "/" + c.file
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			before := evaltest.Parse(t, path, string(src))
			f := before.Func("transform_params")
			args, err := eval.RandomArgs(f, 11, nil, 3)
			require.NoError(t, err)
			want, err := eval.New(before).Call("transform_params", args...)
			require.NoError(t, err)

			lazy, err := runPipeline(t, c.pass, before)
			require.NoError(t, err)
			withDriver := evaltest.Parse(t, "driver.tvms", printer.Print(lazy)+callbacks+c.driver)
			built, err := runPipeline(t, "canonicalize,optimize,lower,build", withDriver)
			require.NoError(t, err)

			vmLazyMu.Lock()
			vmLazy.weights = vmLazy.weights[:0]
			for _, a := range args {
				vmLazy.weights = append(vmLazy.weights, a.(*tensor.Tensor))
			}
			vmLazy.outputs = map[int64]*tensor.Tensor{}
			vmLazyMu.Unlock()

			if c.pass == "LazyGetInput" {
				got, err := semcheck.Evaluate(built, "driver", nil, want)
				require.NoError(t, err)
				require.NoError(t, eval.Compare(got, want, eval.Float32Tol))
				return
			}
			_, err = semcheck.Evaluate(built, "driver", args, nil) // R.tuple(): the VM's void
			require.NoError(t, err)
			vmLazyMu.Lock()
			defer vmLazyMu.Unlock()
			wt := want.(op.Tuple)
			require.Len(t, vmLazy.outputs, len(wt), "outputs set")
			got := make(op.Tuple, len(wt))
			for i := range wt {
				got[i] = vmLazy.outputs[int64(i)]
			}
			require.NoError(t, eval.Compare(got, want, eval.Float32Tol))
		})
	}
}

// lazyChain is a weight transform of n weights: n bindings each doubling
// one weight, all of them outputs.
func lazyChain(n int) *ir.Module {
	var b strings.Builder
	b.WriteString("@I.ir_module\nclass Module:\n    @R.function\n    def main_transform_params(")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "w%d: R.Tensor((2,), \"float32\")", i)
	}
	b.WriteString("):\n        with R.dataflow():\n")
	for i := range n {
		fmt.Fprintf(&b, "            t%d = R.add(w%d, w%d)\n", i, i, i)
	}
	b.WriteString("            gv = (")
	for i := range n {
		fmt.Fprintf(&b, "t%d, ", i)
	}
	b.WriteString(")\n            R.output(gv)\n        return gv\n")
	return irgen.MustNormalize(mustParse(b.String()))
}
