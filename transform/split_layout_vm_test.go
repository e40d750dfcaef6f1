package transform_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/tensor"
)

// splitLayoutCase is an op in split layouts and the same op in its primal
// layouts: operands are given in their primal layouts (canonical), and the
// call in split layouts reads them re-laid out into layouts.
type splitLayoutCase struct {
	name      string
	shapes    [][]int64 // operands x (and w), in canonical layouts
	canonical []string  // NCHW, OIHW, ...
	layouts   []string  // the split layouts of the operands
	outCanon  string
	outLayout string
	split     string // the call in split layouts, on x (and w)
	primal    string // the call in the primal layouts
	vm        bool   // the split call legalizes (TVM leaves layout-changing pools alone)
}

var splitLayoutCases = []splitLayoutCase{
	{name: "conv2d NCHW16c OIHW16i16o", shapes: [][]int64{{1, 32, 8, 8}, {32, 32, 3, 3}},
		canonical: []string{"NCHW", "OIHW"}, layouts: []string{"NCHW16c", "OIHW16i16o"}, outCanon: "NCHW", outLayout: "NCHW16c",
		split:  `R.nn.conv2d(x, w, padding=[1, 1], data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c")`,
		primal: `R.nn.conv2d(x, w, padding=[1, 1])`, vm: true},
	{name: "conv2d padded output channels", shapes: [][]int64{{2, 8, 9, 9}, {6, 8, 3, 3}},
		canonical: []string{"NCHW", "OIHW"}, layouts: []string{"NCHW4c", "OIHW"}, outCanon: "NCHW", outLayout: "NHWC4c",
		split:  `R.nn.conv2d(x, w, strides=[2, 2], data_layout="NCHW4c", kernel_layout="OIHW", out_layout="NHWC4c")`,
		primal: `R.nn.conv2d(x, w, strides=[2, 2])`, vm: true},
	{name: "conv1d NCW8c groups", shapes: [][]int64{{1, 16, 12}, {8, 8, 3}},
		canonical: []string{"NCW", "OIW"}, layouts: []string{"NCW8c", "OIW4o"}, outCanon: "NCW", outLayout: "NCW4c",
		split:  `R.nn.conv1d(x, w, groups=2, data_layout="NCW8c", kernel_layout="OIW4o", out_layout="NCW4c")`,
		primal: `R.nn.conv1d(x, w, groups=2)`, vm: true},
	{name: "conv3d NCDHW4c", shapes: [][]int64{{1, 8, 4, 5, 5}, {4, 8, 2, 2, 2}},
		canonical: []string{"NCDHW", "OIDHW"}, layouts: []string{"NCDHW4c", "OIDHW4i"}, outCanon: "NCDHW", outLayout: "NCDHW4c",
		split:  `R.nn.conv3d(x, w, data_layout="NCDHW4c", kernel_layout="OIDHW4i")`,
		primal: `R.nn.conv3d(x, w)`, vm: true},
	{name: "conv2d_transpose NCHW4c IOHW4i", shapes: [][]int64{{1, 8, 5, 5}, {8, 4, 3, 3}},
		canonical: []string{"NCHW", "IOHW"}, layouts: []string{"NCHW4c", "IOHW4i"}, outCanon: "NCHW", outLayout: "NCHW4c",
		split:  `R.nn.conv2d_transpose(x, w, strides=[2, 2], data_layout="NCHW4c", kernel_layout="IOHW4i")`,
		primal: `R.nn.conv2d_transpose(x, w, strides=[2, 2])`, vm: true},
	{name: "max_pool2d NCHW4c", shapes: [][]int64{{2, 8, 9, 9}},
		canonical: []string{"NCHW"}, layouts: []string{"NCHW4c"}, outCanon: "NCHW", outLayout: "NCHW4c",
		split:  `R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout="NCHW4c")`,
		primal: `R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])`, vm: true},
	{name: "avg_pool2d NCHW4c to NHWC4c", shapes: [][]int64{{1, 8, 6, 6}},
		canonical: []string{"NCHW"}, layouts: []string{"NCHW4c"}, outCanon: "NCHW", outLayout: "NHWC4c",
		split:  `R.nn.avg_pool2d(x, pool_size=[2, 2], strides=[2, 2], layout="NCHW4c", out_layout="NHWC4c")`,
		primal: `R.nn.avg_pool2d(x, pool_size=[2, 2], strides=[2, 2])`},
	{name: "max_pool1d NCW4c", shapes: [][]int64{{1, 8, 10}},
		canonical: []string{"NCW"}, layouts: []string{"NCW4c"}, outCanon: "NCW", outLayout: "NCW4c",
		split:  `R.nn.max_pool1d(x, pool_size=[3], layout="NCW4c")`,
		primal: `R.nn.max_pool1d(x, pool_size=[3])`, vm: true},
	{name: "avg_pool3d NCDHW4c", shapes: [][]int64{{1, 4, 4, 4, 4}},
		canonical: []string{"NCDHW"}, layouts: []string{"NCDHW4c"}, outCanon: "NCDHW", outLayout: "NCDHW4c",
		split:  `R.nn.avg_pool3d(x, pool_size=[2, 2, 2], padding=[1, 1, 1], layout="NCDHW4c")`,
		primal: `R.nn.avg_pool3d(x, pool_size=[2, 2, 2], padding=[1, 1, 1])`, vm: true},
	{name: "adaptive_avg_pool2d NCHW8c", shapes: [][]int64{{1, 16, 7, 7}},
		canonical: []string{"NCHW"}, layouts: []string{"NCHW8c"}, outCanon: "NCHW", outLayout: "NCHW8c",
		split:  `R.nn.adaptive_avg_pool2d(x, output_size=[3, 3], layout="NCHW8c")`,
		primal: `R.nn.adaptive_avg_pool2d(x, output_size=[3, 3])`, vm: true},
}

// splitModule is a module whose main takes params of the given shapes and
// returns call.
func splitModule(t *testing.T, call string, shapes [][]int64) *ir.Module {
	t.Helper()
	var params []string
	for i, s := range shapes {
		dims := make([]string, len(s))
		for j, d := range s {
			dims[j] = fmt.Sprint(d)
		}
		params = append(params, fmt.Sprintf(`%s: R.Tensor((%s,), "float32")`, []string{"x", "w"}[i], strings.Join(dims, ", ")))
	}
	src := fmt.Sprintf(`@I.ir_module
class Module:
    @R.function
    def main(%s):
        gv = %s
        return gv
`, strings.Join(params, ", "), call)
	mod, diags := syntax.Parse("split.tvms", []byte(src))
	require.False(t, diags.HasErrors(), "%v\n%s", diags, src)
	return mod
}

// relayout re-lays out t, in the primal layout canonical, into layout (a
// permutation of canonical's axes, subordinate ones after their block
// size: NHWC4c). It is written here, apart from the op package's layout
// code, as the tests' independent reference; positions past the end of a
// split axis hold 0.
func relayout(t *tensor.Tensor, canonical, layout string) *tensor.Tensor {
	type axis struct {
		src    int   // the canonical axis
		factor int64 // block size of a subordinate axis; 0 for a primal one
		block  int64 // a primal axis's block size (1 when unsplit)
	}
	var axes []axis
	f := int64(0)
	for _, c := range layout {
		switch {
		case c >= '0' && c <= '9':
			f = 10*f + int64(c-'0')
		case c >= 'a' && c <= 'z':
			axes = append(axes, axis{src: strings.IndexRune(canonical, c-'a'+'A'), factor: f})
			f = 0
		default:
			axes = append(axes, axis{src: strings.IndexRune(canonical, c), block: 1})
		}
	}
	for i := range axes {
		for _, s := range axes {
			if s.factor > 0 && s.src == axes[i].src && axes[i].factor == 0 {
				axes[i].block = s.factor
			}
		}
	}
	shape := make([]int64, len(axes))
	for i, a := range axes {
		if a.factor > 0 {
			shape[i] = a.factor
		} else {
			shape[i] = (t.Shape[a.src] + a.block - 1) / a.block
		}
	}
	out := tensor.New(tensor.Float32, shape...)
	src, dst := tensor.Data[float32](t), tensor.Data[float32](out)
	ci := make([]int64, len(t.Shape))
	for k := range src {
		rem := int64(k)
		for j := len(t.Shape) - 1; j >= 0; j-- {
			ci[j], rem = rem%t.Shape[j], rem/t.Shape[j]
		}
		flat := int64(0)
		for i, a := range axes {
			var v int64
			if a.factor > 0 {
				v = ci[a.src] % a.factor
			} else {
				v = ci[a.src] / a.block
			}
			flat = flat*shape[i] + v
		}
		dst[flat] = src[k]
	}
	return out
}

// TestSplitLayoutOpsAgainstPrimal runs each op in split layouts on the
// reference evaluator and, built, on the VM, and compares both with the
// same op in its primal layouts on the evaluator, its result re-laid out
// by relayout. Tolerance: 1e-5 relative to the largest output magnitude
// for the evaluator (the same sums, in the same order, in float64), 1e-4
// for the VM (float32 sums of at most 288 products).
func TestSplitLayoutOpsAgainstPrimal(t *testing.T) {
	for _, c := range splitLayoutCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(25, uint64(len(c.name))))
			var primalArgs, splitArgs []op.Value
			var splitShapes [][]int64
			for i, s := range c.shapes {
				x := tensor.New(tensor.Float32, s...)
				for j := range tensor.Data[float32](x) {
					tensor.Data[float32](x)[j] = 2*rng.Float32() - 1
				}
				xs := relayout(x, c.canonical[i], c.layouts[i])
				primalArgs, splitArgs = append(primalArgs, x), append(splitArgs, xs)
				splitShapes = append(splitShapes, xs.Shape)
			}
			ref, err := eval.New(splitModule(t, c.primal, c.shapes)).Call("main", primalArgs...)
			require.NoError(t, err)
			want := relayout(ref.(*tensor.Tensor), c.outCanon, c.outLayout)
			wantData := tensor.Data[float32](want)
			scale := 0.0
			for _, v := range wantData {
				scale = math.Max(scale, math.Abs(float64(v)))
			}
			require.Greater(t, scale, 0.01)

			mod := splitModule(t, c.split, splitShapes)
			got, err := eval.New(mod).Call("main", splitArgs...)
			require.NoError(t, err)
			gt := got.(*tensor.Tensor)
			require.Equal(t, want.Shape, gt.Shape)
			for i, v := range tensor.Data[float32](gt) {
				require.InDelta(t, wantData[i], v, 1e-5*scale, "evaluator, element %d", i)
			}
			if !c.vm {
				return
			}
			out := callVM(t, buildVM(t, "canonicalize,optimize,lower,build", mod), splitArgs)
			require.Equal(t, want.Shape, out.Shape)
			for i, v := range tensor.Data[float32](out) {
				require.InDelta(t, wantData[i], v, 1e-4*scale, "VM, element %d", i)
			}
		})
	}
}

// TestSplitLayoutDiagnostics: a bad layout string, a block that does not
// match its extent, and a layout of the wrong rank are positioned at the
// call in the source, naming the attribute and the character at fault.
func TestSplitLayoutDiagnostics(t *testing.T) {
	for call, want := range map[string]string{
		`R.nn.conv2d(x, w, kernel_layout="OIHW16")`:                       `split.tvms:5:14: error NORM001: .*kernel_layout "OIHW16" is not a layout: the block size 16 at offset 4 ends the layout`,
		`R.nn.conv2d(x, w, data_layout="NCHW8c")`:                         `split.tvms:5:14: error NORM001: .*data_layout: axis 4 \(the block of C in NCHW8c\) has extent 16, the layout says 8`,
		`R.nn.max_pool2d(x, layout="NCHW16c", out_layout="NCHW16C")`:      `split.tvms:5:14: error NORM001: .*out_layout "NCHW16C" is not a layout: the block size 16 at offset 4 precedes the primal axis C`,
		`R.nn.avg_pool2d(x, layout="NCHWc")`:                              `split.tvms:5:14: error NORM001: .*layout "NCHWc" is not a layout: the subordinate axis c at offset 4 has no block size`,
		`R.nn.adaptive_avg_pool2d(x, layout="NCHW16c", out_layout="NCW")`: `split.tvms:5:14: error NORM001: .*out_layout "NCW" is not convertible to NCHW: it lacks the axis H of NCHW`,
		`R.nn.conv2d(w, w, data_layout="NCHW16c")`:                        `split.tvms:5:14: error NORM001: .*data_layout "NCHW16c" is for 5-D tensors, got rank 4`,
	} {
		src := `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 2, 8, 8, 16), "float32"), w: R.Tensor((4, 32, 3, 3), "float32")):
        gv = ` + call + `
        return gv
`
		_, diags := syntax.Parse("split.tvms", []byte(src))
		require.True(t, diags.HasErrors(), call)
		require.Regexp(t, want, diags.Error(), call)
	}
}
