package transform_test

import (
	"github.com/phasec/phasec/transform"
	"github.com/phasec/phasec/transform/dpl"
)

// The dnnl table of TVM's tests (test_transform_fuse_ops_by_pattern.py):
// conv2d+relu, and a conv2d with padding 1 (has_attr).
func init() {
	conv := dpl.IsOp("relax.nn.conv2d")(dpl.Wildcard(), dpl.Wildcard())
	err := transform.RegisterPatternTable("dnnl", []transform.FusionPattern{
		{Name: "dnnl.conv2d_relu", Pattern: dpl.IsOp("relax.nn.relu")(conv)},
		{Name: "dnnl.conv2d", Pattern: dpl.HasAttr(dpl.IsOp("relax.nn.conv2d")(dpl.Wildcard(), dpl.Wildcard()), map[string]any{"padding": []int64{1, 1, 1, 1}})},
	})
	if err != nil {
		panic(err)
	}
}
