package syntax

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestParseCorpus parses every positive corpus file without diagnostics and
// checks that every Relax binding has struct info and a span.
func TestParseCorpus(t *testing.T) {
	files := corpusFiles(t)
	if len(files) == 0 {
		t.Fatal("no corpus files found under ../testdata")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			mod, diags := Parse(path, src)
			if len(diags) > 0 {
				t.Fatalf("unexpected diagnostics:\n%s", FormatDiagnostics(diags, src))
			}
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
		if fn.StructInfo() == nil {
			t.Errorf("%s: function has no struct info", name)
		}
		checkSeq(t, name, fn.Body)
	}
}

func checkSeq(t *testing.T, fname string, body ir.Expr) {
	t.Helper()
	seq, ok := body.(*ir.SeqExpr)
	if !ok {
		t.Errorf("%s: body is %T, not a SeqExpr", fname, body)
		return
	}
	for _, blk := range seq.Blocks {
		for _, b := range blk.Bindings {
			v := b.BoundVar()
			if v.StructInfo() == nil {
				t.Errorf("%s: var %s has no struct info", fname, v.Name)
			}
			if !b.Span().IsValid() {
				t.Errorf("%s: binding of %s has no span", fname, v.Name)
			}
			var val ir.Expr
			switch b := b.(type) {
			case *ir.VarBinding:
				val = b.Value
			case *ir.MatchCast:
				val = b.Value
			}
			if _, isOp := val.(*ir.Op); !isOp && val.StructInfo() == nil {
				t.Errorf("%s: value bound to %s (%T) has no struct info", fname, v.Name, val)
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
	if seq.Body.StructInfo() == nil {
		t.Errorf("%s: result has no struct info", fname)
	}
}

// mustParse parses src, failing the test on any diagnostic.
func mustParse(t *testing.T, src string) *ir.Module {
	t.Helper()
	mod, diags := Parse("test.tvms", []byte(src))
	if len(diags) > 0 {
		t.Fatalf("unexpected diagnostics:\n%s", FormatDiagnostics(diags, []byte(src)))
	}
	return mod
}

// bindings returns the bindings of a Relax function's body, in order.
func bindings(t *testing.T, mod *ir.Module, name string) []ir.Binding {
	t.Helper()
	f := mod.Func(name)
	if f == nil {
		t.Fatalf("no Relax function %s", name)
	}
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
	t.Fatalf("unknown binding %T", b)
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
	if got := mod.Names(); strings.Join(got, ",") != "exp,helper,main" {
		t.Fatalf("functions %v", got)
	}
	if mod.Attrs["phase"] != "ingest" || mod.Attrs["n"] != int64(3) {
		t.Errorf("module attrs %v", mod.Attrs)
	}
	if l, ok := mod.Attrs["flags"].([]any); !ok || len(l) != 3 || l[0] != true || l[1] != 1.5 || l[2] != nil {
		t.Errorf("list attr %#v", mod.Attrs["flags"])
	}
	main := mod.Func("main")
	if gs, _ := main.Attrs.String(ir.AttrGlobalSymbol); gs != "main" {
		t.Errorf("main global_symbol %q", gs)
	}
	if main.Attrs["num_input"] != int64(1) {
		t.Errorf("func attrs %v", main.Attrs)
	}
	if _, ok := mod.PrimFunc("exp").Attrs.String(ir.AttrGlobalSymbol); ok {
		t.Errorf("private prim func has a global_symbol")
	}
	helper := mod.Func("helper")
	if _, ok := helper.Attrs.String(ir.AttrGlobalSymbol); ok || helper.Pure {
		t.Errorf("helper: attrs %v pure %v", helper.Attrs, helper.Pure)
	}
	// The symbolic variable of the signature is the one the body uses.
	yInfo := main.Params[1].StructInfo().(*ir.TensorInfo)
	n := yInfo.Shape.(*ir.ShapeExpr).Values[0].(*ir.PrimVar)
	bs := bindings(t, mod, "main")
	if len(bs) != 3 {
		t.Fatalf("main has %d bindings", len(bs))
	}
	lv, gv, z := bs[0].BoundVar(), bs[1].BoundVar(), bs[2].BoundVar()
	if !lv.Dataflow || gv.Dataflow || z.Dataflow {
		t.Errorf("dataflow flags lv=%v gv=%v z=%v", lv.Dataflow, gv.Dataflow, z.Dataflow)
	}
	mc, ok := bs[2].(*ir.MatchCast)
	if !ok {
		t.Fatalf("z is bound by %T", bs[2])
	}
	if got := mc.SInfo.(*ir.TensorInfo).Shape.(*ir.ShapeExpr).Values[0]; got != ir.PrimExpr(n) {
		t.Errorf("match_cast uses a different n: %v", got)
	}
	call := valueOf(t, bs[0]).(*ir.Call)
	if call.Op != ir.Expr(op.CallTIR) || call.Args[0].(*ir.GlobalVar).Name != "exp" || len(call.SInfoArgs) != 1 {
		t.Errorf("call_tir: %+v", call)
	}
	if sp := bs[0].Span(); sp.Line != 21 || sp.Col != 13 {
		t.Errorf("span of lv binding %v, want line 21 col 13", sp)
	}
	if ann, ok := gv.StructInfo().(*ir.TensorInfo); !ok || ann.NDim != 1 {
		t.Errorf("gv annotation lost: %v", gv.StructInfo())
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
	if len(args) != 4 {
		t.Fatalf("alloc_storage args %d", len(args))
	}
	if _, ok := args[0].(*ir.ShapeExpr); !ok {
		t.Errorf("arg0 %T", args[0])
	}
	if pv, ok := args[1].(*ir.PrimValue); !ok || pv.Value.(*ir.IntImm).Value != 0 || pv.Value.DType() != ir.Int64 {
		t.Errorf("arg1 %#v", args[1])
	}
	if s, ok := args[2].(*ir.StringImm); !ok || s.Value != "global" {
		t.Errorf("arg2 %#v", args[2])
	}
	if d, ok := args[3].(*ir.DataTypeImm); !ok || d.Value != ir.Float32 {
		t.Errorf("arg3 %#v", args[3])
	}
	// Defaults are filled: alloc_tensor's runtime_device_index,
	// builtin.alloc_tensor's storage_scope.
	if n := len(valueOf(t, bs[1]).(*ir.Call).Args); n != 5 {
		t.Errorf("memory.alloc_tensor has %d args, want 5 (default filled)", n)
	}
	bargs := valueOf(t, bs[2]).(*ir.Call).Args
	if s, ok := bargs[len(bargs)-1].(*ir.StringImm); !ok || s.Value != "global" {
		t.Errorf("builtin.alloc_tensor last arg %#v", bargs[len(bargs)-1])
	}
	// R.call_packed("f", ...) normalizes to a direct call of ExternFunc f.
	packed := valueOf(t, bs[3]).(*ir.Call)
	if ef, ok := packed.Op.(*ir.ExternFunc); !ok || ef.Symbol != "f" {
		t.Errorf("call_packed callee %#v", packed.Op)
	}
	pargs := packed.Args
	if pv, ok := pargs[1].(*ir.PrimValue); !ok || pv.Value.DType() != ir.Int64 {
		t.Errorf("call_packed literal 2: %#v", pargs[1])
	}
	if s, ok := pargs[2].(*ir.StringImm); !ok || s.Value != "" {
		t.Errorf("call_packed literal \"\": %#v", pargs[2])
	}
	if _, ok := valueOf(t, bs[4]).(*ir.Call).Args[1].(*ir.ShapeExpr); !ok {
		t.Errorf("tuple-as-shape not converted")
	}
	sum := valueOf(t, bs[5]).(*ir.Call)
	if sum.Attrs["keepdims"] != true {
		t.Errorf("sum attrs %v", sum.Attrs)
	}
	if ax, ok := sum.Attrs["axis"].([]any); !ok || len(ax) != 1 || ax[0] != int64(1) {
		t.Errorf("sum axis %#v", sum.Attrs["axis"])
	}
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
	if len(bs) != 2 {
		t.Fatalf("%d bindings", len(bs))
	}
	if _, ok := valueOf(t, bs[0]).(*ir.Function); !ok {
		t.Errorf("local function bound as %T", valueOf(t, bs[0]))
	}
	ife, ok := valueOf(t, bs[1]).(*ir.If)
	if !ok || bs[1].BoundVar().Name != "r" {
		t.Fatalf("if binding %T %s", valueOf(t, bs[1]), bs[1].BoundVar().Name)
	}
	then := ife.Then.(*ir.SeqExpr)
	// The branch's last binding became its result: one binding (a) remains
	// before the result, plus whatever normalization hoisted.
	if len(then.Blocks) == 0 || then.Blocks[0].Bindings[0].BoundVar().Name != "a" {
		t.Errorf("then branch blocks %+v", then.Blocks)
	}
	if els := ife.Else.(*ir.SeqExpr); els.Body != ir.Expr(mod.Func("main").Params[1]) {
		t.Errorf("else result %T", els.Body)
	}
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
	if f == nil || len(f.Params) != 4 {
		t.Fatalf("prim func %v", f)
	}
	if gs, _ := f.Attrs.String(ir.AttrGlobalSymbol); gs != "mm" || f.Attrs[ir.AttrNoAlias] != true {
		t.Errorf("attrs %v", f.Attrs)
	}
	A := f.BufferMap[f.Params[0]]
	b := f.BufferMap[f.Params[1]]
	if A == nil || A.Shape[0].DType() != ir.Int64 || A.Shape[1].DType() != ir.Int32 || A.DType != ir.Float32 {
		t.Errorf("A %+v", A)
	}
	if b.Shape[0].DType() != ir.Int32 {
		t.Errorf("int literal dims must be int32, got %s", b.Shape[0].DType())
	}
	if f.Params[3].Type != ir.Int32 || f.BufferMap[f.Params[3]] != nil {
		t.Errorf("scalar param %+v", f.Params[3])
	}
	seq := f.Body.(*ir.SeqStmt)
	loop := seq.Stmts[0].(*ir.For)
	if loop.Var.Type != ir.Int64 {
		t.Errorf("loop over T.int64 extent has type %s", loop.Var.Type)
	}
	inner := loop.Body.(*ir.For).Body.(*ir.For).Body.(*ir.BlockRealize)
	blk := inner.Block
	if len(blk.IterVars) != 3 || blk.IterVars[2].Kind != ir.IterReduce || blk.Init == nil {
		t.Fatalf("block %+v", blk)
	}
	// Inferred regions: reads C (the reduction reads it), A, b; writes C.
	var reads []string
	for _, r := range blk.Reads {
		reads = append(reads, r.Buffer.Name)
		for _, rg := range r.Region {
			if v, ok := ir.IntValue(rg.Extent); !ok || v != 1 {
				t.Errorf("read of %s not a point region", r.Buffer.Name)
			}
		}
	}
	if strings.Join(reads, ",") != "C,A,b" || len(blk.Writes) != 1 || blk.Writes[0].Buffer != f.BufferMap[f.Params[2]] {
		t.Errorf("inferred reads %v writes %d", reads, len(blk.Writes))
	}
	par := seq.Stmts[1].(*ir.For)
	if par.Kind != ir.ForParallel {
		t.Errorf("kind %v", par.Kind)
	}
	d := par.Body.(*ir.BlockRealize).Block
	if d.Name != "D" || len(d.Reads) != 1 || len(d.Writes) != 0 {
		t.Errorf("explicit regions %+v", d)
	}
	if ext, _ := ir.IntValue(d.Reads[0].Region[1].Extent); ext != 8 {
		t.Errorf("slice 0:8 extent %d", ext)
	}
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
	if !ok {
		t.Fatalf("dim0 %T", dims[0])
	}
	uses := false
	walkPrim(dims[1], func(e ir.PrimExpr) { uses = uses || e == ir.PrimExpr(n) })
	if !uses {
		t.Errorf("\"n * 2\" does not use the n of \"n\"")
	}
	if _, ok := mod.Func("main").Params[2].StructInfo().(*ir.ObjectInfo); !ok {
		t.Errorf("R.Any is not R.Object")
	}
	bs := bindings(t, mod, "main")
	if c := valueOf(t, bs[2]).(*ir.Call); len(c.SInfoArgs) != 1 {
		t.Errorf("out_ty alias lost")
	}
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
	if c.Data.DType != ir.Float32 || len(c.Data.Shape) != 2 || c.Data.Float(3) != 4.5 {
		t.Errorf("metadata constant %+v", c.Data)
	}
	d := valueOf(t, bs[1]).(*ir.Constant)
	if d.Data.DType != ir.Float16 || len(d.Data.Shape) != 0 || d.Data.Float(0) != 1.5 {
		t.Errorf("scalar constant %+v", d.Data)
	}
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
			if d.Code == CodeInternal {
				t.Errorf("internal error on %q: %s", src, d.Msg)
			}
			if !d.Span.IsValid() {
				t.Errorf("diagnostic without position on %q: %s", src, d)
			}
		}
	}
}
