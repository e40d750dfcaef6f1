package transform_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/codegen"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/loader"
)

const nhwc = `ConvertLayout{desired_layouts={"relax.nn.conv2d":["NHWC","OHWI"]}}`

// TestConvertLayoutBadOptions: desired layouts an op cannot take are
// refused while the pipeline is built, positioned at the pass in the
// pipeline text, naming the op, the layout and what it accepts.
func TestConvertLayoutBadOptions(t *testing.T) {
	requireBadPipelines(t, map[string]string{
		`ConvertLayout{desired_layouts={"relax.nn.conv2d":["NHWQ","OHWI"]}}`:                   `pipeline:1:1: error PIPE002: .*unknown layout "NHWQ" for relax.nn.conv2d's data: 'Q' is not one of its axes N, C, H, W \(it accepts data a permutation of NCHW \(axes may be split: NCHW4c\), kernel a permutation of OIHW \(axes may be split: OIHW4i\), output a permutation of NCHW \(axes may be split: NCHW4c\) \(optional\)\)`,
		`ConvertLayout{desired_layouts={"relax.nn.conv2d":["NHWC","OHWJ"]}}`:                   `unknown layout "OHWJ" for relax.nn.conv2d's kernel: 'J' is not one of its axes O, I, H, W`,
		`canonicalize,ConvertLayout{desired_layouts={"relax.nn.conv2d":["NCHW16","OIHW16o"]}}`: `pipeline:1:14: error PIPE002: .*relax.nn.conv2d cannot take layout "NCHW16" for its data: the block size 16 at offset 4 ends the layout`,
		`ConvertLayout{desired_layouts={"relax.nn.conv1d":["NCW4c","OIW4o4o"]}}`:               `relax.nn.conv1d cannot take layout "OIW4o4o" for its kernel: the axis O is split twice`,
		`ConvertLayout{desired_layouts={"relax.nn.conv2d":["NHWC"]}}`:                          `relax.nn.conv2d takes 2 to 3 layouts .*, got 1`,
		`ConvertLayout{desired_layouts={"relax.nn.conv2d":["NHWCC","OHWI"]}}`:                  `relax.nn.conv2d cannot take layout "NHWCC" for its data`,
		`ConvertLayout{desired_layouts={"relax.nn.conv2dd":["NHWC","OHWI"]}}`:                  `relax.nn.conv2dd is not an op \(did you mean relax.nn.conv2d\?\)`,
		`ConvertLayout{desired_layouts={"relax.nn.max_pool2d":["NHWC"]}}`:                      `relax.nn.max_pool2d takes no desired layout: it follows its arguments' layouts \(ops that take one: .*relax.nn.conv2d`,
		`ConvertLayout{desired_layouts={"relax.image.resize2d":["NWHC"]}}`:                     `relax.image.resize2d cannot take layout "NWHC" for its data: it accepts data NCHW or NHWC`,
		`ConvertLayout{desired_layouts=["NHWC"]}`:                                              `want a JSON object from op names to lists of layouts`,
		`ConvertLayout{desired_layouts={"relax.nn.conv2d":"NHWC"}}`:                            `relax.nn.conv2d: want a list of layout strings`,
	})
}

// TestConvertLayoutAfterOptimizeRejected: at -O2 the optimize barrier
// legalizes, so ConvertLayout after it would find no conv2d left; the
// static check refuses the pipeline with CHK005 and says to move it.
func TestConvertLayoutAfterOptimizeRejected(t *testing.T) {
	mod := evaltest.Parse(t, "conv.tvms", readGolden(t, "test_conv2d.tvms"))
	p, errs := barrier.Registry.ParseAndBuild("pipeline", "canonicalize,optimize,"+nhwc)
	require.Empty(t, errs)
	ph, props, err := passes.StartState(mod)
	require.NoError(t, err)
	pc := passes.NewPassContext()
	require.Equal(t, 2, pc.OptLevel, "the default opt level")
	errs = passes.Check(p, pc, ph, props)
	require.Len(t, errs, 1, "%v", errs)
	assert.Equal(t, "CHK005", string(errs[0].Code))
	assert.Contains(t, errs[0].Msg, "pass ConvertLayout must run before Legalized holds (it rewrites high-level ops, which LegalizeOps turns into call_tir)")
	assert.Contains(t, errs[0].Hint, "move ConvertLayout before")

	// At -O1 the optimize barrier does not legalize: accepted.
	o1 := passes.NewPassContext()
	o1.OptLevel = 1
	errs = passes.Check(p, o1, ph, props)
	assert.False(t, errs.HasErrors(), "at -O1 optimize leaves the ops: %v", errs)
	assert.Contains(t, errs.Error(), "warning CHK005: at opt level 2", "the check warns of the levels where it breaks")

	// Before optimize the same pipeline is accepted.
	p, errs = barrier.Registry.ParseAndBuild("pipeline", "canonicalize,"+nhwc+",optimize")
	require.Empty(t, errs)
	assert.Empty(t, passes.Check(p, pc, ph, props))
}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile("../testdata/passes/ConvertLayout/" + name)
	require.NoError(t, err)
	return string(src)
}

// TestConvertLayoutUnchanged: without desired layouts (or without dataflow
// blocks) the pass returns its input itself.
func TestConvertLayoutUnchanged(t *testing.T) {
	for _, name := range []string{"test_conv2d.tvms", "test_conv2d_relu_concat_split.tvms", "no_dataflow.tvms"} {
		mod := evaltest.Parse(t, name, readGolden(t, name))
		out, err := runPipeline(t, "ConvertLayout", mod)
		require.NoError(t, err)
		assert.Same(t, mod.Func("main"), out.Func("main"), name)
	}
	mod := evaltest.Parse(t, "no_dataflow.tvms", readGolden(t, "no_dataflow.tvms"))
	out, err := runPipeline(t, nhwc, mod)
	require.NoError(t, err)
	assert.Same(t, mod.Func("main"), out.Func("main"))
}

// resnetInputs are inputs of the ResNet-style model: an image batch in
// [-1, 1), weights scaled by 1/sqrt(fan-in), batch-norm rows gamma in
// [0.5, 1.5), beta and mean in [-0.1, 0.1), variance in [0.5, 1.5).
func resnetInputs(mod *ir.Module, seed uint64) []op.Value {
	rng := rand.New(rand.NewPCG(seed, 22))
	f := mod.Func("main")
	args := make([]op.Value, len(f.Params))
	for i, p := range f.Params {
		t := p.StructInfo().(*ir.TensorInfo)
		dims, _ := t.Dims()
		shape := make([]int64, len(dims))
		for j, d := range dims {
			shape[j], _ = ir.IntValue(d)
		}
		x := tensor.New(tensor.Float32, shape...)
		data := tensor.Data[float32](x)
		switch {
		case strings.HasPrefix(p.Name, "bn"):
			n := int(shape[1])
			for j := range data {
				u := rng.Float32()
				switch j / n {
				case 0, 3: // gamma, variance
					data[j] = 0.5 + u
				default: // beta, mean
					data[j] = 0.2*u - 0.1
				}
			}
		case p.Name == "x":
			for j := range data {
				data[j] = 2*rng.Float32() - 1
			}
		default:
			fanIn := 1
			for _, d := range shape[1:] {
				fanIn *= int(d)
			}
			if len(shape) == 2 { // the dense layer: (in, out)
				fanIn = int(shape[0])
			}
			scale := float32(math.Sqrt(3 / float64(fanIn)))
			for j := range data {
				data[j] = scale * (2*rng.Float32() - 1)
			}
		}
		args[i] = x
	}
	return args
}

func loadResNet(t testing.TB) *ir.Module {
	t.Helper()
	src, err := os.ReadFile("../testdata/passes/ConvertLayout/models/resnet_small.tvms")
	require.NoError(t, err)
	mod, diags := syntax.Parse("resnet_small.tvms", src)
	require.False(t, diags.HasErrors(), "%v", diags)
	return mod
}

// buildVM runs pipeline on mod and links the result for the VM.
func buildVM(t testing.TB, pipeline string, mod *ir.Module) *vm.VM {
	t.Helper()
	p, errs := barrier.Registry.ParseAndBuild("pipeline", pipeline)
	require.Empty(t, errs, pipeline)
	built, err := passes.NewPassContext().Run(context.Background(), p, mod)
	require.NoError(t, err, pipeline)
	exe, diags := codegen.Build(built)
	require.False(t, diags.HasErrors(), "%v", diags)
	machine, err := loader.Link(exe, vm.Options{})
	require.NoError(t, err)
	return machine
}

func callVM(t testing.TB, machine *vm.VM, args []op.Value) *tensor.Tensor {
	t.Helper()
	vargs := make([]vm.Value, len(args))
	for i, a := range args {
		var err error
		vargs[i], err = codegen.ToVM(a)
		require.NoError(t, err)
	}
	out, _, err := machine.Call(context.Background(), "main", vargs)
	require.NoError(t, err)
	res, ok := out.Tensor()
	require.True(t, ok)
	return res
}

// TestConvertLayoutResNetOnVM takes the ResNet-style model through
// canonicalize,ConvertLayout{NHWC},optimize,lower,build and through the
// same pipeline without ConvertLayout, runs both on the VM and compares
// them with each other and with the reference evaluator (float64
// arithmetic rounded to float32 per op) on the unconverted model.
// Tolerance: 1e-4 relative to the largest output magnitude; the two
// builds sum each convolution's products in different orders (NHWC
// reduces over the channel axis innermost), float32 rounding of about
// 1e-7 per add over 144-288-term sums and five layers.
func TestConvertLayoutResNetOnVM(t *testing.T) {
	mod := loadResNet(t)
	args := resnetInputs(mod, 1)

	converted, err := runPipeline(t, "canonicalize,"+nhwc, mod)
	require.NoError(t, err)
	convs, permutes := 0, 0
	ir.Inspect(converted.Func("main").Body, func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok {
			switch c.Op {
			case op.Conv2D:
				convs++
				assert.Equal(t, "NHWC", c.Attrs["data_layout"])
				assert.Equal(t, "OHWI", c.Attrs["kernel_layout"])
			case op.BatchNorm:
				assert.Equal(t, int64(3), c.Attrs["axis"], "batch norm over NHWC's channel axis")
			case op.MaxPool2D, op.AdaptiveAvgPool2D:
				assert.Equal(t, "NHWC", c.Attrs["layout"])
			case op.PermuteDims:
				permutes++
			}
		}
		return true
	})
	assert.Equal(t, 6, convs)
	// The image and six weights in, the pooled features out: the residual
	// adds, batch norms, ReLUs and pools stay in NHWC.
	assert.Equal(t, 8, permutes, "permute_dims only at the boundaries")

	canon, err := barrier.Canonicalize(mod)
	require.NoError(t, err)
	want, err := eval.New(canon).Call("main", args...)
	require.NoError(t, err)
	wt := want.(*tensor.Tensor)
	wantData := tensor.Data[float32](wt)
	scale := 0.0
	for _, v := range wantData {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	require.Greater(t, scale, 0.01, "the model's output is not degenerate")

	nchw := callVM(t, buildVM(t, "canonicalize,optimize,lower,build", mod), args)
	nhwcOut := callVM(t, buildVM(t, "canonicalize,"+nhwc+",optimize,lower,build", mod), args)
	require.Equal(t, wt.Shape, nhwcOut.Shape)
	tol := 1e-4 * scale
	for name, got := range map[string]*tensor.Tensor{"NCHW": nchw, "NHWC": nhwcOut} {
		for i, v := range tensor.Data[float32](got) {
			require.InDelta(t, wantData[i], v, tol, "%s build, output %d", name, i)
		}
	}
	for i, v := range tensor.Data[float32](nhwcOut) {
		require.InDelta(t, tensor.Data[float32](nchw)[i], v, tol, "NHWC vs NCHW build, output %d", i)
	}
}

// BenchmarkConvertLayoutResNet runs the ResNet-style model built in NCHW
// and in NHWC on the VM, side by side, on one core (GOMAXPROCS=1).
func BenchmarkConvertLayoutResNet(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	mod := loadResNet(b)
	args := resnetInputs(mod, 1)
	for _, c := range []struct{ name, pipeline string }{
		{"NCHW", "canonicalize,optimize,lower,build"},
		{"NHWC", "canonicalize," + nhwc + ",optimize,lower,build"},
	} {
		machine := buildVM(b, c.pipeline, mod)
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				callVM(b, machine, args)
			}
		})
	}
}

// TestConvertLayoutResNetTiming reports the NCHW and NHWC builds' time
// per run, interleaved so the machine's load affects both alike (one
// core); run with -v. It checks nothing but that both run.
func TestConvertLayoutResNetTiming(t *testing.T) {
	if testing.Short() || os.Getenv("PHASEC_LAYOUT_TIMING") == "" {
		t.Skip("set PHASEC_LAYOUT_TIMING=1 to time the NCHW and NHWC builds")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	mod := loadResNet(t)
	args := resnetInputs(mod, 1)
	machines := []*vm.VM{
		buildVM(t, "canonicalize,optimize,lower,build", mod),
		buildVM(t, "canonicalize,"+nhwc+",optimize,lower,build", mod),
	}
	var total [2]time.Duration
	const rounds = 20
	for range rounds {
		for i, m := range machines {
			start := time.Now()
			callVM(t, m, args)
			total[i] += time.Since(start)
		}
	}
	nchw, nhwcT := total[0]/rounds, total[1]/rounds
	t.Logf("ResNet-style model, batch 2, 32x32, one core: NCHW %v/run, NHWC %v/run, NHWC/NCHW %.2f", nchw, nhwcT, float64(nhwcT)/float64(nchw))
}

// convChainModule is a dataflow block of n bindings: n/3 groups of a 1x1
// convolution, a ReLU and a residual add, on (1, 4, 4, 4) tensors.
func convChainModule(n int) *ir.Module {
	var src strings.Builder
	src.WriteString(`@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4, 4, 4), dtype="float32"), w: R.Tensor((4, 4, 1, 1), dtype="float32")):
        with R.dataflow():
            v0 = x
`)
	groups := n / 3
	for g := range groups {
		fmt.Fprintf(&src, "            c%d = R.nn.conv2d(v%d, w)\n            r%d = R.nn.relu(c%d)\n            v%d = R.add(r%d, v%d)\n", g, g, g, g, g+1, g, g)
	}
	fmt.Fprintf(&src, "            R.output(v%d)\n        return v%d\n", groups, groups)
	mod, diags := syntax.Parse("chain.tvms", []byte(src.String()))
	if diags.HasErrors() {
		panic(diags.Error())
	}
	return mod
}

// BenchmarkConvertLayout converts 10k and 100k bindings of convolutions,
// ReLUs and adds to NHWC: the 100k/10k time and allocation ratios must
// stay within 11.
func BenchmarkConvertLayout(b *testing.B) {
	p, errs := barrier.Registry.ParseAndBuild("pipeline", nhwc)
	require.Empty(b, errs)
	type input struct {
		mod   *ir.Module
		props phase.Set
	}
	benchLinear(b, func(n int) input {
		mod := convChainModule(n)
		_, props, err := passes.StartState(mod)
		require.NoError(b, err)
		runtime.GC() // do not charge this size for the garbage of building mod
		return input{mod, props}
	}, func(b *testing.B, in input) {
		out, err := passes.NewPassContext().Execute(context.Background(), p, in.mod, in.props)
		if err != nil || out == in.mod {
			b.Fatal("nothing converted", err)
		}
	})
}
