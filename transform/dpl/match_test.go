package dpl_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	_ "github.com/phasec/phasec/op" // registers the ops patterns name
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/transform/dpl"
)

const convModule = `
@I.ir_module
class Module:
    @R.function
    def main(data: R.Tensor((1, 64, 56, 56), dtype="float32"), weight: R.Tensor((64, 64, 3, 3), dtype="float32"), bias: R.Tensor((1, 64, 1, 1), dtype="float32")) -> R.Tensor((1, 64, 56, 56), dtype="float32"):
        with R.dataflow():
            conv = R.nn.conv2d(data, weight, padding=[1, 1, 1, 1])
            added = R.add(conv, bias)
            relu = R.nn.relu(added)
            scaled = R.multiply(relu, R.const(2, "float32"))
            R.output(scaled)
        return scaled
`

// block parses src and returns main's dataflow block and its bindings by
// variable name.
func block(t *testing.T, src string) (*dpl.Bindings, map[string]ir.Expr) {
	t.Helper()
	mod, diags := syntax.Parse("test.tvms", []byte(strings.TrimSpace(src)+"\n"))
	require.Empty(t, diags)
	blk := mod.Func("main").Body.(*ir.SeqExpr).Blocks[0]
	byName := map[string]ir.Expr{}
	for _, b := range blk.Bindings {
		byName[b.BoundVar().Name] = b.(*ir.VarBinding).Value
	}
	return dpl.BlockBindings(blk), byName
}

func TestMatchFollowsDataflowVars(t *testing.T) {
	b, vals := block(t, convModule)
	in, w, bias := dpl.Wildcard(), dpl.Wildcard(), dpl.Wildcard()
	conv := dpl.IsOp("relax.nn.conv2d")(in, w)
	add := dpl.IsOp("relax.add")(conv, bias)
	relu := dpl.IsOp("relax.nn.relu")(add)

	m, ok := dpl.MatchExpr(relu, vals["relu"], b)
	require.True(t, ok)
	assert.Same(t, vals["relu"], m[relu])
	assert.Same(t, vals["added"], m[add], "the add is reached through the variable added")
	assert.Same(t, vals["conv"], m[conv])
	assert.Equal(t, "data", m[in].(*ir.Var).Name, "a wildcard matches the operand itself")
	assert.Equal(t, "bias", m[bias].(*ir.Var).Name)

	// The root must be the relu: the add alone is no match for the relu pattern.
	_, ok = dpl.MatchExpr(relu, vals["added"], b)
	assert.False(t, ok)
	// A wildcard does not follow its operand: conv(wildcard, wildcard) on the add fails.
	_, ok = dpl.MatchExpr(conv, vals["added"], b)
	assert.False(t, ok)
}

func TestMatchWithoutBindingsStopsAtVariables(t *testing.T) {
	_, vals := block(t, convModule)
	relu := dpl.IsOp("relax.nn.relu")(dpl.IsOp("relax.add")(dpl.Wildcard(), dpl.Wildcard()))
	_, ok := dpl.MatchExpr(relu, vals["relu"], nil)
	assert.False(t, ok, "with no bindings the operand added is a variable, not a call")
}

func TestMatchConstantAndAttrs(t *testing.T) {
	b, vals := block(t, convModule)
	c := dpl.IsConst()
	mul := dpl.IsOp("relax.multiply")(dpl.Wildcard(), c)
	m, ok := dpl.MatchExpr(mul, vals["scaled"], b)
	require.True(t, ok)
	assert.IsType(t, &ir.Constant{}, m[c])
	_, ok = dpl.MatchExpr(dpl.IsOp("relax.multiply")(dpl.IsConst(), dpl.Wildcard()), vals["scaled"], b)
	assert.False(t, ok, "the constant is the second operand")

	conv := dpl.IsOp("relax.nn.conv2d")(dpl.Wildcard(), dpl.Wildcard())
	_, ok = dpl.MatchExpr(dpl.HasAttr(conv, map[string]any{"padding": []int64{1, 1, 1, 1}}), vals["conv"], b)
	assert.True(t, ok)
	_, ok = dpl.MatchExpr(dpl.HasAttr(conv, map[string]any{"padding": []int64{0, 0, 0, 0}}), vals["conv"], b)
	assert.False(t, ok)
	_, ok = dpl.MatchExpr(dpl.HasAttr(conv, map[string]any{"data_layout": "NCHW"}), vals["conv"], b)
	assert.True(t, ok, "a default attribute is present in the normalized call")
	_, ok = dpl.MatchExpr(dpl.HasAttr(conv, map[string]any{"no_such_attr": 1}), vals["conv"], b)
	assert.False(t, ok)
}

func TestMatchAlternativesAndOptional(t *testing.T) {
	b, vals := block(t, convModule)
	conv := dpl.IsOp("relax.nn.conv2d")(dpl.Wildcard(), dpl.Wildcard())
	withBias := dpl.Optional(conv, func(p dpl.Pattern) dpl.Pattern { return dpl.IsOp("relax.add")(p, dpl.Wildcard()) })
	act := dpl.Optional(withBias, func(p dpl.Pattern) dpl.Pattern {
		return dpl.IsOp("relax.nn.relu", "relax.nn.gelu")(p)
	})
	for _, root := range []string{"conv", "added", "relu"} {
		m, ok := dpl.MatchExpr(act, vals[root], b)
		require.True(t, ok, root)
		assert.Same(t, vals["conv"], m[conv], root)
		assert.Same(t, vals[root], m[act], root)
	}
	_, ok := dpl.MatchExpr(act, vals["scaled"], b)
	assert.False(t, ok)

	// Or backtracks: the first alternative's partial match leaves nothing behind.
	w := dpl.Wildcard()
	alt := dpl.Or(dpl.IsOp("relax.add")(w, dpl.IsConst()), dpl.IsOp("relax.add")(dpl.Wildcard(), dpl.Wildcard()))
	m, ok := dpl.MatchExpr(alt, vals["added"], b)
	require.True(t, ok)
	_, leaked := m[w]
	assert.False(t, leaked, "the failed alternative's wildcard is undone")
}

func TestMatchSharedPatternMustMatchOneExpr(t *testing.T) {
	src := `
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")):
        with R.dataflow():
            sq = R.multiply(x, x)
            mixed = R.multiply(x, y)
            t = (sq, mixed)
            first = t[0]
            R.output(t, first)
        return t
`
	b, vals := block(t, src)
	x := dpl.Wildcard()
	square := dpl.IsOp("relax.multiply")(x, x)
	_, ok := dpl.MatchExpr(square, vals["sq"], b)
	assert.True(t, ok)
	_, ok = dpl.MatchExpr(square, vals["mixed"], b)
	assert.False(t, ok, "one wildcard used twice must match the same operand")

	tup := dpl.IsTuple(square, dpl.Wildcard())
	_, ok = dpl.MatchExpr(tup, vals["t"], b)
	assert.True(t, ok)
	_, ok = dpl.MatchExpr(dpl.IsTupleGetItem(tup, 0), vals["first"], b)
	assert.True(t, ok)
	_, ok = dpl.MatchExpr(dpl.IsTupleGetItem(tup, 1), vals["first"], b)
	assert.False(t, ok)
}

func TestMatchPredicates(t *testing.T) {
	b, vals := block(t, convModule)
	relu := dpl.IsOp("relax.nn.relu")(dpl.Wildcard())
	_, ok := dpl.MatchExpr(dpl.HasDType(relu, "float32"), vals["relu"], b)
	assert.True(t, ok)
	_, ok = dpl.MatchExpr(dpl.HasDType(relu, "float16"), vals["relu"], b)
	assert.False(t, ok)
	assert.Equal(t, `is_op("relax.nn.relu")(wildcard()).has_dtype(float16)`, dpl.HasDType(relu, "float16").String())
}

func TestIsOpRejectsUnknownOp(t *testing.T) {
	assert.PanicsWithValue(t, `dpl.IsOp: no op named "relax.nn.conv9d"`, func() { dpl.IsOp("relax.nn.conv9d") })
}
