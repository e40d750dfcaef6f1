package op

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
)

// TestEveryOpHasOneRecord: the named ops of the registry and the op
// records are the same set, each record holding its own op.
func TestEveryOpHasOneRecord(t *testing.T) {
	defs := Defs()
	byOp := map[*ir.Op]*Def{}
	for _, d := range defs {
		require.NotContains(t, byOp, d.Op, "%s recorded twice", d.Op.Name)
		byOp[d.Op] = d
		got, ok := ir.LookupOp(d.Op.Name)
		require.True(t, ok, "%s is not in ir's registry", d.Op.Name)
		assert.Same(t, d.Op, got)
	}
	for _, o := range ir.Ops() {
		d, ok := DefOf(o)
		require.True(t, ok, "%s has no record", o.Name)
		assert.Same(t, byOp[o], d)
	}
	assert.Len(t, defs, len(ir.Ops()))
	assert.Panics(t, func() { Define(Def{Op: Add}) }, "an op defined twice")
}

// TestOpPatternsMatchTVM checks a sample of ops against TVM's OpPatternKind
// for the same operator. Relax ops carry no TOpPattern in TVM v0.23 (its
// FuseOps reads the op_pattern AnnotateTIROpPattern derives from each
// legalized PrimFunc), so the values are those Relay registered for the
// same operators (v0.19.0: src/relay/op/op_common.h RELAY_REGISTER_UNARY_OP
// kElemWise and RELAY_REGISTER_BINARY_OP / CMP_OP kBroadcast;
// src/relay/op/tensor/{transform,reduce}.cc, src/relay/op/nn/*.cc,
// python/tvm/relay/op/_algorithm.py register_pattern).
func TestOpPatternsMatchTVM(t *testing.T) {
	want := []struct {
		op    *ir.Op
		relay string // the Relay operator whose value this is
		kind  int
	}{
		{Exp, "exp", 0}, {Relu, "nn.relu", 0}, {Clip, "clip", 0}, {LeakyRelu, "nn.leaky_relu", 0},
		{LogicalNot, "logical_not", 0}, {IsNaN, "isnan", 0}, {AsType, "cast", 0},
		{Full, "full", 0}, {Zeros, "zeros", 0}, {OnesLike, "ones_like", 0}, {Tril, "trilu", 0},
		{Add, "add", 1}, {Less, "less", 1}, {Power, "power", 1}, {LogicalAnd, "logical_and", 1},
		{Where, "where", 1}, {BroadcastTo, "broadcast_to", 1}, {ExpandDims, "expand_dims", 1},
		{Tile, "tile", 1}, {Repeat, "repeat", 1}, {PRelu, "nn.prelu", 1},
		{Reshape, "reshape", 2}, {PermuteDims, "transpose", 2}, {Squeeze, "squeeze", 2},
		{Concat, "concatenate", 2}, {Split, "split", 2}, {StridedSlice, "strided_slice", 2},
		{Take, "take", 2}, {Flip, "reverse", 2}, {Stack, "stack", 2}, {GatherND, "gather_nd", 2},
		{GatherElements, "gather", 2}, {Pad, "nn.pad", 2}, {Resize2D, "image.resize2d", 2},
		{LayoutTransform, "layout_transform", 2}, {Einsum, "einsum", 2},
		{Sum, "sum", 3}, {Max, "max", 3}, {Mean, "mean", 3}, {Variance, "variance", 3},
		{Argmax, "argmax", 3}, {CollapseSumTo, "collapse_sum_to", 3},
		{Matmul, "nn.matmul", 4}, {Conv2D, "nn.conv2d", 4}, {Conv2DTranspose, "nn.conv2d_transpose", 4},
		{MaxPool2D, "nn.max_pool2d", 4}, {AdaptiveAvgPool2D, "nn.adaptive_avg_pool2d", 4},
		{Softmax, "nn.softmax", 4}, {LogSoftmax, "nn.log_softmax", 4}, {BatchNorm, "nn.batch_norm", 4},
		{OneHot, "one_hot", 4}, {NLLLoss, "nn.nll_loss", 4},
		{Sort, "sort", 8}, {Argsort, "argsort", 8}, {TopK, "topk", 8}, {Cumsum, "cumsum", 8},
		{Dropout, "nn.dropout", 8}, {ScatterElements, "scatter_elements", 8}, {ScatterND, "scatter_nd", 8},
		{Arange, "arange", 8}, {CrossEntropyWithLogits, "nn.cross_entropy_with_logits", 8},
	}
	for _, w := range want {
		assert.Equal(t, w.kind, int(w.op.Pattern), "%s (Relay %s): %s", w.op.Name, w.relay, w.op.Pattern)
	}
	// What fusion compares, by TVM's numbering.
	assert.Equal(t, []int{0, 1, 2, 3, 4, 7, 8}, []int{int(ir.PatternElemWise), int(ir.PatternBroadcast),
		int(ir.PatternInjective), int(ir.PatternCommReduce), int(ir.PatternOutEWiseFusable),
		int(ir.PatternTuple), int(ir.PatternOpaque)})
}

// TestOnlyTensorOpsFuse: TVM's FuseOps gives every call that is not a
// call_tir of an annotated PrimFunc kOpaque, so an op outside the tensor
// families must say Opaque (the zero value, ElemWise, would let it fuse).
func TestOnlyTensorOpsFuse(t *testing.T) {
	for _, d := range Defs() {
		o := d.Op
		if o.Category != ir.CatTensor && !(o.Category == ir.CatShape && d.Legalize != nil) {
			assert.Equal(t, ir.PatternOpaque, o.Pattern, o.Name)
		}
	}
}

// TestLegalAtBuild: the ops VM code generation emits are TVM's CodeGenVM
// set (src/relax/backend/vm/codegen_vm.cc, v0.23: call_builtin_with_ctx,
// vm.alloc_storage, vm.alloc_tensor, vm.kill_object, null_value) and
// call_packed, which phasec keeps as an op where TVM calls the ExternFunc
// directly. vm.call_tir_dyn is not among them: LowerRuntimeBuiltin
// (lower_runtime_builtin.cc) turns it into a vm.builtin.call_tir_dyn call.
func TestLegalAtBuild(t *testing.T) {
	var got []string
	for _, d := range Defs() {
		if d.Op.LegalAtBuild {
			got = append(got, d.Op.Name)
		}
	}
	assert.Equal(t, []string{"relax.call_builtin_with_ctx", "relax.call_packed", "relax.null_value",
		"relax.vm.alloc_storage", "relax.vm.alloc_tensor", "relax.vm.kill_object"}, got)
	assert.False(t, VMCallTIRDyn.LegalAtBuild)
}

// TestOpaqueOpsAreInterned: an opaque op is a record of the same registry,
// one per name and argument shape, safe to create from many goroutines,
// and never in ir's name registry.
func TestOpaqueOpsAreInterned(t *testing.T) {
	params := func(kws ...string) []ir.Param {
		ps := []ir.Param{{Name: "data", Kind: ir.ArgExpr}}
		for _, k := range kws {
			ps = append(ps, ir.Param{Name: k, Kind: ir.AttrAny})
		}
		return ps
	}
	const name = "relax.optest.unknown"
	ops := make([]*ir.Op, 8)
	var wg sync.WaitGroup
	for i := range ops {
		wg.Go(func() { ops[i] = Opaque(name, params("axis")) })
	}
	wg.Wait()
	for _, o := range ops {
		require.Same(t, ops[0], o)
	}
	o := ops[0]
	assert.True(t, o.Opaque)
	assert.Equal(t, ir.PatternOpaque, o.Pattern)
	assert.NotSame(t, o, Opaque(name, params("keepdims")), "other keywords, other op")
	assert.NotSame(t, o, Opaque(name, params()), "other arity, other op")

	d, ok := DefOf(o)
	require.True(t, ok)
	assert.Same(t, o, d.Op)
	assert.Nil(t, d.Eval)
	assert.Nil(t, d.Legalize)
	_, named := ir.LookupOp(name)
	assert.False(t, named)
	for _, d := range Defs() {
		assert.False(t, d.Op.Opaque, fmt.Sprintf("%s: Defs lists named ops only", d.Op.Name))
	}
}
