package transform_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/eval/evaltest"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/transform"
)

// TestAnnotateTIROpPatternTVMCases: every case of TVM's
// tests/python/relax/test_transform_annotate_tir_op_pattern.py (the
// golden inputs of testdata/passes/AnnotateTIROpPattern) gets the kind
// TVM's test asserts.
func TestAnnotateTIROpPatternTVMCases(t *testing.T) {
	want := map[string]struct {
		fn   string
		kind ir.OpPattern
	}{
		"matmul":                   {"tir_matmul", ir.PatternOutEWiseFusable},
		"matmul_cast_1":            {"tir_matmul", ir.PatternOutEWiseFusable},
		"matmul_cast_2":            {"tir_matmul", ir.PatternOutEWiseFusable},
		"matmul_cast_3":            {"tir_matmul", ir.PatternOutEWiseFusable},
		"matmul_int_var_signature": {"tir_matmul", ir.PatternOutEWiseFusable},
		"reduce":                   {"sum", ir.PatternCommReduce},
		"ewise":                    {"elemwise", ir.PatternElemWise},
		"broadcast":                {"broadcast", ir.PatternBroadcast},
		"injective":                {"injective", ir.PatternInjective},
		"bias_add":                 {"tir_bias_add", ir.PatternElemWise},
		"add_broadcast_unit_shape": {"add_with_unit_dim_len_broadcast", ir.PatternElemWise},
		"add_zero_dim":             {"add_zero_dim", ir.PatternElemWise},
		"pooling":                  {"max_pool2d", ir.PatternOutEWiseFusable},
		"softmax":                  {"softmax", ir.PatternOutEWiseFusable},
		"multiple_stores":          {"cumsum", ir.PatternOpaque},
		"sum_sqsum":                {"sum_sqsum", ir.PatternCommReduce},
		"no_buffer_stores":         {"no_buffer_stores", ir.PatternOpaque},
		"keep_nonzero":             {"elemwise", ir.PatternOpaque},
	}
	dir := "../testdata/passes/AnnotateTIROpPattern"
	files, err := filepath.Glob(filepath.Join(dir, "*.tvms"))
	require.NoError(t, err)
	seen := 0
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".tvms")
		if strings.HasSuffix(name, ".out") {
			continue
		}
		w, ok := want[name]
		require.True(t, ok, "%s has no expected kind", name)
		seen++
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		out := run(t, transform.AnnotateTIROpPattern, evaltest.Parse(t, path, string(src)))
		pf := out.PrimFunc(w.fn)
		ok = pf != nil
		require.True(t, ok, "%s: no PrimFunc %s", name, w.fn)
		got, ok := pf.Attrs.Int(transform.AttrOpPattern)
		require.True(t, ok, "%s: no op_pattern", name)
		assert.Equal(t, w.kind, ir.OpPattern(got), "%s: %s", name, ir.OpPattern(got))
	}
	assert.Equal(t, len(want), seen)
}

// TestAnnotateTIROpPatternIdempotent: a second run returns its input.
func TestAnnotateTIROpPatternIdempotent(t *testing.T) {
	path := "../testdata/passes/AnnotateTIROpPattern/softmax.tvms"
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	once := run(t, transform.AnnotateTIROpPattern, evaltest.Parse(t, path, string(src)))
	assert.Same(t, once, run(t, transform.AnnotateTIROpPattern, once))
}

// legalizedPatternCases are calls of phasec's op library, each legalized
// and analyzed: the kind of its kernel against the op's declared Pattern
// (TVM's Relay registration, TestOpPatternsMatchTVM).
var legalizedPatternCases = []struct {
	call   string
	params string
	// differs, when set, is the kind TVM's analysis derives from the
	// legalized kernel where it disagrees with the op's declared pattern,
	// and why: TVM's FuseOps reads the analysis, not the declaration.
	differs ir.OpPattern
	why     string
}{
	{call: "R.exp(x)", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.nn.relu(x)", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.nn.gelu(x)", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.sigmoid(x)", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.astype(x, \"float16\")", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.add(x, y)", params: "x: R.Tensor((4, 8), \"float32\"), y: R.Tensor((8,), \"float32\")",
		differs: ir.PatternElemWise, why: "one operand is read elementwise, so the block is ElemWise"},
	{call: "R.add(x, y)", params: "x: R.Tensor((4, 1), \"float32\"), y: R.Tensor((1, 8), \"float32\")"},
	{call: "R.multiply(x, y)", params: "x: R.Tensor((4, 8), \"float32\"), y: R.Tensor((4, 8), \"float32\")",
		differs: ir.PatternElemWise, why: "same shapes: both operands are read elementwise"},
	{call: "R.broadcast_to(x, R.shape([4, 8]))", params: "x: R.Tensor((8,), \"float32\")"},
	{call: "R.permute_dims(x)", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.reshape(x, R.shape([8, 4]))", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.strided_slice(x, axes=[1], begin=[1], end=[5])", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.concat((x, x), axis=1)", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.take(x, i, axis=0)", params: "x: R.Tensor((4, 8), \"float32\"), i: R.Tensor((3,), \"int64\")",
		differs: ir.PatternOpaque, why: "the gathered index is a load of another buffer, which TVM's injectivity test counts as a foreign variable"},
	{call: "R.sum(x, axis=[1])", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.max(x, axis=[1])", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.mean(x, axis=[1])", params: "x: R.Tensor((4, 8), \"float32\")",
		differs: ir.PatternOutEWiseFusable, why: "a sum, then a division writing the output: the softmax rule"},
	{call: "R.matmul(x, w)", params: "x: R.Tensor((4, 8), \"float32\"), w: R.Tensor((8, 16), \"float32\")"},
	{call: "R.nn.softmax(x)", params: "x: R.Tensor((4, 8), \"float32\")"},
	{call: "R.nn.conv2d(x, w)", params: "x: R.Tensor((1, 3, 8, 8), \"float32\"), w: R.Tensor((4, 3, 3, 3), \"float32\")"},
	{call: "R.nn.max_pool2d(x, pool_size=[2, 2], strides=[2, 2])", params: "x: R.Tensor((1, 3, 8, 8), \"float32\")"},
	{call: "R.cumsum(x, axis=1)", params: "x: R.Tensor((4, 8), \"float32\")",
		differs: ir.PatternCommReduce, why: "phasec legalizes cumsum as a reduction over the prefix of the axis; TVM's topi kernel is a sequential scan (Opaque)"},
}

// TestAnnotateTIROpPatternLegalizedOps: each legalized op's kernel gets
// the kind its op declares, except where TVM's analysis of the same
// kernel disagrees (listed with the reason).
func TestAnnotateTIROpPatternLegalizedOps(t *testing.T) {
	for _, c := range legalizedPatternCases {
		t.Run(c.call+" "+c.params, func(t *testing.T) {
			src := fmt.Sprintf(`# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(%s):
        with R.dataflow():
            gv = %s
            R.output(gv)
        return gv
`, c.params, c.call)
			mod := evaltest.Parse(t, "case.tvms", src)
			call := mod.Func("main").Body.(*ir.SeqExpr).Blocks[0].Bindings[0].(*ir.VarBinding).Value.(*ir.Call)
			o := call.Op.(*ir.Op)
			_, ok := op.DefOf(o)
			require.True(t, ok)
			out, err := runPipeline(t, "LegalizeOps,AnnotateTIROpPattern", mod)
			require.NoError(t, err)
			var kinds []ir.OpPattern
			for _, f := range out.Functions() {
				if pf, ok := f.(*ir.PrimFunc); ok {
					kinds = append(kinds, transform.OpPatternAttr(pf))
				}
			}
			require.Len(t, kinds, 1, "one kernel")
			want := o.Pattern
			if c.why != "" {
				want = c.differs
			}
			assert.Equal(t, want, kinds[0], "%s declares %s; the analysis of its kernel gives %s", o.Name, o.Pattern, kinds[0])
		})
	}
}
