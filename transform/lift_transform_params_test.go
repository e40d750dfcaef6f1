package transform_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/transform"
)

// liftComputes is the semantic oracle of LiftTransformParams on one
// module: for every function name with num_input, name(inputs,
// *name_transform_params(weights)) after the pass equals name(inputs,
// weights) before, on seeded random arguments. It returns how many
// functions it checked.
func liftComputes(t *testing.T, before, after *ir.Module, bundle bool) int {
	return liftComputesShared(t, before, after, bundle, nil)
}

// liftComputesShared is liftComputes for shared_transform when shared
// lists the functions sharing transform_params (nil: none).
func liftComputesShared(t *testing.T, before, after *ir.Module, bundle bool, shared []string) int {
	t.Helper()
	checked := 0
	for _, name := range before.Names() {
		f := before.Func(name)
		if f == nil || (shared != nil && !slices.Contains(shared, name)) {
			continue
		}
		n, ok := f.Attrs.Int(ir.AttrNumInput)
		if !ok || strings.HasSuffix(name, "transform_params") { // the pass leaves those
			continue
		}
		// m is a channel count in symbolic_var_in_param_shape.tvms,
		// which must match the input's 4 channels.
		args, err := eval.RandomArgs(f, 7, map[string]int64{"m": 4}, 3)
		require.NoError(t, err, name)
		want, err := eval.New(before).Call(name, args...)
		require.NoError(t, err, "%s before", name)

		weights := args[n:]
		targs := weights
		if bundle {
			targs = []op.Value{op.Tuple(weights)}
		}
		transform := name + "_transform_params"
		if shared != nil {
			transform = "transform_params"
		}
		if prior := before.Func(transform); prior != nil && shared == nil {
			// A second round: the new transform is the earlier one composed
			// with the new lifting and takes the earlier one's weights, so
			// the reference is name(inputs, *earlier(weights)) before.
			pargs, err := eval.RandomArgs(prior, 8, nil, 3)
			require.NoError(t, err, transform)
			earlier, err := eval.New(before).Call(transform, pargs...)
			require.NoError(t, err, "%s before", transform)
			efields, ok := earlier.(op.Tuple)
			require.True(t, ok, "%s returns a tuple", transform)
			want, err = eval.New(before).Call(name, append(append([]op.Value{}, args[:n]...), efields...)...)
			require.NoError(t, err, "%s before", name)
			targs = pargs
		}
		transformed, err := eval.New(after).Call(transform, targs...)
		require.NoError(t, err, "%s", transform)
		fields, ok := transformed.(op.Tuple)
		require.True(t, ok, "%s_transform_params returns a tuple", name)
		margs := append(append([]op.Value{}, args[:n]...), fields...)
		got, err := eval.New(after).Call(name, margs...)
		require.NoError(t, err, "%s after", name)
		require.NoError(t, eval.Compare(got, want, eval.Float32Tol), "%s(inputs, *%s_transform_params(weights))", name, name)
		checked++
	}
	return checked
}

// TestLiftTransformParamsComputes runs the oracle on every golden input.
func TestLiftTransformParamsComputes(t *testing.T) {
	checked := 0
	for dir, bundle := range map[string]bool{"LiftTransformParams": true, "LiftTransformParams/unbundled": false} {
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
				res := passtest.Execute(barrier.Registry, path, src, goldens[dir], passtest.Options{})
				require.NoError(t, res.Err)
				checked += liftComputes(t, before, res.Output, bundle)
			})
		}
	}
	assert.GreaterOrEqual(t, checked, 10, "functions checked")

	for dir, shared := range map[string][]string{
		"LiftTransformParams/shared":      {"func1", "func2"},
		"LiftTransformParams/shared_list": {"func1", "func2"},
	} {
		inputs, err := passtest.Inputs("../testdata/passes/" + dir)
		require.NoError(t, err)
		n := 0
		for _, path := range inputs {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			if strings.Contains(string(src), "# want") {
				continue
			}
			before := evaltest.Parse(t, path, string(src))
			res := passtest.Execute(barrier.Registry, path, src, goldens[dir], passtest.Options{})
			require.NoError(t, res.Err)
			n += liftComputesShared(t, before, res.Output, true, shared)
		}
		assert.GreaterOrEqual(t, n, 2, "%s: functions checked", dir)
	}
}

// TestLiftTransformParamsTwice: a second round lifts nothing new, composes
// its transform function after the first (TVM's
// test_lift_transform_is_idempotent) and still computes the original.
func TestLiftTransformParamsTwice(t *testing.T) {
	for _, spec := range []string{"LiftTransformParams", "LiftTransformParams{bundle_params=false}", "LiftTransformParams{shared_transform=true}"} {
		t.Run(spec, func(t *testing.T) {
			path := "../testdata/passes/LiftTransformParams/lora.tvms"
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			before := evaltest.Parse(t, path, string(src))
			once, err := runPipeline(t, spec, before)
			require.NoError(t, err)
			twice, err := runPipeline(t, spec, once)
			require.NoError(t, err)
			assert.Equal(t, 2, twice.Len(), "functions after two rounds")
			var shared []string
			if strings.Contains(spec, "shared") {
				shared = []string{"main"}
			}
			assert.Equal(t, 1, liftComputesShared(t, before, twice, !strings.Contains(spec, "bundle_params=false"), shared))
		})
	}
}

// TestLiftTransformParamsBadInput: positioned diagnostics, nothing lifted.
func TestLiftTransformParamsBadInput(t *testing.T) {
	for src, want := range map[string]string{
		// num_input beyond the parameters.
		`@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        R.func_attr({"num_input": 2})
        return x
`: `bad.tvms:4:5: error OPT600: LiftTransformParams: main has num_input 2 but 1 parameters`,
		// negative num_input.
		`@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        R.func_attr({"num_input": -1})
        return x
`: `bad.tvms:4:5: error OPT600: .*num_input -1`,
		// The transform function's name is a PrimFunc's.
		`@I.ir_module
class Module:
    @T.prim_func(private=True)
    def main_transform_params(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(0)

    @R.function
    def main(x: R.Tensor((4,), "float32"), w: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        R.func_attr({"num_input": 1})
        return x
`: `bad.tvms:8:5: error OPT601: .*main_transform_params, not a Relax function`,
	} {
		mod := evaltest.Parse(t, "bad.tvms", src)
		out, err := runErr(transform.LiftTransformParams, mod)
		require.Error(t, err)
		assert.Nil(t, out)
		assert.Regexp(t, want, err.Error())
	}
}

// liftChain is irgen's chain of n bindings in main, made a function of one
// input and n weights: binding i adds weight i to the transposed weight i
// (lifted) and the result to the running value (kept).
func liftChain(n int) *ir.Module {
	var b strings.Builder
	b.WriteString("@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((2, 2), \"float32\")")
	for i := range n {
		fmt.Fprintf(&b, ", w%d: R.Tensor((2, 2), \"float32\")", i)
	}
	b.WriteString(") -> R.Tensor((2, 2), \"float32\"):\n        R.func_attr({\"num_input\": 1})\n        with R.dataflow():\n            v0 = x\n")
	for i := range n {
		fmt.Fprintf(&b, "            t%d = R.permute_dims(w%d)\n            u%d = R.add(w%d, t%d)\n            v%d = R.add(v%d, u%d)\n", i, i, i, i, i, i+1, i, i)
	}
	fmt.Fprintf(&b, "            R.output(v%d)\n        return v%d\n", n, n)
	return irgen.MustNormalize(mustParse(b.String()))
}

// mustParse parses a module a benchmark builds; it panics on diagnostics.
func mustParse(src string) *ir.Module {
	mod, diags := syntax.Parse("bench.tvms", []byte(src))
	if len(diags) > 0 {
		panic(diags[0])
	}
	return mod
}
