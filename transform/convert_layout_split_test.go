package transform_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/codegen"
	"github.com/phasec/phasec/eval"
	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
)

const (
	nchw4c  = `ConvertLayout{desired_layouts={"relax.nn.conv2d":["NCHW4c","OIHW4o"]}}`
	nchw16c = `ConvertLayout{desired_layouts={"relax.nn.conv2d":["NCHW16c","OIHW16i16o"]}}`
)

// TestConvertLayoutSplitResNetOnVM takes the ResNet-style model through
// ConvertLayout with split desired layouts and the build barrier, runs it
// on the VM and compares it with the reference evaluator on the
// unconverted model. The first convolution reads the 3-channel image,
// which does not split into blocks, and stays in NCHW. Tolerance: 1e-4
// relative to the largest output magnitude, as the NHWC test (float32 sums
// in another order).
func TestConvertLayoutSplitResNetOnVM(t *testing.T) {
	mod := loadResNet(t)
	args := resnetInputs(mod, 1)
	canon, err := barrier.Canonicalize(mod)
	require.NoError(t, err)
	want, err := eval.New(canon).Call("main", args...)
	require.NoError(t, err)
	wantData := tensor.Data[float32](want.(*tensor.Tensor))
	scale := 0.0
	for _, v := range wantData {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	require.Greater(t, scale, 0.01)

	for pass, layouts := range map[string][2]string{nchw4c: {"NCHW4c", "OIHW4o"}, nchw16c: {"NCHW16c", "OIHW16i16o"}} {
		converted, err := runPipeline(t, "canonicalize,"+pass, mod)
		require.NoError(t, err)
		split, transforms := 0, 0
		ir.Inspect(converted.Func("main").Body, func(e ir.Expr) bool {
			if c, ok := e.(*ir.Call); ok {
				switch c.Op {
				case op.Conv2D:
					if c.Attrs["data_layout"] == layouts[0] {
						split++
						assert.Equal(t, layouts[1], c.Attrs["kernel_layout"])
					}
				case op.LayoutTransform:
					transforms++
				}
			}
			return true
		})
		assert.Equal(t, 5, split, "%s: every convolution but the first", layouts[0])
		require.NotZero(t, transforms)
		// The converted module computes what the original does, on the
		// evaluator too.
		evaltest.CheckPipeline(t, mod, "canonicalize,"+pass, evaltest.Options{Args: args})

		got := callVM(t, buildVM(t, "canonicalize,"+pass+",optimize,lower,build", mod), args)
		for i, v := range tensor.Data[float32](got) {
			require.InDelta(t, wantData[i], v, 1e-4*scale, "%s build, output %d", layouts[0], i)
		}
	}
}

// TestConvertLayoutSplitUnpaddedOnly: a split output layout whose blocks
// do not divide the convolution's output channels (6 in blocks of 4)
// leaves the module as it is, as data or weights that do not split do in
// TVM (where only those are checked): the ops after it would compute on
// the padding.
func TestConvertLayoutSplitUnpaddedOnly(t *testing.T) {
	mod := evaltest.Parse(t, "pad.tvms", `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 16, 8, 8), "float32"), w: R.Tensor((6, 16, 3, 3), "float32")):
        with R.dataflow():
            gv = R.nn.conv2d(x, w)
            gv2 = R.sum(R.exp(gv), axis=[1])
            R.output(gv2)
        return gv2
`)
	canon, err := barrier.Canonicalize(mod)
	require.NoError(t, err)
	out, err := runPipeline(t, `ConvertLayout{desired_layouts={"relax.nn.conv2d":["NCHW4c","OIHW"]}}`, canon)
	require.NoError(t, err)
	assert.True(t, ir.StructuralEqual(canon.Func("main"), out.Func("main"), ir.EqualOptions{}), "unchanged")
	// Output channels that divide: converted.
	out, err = runPipeline(t, `ConvertLayout{desired_layouts={"relax.nn.conv2d":["NCHW4c","OIHW","NCHW2c"]}}`, canon)
	require.NoError(t, err)
	assert.False(t, ir.StructuralEqual(canon.Func("main"), out.Func("main"), ir.EqualOptions{}), "converted")
}

// BenchmarkConvertLayoutSplitResNet runs the ResNet-style model built in
// NCHW and through ConvertLayout{NCHW16c, OIHW16i16o} on the VM, side by
// side (phasec computes a split-layout convolution in its primal layout,
// between layout transforms).
func BenchmarkConvertLayoutSplitResNet(b *testing.B) {
	mod := loadResNet(b)
	args := resnetInputs(mod, 1)
	for _, c := range []struct{ name, pipeline string }{
		{"NCHW", "canonicalize,optimize,lower,build"},
		{"NCHW16c", "canonicalize," + nchw16c + ",optimize,lower,build"},
	} {
		machine := buildVM(b, c.pipeline, mod)
		b.Run(c.name, func(b *testing.B) {
			vargs := toVMArgs(b, args)
			for b.Loop() {
				_, _, err := machine.Call(context.Background(), "main", vargs)
				require.NoError(b, err)
			}
		})
	}
}

func toVMArgs(t testing.TB, args []op.Value) []vm.Value {
	out := make([]vm.Value, len(args))
	for i, a := range args {
		v, err := codegen.ToVM(a)
		require.NoError(t, err)
		out[i] = v
	}
	return out
}
