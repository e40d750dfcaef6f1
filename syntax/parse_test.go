package syntax

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// corpusFiles lists every .tvms file under ../testdata except the negative
// corpus (testdata/errors).
func corpusFiles(t testing.TB) []string {
	var files []string
	err := filepath.WalkDir(filepath.Join("..", "testdata"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "errors" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".tvms") {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// TestParseCorpus parses every positive corpus file without diagnostics and
// checks that every Relax binding has struct info and a span.
func TestParseCorpus(t *testing.T) {
	files := corpusFiles(t)
	require.NotEmpty(t, files, "no corpus files found under ../testdata")
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			mod, diags := Parse(path, src)
			require.Empty(t, diags, "unexpected diagnostics:\n%s", FormatDiagnostics(diags, src))
			checkModuleInvariants(t, mod)
		})
	}
}

// checkModuleInvariants: every binding of every Relax function has a var
// with struct info, a value with struct info and a source span.
func checkModuleInvariants(t *testing.T, mod *ir.Module) {
	t.Helper()
	for name, f := range mod.Functions() {
		fn, ok := f.(*ir.Function)
		if !ok {
			continue
		}
		assert.NotNil(t, fn.StructInfo(), "%s: function has no struct info", name)
		checkSeq(t, name, fn.Body)
	}
}

func checkSeq(t *testing.T, fname string, body ir.Expr) {
	t.Helper()
	seq, ok := body.(*ir.SeqExpr)
	if !assert.True(t, ok, "%s: body is %T, not a SeqExpr", fname, body) {
		return
	}
	for _, blk := range seq.Blocks {
		for _, b := range blk.Bindings {
			v := b.BoundVar()
			assert.NotNil(t, v.StructInfo(), "%s: var %s has no struct info", fname, v.Name)
			assert.True(t, b.Span().IsValid(), "%s: binding of %s has no span", fname, v.Name)
			var val ir.Expr
			switch b := b.(type) {
			case *ir.VarBinding:
				val = b.Value
			case *ir.MatchCast:
				val = b.Value
			}
			if _, isOp := val.(*ir.Op); !isOp {
				assert.NotNil(t, val.StructInfo(), "%s: value bound to %s (%T) has no struct info", fname, v.Name, val)
			}
			switch x := val.(type) {
			case *ir.If:
				checkSeq(t, fname, x.Then)
				checkSeq(t, fname, x.Else)
			case *ir.Function:
				checkSeq(t, fname+"."+v.Name, x.Body)
			}
		}
	}
	assert.NotNil(t, seq.Body.StructInfo(), "%s: result has no struct info", fname)
}

// mustParse parses src, failing the test on any diagnostic.
func mustParse(t *testing.T, src string) *ir.Module {
	t.Helper()
	mod, diags := Parse("test.tvms", []byte(src))
	require.Empty(t, diags, "unexpected diagnostics:\n%s", FormatDiagnostics(diags, []byte(src)))
	return mod
}

// bindings returns the bindings of a Relax function's body, in order.
func bindings(t *testing.T, mod *ir.Module, name string) []ir.Binding {
	t.Helper()
	f := mod.Func(name)
	require.NotNil(t, f, "no Relax function %s", name)
	var out []ir.Binding
	for _, blk := range f.Body.(*ir.SeqExpr).Blocks {
		out = append(out, blk.Bindings...)
	}
	return out
}

func valueOf(t *testing.T, b ir.Binding) ir.Expr {
	t.Helper()
	switch b := b.(type) {
	case *ir.VarBinding:
		return b.Value
	case *ir.MatchCast:
		return b.Value
	}
	require.Failf(t, "unknown binding", "%T", b)
	return nil
}

const header = "# from tvm.script import ir as I\n# from tvm.script import tir as T\n# from tvm.script import relax as R\n\n"

func TestParseModuleStructure(t *testing.T) {
	mod := mustParse(t, header+`@I.ir_module
class Module:
    I.module_attrs({"phase": "ingest", "n": 3, "flags": [True, 1.5, None]})
    @T.prim_func(private=True)
    def exp(A: T.Buffer((T.int64(2), T.int64(4)), "float32"), B: T.Buffer((T.int64(2), T.int64(4)), "float32")):
        for i, j in T.grid(T.int64(2), T.int64(4)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj])

    @R.function
    def main(x: R.Tensor((2, 4), dtype="float32"), y: R.Tensor(("n",), dtype="float32")):
        n = T.int64()
        R.func_attr({"num_input": 1})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            gv: R.Tensor((8,), dtype="float32") = R.reshape(lv, R.shape([8]))
            R.output(gv)
        z = R.match_cast(y, R.Tensor((n,), dtype="float32"))
        return (gv, z)

    @R.function(private=True, pure=False)
    def helper(x: R.Tensor((2, 4), "float32")) -> R.Tensor((2, 4), "float32"):
        return x
`)
	require.Equal(t, []string{"exp", "helper", "main"}, mod.Names(), "functions")
	assert.Equal(t, "ingest", mod.Attrs["phase"], "module attrs %v", mod.Attrs)
	assert.Equal(t, int64(3), mod.Attrs["n"], "module attrs %v", mod.Attrs)
	assert.Equal(t, []any{true, 1.5, nil}, mod.Attrs["flags"], "list attr")
	main := mod.Func("main")
	gs, _ := main.Attrs.String(ir.AttrGlobalSymbol)
	assert.Equal(t, "main", gs, "main global_symbol")
	assert.Equal(t, int64(1), main.Attrs["num_input"], "func attrs %v", main.Attrs)
	_, ok := mod.PrimFunc("exp").Attrs.String(ir.AttrGlobalSymbol)
	assert.False(t, ok, "private prim func has a global_symbol")
	helper := mod.Func("helper")
	_, ok = helper.Attrs.String(ir.AttrGlobalSymbol)
	assert.False(t, ok, "private helper has a global_symbol: attrs %v", helper.Attrs)
	assert.False(t, helper.Pure, "helper is declared pure=False")
	// The symbolic variable of the signature is the one the body uses.
	yInfo := main.Params[1].StructInfo().(*ir.TensorInfo)
	n := yInfo.Shape.(*ir.ShapeExpr).Values[0].(*ir.PrimVar)
	bs := bindings(t, mod, "main")
	require.Len(t, bs, 3, "main bindings")
	lv, gv, z := bs[0].BoundVar(), bs[1].BoundVar(), bs[2].BoundVar()
	assert.True(t, lv.Dataflow, "lv is a dataflow var")
	assert.False(t, gv.Dataflow, "gv is a dataflow var")
	assert.False(t, z.Dataflow, "z is a dataflow var")
	mc, ok := bs[2].(*ir.MatchCast)
	require.True(t, ok, "z is bound by %T", bs[2])
	assert.Same(t, n, mc.SInfo.(*ir.TensorInfo).Shape.(*ir.ShapeExpr).Values[0], "match_cast uses a different n")
	call := valueOf(t, bs[0]).(*ir.Call)
	assert.Same(t, op.CallTIR, call.Op, "call_tir op")
	assert.Equal(t, "exp", call.Args[0].(*ir.GlobalVar).Name, "call_tir callee")
	assert.Len(t, call.SInfoArgs, 1, "call_tir out_sinfo")
	sp := bs[0].Span()
	assert.Equal(t, 21, sp.Line, "span of lv binding %v", sp)
	assert.Equal(t, 13, sp.Col, "span of lv binding %v", sp)
	if ann, ok := gv.StructInfo().(*ir.TensorInfo); assert.True(t, ok, "gv annotation lost: %v", gv.StructInfo()) {
		assert.Equal(t, 1, ann.NDim, "gv annotation lost: %v", gv.StructInfo())
	}
}

func TestParseKeywordNormalization(t *testing.T) {
	mod := mustParse(t, header+`@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((2, 4), "float32")):
        s = R.memory.alloc_storage(R.shape([32]), virtual_device_index=0, storage_scope="global", dtype="float32")
        t = R.memory.alloc_tensor(s, 0, R.shape([2, 4]), "float32")
        u = R.builtin.alloc_tensor(R.shape([2, 4]), "float32", 0)
        p = R.call_packed("f", x, 2, "", sinfo_args=R.Object)
        r = R.reshape(x, (8,))
        k = R.sum(x, axis=[1], keepdims=True)
        return r
`)
	bs := bindings(t, mod, "main")
	args := valueOf(t, bs[0]).(*ir.Call).Args
	require.Len(t, args, 4, "alloc_storage args")
	assert.IsType(t, (*ir.ShapeExpr)(nil), args[0], "arg0")
	if pv, ok := args[1].(*ir.PrimValue); assert.True(t, ok, "arg1 %#v", args[1]) {
		assert.Equal(t, int64(0), pv.Value.(*ir.IntImm).Value, "arg1")
		assert.Equal(t, ir.Int64, pv.Value.DType(), "arg1")
	}
	if s, ok := args[2].(*ir.StringImm); assert.True(t, ok, "arg2 %#v", args[2]) {
		assert.Equal(t, "global", s.Value, "arg2")
	}
	if d, ok := args[3].(*ir.DataTypeImm); assert.True(t, ok, "arg3 %#v", args[3]) {
		assert.Equal(t, ir.Float32, d.Value, "arg3")
	}
	// Defaults are filled: alloc_tensor's runtime_device_index,
	// builtin.alloc_tensor's storage_scope.
	assert.Len(t, valueOf(t, bs[1]).(*ir.Call).Args, 5, "memory.alloc_tensor args (default filled)")
	bargs := valueOf(t, bs[2]).(*ir.Call).Args
	if s, ok := bargs[len(bargs)-1].(*ir.StringImm); assert.True(t, ok, "builtin.alloc_tensor last arg %#v", bargs[len(bargs)-1]) {
		assert.Equal(t, "global", s.Value, "builtin.alloc_tensor last arg")
	}
	// R.call_packed("f", ...) normalizes to a direct call of ExternFunc f.
	packed := valueOf(t, bs[3]).(*ir.Call)
	if ef, ok := packed.Op.(*ir.ExternFunc); assert.True(t, ok, "call_packed callee %#v", packed.Op) {
		assert.Equal(t, "f", ef.Symbol, "call_packed callee")
	}
	pargs := packed.Args
	if pv, ok := pargs[1].(*ir.PrimValue); assert.True(t, ok, "call_packed literal 2: %#v", pargs[1]) {
		assert.Equal(t, ir.Int64, pv.Value.DType(), "call_packed literal 2")
	}
	if s, ok := pargs[2].(*ir.StringImm); assert.True(t, ok, "call_packed literal \"\": %#v", pargs[2]) {
		assert.Empty(t, s.Value, "call_packed literal \"\"")
	}
	assert.IsType(t, (*ir.ShapeExpr)(nil), valueOf(t, bs[4]).(*ir.Call).Args[1], "tuple-as-shape not converted")
	sum := valueOf(t, bs[5]).(*ir.Call)
	assert.Equal(t, true, sum.Attrs["keepdims"], "sum attrs %v", sum.Attrs)
	assert.Equal(t, []any{int64(1)}, sum.Attrs["axis"], "sum axis")
}

func TestParseIfAndLocalFunction(t *testing.T) {
	mod := mustParse(t, header+`@I.ir_module
class Module:
    @R.function
    def main(c: R.Prim("bool"), x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        @R.function
        def double(y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            z = R.add(y, y)
            return z
        if c:
            a = double(x)
            r = R.multiply(a, a)
        else:
            r = x
        return r
`)
	bs := bindings(t, mod, "main")
	require.Len(t, bs, 2)
	assert.IsType(t, (*ir.Function)(nil), valueOf(t, bs[0]), "local function")
	ife, ok := valueOf(t, bs[1]).(*ir.If)
	require.True(t, ok, "if binding %T", valueOf(t, bs[1]))
	require.Equal(t, "r", bs[1].BoundVar().Name, "if binding")
	then := ife.Then.(*ir.SeqExpr)
	// The branch's last binding became its result: one binding (a) remains
	// before the result, plus whatever normalization hoisted.
	if assert.NotEmpty(t, then.Blocks, "then branch blocks") {
		assert.Equal(t, "a", then.Blocks[0].Bindings[0].BoundVar().Name, "then branch blocks %+v", then.Blocks)
	}
	assert.Same(t, mod.Func("main").Params[1], ife.Else.(*ir.SeqExpr).Body, "else result")
}

func TestParseTIR(t *testing.T) {
	mod := mustParse(t, header+`@I.ir_module
class Module:
    @T.prim_func
    def mm(a: T.handle, b: T.Buffer((4, 8), "float32"), c: T.handle, k: T.int32):
        T.func_attr({"tir.noalias": True})
        m = T.int64()
        A = T.match_buffer(a, (m, 4))
        C = T.match_buffer(c, (m, 8), "float32")
        for i, j, r in T.grid(m, 8, 4):
            with T.block("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * b[vr, vj]
        for x in T.parallel(4):
            with T.sblock("D"):
                vx = T.axis.spatial(4, x)
                T.reads(b[vx, 0:8])
                T.writes()
                T.evaluate(T.Cast("int32", b[vx, 0]) + k)
`)
	f := mod.PrimFunc("mm")
	require.NotNil(t, f, "prim func mm")
	require.Len(t, f.Params, 4, "prim func params")
	gs, _ := f.Attrs.String(ir.AttrGlobalSymbol)
	assert.Equal(t, "mm", gs, "attrs %v", f.Attrs)
	assert.Equal(t, true, f.Attrs[ir.AttrNoAlias], "attrs %v", f.Attrs)
	A := f.BufferMap[f.Params[0]]
	b := f.BufferMap[f.Params[1]]
	if assert.NotNil(t, A, "buffer A") {
		assert.Equal(t, ir.Int64, A.Shape[0].DType(), "A dim 0")
		assert.Equal(t, ir.Int32, A.Shape[1].DType(), "A dim 1")
		assert.Equal(t, ir.Float32, A.DType, "A dtype")
	}
	assert.Equal(t, ir.Int32, b.Shape[0].DType(), "int literal dims must be int32")
	assert.Equal(t, ir.Int32, f.Params[3].Type, "scalar param %+v", f.Params[3])
	assert.Nil(t, f.BufferMap[f.Params[3]], "scalar param has a buffer")
	seq := f.Body.(*ir.SeqStmt)
	loop := seq.Stmts[0].(*ir.For)
	assert.Equal(t, ir.Int64, loop.Var.Type, "loop over T.int64 extent")
	inner := loop.Body.(*ir.For).Body.(*ir.For).Body.(*ir.BlockRealize)
	blk := inner.Block
	require.Len(t, blk.IterVars, 3, "block %+v", blk)
	require.Equal(t, ir.IterReduce, blk.IterVars[2].Kind, "block %+v", blk)
	require.NotNil(t, blk.Init, "block %+v", blk)
	// Inferred regions: reads C (the reduction reads it), A, b; writes C.
	var reads []string
	for _, r := range blk.Reads {
		reads = append(reads, r.Buffer.Name)
		for _, rg := range r.Region {
			if v, ok := ir.IntValue(rg.Extent); assert.True(t, ok, "read of %s: extent not constant", r.Buffer.Name) {
				assert.Equal(t, int64(1), v, "read of %s not a point region", r.Buffer.Name)
			}
		}
	}
	assert.Equal(t, []string{"C", "A", "b"}, reads, "inferred reads")
	if assert.Len(t, blk.Writes, 1, "inferred writes") {
		assert.Same(t, f.BufferMap[f.Params[2]], blk.Writes[0].Buffer, "inferred write")
	}
	par := seq.Stmts[1].(*ir.For)
	assert.Equal(t, ir.ForParallel, par.Kind, "kind")
	d := par.Body.(*ir.BlockRealize).Block
	assert.Equal(t, "D", d.Name, "explicit regions %+v", d)
	assert.Empty(t, d.Writes, "explicit regions %+v", d)
	require.Len(t, d.Reads, 1, "explicit regions %+v", d)
	ext, _ := ir.IntValue(d.Reads[0].Region[1].Extent)
	assert.Equal(t, int64(8), ext, "slice 0:8 extent")
}

func TestParseStringDimsAndAliases(t *testing.T) {
	mod := mustParse(t, header+`@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "n * 2"), "float32"), y: R.Tensor(ndim=2, dtype="float32"), o: R.Any) -> R.Tuple:
        n = T.int64()
        s: R.Shape([n, n * 2]) = R.shape_of(x)
        p = R.call_pure_packed("g", x, sinfo_args=R.Tensor((n,), "float32"))
        t = R.call_dps_packed("h", (x,), out_ty=R.Tensor((n * 2,), "float32"))
        return R.tuple()
`)
	x := mod.Func("main").Params[0].StructInfo().(*ir.TensorInfo)
	dims := x.Shape.(*ir.ShapeExpr).Values
	n, ok := dims[0].(*ir.PrimVar)
	require.True(t, ok, "dim0 %T", dims[0])
	uses := false
	walkPrim(dims[1], func(e ir.PrimExpr) { uses = uses || e == ir.PrimExpr(n) })
	assert.True(t, uses, "\"n * 2\" does not use the n of \"n\"")
	assert.IsType(t, (*ir.ObjectInfo)(nil), mod.Func("main").Params[2].StructInfo(), "R.Any is not R.Object")
	bs := bindings(t, mod, "main")
	assert.Len(t, valueOf(t, bs[2]).(*ir.Call).SInfoArgs, 1, "out_ty alias lost")
}

func TestParseMetadataConstant(t *testing.T) {
	mod := mustParse(t, header+`@I.ir_module
class Module:
    @R.function
    def main() -> R.Tensor((2, 2), "float32"):
        c = metadata["relax.expr.Constant"][0]
        d = R.const(1.5, "float16")
        return c

metadata = {"relax.expr.Constant": [R.const([[1, 2], [3, 4.5]], "float32")]}
`)
	bs := bindings(t, mod, "main")
	c := valueOf(t, bs[0]).(*ir.Constant)
	assert.Equal(t, ir.Float32, c.Data.DType, "metadata constant")
	assert.Len(t, c.Data.Shape, 2, "metadata constant")
	assert.Equal(t, 4.5, c.Data.Float(3), "metadata constant")
	d := valueOf(t, bs[1]).(*ir.Constant)
	assert.Equal(t, ir.Float16, d.Data.DType, "scalar constant")
	assert.Empty(t, d.Data.Shape, "scalar constant")
	assert.Equal(t, 1.5, d.Data.Float(0), "scalar constant")
}

// TestParseNoPanicOnGarbage feeds malformed fragments; each must yield
// diagnostics with a valid position and no internal error.
func TestParseNoPanicOnGarbage(t *testing.T) {
	inputs := []string{
		"", "@", "class", "@I.ir_module\nclass M:\n", "@I.ir_module\nclass M:\n    @R.function\n    def f(",
		"@I.ir_module\nclass M:\n    @R.function\n    def f() -> R.Tensor:\n        return R.add(",
		"x = (((((((", "@I.ir_module\nclass M:\n  @R.function\n  def f(x: R.Tensor((\"\",), \"float32\")):\n    return x\n",
		"@I.ir_module\nclass M:\n  @R.function\n  def f(x: R.Tensor((\"n +\",), \"float32\")):\n    return x\n",
		"@I.ir_module\nclass M:\n  @T.prim_func\n  def f(A: T.Buffer((), \"float32\")):\n    A[()] = T.float32(1)\n    A[0] = A[1, 2]\n",
	}
	for _, src := range inputs {
		_, diags := Parse("g.tvms", []byte(src))
		for _, d := range diags {
			assert.False(t, d.Code == CodeInternal, "internal error on %q: %s", src, d.Msg)
			assert.True(t, d.Span.IsValid(), "diagnostic without position on %q: %s", src, d)
		}
	}
}
