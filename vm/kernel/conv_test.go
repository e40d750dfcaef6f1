package kernel_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
	"github.com/phasec/phasec/vm/kernel"
)

// windowCase is one Relax call on random inputs of the given shapes,
// legalized by phasec's own LegalizeOps: the PrimFunc under test is what
// the compiler really emits for it.
type windowCase struct {
	call    string // Relax expression over x and w
	x, w    []int64
	pattern string // substring of the dispatch the PrimFunc must take
}

// legalizedWindow parses and legalizes the case and returns the module
// before legalization (for the reference evaluator) and the PrimFunc.
func legalizedWindow(t testing.TB, tc windowCase) (*ir.Module, *ir.PrimFunc) {
	t.Helper()
	dims := func(s []int64) string {
		parts := make([]string, len(s))
		for i, d := range s {
			parts[i] = fmt.Sprint(d)
		}
		return "(" + strings.Join(parts, ", ") + ",)"
	}
	params := "x: R.Tensor(" + dims(tc.x) + `, dtype="float32")`
	if tc.w != nil {
		params += ", w: R.Tensor(" + dims(tc.w) + `, dtype="float32")`
	}
	src := "# from tvm.script import ir as I\n# from tvm.script import relax as R\n@I.ir_module\nclass Module:\n" +
		"    @R.function\n    def main(" + params + "):\n" +
		"        with R.dataflow():\n            gv = " + tc.call + "\n            R.output(gv)\n        return gv\n"
	mod, diags := syntax.Parse("case.tvms", []byte(src))
	require.False(t, diags.HasErrors(), "%v\n%s", diags, src)
	mod, err := barrier.Canonicalize(mod)
	require.NoError(t, err)
	low, err := (&passes.PassContext{}).Run(context.Background(), lower.LegalizeOps, mod)
	require.NoError(t, err)
	var f *ir.PrimFunc
	for _, bf := range low.Functions() {
		if pf, ok := bf.(*ir.PrimFunc); ok {
			require.Nil(t, f, "one PrimFunc expected")
			f = pf
		}
	}
	require.NotNil(t, f)
	return mod, f
}

func randomTensor(shape []int64, rng *rand.Rand) *tensor.Tensor {
	t := tensor.New(tensor.Float32, shape...)
	for i := range tensor.Data[float32](t) {
		tensor.Data[float32](t)[i] = float32(rng.NormFloat64())
	}
	return t
}

// checkWindow runs the case's PrimFunc on the fast path and the general
// path and compares both with the reference evaluator's result of the
// Relax call: normwise within 1e-5 of the largest output (the fast path
// reassociates the sums), and fast against general the same way.
func checkWindow(t *testing.T, tc windowCase, seed uint64) {
	t.Helper()
	mod, f := legalizedWindow(t, tc)
	rng := rand.New(rand.NewPCG(seed, 7))
	x := randomTensor(tc.x, rng)
	inputs := []op.Value{x}
	args := []abi.Arg{{T: x}}
	if tc.w != nil {
		w := randomTensor(tc.w, rng)
		inputs = append(inputs, w)
		args = append(args, abi.Arg{T: w})
	}
	want, err := eval.New(mod).Call("main", inputs...)
	require.NoError(t, err)
	wt := want.(*tensor.Tensor)
	require.Equal(t, len(args)+1, len(f.Params))
	scale := max(maxAbs(wt), 1)
	results := map[string]*tensor.Tensor{}
	for _, mode := range []struct {
		name string
		opts kernel.Options
	}{{"fast", kernel.Options{}}, {"general", kernel.Options{General: true}}} {
		k, err := kernel.CompileWith(f, "window", mode.opts)
		require.NoError(t, err)
		out := tensor.New(tensor.Float32, wt.Shape...)
		// NaN in the output: the kernel must overwrite every element.
		for i := range tensor.Data[float32](out) {
			tensor.Data[float32](out)[i] = float32(math.NaN())
		}
		before := kernel.FastTaken()
		require.NoError(t, k.Call(append(cloneArgs(args), abi.Arg{T: out})))
		if mode.name == "fast" {
			require.Contains(t, k.Pattern(), tc.pattern)
			require.Greater(t, kernel.FastTaken(), before, "fast path taken (%s)", k.Pattern())
		}
		compareTensors(t, wt, out, scale, mode.name+" vs reference: "+tc.call)
		results[mode.name] = out
	}
	compareTensors(t, results["general"], results["fast"], scale, "fast vs general: "+tc.call)
}

// convCases cover the odd shapes of issue 23: extent 1, channel counts
// that are not multiples of the 6x16 tile, 1x1 and 7x7 kernels, stride 2,
// dilation 2, groups = channels (depthwise), grouped, asymmetric padding,
// NHWC/HWIO and other permutation layouts, 1-D and 3-D.
var convCases = []windowCase{
	{`R.nn.conv2d(x, w, padding=[1, 1])`, []int64{2, 3, 8, 8}, []int64{4, 3, 3, 3}, "conv2d"},
	{`R.nn.conv2d(x, w)`, []int64{1, 1, 1, 1}, []int64{1, 1, 1, 1}, "conv2d"},
	{`R.nn.conv2d(x, w)`, []int64{2, 64, 5, 7}, []int64{17, 64, 1, 1}, "conv2d"},
	{`R.nn.conv2d(x, w, padding=[3, 3], strides=[2, 2])`, []int64{1, 5, 19, 17}, []int64{7, 5, 7, 7}, "conv2d"},
	{`R.nn.conv2d(x, w, padding=[2, 2], dilation=[2, 2])`, []int64{2, 7, 11, 9}, []int64{13, 7, 3, 3}, "conv2d"},
	{`R.nn.conv2d(x, w, padding=[1, 0, 2, 1], strides=[2, 1])`, []int64{2, 4, 9, 10}, []int64{6, 4, 3, 2}, "conv2d"},
	{`R.nn.conv2d(x, w, padding=[1, 1], groups=6)`, []int64{2, 6, 9, 9}, []int64{6, 1, 3, 3}, "conv2d"},
	{`R.nn.conv2d(x, w, padding=[1, 1], groups=6, strides=[2, 2])`, []int64{1, 6, 10, 9}, []int64{12, 1, 3, 3}, "conv2d"},
	{`R.nn.conv2d(x, w, padding=[1, 1], groups=2)`, []int64{2, 8, 7, 6}, []int64{10, 4, 3, 3}, "conv2d"},
	{`R.nn.conv2d(x, w, padding=[1, 0, 2, 1], strides=[2, 2], dilation=[2, 2], groups=2, data_layout="NHWC", kernel_layout="HWIO")`, []int64{2, 9, 9, 4}, []int64{3, 3, 2, 6}, "conv2d"},
	{`R.nn.conv2d(x, w, padding=[1, 1], data_layout="NHWC", kernel_layout="OHWI")`, []int64{3, 6, 5, 19}, []int64{21, 3, 3, 19}, "conv2d"},
	{`R.nn.conv2d(x, w, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO", groups=5)`, []int64{2, 6, 5, 5}, []int64{3, 3, 1, 5}, "conv2d"},
	{`R.nn.conv1d(x, w, padding=[1], strides=[2])`, []int64{2, 4, 9}, []int64{6, 4, 3}, "conv1d"},
	{`R.nn.conv1d(x, w, padding=[3], dilation=[2], data_layout="NWC", kernel_layout="WIO")`, []int64{3, 40, 5}, []int64{4, 5, 7}, "conv1d"},
	{`R.nn.conv3d(x, w, padding=[1, 1, 1])`, []int64{1, 3, 5, 6, 4}, []int64{5, 3, 3, 3, 3}, "conv3d"},
	{`R.nn.conv3d(x, w, strides=[2, 1, 2], groups=3)`, []int64{2, 6, 5, 4, 5}, []int64{9, 2, 1, 2, 3}, "conv3d"},
	{`R.nn.conv2d_transpose(x, w, strides=[2, 2], padding=[1, 1])`, []int64{2, 4, 5, 5}, []int64{4, 5, 3, 3}, "conv2d"},
	{`R.nn.conv2d(x, w, padding=[1, 1])`, []int64{2, 32, 20, 21}, []int64{40, 32, 3, 3}, "conv2d"},
}

func TestConvPatterns(t *testing.T) {
	for i, tc := range convCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkWindow(t, tc, uint64(i)) })
	}
}

// poolCases: max and average pooling (padding counted and not), 1-D and
// 2-D, NCHW and NHWC, stride 2, dilation 2, ceil mode, asymmetric
// padding, extent 1; and R.nn.pad.
var poolCases = []windowCase{
	{`R.nn.max_pool2d(x, pool_size=[2, 2], strides=[2, 2])`, []int64{2, 3, 8, 8}, nil, "max_pool"},
	{`R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])`, []int64{2, 5, 9, 11}, nil, "pad+max_pool"},
	{`R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout="NHWC")`, []int64{2, 9, 11, 5}, nil, "pad+max_pool"},
	{`R.nn.max_pool2d(x, pool_size=[3, 2], strides=[1, 2], dilation=[2, 1], padding=[0, 1, 2, 0], ceil_mode=True)`, []int64{1, 2, 10, 7}, nil, "max_pool"},
	{`R.nn.max_pool2d(x, pool_size=[1, 1])`, []int64{1, 1, 1, 1}, nil, "max_pool"},
	{`R.nn.max_pool1d(x, pool_size=[3], strides=[2], padding=[1])`, []int64{2, 3, 10}, nil, "pad+max_pool"},
	{`R.nn.avg_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=False)`, []int64{2, 4, 9, 9}, nil, "pad+sum_pool+avg_divide"},
	{`R.nn.avg_pool2d(x, pool_size=[3, 3], strides=[1, 1], padding=[1, 1], count_include_pad=True, layout="NHWC")`, []int64{2, 9, 9, 4}, nil, "pad+sum_pool+avg_divide"},
	{`R.nn.avg_pool2d(x, pool_size=[2, 2], strides=[2, 2])`, []int64{3, 17, 6, 6}, nil, "sum_pool+avg_divide"},
	{`R.nn.avg_pool1d(x, pool_size=[4], strides=[3], padding=[2], count_include_pad=False, layout="NWC")`, []int64{2, 13, 3}, nil, "pad+sum_pool+avg_divide"},
	// Stride 2 along rows wide enough for blas.PoolStride2F32's vector
	// loop (19, 17 and 16 outputs: 8-wide blocks and a scalar tail), with
	// padding, count_include_pad and dilation 2.
	{`R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])`, []int64{1, 3, 7, 37}, nil, "pad+max_pool"},
	{`R.nn.avg_pool2d(x, pool_size=[2, 2], strides=[2, 2], padding=[0, 1], count_include_pad=True)`, []int64{2, 3, 5, 32}, nil, "pad+sum_pool+avg_divide"},
	{`R.nn.max_pool2d(x, pool_size=[2, 2], strides=[2, 2], dilation=[2, 2])`, []int64{1, 2, 9, 34}, nil, "max_pool"},
	// Rows of whole 8-wide blocks and a tail, odd input extents (the last
	// row and column unused), a planes' worth of rows per call.
	{`R.nn.max_pool2d(x, pool_size=[2, 2], strides=[2, 2])`, []int64{2, 3, 7, 37}, nil, "max_pool"},
	{`R.nn.avg_pool2d(x, pool_size=[2, 2], strides=[2, 2])`, []int64{1, 2, 6, 32}, nil, "sum_pool+avg_divide"},
	{`R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2])`, []int64{1, 4, 11, 35}, nil, "max_pool"},
	{`R.nn.adaptive_avg_pool2d(x, output_size=[1, 1])`, []int64{3, 64, 8, 8}, nil, "adaptive_pool+avg_divide"},
	{`R.nn.adaptive_avg_pool2d(x, output_size=[1, 1])`, []int64{2, 5, 9, 9}, nil, "adaptive_pool+avg_divide"},
	{`R.nn.adaptive_avg_pool2d(x, output_size=[3, 2])`, []int64{2, 3, 7, 9}, nil, "adaptive_pool+avg_divide"},
	{`R.nn.adaptive_avg_pool2d(x, output_size=[4, 5], layout="NHWC")`, []int64{1, 9, 11, 3}, nil, "adaptive_pool+avg_divide"},
	{`R.nn.adaptive_avg_pool1d(x, output_size=[4])`, []int64{2, 3, 10}, nil, "adaptive_pool+avg_divide"},
	{`R.nn.adaptive_avg_pool2d(x)`, []int64{1, 2, 3, 3}, nil, "adaptive_pool+avg_divide"},
	{`R.nn.pad(x, pad_width=[0, 0, 1, 2, 3, 0])`, []int64{2, 3, 5}, nil, "pad"},
	{`R.nn.pad(x, pad_width=[1, 1, 0, 0, 2, 1, 1, 3], pad_value=-1.5)`, []int64{2, 3, 4, 5}, nil, "pad"},
}

// biasCases: per-channel broadcasts (the bias after a convolution).
var biasCases = []windowCase{
	{`R.add(x, w)`, []int64{2, 5, 3, 4}, []int64{1, 5, 1, 1}, "channel_broadcast"},
	{`R.multiply(x, w)`, []int64{3, 2, 4, 5}, []int64{1, 2, 4, 1}, "channel_broadcast"},
	{`R.add(x, w)`, []int64{1, 1, 1}, []int64{1, 1, 1}, "elementwise"},
	{`R.add(x, w)`, []int64{2, 7, 3, 5}, []int64{7, 1, 1}, "channel_broadcast"},
	{`R.add(x, w)`, []int64{4, 3}, []int64{4, 1}, "channel_broadcast"},
}

func TestChannelBias(t *testing.T) {
	for i, tc := range biasCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkWindow(t, tc, uint64(i)) })
	}
}

func TestPoolPatterns(t *testing.T) {
	for i, tc := range poolCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkWindow(t, tc, uint64(i)) })
	}
}

// TestWindowLarge runs shapes large enough for the parallel paths (the
// conv tasks, the row split of pad and pools) on every GOMAXPROCS the
// test runs with (-cpu 1,2,4; -race in CI).
func TestWindowLarge(t *testing.T) {
	for i, tc := range []windowCase{
		{`R.nn.conv2d(x, w, padding=[1, 1])`, []int64{2, 8, 34, 34}, []int64{16, 8, 3, 3}, "conv2d_padded"},
		{`R.nn.max_pool2d(x, pool_size=[3, 3], strides=[1, 1], padding=[1, 1])`, []int64{4, 16, 66, 66}, nil, "pad+max_pool"},
		{`R.nn.adaptive_avg_pool2d(x, output_size=[64, 64])`, []int64{4, 16, 66, 66}, nil, "adaptive_pool"},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkWindow(t, tc, uint64(i)) })
	}
}

// TestWindowCallDoesNotAllocate: after a warm-up call, the convolution,
// pool and pad fast paths allocate nothing (as every Kernel.Call).
func TestWindowCallDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for i, tc := range []windowCase{convCases[0], convCases[6], convCases[17], poolCases[1], poolCases[6], poolCases[10]} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, f := legalizedWindow(t, tc)
			k, err := kernel.Compile(f, "window")
			require.NoError(t, err)
			args := makeArgs(t, f, nil, rand.New(rand.NewPCG(1, 1)))
			require.NoError(t, k.Call(args))
			before := kernel.FastTaken()
			require.Zero(t, testing.AllocsPerRun(10, func() { _ = k.Call(args) }))
			require.Greater(t, kernel.FastTaken(), before)
		})
	}
}

// fusedConvSrc is conv + bias + ReLU in one PrimFunc, as FuseTIR
// (issue 21) will emit it: a pad stage, the convolution and two trailing
// nests over intermediate buffers. Every stage dispatches on its own.
const fusedConvSrc = `
    @T.prim_func(private=True)
    def fused_conv2d_add_relu(A: T.Buffer((T.int64(2), T.int64(3), T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(5), T.int64(3), T.int64(3), T.int64(3)), "float32"), C: T.Buffer((T.int64(1), T.int64(5), T.int64(1), T.int64(1)), "float32"), O: T.Buffer((T.int64(2), T.int64(5), T.int64(8), T.int64(8)), "float32")):
        T.func_attr({"tir.noalias": True})
        pad_temp = T.alloc_buffer((T.int64(2), T.int64(3), T.int64(10), T.int64(10)))
        conv = T.alloc_buffer((T.int64(2), T.int64(5), T.int64(8), T.int64(8)))
        biased = T.alloc_buffer((T.int64(2), T.int64(5), T.int64(8), T.int64(8)))
        for i0, i1, i2, i3 in T.grid(T.int64(2), T.int64(3), T.int64(10), T.int64(10)):
            with T.block("pad_temp"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(v_i2 >= T.int64(1) and v_i2 < T.int64(9) and (v_i3 >= T.int64(1) and v_i3 < T.int64(9)), A[v_i0, v_i1, v_i2 - T.int64(1), v_i3 - T.int64(1)], T.float32(0.0))
        for nn0, nn1, nn2, nn3, k0, k1, k2 in T.grid(T.int64(2), T.int64(5), T.int64(8), T.int64(8), T.int64(3), T.int64(3), T.int64(3)):
            with T.block("conv2d_nchw"):
                v_nn0, v_nn1, v_nn2, v_nn3, v_k0, v_k1, v_k2 = T.axis.remap("SSSSRRR", [nn0, nn1, nn2, nn3, k0, k1, k2])
                with T.init():
                    conv[v_nn0, v_nn1, v_nn2, v_nn3] = T.float32(0.0)
                conv[v_nn0, v_nn1, v_nn2, v_nn3] = conv[v_nn0, v_nn1, v_nn2, v_nn3] + pad_temp[v_nn0, v_k0, v_k1 + v_nn2, v_k2 + v_nn3] * B[v_nn1, v_k0, v_k1, v_k2]
        for ax0, ax1, ax2, ax3 in T.grid(T.int64(2), T.int64(5), T.int64(8), T.int64(8)):
            with T.block("T_add"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                biased[v_ax0, v_ax1, v_ax2, v_ax3] = conv[v_ax0, v_ax1, v_ax2, v_ax3] + C[T.int64(0), v_ax1, T.int64(0), T.int64(0)]
        for i0, i1, i2, i3 in T.grid(T.int64(2), T.int64(5), T.int64(8), T.int64(8)):
            with T.block("compute"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                O[v_i0, v_i1, v_i2, v_i3] = T.max(biased[v_i0, v_i1, v_i2, v_i3], T.float32(0.0))
`

func TestFusedConvStages(t *testing.T) {
	f := parseFunc(t, fusedConvSrc, "fused_conv2d_add_relu")
	before := kernel.FastTaken()
	k := checkAllNormwise(t, f, makeArgs(t, f, nil, rand.New(rand.NewPCG(3, 4))))
	require.Equal(t, "conv2d_padded+epilogue", k.Pattern())
	require.GreaterOrEqual(t, kernel.FastTaken()-before, int64(1), "the padded, fused convolution on its fast path")
}

// TestPadFoldNeedsZero: padding with anything but zero is not what the
// convolution's out-of-range taps read, so the stage stays a stage (and
// the result is still right).
func TestPadFoldNeedsZero(t *testing.T) {
	src := strings.Replace(fusedConvSrc, "A[v_i0, v_i1, v_i2 - T.int64(1), v_i3 - T.int64(1)], T.float32(0.0))",
		"A[v_i0, v_i1, v_i2 - T.int64(1), v_i3 - T.int64(1)], T.float32(-1.5))", 1)
	require.NotEqual(t, fusedConvSrc, src)
	f := parseFunc(t, src, "fused_conv2d_add_relu")
	k := checkAllNormwise(t, f, makeArgs(t, f, nil, rand.New(rand.NewPCG(3, 4))))
	require.Equal(t, "pad+conv2d+epilogue", k.Pattern())
}

// checkAllNormwise runs f on the reference interpreter, the general path
// and the dispatched path and compares normwise (the fast paths
// reassociate sums).
func checkAllNormwise(t *testing.T, f *ir.PrimFunc, args []abi.Arg) *kernel.Kernel {
	t.Helper()
	want := cloneArgs(args)
	_, err := runRef(f, want)
	require.NoError(t, err)
	var fast *kernel.Kernel
	for _, opts := range []kernel.Options{{General: true}, {}} {
		k, err := kernel.CompileWith(f, "f", opts)
		require.NoError(t, err)
		got := cloneArgs(args)
		require.NoError(t, k.Call(got))
		for i := range got {
			if got[i].T != nil {
				compareTensors(t, want[i].T, got[i].T, max(maxAbs(want[i].T), 1), k.Pattern())
			}
		}
		fast = k
	}
	return fast
}

// FuzzWindow builds a random convolution or pooling call (layout,
// stride, dilation, padding, groups, kernel size), legalizes it with
// LegalizeOps and checks the fast path against the general path and the
// reference evaluator. The seed corpus runs in plain go test.
func FuzzWindow(f *testing.F) {
	f.Add(uint8(0), uint8(2), uint8(3), uint8(4), uint8(9), uint8(3), uint8(1), uint8(1), uint8(1), uint8(1), false)
	f.Add(uint8(1), uint8(1), uint8(6), uint8(6), uint8(7), uint8(3), uint8(2), uint8(2), uint8(6), uint8(2), true)
	f.Add(uint8(2), uint8(2), uint8(4), uint8(4), uint8(11), uint8(2), uint8(2), uint8(1), uint8(1), uint8(0), false)
	f.Add(uint8(3), uint8(1), uint8(5), uint8(5), uint8(8), uint8(3), uint8(1), uint8(2), uint8(1), uint8(1), true)
	f.Add(uint8(0), uint8(1), uint8(2), uint8(6), uint8(5), uint8(1), uint8(1), uint8(1), uint8(2), uint8(0), true)
	f.Fuzz(func(t *testing.T, kind, batch, inC, outC, size, kern, stride, dil, groups, pad uint8, channelsLast bool) {
		b, k := int64(batch%3)+1, int64(kern%4)+1
		s, d, p := int64(stride%3)+1, int64(dil%2)+1, int64(pad%3)
		h := int64(size%12) + 1
		w := h + 1
		if (h+2*p-d*(k-1)-1) < 0 || (w+2*p-d*(k-1)-1) < 0 {
			return // the window does not fit: a diagnostic, not a kernel
		}
		layout, kernelLayout := "NCHW", "OIHW"
		if channelsLast {
			layout, kernelLayout = "NHWC", "HWIO"
		}
		shape := func(n, c, h, w int64) []int64 {
			if channelsLast {
				return []int64{n, h, w, c}
			}
			return []int64{n, c, h, w}
		}
		var tc windowCase
		switch kind % 4 {
		case 0, 1: // convolution (grouped when groups divides the channels)
			g := int64(groups%4) + 1
			ic, oc := (int64(inC%6)+1)*g, (int64(outC%6)+1)*g
			wshape := []int64{oc, ic / g, k, k}
			if channelsLast {
				wshape = []int64{k, k, ic / g, oc}
			}
			tc = windowCase{fmt.Sprintf(`R.nn.conv2d(x, w, strides=[%d, %d], padding=[%d, %d], dilation=[%d, %d], groups=%d, data_layout=%q, kernel_layout=%q)`,
				s, s, p, p, d, d, g, layout, kernelLayout), shape(b, ic, h, w), wshape, "conv2d"}
		case 2: // max pool
			if p >= k {
				return // TVM wants padding below the window size
			}
			tc = windowCase{fmt.Sprintf(`R.nn.max_pool2d(x, pool_size=[%d, %d], strides=[%d, %d], padding=[%d, %d], dilation=[%d, %d], layout=%q)`,
				k, k, s, s, p, p, d, d, layout), shape(b, int64(inC%5)+1, h, w), nil, "max_pool"}
		case 3: // average pool, padding counted or not
			if p >= k {
				return
			}
			tc = windowCase{fmt.Sprintf(`R.nn.avg_pool2d(x, pool_size=[%d, %d], strides=[%d, %d], padding=[%d, %d], count_include_pad=%v, layout=%q)`,
				k, k, s, s, p, p, map[bool]string{true: "True", false: "False"}[groups%2 == 0], layout), shape(b, int64(inC%5)+1, h, w), nil, "sum_pool"}
		}
		checkWindow(t, tc, uint64(size))
	})
}

// TestConvFrozenWeightsPackedOnce: weights in frozen storage are packed
// once per kernel and kept with the storage, so a later run does not read
// them again. Writing frozen bytes behind the VM's back (which breaks
// Freeze's promise) shows it: the frozen run keeps the packing of the
// first weights, while unfrozen weights are repacked after the change.
func TestConvFrozenWeightsPackedOnce(t *testing.T) {
	_, f := legalizedWindow(t, windowCase{call: "R.nn.conv2d(x, w)", x: []int64{1, 8, 6, 6}, w: []int64{16, 8, 3, 3}})
	k, err := kernel.Compile(f, "conv")
	require.NoError(t, err)
	require.Contains(t, k.Pattern(), "conv")
	rng := rand.New(rand.NewPCG(3, 4))
	x := randomTensor([]int64{1, 8, 6, 6}, rng)
	w1, w2 := randomTensor([]int64{16, 8, 3, 3}, rng), randomTensor([]int64{16, 8, 3, 3}, rng)
	run := func(w *tensor.Tensor) []float32 {
		y := tensor.New(tensor.Float32, 1, 16, 4, 4)
		require.NoError(t, k.Call([]abi.Arg{{T: x}, {T: w}, {T: y}}))
		return tensor.Data[float32](y)
	}
	want1, want2 := run(w1), run(w2)
	require.NotEqual(t, want1, want2)

	for _, frozen := range []bool{false, true} {
		w := randomTensor([]int64{16, 8, 3, 3}, rng)
		copy(tensor.Data[float32](w), tensor.Data[float32](w1))
		if frozen {
			require.True(t, w.Storage.Freeze())
		}
		require.Equal(t, want1, run(w))
		copy(tensor.Data[float32](w), tensor.Data[float32](w2))
		if frozen {
			require.Equal(t, want1, run(w), "frozen weights are packed once")
			if !raceEnabled {
				y := tensor.New(tensor.Float32, 1, 16, 4, 4)
				args := []abi.Arg{{T: x}, {T: w}, {T: y}}
				require.Zero(t, testing.AllocsPerRun(10, func() { _ = k.Call(args) }))
			}
		} else {
			require.Equal(t, want2, run(w), "unfrozen weights are repacked when they change")
		}
	}
}

// TestConvEpilogueChain: epilogues of vector-scalar steps (a subtraction
// of a per-channel operand, a multiplication and a max by constants) run
// as one chain per row (blas.ScalarChainF32, per-channel table), a bias
// and ReLU natively, and anything else per row; all agree with the
// reference and the general path.
func TestConvEpilogueChain(t *testing.T) {
	biasLine := "biased[v_ax0, v_ax1, v_ax2, v_ax3] = conv[v_ax0, v_ax1, v_ax2, v_ax3] + C[T.int64(0), v_ax1, T.int64(0), T.int64(0)]"
	reluLine := "O[v_i0, v_i1, v_i2, v_i3] = T.max(biased[v_i0, v_i1, v_i2, v_i3], T.float32(0.0))"
	for i, c := range []struct{ bias, relu string }{
		{"biased[v_ax0, v_ax1, v_ax2, v_ax3] = conv[v_ax0, v_ax1, v_ax2, v_ax3] - C[T.int64(0), v_ax1, T.int64(0), T.int64(0)]",
			"O[v_i0, v_i1, v_i2, v_i3] = T.max(biased[v_i0, v_i1, v_i2, v_i3] * T.float32(0.5) / C[T.int64(0), v_i1, T.int64(0), T.int64(0)], T.float32(-0.25))"},
		{biasLine, "O[v_i0, v_i1, v_i2, v_i3] = T.max(biased[v_i0, v_i1, v_i2, v_i3], T.float32(0.5))"},
		{biasLine, reluLine},
		// The batch index in an operand: no per-channel table.
		{"biased[v_ax0, v_ax1, v_ax2, v_ax3] = conv[v_ax0, v_ax1, v_ax2, v_ax3] + A[v_ax0, T.int64(0), T.int64(0), T.int64(0)]", reluLine},
		// Not a chain: the accumulator read twice.
		{"biased[v_ax0, v_ax1, v_ax2, v_ax3] = conv[v_ax0, v_ax1, v_ax2, v_ax3] * conv[v_ax0, v_ax1, v_ax2, v_ax3]", reluLine},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			src := strings.Replace(strings.Replace(fusedConvSrc, biasLine, c.bias, 1), reluLine, c.relu, 1)
			f := parseFunc(t, src, "fused_conv2d_add_relu")
			k := checkAllNormwise(t, f, makeArgs(t, f, nil, rand.New(rand.NewPCG(uint64(i), 4))))
			require.Equal(t, "conv2d_padded+epilogue", k.Pattern())
		})
	}
}
