package op

import (
	"github.com/phasec/phasec/ir"

	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dialectOps is every op of the TVMScript dialect phasec must know.
var dialectOps = strings.Fields(`
	R.call_tir R.call_tir_inplace R.call_dps_packed R.call_packed R.call_pure_packed
	R.call_builtin_with_ctx R.make_closure R.invoke_closure R.invoke_pure_closure
	R.null_value R.shape_of R.tensor_to_shape R.shape_to_tensor R.print R.assert_op
	R.builtin.alloc_tensor R.memory.alloc_storage R.memory.alloc_tensor
	R.memory.kill_storage R.memory.kill_tensor R.vm.alloc_storage R.vm.alloc_tensor
	R.vm.kill_object R.vm.call_tir_dyn
	R.add R.subtract R.multiply R.divide R.floor_divide R.power R.maximum R.minimum
	R.equal R.not_equal R.less R.less_equal R.greater R.greater_equal
	R.exp R.log R.sqrt R.rsqrt R.tanh R.sigmoid R.negative R.abs R.floor R.ceil
	R.nn.relu R.nn.gelu R.nn.silu R.matmul R.reshape R.permute_dims R.expand_dims
	R.squeeze R.flatten R.concat R.split R.strided_slice R.take
	R.sum R.mean R.max R.min R.prod R.nn.softmax R.nn.log_softmax R.nn.layer_norm
	R.nn.rms_norm R.astype R.full R.zeros R.ones R.full_like R.zeros_like R.ones_like
	R.broadcast_to`)

func TestDialectOpsRegistered(t *testing.T) {
	for _, path := range dialectOps {
		_, ok := ir.OpByPath(path)
		assert.True(t, ok, "%s is not registered", path)
	}
}

func TestRegistryCompleteness(t *testing.T) {
	name := regexp.MustCompile(`^relax\.([a-z]+\.)?[a-z][a-z0-9_]*$`)
	for _, op := range ir.Ops() {
		if !strings.HasPrefix(op.Name, "relax.") {
			continue // ops other tests register for themselves
		}
		t.Run(op.Name, func(t *testing.T) {
			assert.Regexp(t, name, op.Name, "bad op name")
			assert.NotEmpty(t, op.Doc, "missing Doc")
			assert.NotNil(t, op.Infer, "missing Infer")
			if d, ok := DefOf(op); assert.True(t, ok, "no op record (Define)") {
				assert.Same(t, op, d.Op, "no op record (Define)")
			}
			if got, ok := ir.OpByPath(ir.OpPath(op)); assert.True(t, ok, "OpByPath(%q) does not give the op back", ir.OpPath(op)) {
				assert.Same(t, op, got, "OpByPath(%q) does not give the op back", ir.OpPath(op))
			}
			seen := map[string]bool{}
			variadic := false
			for i, p := range op.Params {
				assert.False(t, seen[p.Name], "parameter %s repeated", p.Name)
				seen[p.Name] = true
				assert.Equal(t, i, op.ParamIndex(p.Name), "ParamIndex(%s)", p.Name)
				if variadic {
					assert.True(t, p.Kind.IsAttr(), "argument parameter %s follows a variadic one", p.Name)
				}
				if p.Variadic {
					assert.False(t, p.Kind.IsAttr(), "variadic parameter %s must be an argument without default", p.Name)
					assert.Nil(t, p.Default, "variadic parameter %s must be an argument without default", p.Name)
					variadic = true
				}
				assert.Empty(t, defaultMatchesKind(p), "parameter %s", p.Name)
			}
			// Required argument parameters come before optional ones, so
			// omitted arguments are always trailing.
			optional := false
			for _, p := range op.ArgParams() {
				if !p.Required() {
					optional = true
				} else {
					assert.False(t, optional, "required argument %s follows an optional one", p.Name)
				}
			}
		})
	}
}

// defaultMatchesKind checks a parameter's Default against its kind.
func defaultMatchesKind(p ir.Param) string {
	if p.Default == nil {
		return ""
	}
	if t, ok := p.Default.(*ir.Tuple); ok && len(t.Fields) == 0 && !p.Kind.IsAttr() {
		return "" // the void tuple: "not given" (R.memory.view's shape, dtype, offset)
	}
	ok := false
	switch p.Kind {
	case ir.ArgExpr:
		_, ok = p.Default.(ir.Expr)
	case ir.ArgPrimValue:
		_, ok = p.Default.(*ir.PrimValue)
	case ir.ArgStr:
		_, ok = p.Default.(*ir.StringImm)
	case ir.ArgDType:
		_, ok = p.Default.(*ir.DataTypeImm)
	case ir.ArgShape:
		_, ok = p.Default.(*ir.ShapeExpr)
	case ir.ArgTuple:
		_, ok = p.Default.(*ir.Tuple)
	case ir.AttrInt:
		_, ok = p.Default.(int64)
	case ir.AttrInts:
		_, ok = ir.AttrAsInts(p.Default)
		_, isList := p.Default.([]any)
		ok = ok && isList
	case ir.AttrBool:
		_, ok = p.Default.(bool)
	case ir.AttrFloat:
		_, ok = p.Default.(float64)
	case ir.AttrStr:
		_, ok = p.Default.(string)
	case ir.AttrDType:
		_, ok = p.Default.(ir.DataType)
	case ir.AttrAny:
		ok = true
	}
	if !ok {
		return "default does not match its kind"
	}
	if p.Kind.IsAttr() {
		if cv, err := p.CoerceAttr(p.Default); err != nil || !attrValueEqual(cv, p.Default) {
			return "default is not in canonical form"
		}
	}
	return ""
}

func TestOpPurityAndCategory(t *testing.T) {
	cases := []struct {
		op   *ir.Op
		pure bool
		cat  ir.OpCategory
	}{
		{CallTIR, true, ir.CatCall},
		{CallTIRInplace, true, ir.CatCall},
		{CallDPSPacked, true, ir.CatCall},
		{CallPacked, false, ir.CatPacked},
		{CallPurePacked, true, ir.CatPacked},
		{CallBuiltinWithCtx, false, ir.CatPacked},
		{MakeClosure, true, ir.CatClosure},
		{InvokeClosure, false, ir.CatClosure},
		{InvokePureClosure, true, ir.CatClosure},
		{NullValue, true, ir.CatMisc},
		{Print, false, ir.CatMisc},
		{Assert, false, ir.CatMisc},
		{ShapeOf, true, ir.CatShape},
		{TensorToShape, true, ir.CatShape},
		{ShapeToTensor, true, ir.CatShape},
		{Reshape, true, ir.CatShape},
		{BuiltinAllocTensor, true, ir.CatBuiltin},
		{MemAllocStorage, true, ir.CatMemory},
		{MemAllocTensor, true, ir.CatMemory},
		{MemKillStorage, false, ir.CatMemory},
		{MemKillTensor, false, ir.CatMemory},
		{VMAllocStorage, true, ir.CatVM},
		{VMAllocTensor, true, ir.CatVM},
		{VMKillObject, false, ir.CatVM},
		{VMCallTIRDyn, false, ir.CatVM},
		{Add, true, ir.CatTensor},
		{Less, true, ir.CatTensor},
		{Exp, true, ir.CatTensor},
		{Relu, true, ir.CatTensor},
		{Matmul, true, ir.CatTensor},
		{Sum, true, ir.CatTensor},
		{LayerNorm, true, ir.CatTensor},
		{Concat, true, ir.CatTensor},
		{Full, true, ir.CatTensor},
	}
	for _, c := range cases {
		assert.Equal(t, c.pure, c.op.Pure, "%s: pure", c.op.Name)
		assert.Equal(t, c.cat, c.op.Category, "%s: category", c.op.Name)
	}
	// Every op outside the low-level families is a pure tensor op.
	for _, op := range ir.Ops() {
		if op.Category == ir.CatTensor {
			assert.True(t, op.Pure, "%s: tensor ops are pure", op.Name)
		}
	}
}

func TestOpPathsAndSchemaLookups(t *testing.T) {
	assert.Equal(t, "R.nn.relu", ir.OpPath(Relu), "OpPath(relu)")
	assert.Equal(t, "R.memory.alloc_storage", ir.OpPath(MemAllocStorage), "OpPath(alloc_storage)")
	_, ok := ir.OpByPath("relax.add")
	assert.False(t, ok, "OpByPath accepted a registry name")
	_, ok = ir.OpByPath("R.no_such_op")
	assert.False(t, ok, "OpByPath found an unknown op")
	assert.Equal(t, 2, Sum.ParamIndex("keepdims"), "sum keepdims index")
	assert.Equal(t, -1, Sum.ParamIndex("nope"), "unknown parameter index")
	assert.Equal(t, 2, CallTIRInplace.ArgPosition("tir_vars"), "call_tir_inplace tir_vars position (attrs are skipped)")
	assert.Equal(t, -1, Sum.ArgPosition("axis"), "an attribute has no argument position")
	assert.Equal(t, 0, CallPacked.ExternCalleeParam(), "call_packed extern callee param")
	assert.Equal(t, -1, Add.ExternCalleeParam(), "add has no extern callee")
	scope := BuiltinAllocTensor.Params[3]
	a, b := scope.NewDefaultArg(), scope.NewDefaultArg()
	assert.NotSame(t, a, b, "NewDefaultArg must return a fresh R.str(\"global\")")
	assert.Equal(t, "global", a.(*ir.StringImm).Value, "NewDefaultArg must return a fresh R.str(\"global\")")
}

func TestCoerceAttr(t *testing.T) {
	cases := []struct {
		p    ir.Param
		in   any
		want any
		err  bool
	}{
		{ir.Param{Name: "axis", Kind: ir.AttrInt}, 3, int64(3), false},
		{ir.Param{Name: "axis", Kind: ir.AttrInts}, 1, []any{int64(1)}, false},
		{ir.Param{Name: "axis", Kind: ir.AttrInts}, []int{1, 2}, []any{int64(1), int64(2)}, false},
		{ir.Param{Name: "axis", Kind: ir.AttrInts}, "x", nil, true},
		{ir.Param{Name: "eps", Kind: ir.AttrFloat}, 1, float64(1), false},
		{ir.Param{Name: "dtype", Kind: ir.AttrDType}, "float16", ir.Float16, false},
		{ir.Param{Name: "dtype", Kind: ir.AttrDType}, "float17", nil, true},
		{ir.Param{Name: "k", Kind: ir.AttrBool}, 1, nil, true},
		{ir.Param{Name: "s", Kind: ir.AttrAny}, []int{2, 5}, []any{int64(2), int64(5)}, false},
		{ir.Param{Name: "s", Kind: ir.AttrAny}, nil, nil, false},
	}
	for _, c := range cases {
		got, err := c.p.CoerceAttr(c.in)
		assert.Equal(t, c.err, err != nil, "CoerceAttr(%s, %#v) = %#v, %v", c.p.Name, c.in, got, err)
		if !c.err {
			assert.True(t, attrValueEqual(got, c.want), "CoerceAttr(%s, %#v) = %#v, %v", c.p.Name, c.in, got, err)
		}
	}
}

func TestSchemaNormalize(t *testing.T) {
	x := tensorVar("x", ir.Float32, 2, 3)
	// A pass-built call gets its defaults; a parsed one keeps its values.
	got, err := Sum.Normalize(nil, opCall(Sum, nil, x))
	require.NoError(t, err)
	c := got.(*ir.Call)
	if v, ok := c.Attrs["keepdims"]; assert.True(t, ok, "keepdims default not filled: %#v", c.Attrs) {
		assert.Equal(t, false, v, "keepdims default not filled: %#v", c.Attrs)
	}
	assert.NotContains(t, c.Attrs, "axis", "axis=None must stay absent")
	again, _ := Sum.Normalize(nil, c)
	assert.Same(t, c, again, "normalizing a canonical call should return it unchanged")
	got, _ = Sum.Normalize(nil, opCall(Sum, ir.Attrs{"axis": nil, "keepdims": true}, x))
	assert.NotContains(t, got.(*ir.Call).Attrs, "axis", "an explicit None for a None-default attribute must become absent")
	got, _ = Sum.Normalize(nil, opCall(Sum, ir.Attrs{"axis": 1}, x))
	v := got.(*ir.Call).Attrs["axis"]
	assert.True(t, attrValueEqual(v, []any{int64(1)}), "axis=1 not canonicalized: %#v", v)
	got, _ = Concat.Normalize(nil, opCall(Concat, ir.Attrs{"axis": nil}, ir.NewTuple(x)))
	if v, ok := got.(*ir.Call).Attrs["axis"]; assert.True(t, ok, "concat axis=None differs from the default and must be kept") {
		assert.Equal(t, nil, v, "concat axis=None differs from the default and must be kept")
	}
	_, err = Sum.Normalize(nil, opCall(Sum, ir.Attrs{"keepdims": 3}, x))
	assert.Error(t, err, "a badly typed attribute must be an error")
	got, _ = BuiltinAllocTensor.Normalize(nil, ir.NewCall(BuiltinAllocTensor, shapeLit(2), ir.NewDataTypeImm(ir.Float32), primLit(0)))
	args := got.(*ir.Call).Args
	if assert.Len(t, args, 4, "storage_scope default not filled") {
		assert.Equal(t, "global", args[3].(*ir.StringImm).Value, "storage_scope default not filled")
	}
	got, _ = MemAllocTensor.Normalize(nil, ir.NewCall(MemAllocTensor, ir.NewVar("s", ir.Object()), primLit(0), shapeLit(2), ir.NewDataTypeImm(ir.Float32)))
	assert.Len(t, got.(*ir.Call).Args, 5, "runtime_device_index default not filled")
}
