package transform

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/transform/dpl"
)

// BLASCodegen is the name of phasec's own kernel library as an external
// codegen: its pattern table (FuseOpsByPattern{patterns=["phasec_blas"]})
// and its codegen (RunCodegen) share the name, and its compiled kernels run
// on vm/blas's packed SGEMM (runtime kind vm/extern.BLASKind).
const BLASCodegen = "phasec_blas"

// blasPatterns is the phasec_blas pattern table: a float32 matrix product
// (x @ w, or x @ permute_dims(w), the linear/dense form) with an optional
// bias add along the rows and an optional relu, gelu or gelu_tanh: TVM's
// cuBLAS table (python/tvm/relax/backend/cuda/cublas.py), largest first
// because earlier patterns take precedence (TVM's registry gives patterns
// registered later priority, so cublas.py registers the smallest first).
func blasPatterns() []FusionPattern {
	type variant struct {
		suffix string
		bias   bool
		act    string
	}
	variants := []variant{
		{"matmul_bias_relu", true, "relax.nn.relu"},
		{"matmul_bias_gelu", true, "relax.nn.gelu"},
		{"matmul_bias_gelu_tanh", true, "relax.nn.gelu_tanh"},
		{"matmul_bias", true, ""},
		{"matmul_relu", false, "relax.nn.relu"},
		{"matmul_gelu", false, "relax.nn.gelu"},
		{"matmul_gelu_tanh", false, "relax.nn.gelu_tanh"},
		{"matmul", false, ""},
	}
	var table []FusionPattern
	for _, v := range variants {
		lhs, rhs, bias := dpl.Wildcard(), dpl.Wildcard(), dpl.Wildcard()
		weight := dpl.Or(dpl.IsOp("relax.permute_dims")(rhs), rhs)
		var root dpl.Pattern = dpl.IsOp("relax.matmul")(lhs, weight)
		if v.bias {
			root = dpl.IsOp("relax.add")(root, bias)
		}
		if v.act != "" {
			root = dpl.IsOp(v.act)(root)
		}
		annotations := map[string]dpl.Pattern{"lhs": lhs, "rhs": rhs}
		if v.bias {
			annotations["bias"] = bias
		}
		table = append(table, FusionPattern{
			Name:               BLASCodegen + "." + v.suffix,
			Pattern:            root,
			AnnotationPatterns: annotations,
			Check:              checkBLASMatch,
		})
	}
	return table
}

// checkBLASMatch accepts what the phasec_blas kernels compute: float32
// operands, lhs of rank 2 or more (its leading axes flattened into rows), a
// rank-2 weight (transposed only by a full permute_dims), a rank-1 bias, and
// no intermediate value used outside the match (a kernel has one output).
func checkBLASMatch(ctx *PatternCheckContext) bool {
	if HasLeakingIntermediates(ctx) {
		return false
	}
	f32 := func(e ir.Expr, ranks ...int) bool {
		t, ok := e.StructInfo().(*ir.TensorInfo)
		if !ok || t.DType.String() != "float32" {
			return false
		}
		for _, r := range ranks {
			if t.NDim == r {
				return true
			}
		}
		return false
	}
	lhs, rhs := ctx.AnnotatedExpr["lhs"], ctx.AnnotatedExpr["rhs"]
	if lhs == nil || rhs == nil || !f32(lhs, 2, 3, 4) || !f32(rhs, 2) {
		return false
	}
	for v, val := range ctx.MatchedBindings {
		c, ok := val.(*ir.Call)
		if !ok {
			continue
		}
		if op, ok := c.Op.(*ir.Op); ok && op.Name == "relax.permute_dims" {
			if axes, ok := c.Attrs.Ints("axes"); ok && !(len(axes) == 2 && axes[0] == 1 && axes[1] == 0) {
				return false
			}
		}
		if !f32(v, 1, 2, 3, 4) {
			return false
		}
	}
	if bias, ok := ctx.AnnotatedExpr["bias"]; ok && !f32(bias, 1) {
		return false
	}
	return true
}

func init() {
	if err := RegisterPatternTable(BLASCodegen, blasPatterns()); err != nil {
		panic(err)
	}
}
