package transform_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/semcheck"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/transform"
	"github.com/phasec/phasec/wellformed"
)

// A module with nothing to convert (already float16, no MixedAlways op)
// comes out as the same pointer.
func TestToMixedPrecisionUnchangedIsSamePointer(t *testing.T) {
	mod := parseFile(t, "../testdata/passes/ToMixedPrecision/call_tir_float16_args.tvms")
	out, err := transform.MixedPrecision(mod, "float32", "float16", nil)
	require.NoError(t, err)
	assert.Same(t, mod, out)
}

func TestToMixedPrecisionBadOptions(t *testing.T) {
	requireBadPipelines(t, map[string]string{
		`ToMixedPrecision{out_dtype=float64}`:        `pipeline:1:1: error PIPE002: pass ToMixedPrecision: option out_dtype: .*float32.*float16.*bfloat16`,
		`ToMixedPrecision{out_dtype=fp16}`:           `pipeline:1:1: error PIPE002: pass ToMixedPrecision: option out_dtype`,
		`ToMixedPrecision{storage_dtype=float8}`:     `pipeline:1:1: error PIPE002: pass ToMixedPrecision: option storage_dtype`,
		`ToMixedPrecision{fp16_input_names="w"}`:     `pipeline:1:\d+: error PIPE003: .*fp16_input_names`,
		`ToMixedPrecision{out_dtype=float32,oops=1}`: `pipeline:1:\d+: error PIPE\d+: .*oops`,
	})
}

// Options the pipeline accepts but the module refuses: positioned
// diagnostics, nothing applied.
func TestToMixedPrecisionBadInput(t *testing.T) {
	mod := parseFile(t, "../testdata/passes/ToMixedPrecision/dynamic_strided_slice.tvms")
	for spec, want := range map[string]string{
		// float16 accumulation with bfloat16 storage mixes the two.
		`ToMixedPrecision{out_dtype=float16,storage_dtype=bfloat16}`: `dynamic_strided_slice.tvms: error OPT620: ToMixedPrecision: out_dtype=float16: the accumulation dtype must be float32 or the storage dtype bfloat16`,
		// A parameter the module does not have, with the closest one.
		`ToMixedPrecision{fp16_input_names=["W"]}`: `dynamic_strided_slice.tvms: error OPT621: .*names "W", which is no function's parameter \(did you mean "w"\?\)`,
		// An int64 parameter cannot become float16: at its position.
		`ToMixedPrecision{fp16_input_names=["begin"]}`: `dynamic_strided_slice.tvms:10:\d+: error OPT622: .*parameter begin of main, a R.Tensor\(\(4,\), dtype="int64"\), not a float32 tensor`,
	} {
		t.Run(spec, func(t *testing.T) {
			out, err := runPipeline(t, spec, mod)
			require.Error(t, err)
			assert.Nil(t, out)
			assert.Regexp(t, want, err.Error())
		})
	}
}

// ToMixedPrecision rewrites high-level ops: after optimize (which
// legalizes at -O2) the static check refuses it and names the step.
func TestToMixedPrecisionAfterOptimizeIsRejected(t *testing.T) {
	check := func(spec string, level int) diag.List {
		p, diags := barrier.Registry.ParseAndBuild("--passes", spec)
		require.Empty(t, diags, spec)
		pc := passes.NewPassContext()
		pc.OptLevel = level
		return passes.Check(p, pc, phase.Ingest, phase.Ingest.Invariants())
	}
	errs := check("canonicalize,optimize,ToMixedPrecision", 2)
	require.Len(t, errs, 1)
	assert.Equal(t, diag.Code("CHK005"), errs[0].Code)
	assert.Contains(t, errs[0].Msg, "pass ToMixedPrecision must run before Legalized holds")
	assert.Contains(t, errs[0].Msg, "optimize establishes it earlier in the pipeline")
	assert.Equal(t, "--passes:1:23", errs[0].Span.String())
	assert.Contains(t, errs[0].Hint, "move ToMixedPrecision before the step that establishes Legalized")
	assert.Empty(t, check("canonicalize,ToMixedPrecision,optimize,lower,build", 2))
	// At -O1 the optimize barrier does not legalize: a warning for -O2.
	errs = check("canonicalize,optimize,ToMixedPrecision", 1)
	assert.False(t, errs.HasErrors(), "%v", errs)
	require.NotEmpty(t, errs)
	assert.Contains(t, errs[0].Msg, "at opt level 2: pass ToMixedPrecision must run before Legalized")
}

// The op records carry TVM's policies: the ops TVM registers kAlways
// (with out_dtype accumulation where TVM's FInferMixedPrecision sets
// it) and kFollow; every other op is kNever.
func TestMixedPrecisionPoliciesMatchTVM(t *testing.T) {
	always := map[string]bool{ // name -> accumulates in out_dtype
		"relax.matmul": true, "relax.outer": false, "relax.nn.attention": false,
		"relax.nn.conv1d": true, "relax.nn.conv2d": true, "relax.nn.conv3d": true,
		"relax.nn.conv1d_transpose": true, "relax.nn.conv2d_transpose": true,
		// Not in TVM v0.23 (no such op there); phasec's follows its family.
		"relax.nn.conv3d_transpose": true,
	}
	follow := map[string]bool{}
	for _, n := range []string{
		"image.resize2d", "nn.layer_norm", "nn.group_norm", "nn.rms_norm", "nn.dropout",
		"nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d", "nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d",
		"nn.adaptive_avg_pool1d", "nn.adaptive_avg_pool2d", "nn.adaptive_avg_pool3d",
		"full", "full_like", "ones", "zeros", "eye", "arange", "astype", "strided_slice", "dynamic_strided_slice",
		"broadcast_to", "concat", "expand_dims", "flatten", "layout_transform", "permute_dims", "reshape",
		"split", "squeeze", "stack",
		// RELAX_REGISTER_UNARY_OP and the binary macros.
		"abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_not", "ceil", "cos", "cosh", "exp",
		"floor", "log", "logical_not", "negative", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "square",
		"sqrt", "tan", "tanh", "trunc", "erf", "isfinite", "isinf", "isnan",
		"nn.relu", "nn.gelu", "nn.gelu_tanh", "nn.silu",
		"add", "divide", "floor_divide", "multiply", "power", "subtract", "mod", "floor_mod",
		"equal", "greater", "greater_equal", "less", "less_equal", "not_equal", "minimum", "maximum",
		"logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
	} {
		follow["relax."+n] = true
	}
	for _, d := range op.Defs() {
		name, pol := d.Op.Name, d.MixedPrecision
		acc, isAlways := always[name]
		switch {
		case isAlways:
			assert.Equal(t, op.MixedAlways, pol.Kind, name)
			assert.Equal(t, acc, pol.Accumulate != nil, "%s: accumulates in out_dtype", name)
		case follow[name]:
			assert.Equal(t, op.MixedFollow, pol.Kind, name)
		default:
			assert.Equal(t, op.MixedNever, pol.Kind, name)
		}
	}
}

// The float32 MLP and the small CNN through ToMixedPrecision, optimize,
// lower and build run on the VM within the storage dtype's tolerance of
// the float32 build: |got - want| <= 4u * max|want| (+1e-4 absolute and
// relative), u = 2^-11 for float16 and 2^-8 for bfloat16
// (eval.Float16Tol, BFloat16Tol), 16u when accumulating in float16. The
// test logs the largest error in units of u.
func TestToMixedPrecisionModelsOnTheVM(t *testing.T) {
	models := []struct {
		path string
		dims map[string]int64
	}{
		{"../testdata/models/mlp.tvms", map[string]int64{"batch": 4}},
		{"../testdata/models/cnn/cnn_small.tvms", map[string]int64{"batch": 2}},
	}
	for _, m := range models {
		mod := parseFile(t, m.path)
		args, err := eval.RandomArgs(mod.Func("main"), 5, m.dims, 1)
		require.NoError(t, err)
		ref, err := runPipeline(t, "canonicalize,optimize,lower,build", mod)
		require.NoError(t, err)
		want, err := semcheck.Evaluate(ref, "main", args, nil)
		require.NoError(t, err)
		for _, c := range []struct {
			spec  string
			u     float64
			units float64
		}{
			{"ToMixedPrecision{out_dtype=float32}", 0x1p-11, 4},
			{"ToMixedPrecision{storage_dtype=bfloat16}", 0x1p-8, 4},
			// Accumulating in float16 rounds at every step of the
			// reduction: the error grows with its length (784 in the
			// MLP, where it reaches 5.4 units). The CNN's float16
			// accumulation runs on the general closures (no exact float32
			// twin), 15 s: not here.
			{"ToMixedPrecision{out_dtype=float16}", 0x1p-11, 16},
		} {
			if c.units > 4 && m.dims["batch"] != 4 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", m.path, c.spec), func(t *testing.T) {
				built, err := runPipeline(t, "canonicalize,"+c.spec+",optimize,lower,build", mod)
				require.NoError(t, err)
				got, err := semcheck.Evaluate(built, "main", args, want)
				require.NoError(t, err)
				require.NoError(t, eval.Compare(got, want, eval.Tolerance{Rel: 1e-4, Abs: 1e-4, Scale: c.units * c.u}))
				g, w := got.(*tensor.Tensor), want.(*tensor.Tensor)
				largest, worst := 0.0, 0.0
				for i := range int(w.NumElements()) {
					largest = max(largest, math.Abs(w.Float64At(i)))
				}
				for i := range int(w.NumElements()) {
					worst = max(worst, math.Abs(g.Float64At(i)-w.Float64At(i)))
				}
				units := worst / largest / c.u
				t.Logf("largest error %.2g of max|want| %.3g: %.2f units of roundoff", worst, largest, units)
				assert.Positive(t, worst, "16-bit storage must change something")
				assert.Less(t, units, c.units)
			})
		}
	}
}

// The pass's output on the golden inputs evaluates within the float16
// tolerance of its input (the semantic oracle, here also for
// fp16_input_names, whose function takes float16 weights).
func TestToMixedPrecisionConvertSigComputes(t *testing.T) {
	mod := parseFile(t, "../testdata/passes/ToMixedPrecision/convert_sig/convert_sig.tvms")
	out := evaltest.CheckPipeline(t, mod, `ToMixedPrecision{out_dtype=float16,fp16_input_names=["w","bias"]}`, evaltest.Options{})
	w := out.Func("main").Params[1]
	assert.Equal(t, ir.Float16, w.StructInfo().(*ir.TensorInfo).DType)
}

// A match_cast of a value stored in float16 checks the float32 cast back,
// bound to a var first: the output stays in A-normal form (WF023 found
// by the contract audit on ConvertLayout's test_conv2d_matchcast_bias).
func TestToMixedPrecisionMatchCastStaysNormalized(t *testing.T) {
	mod := parseFile(t, "../testdata/passes/ToMixedPrecision/match_cast.tvms")
	out, err := transform.MixedPrecision(mod, "float32", "float16", nil)
	require.NoError(t, err)
	require.NotSame(t, mod, out)
	errs := wellformed.CheckProperties(out, phase.Ingest.Invariants())
	assert.False(t, errs.HasErrors(), "%v", errs)
}
