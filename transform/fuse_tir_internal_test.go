package transform

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax"
)

func TestSymMatcher(t *testing.T) {
	m, n, k := ir.SymVar("m"), ir.SymVar("n"), ir.SymVar("k")

	// A variable met first binds; met again it must agree.
	sm := newSymMatcher()
	require.NoError(t, sm.matchAll([]ir.PrimExpr{m, n}, []ir.PrimExpr{ir.I64(16), ir.I64(32)}))
	assert.Equal(t, ir.PrimExpr(ir.I64(16)), sm.remap[m])
	assert.Error(t, sm.match(m, ir.I64(17)))
	assert.Error(t, sm.matchAll([]ir.PrimExpr{m}, []ir.PrimExpr{ir.I64(16), ir.I64(1)}), "rank")

	// An expression against a constant is pending until its variables
	// bind: m * n = 512 holds for (16, 32), fails for (16, 16).
	sm = newSymMatcher()
	require.NoError(t, sm.match(ir.Mul(m, n), ir.I64(512)))
	require.Len(t, sm.pending, 1)
	require.NoError(t, sm.matchAll([]ir.PrimExpr{m, n}, []ir.PrimExpr{ir.I64(16), ir.I64(32)}))
	assert.Empty(t, sm.pending)
	sm = newSymMatcher()
	require.NoError(t, sm.match(ir.Mul(m, n), ir.I64(512)))
	require.NoError(t, sm.match(m, ir.I64(16)))
	assert.ErrorContains(t, sm.match(n, ir.I64(16)), "cannot hold")

	// Same operator: operands match pairwise, binding m to k + 1.
	sm = newSymMatcher()
	require.NoError(t, sm.match(ir.Mul(m, ir.I64(2)), ir.Mul(ir.Add(k, ir.I64(1)), ir.I64(2))))
	assert.True(t, ir.StructuralEqual(sm.remap[m], ir.Add(k, ir.I64(1)), ir.EqualOptions{}))

	// Integer literals must agree; a float cannot match an int.
	assert.Error(t, newSymMatcher().match(ir.I64(4), ir.I64(8)))
	assert.Error(t, newSymMatcher().match(m, ir.NewFloat(ir.Float32, 1)))
}

func TestBlockNameDeduplication(t *testing.T) {
	s := newFusedBodySubst(map[*ir.Buffer]*ir.Buffer{}, map[*ir.PrimVar]ir.PrimExpr{})
	var got []string
	for _, n := range []string{"compute", "compute", "compute1", "compute", "T_add", "compute1", "x9", "x9"} {
		got = append(got, s.uniqueName(n))
	}
	// TVM's BlockNameDeduplicator: a numeric suffix counts up from itself.
	assert.Equal(t, []string{"compute", "compute1", "compute2", "compute3", "T_add", "compute4", "x9", "x10"}, got)
}

func TestIntermediateNames(t *testing.T) {
	gf := &groupFuser{allocNames: map[string]bool{}}
	var got []string
	for range 3 {
		n := gf.intermediateName("Out")
		gf.allocNames[n] = true
		got = append(got, n)
	}
	// TVM appends to the previous attempt: _1, then _1_2.
	assert.Equal(t, []string{"Out_intermediate", "Out_intermediate_1", "Out_intermediate_1_2"}, got)
}

// Modules the well-formedness checker refuses, or FuseTIRInner cannot
// fuse, run through the fusion directly: a diagnostic naming the function
// and the reason, never a panic.
func TestFuseTIRRefusesUnfusableGroups(t *testing.T) {
	const kernels = `
    @T.prim_func(private=True)
    def neg(A: T.Buffer((T.int64(4),), "float32"), B: T.Buffer((T.int64(4),), "float32")):
        for i in range(T.int64(4)):
            with T.block("neg"):
                vi = T.axis.spatial(T.int64(4), i)
                B[vi] = T.float32(0.0) - A[vi]
`
	for name, tc := range map[string]struct{ body, want string }{
		"stride variable": {`
    @T.prim_func(private=True)
    def scale(a: T.handle, b: T.handle):
        s = T.int64()
        A = T.match_buffer(a, (T.int64(4),), strides=(s,))
        B = T.match_buffer(b, (T.int64(4),))
        for i in range(T.int64(4)):
            with T.block("scale"):
                vi = T.axis.spatial(T.int64(4), i)
                B[vi] = A[vi] * T.Cast("float32", s)

    @R.function(private=True)
    def fused(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"Primitive": 1})
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.scale, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(gv)
        return gv
`, `OPT271.*Primitive function fused: the fused kernel would use s`},
		"match_cast": {`
    @R.function(private=True)
    def fused(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"Primitive": 1})
        cls = Module
        with R.dataflow():
            y = R.match_cast(x, R.Tensor((4,), dtype="float32"))
            gv = R.call_tir(cls.neg, (y,), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(gv)
        return gv
`, `OPT270.*Primitive function fused: R.match_cast is not supported`},
		"calls a Relax function": {`
    @R.function(private=True)
    def helper(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return x

    @R.function(private=True)
    def fused(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"Primitive": 1})
        cls = Module
        with R.dataflow():
            gv = cls.helper(x)
            R.output(gv)
        return gv
`, `OPT270.*Primitive function fused: binding gv calls helper; only R.call_tir`},
		"call_tir of a Relax function": {`
    @R.function(private=True)
    def fused(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"Primitive": 1})
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.other, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(gv)
        return gv

    @R.function(private=True)
    def other(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return x
`, `OPT270.*Primitive function fused: binding gv calls other, which is not a PrimFunc`},
		"public tuple parameter": {`
    @R.function
    def fused(t: R.Tuple(R.Tensor((4,), dtype="float32"))) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"Primitive": 1})
        cls = Module
        with R.dataflow():
            x = t[0]
            gv = R.call_tir(cls.neg, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(gv)
        return gv
`, `OPT273.*Primitive function fused: parameter t is a tuple`},
		"unknown shape": {`
    @R.function(private=True)
    def fused(x: R.Tensor(dtype="float32", ndim=1)) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"Primitive": 1})
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.neg, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(gv)
        return gv
`, `OPT273.*Primitive function fused: parameter x needs a known shape`},
		"returns a parameter twice in place": {`
    @R.function(private=True)
    def fused(x: R.Tensor((4,), dtype="float32")) -> R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")):
        R.func_attr({"Primitive": 1})
        with R.dataflow():
            gv = (x, x)
            R.output(gv)
        return gv
`, `OPT270.*Primitive function fused: it returns parameter 0 in place twice`},
	} {
		t.Run(name, func(t *testing.T) {
			src := "@I.ir_module\nclass Module:" + kernels + tc.body
			mod, diags := syntax.Parse(name+".tvms", []byte(src))
			require.Empty(t, diags)
			mod, diags = ir.NormalizeModule(mod)
			require.Empty(t, diags)
			var err error
			require.NotPanics(t, func() { _, err = fuseTIR(mod) })
			require.Error(t, err)
			assert.Regexp(t, tc.want, err.Error())
		})
	}
}
