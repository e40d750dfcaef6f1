package printer

import (
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"strings"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/syntax"
)

// Printer unit tests on modules built directly with the ir API, so they do
// not depend on the parser. Whole-file behaviour (round trip, idempotence)
// is in syntax's roundtrip_test.go.

func f32(dims ...ir.PrimExpr) *ir.TensorInfo { return ir.TensorInfoOf(ir.Float32, dims...) }

func i64s(vs ...int64) []ir.PrimExpr {
	out := make([]ir.PrimExpr, len(vs))
	for i, v := range vs {
		out[i] = ir.I64(v)
	}
	return out
}

// expBuffers builds the element-wise kernel B = exp(A) over (2, 4) int64
// extents, the PrimFunc of the reference's complete small module.
func expKernel() *ir.PrimFunc {
	a := ir.NewBuffer("A", i64s(2, 4), ir.Float32)
	b := ir.NewBuffer("B", i64s(2, 4), ir.Float32)
	pa, pb := ir.NewPrimVar("A", ir.Handle), ir.NewPrimVar("B", ir.Handle)
	i, j := ir.NewPrimVar("i", ir.Int64), ir.NewPrimVar("j", ir.Int64)
	vi, vj := ir.NewPrimVar("vi", ir.Int64), ir.NewPrimVar("vj", ir.Int64)
	load := &ir.BufferLoad{Buffer: a, Indices: []ir.PrimExpr{vi, vj}}
	block := &ir.Block{
		Name: "B",
		IterVars: []*ir.IterVar{
			{Var: vi, Dom: ir.Range{Min: ir.I64(0), Extent: ir.I64(2)}},
			{Var: vj, Dom: ir.Range{Min: ir.I64(0), Extent: ir.I64(4)}},
		},
		Reads:  []ir.BufferRegion{{Buffer: a, Region: []ir.Range{{Min: vi, Extent: ir.I64(1)}, {Min: vj, Extent: ir.I64(1)}}}},
		Writes: []ir.BufferRegion{{Buffer: b, Region: []ir.Range{{Min: vi, Extent: ir.I64(1)}, {Min: vj, Extent: ir.I64(1)}}}},
		Body: &ir.BufferStore{Buffer: b, Indices: []ir.PrimExpr{vi, vj},
			Value: &ir.PrimCall{Op: "exp", Args: []ir.PrimExpr{load}, Type: ir.Float32}},
	}
	body := &ir.For{Var: i, Min: ir.I64(0), Extent: ir.I64(2), Body: &ir.For{Var: j, Min: ir.I64(0), Extent: ir.I64(4),
		Body: &ir.BlockRealize{IterValues: []ir.PrimExpr{i, j}, Block: block}}}
	return &ir.PrimFunc{
		Params:    []*ir.PrimVar{pa, pb},
		BufferMap: map[*ir.PrimVar]*ir.Buffer{pa: a, pb: b},
		Body:      body,
	}
}

// referenceModule is a small complete module (a TIR kernel reached through
// call_tir from a Relax function with a symbolic dimension and a dataflow
// block), in the shape of the modules TVM's printer writes
// (src/script/printer/relax/function.cc, https://tvm.apache.org/docs/deep_dive/relax/).
func referenceModule(t *testing.T) *ir.Module {
	t.Helper()
	mod := ir.NewModule()
	mod.Set("exp", expKernel())
	n := ir.SymVar("n")
	x := ir.NewVar("x", f32(ir.I64(2), ir.I64(4)))
	y := ir.NewVar("y", f32(n))
	lv := ir.NewDataflowVar("lv", nil)
	gv := ir.NewVar("gv", f32(ir.I64(8)))
	z := ir.NewVar("z", f32(ir.I64(8)))
	callTIR := &ir.Call{Op: op.CallTIR, Args: []ir.Expr{ir.NewGlobalVar("exp"), ir.NewTuple(x)},
		SInfoArgs: []ir.StructInfo{f32(ir.I64(2), ir.I64(4))}}
	reshape := ir.NewCall(ir.MustOp("relax.reshape"), lv, ir.NewShapeExpr(ir.I64(8)))
	body := &ir.SeqExpr{
		Blocks: []*ir.BindingBlock{
			{Dataflow: true, Bindings: []ir.Binding{ir.NewVarBinding(lv, callTIR), ir.NewVarBinding(gv, reshape)}},
			{Bindings: []ir.Binding{ir.NewMatchCast(z, y, f32(ir.I64(8)))}},
		},
		Body: ir.NewTuple(gv, z),
	}
	mod.Set("main", &ir.Function{Params: []*ir.Var{x, y}, Body: body, Pure: true,
		Attrs: ir.Attrs{ir.AttrGlobalSymbol: "main"}})
	norm, diags := ir.NormalizeModule(mod)
	require.NoError(t, diags.Err(), "normalize")
	return norm
}

func TestPrintReferenceModule(t *testing.T) {
	got := Print(referenceModule(t))
	want := `# from tvm.script import ir as I
# from tvm.script import tir as T
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def exp(A: T.Buffer((T.int64(2), T.int64(4)), "float32"), B: T.Buffer((T.int64(2), T.int64(4)), "float32")):
        # with T.block("root"):
        for i, j in T.grid(T.int64(2), T.int64(4)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = T.exp(A[vi, vj])

    @R.function
    def main(x: R.Tensor((2, 4), dtype="float32"), y: R.Tensor(("n",), dtype="float32")) -> R.Tuple(R.Tensor((8,), dtype="float32"), R.Tensor((8,), dtype="float32")):
        n = T.int64()
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            gv: R.Tensor((8,), dtype="float32") = R.reshape(lv, R.shape([8]))
            R.output(gv)
        z: R.Tensor((8,), dtype="float32") = R.match_cast(y, R.Tensor((8,), dtype="float32"))
        return (gv, z)
`
	assert.Equal(t, want, got)
}

// Function order is TVM's: PrimFuncs by name, Relax functions by name, main last.
func TestPrintFunctionOrder(t *testing.T) {
	mod := ir.NewModule()
	relaxFn := func() *ir.Function {
		x := ir.NewVar("x", f32(ir.I64(2)))
		return &ir.Function{Params: []*ir.Var{x}, Body: &ir.SeqExpr{Body: x}, Ret: f32(ir.I64(2)), Pure: true}
	}
	for _, n := range []string{"main", "zeta", "alpha"} {
		mod.Set(n, relaxFn())
	}
	mod.Set("zz_kernel", expKernel())
	mod.Set("b_kernel", expKernel())
	out := Print(mod)
	var order []string
	for _, l := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "def "); ok {
			order = append(order, name[:strings.IndexByte(name, '(')])
		}
	}
	want := []string{"b_kernel", "zz_kernel", "alpha", "zeta", "main"}
	assert.Equal(t, strings.Join(want, ","), strings.Join(order, ","), "order %v", order)
}

// Vars sharing a hint get deterministic suffixes; a later var whose hint is
// already a generated name is also kept distinct.
func TestPrintUniqueNames(t *testing.T) {
	x := ir.NewVar("lv", f32(ir.I64(2)))
	relu := ir.MustOp("relax.nn.relu")
	var binds []ir.Binding
	prev := ir.Expr(x)
	for _, hint := range []string{"lv", "lv", "lv1", "", "class"} {
		v := ir.NewVar(hint, nil)
		binds = append(binds, ir.NewVarBinding(v, ir.NewCall(relu, prev)))
		prev = v
	}
	f := &ir.Function{Params: []*ir.Var{x}, Body: &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: binds}}, Body: prev}, Pure: true}
	mod := ir.NewModule()
	mod.Set("f", f)
	mod, diags := ir.NormalizeModule(mod)
	require.NoError(t, diags.Err())
	out := Print(mod)
	for _, want := range []string{
		"def f(lv: R.Tensor((2,), dtype=\"float32\"))",
		"lv1: R.Tensor((2,), dtype=\"float32\") = R.nn.relu(lv)",
		"lv2: R.Tensor((2,), dtype=\"float32\") = R.nn.relu(lv1)",
		"lv11: R.Tensor((2,), dtype=\"float32\") = R.nn.relu(lv2)",
		"v: R.Tensor((2,), dtype=\"float32\") = R.nn.relu(lv11)",
		"class_: R.Tensor((2,), dtype=\"float32\") = R.nn.relu(v)",
		"return class_",
	} {
		assert.Contains(t, out, want)
	}
}

// Every binding is annotated with its var's struct info (TVM's default
// show_all_struct_info=True), whether or not inference gives the same; a
// void call statement prints bare.
func TestPrintAnnotationsAndVoidCalls(t *testing.T) {
	x := ir.NewVar("x", f32(ir.I64(2), ir.I64(3)))
	loose := ir.NewVar("loose", ir.TensorInfoNDim(ir.Float32, 2))
	same := ir.NewVar("same", nil)
	printCall := &ir.Call{Op: op.CallPacked, Args: []ir.Expr{ir.NewExternFunc("my.print"), x},
		SInfoArgs: []ir.StructInfo{ir.VoidInfo()}}
	unused := ir.NewVar("_", nil)
	blocks := []*ir.BindingBlock{{Bindings: []ir.Binding{
		ir.NewVarBinding(loose, ir.NewCall(ir.MustOp("relax.nn.relu"), x)),
		ir.NewVarBinding(same, ir.NewCall(ir.MustOp("relax.nn.relu"), x)),
		ir.NewVarBinding(unused, printCall),
	}}}
	f := &ir.Function{Params: []*ir.Var{x}, Body: &ir.SeqExpr{Blocks: blocks, Body: ir.NewTuple(loose, same)}}
	mod := ir.NewModule()
	mod.Set("f", f)
	mod, diags := ir.NormalizeModule(mod)
	require.NoError(t, diags.Err())
	out := Print(mod)
	for _, want := range []string{
		"@R.function(pure=False, private=True)",
		`loose: R.Tensor(dtype="float32", ndim=2) = R.nn.relu(x)`,
		`same: R.Tensor((2, 3), dtype="float32") = R.nn.relu(x)`,
		`        R.call_packed("my.print", x, sinfo_args=(R.Tuple,))` + "\n",
	} {
		assert.Contains(t, out, want)
	}
}

// Module and function attributes print sorted; global_symbol is hidden when
// it equals the name, shown (and the function public) when it differs.
func TestPrintAttributes(t *testing.T) {
	mod := ir.NewModule()
	mod.Attrs = ir.Attrs{"phase": "ingest", "a_flag": true}
	x := ir.NewVar("x", f32(ir.I64(2)))
	mod.Set("f", &ir.Function{Params: []*ir.Var{x}, Body: &ir.SeqExpr{Body: x}, Ret: f32(ir.I64(2)), Pure: true,
		Attrs: ir.Attrs{ir.AttrGlobalSymbol: "f_impl", "num_input": int64(1), "tir_var_upper_bound": ir.Attrs{"n": int64(8)}}})
	out := Print(mod)
	for _, want := range []string{
		`I.module_attrs({"a_flag": True, "phase": "ingest"})`,
		"    @R.function\n    def f(",
		`R.func_attr({"global_symbol": "f_impl", "num_input": 1, "tir_var_upper_bound": {"n": 8}})`,
	} {
		assert.Contains(t, out, want)
	}
}

// A symbolic variable first met in a signature prints as a string there,
// including inside a composite dimension, and is declared once at the top.
func TestPrintSignatureSymbols(t *testing.T) {
	n, m := ir.SymVar("n"), ir.SymVar("m")
	x := ir.NewVar("x", f32(n, ir.Mul(ir.I64(2), m)))
	y := ir.NewVar("y", f32(ir.I64(4)))
	mod := ir.NewModule()
	mod.Set("main", &ir.Function{Params: []*ir.Var{x, y}, Body: &ir.SeqExpr{Body: x},
		Ret: f32(n, ir.Mul(ir.I64(2), m)), Pure: true, Attrs: ir.Attrs{ir.AttrGlobalSymbol: "main"}})
	out := Print(mod)
	assert.Contains(t, out, `def main(x: R.Tensor(("n", "m * 2"), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor(("n", "m * 2"), dtype="float32"):`, "signature")
	assert.Equal(t, 1, strings.Count(out, "n = T.int64()"), "declarations:\n%s", out)
	assert.Equal(t, 1, strings.Count(out, "m = T.int64()"), "declarations:\n%s", out)
}

// A reduction kernel over a symbolic extent: T.handle + match_buffer with
// the shape variable declared first, T.init, a reduce axis and slices.
func TestPrintTIRReduction(t *testing.T) {
	n := ir.SymVar("n")
	a := ir.NewBuffer("A", []ir.PrimExpr{n, ir.I64(4)}, ir.Float32)
	b := ir.NewBuffer("B", []ir.PrimExpr{n}, ir.Float32)
	pa, pb := ir.NewPrimVar("var_A", ir.Handle), ir.NewPrimVar("var_B", ir.Handle)
	i, k := ir.NewPrimVar("i", ir.Int64), ir.NewPrimVar("k", ir.Int64)
	vi, vk := ir.NewPrimVar("vi", ir.Int64), ir.NewPrimVar("vk", ir.Int64)
	block := &ir.Block{
		Name: "sum",
		IterVars: []*ir.IterVar{
			{Var: vi, Dom: ir.Range{Min: ir.I64(0), Extent: n}},
			{Var: vk, Dom: ir.Range{Min: ir.I64(0), Extent: ir.I64(4)}, Kind: ir.IterReduce},
		},
		Reads:  []ir.BufferRegion{{Buffer: a, Region: []ir.Range{{Min: vi, Extent: ir.I64(1)}, {Min: ir.I64(0), Extent: ir.I64(4)}}}},
		Writes: []ir.BufferRegion{{Buffer: b, Region: []ir.Range{{Min: vi, Extent: ir.I64(1)}}}},
		Init:   &ir.BufferStore{Buffer: b, Indices: []ir.PrimExpr{vi}, Value: ir.NewFloat(ir.Float32, 0)},
		Body: &ir.BufferStore{Buffer: b, Indices: []ir.PrimExpr{vi},
			Value: ir.Add(&ir.BufferLoad{Buffer: b, Indices: []ir.PrimExpr{vi}}, &ir.BufferLoad{Buffer: a, Indices: []ir.PrimExpr{vi, vk}})},
	}
	f := &ir.PrimFunc{
		Params:    []*ir.PrimVar{pa, pb},
		BufferMap: map[*ir.PrimVar]*ir.Buffer{pa: a, pb: b},
		Body: &ir.For{Var: i, Min: ir.I64(0), Extent: n, Body: &ir.For{Var: k, Min: ir.I64(0), Extent: ir.I64(4),
			Body: &ir.BlockRealize{IterValues: []ir.PrimExpr{i, k}, Block: block}}},
		Attrs: ir.Attrs{ir.AttrGlobalSymbol: "sum", ir.AttrNoAlias: true},
	}
	mod := ir.NewModule()
	mod.Set("sum", f)
	got := Print(mod)
	want := `    @T.prim_func
    def sum(var_A: T.handle, var_B: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(4)))
        B = T.match_buffer(var_B, (n,))
        # with T.block("root"):
        for i, k in T.grid(n, T.int64(4)):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, T.int64(0):T.int64(4)])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk]
`
	assert.True(t, strings.HasSuffix(got, want), "got:\n%s\nwant suffix:\n%s", got, want)
}

func TestPrintConstants(t *testing.T) {
	arr, err := ir.NewNDArray(ir.Int32, []int64{2, 2})
	require.NoError(t, err)
	for i := range 4 {
		arr.SetFloat(i, float64(i+1))
	}
	mod := ir.NewModule()
	x := ir.NewVar("x", f32())
	c1 := ir.NewVar("c1", nil)
	c2 := ir.NewVar("c2", nil)
	blocks := []*ir.BindingBlock{{Bindings: []ir.Binding{
		ir.NewVarBinding(c1, &ir.Constant{Data: ir.NewScalarArray(ir.Float32, 0.1)}),
		ir.NewVarBinding(c2, &ir.Constant{Data: arr}),
	}}}
	mod.Set("f", &ir.Function{Params: []*ir.Var{x}, Body: &ir.SeqExpr{Blocks: blocks, Body: ir.NewTuple(c1, c2)}, Pure: true})
	mod, diags := ir.NormalizeModule(mod)
	require.NoError(t, diags.Err())
	out := Print(mod)
	for _, want := range []string{`c1: R.Tensor((), dtype="float32") = R.const(0.10000000149011612, "float32")`, `c2: R.Tensor((2, 2), dtype="int32") = metadata["relax.expr.Constant"][0]`} {
		assert.Contains(t, out, want)
	}
	// The tensor is in the metadata section above the module, as TVM's
	// SaveDLTensor blob (magic, CPU device, rank 2, int32, extents, 16 bytes).
	require.True(t, strings.HasPrefix(out, `metadata = tvm.ir.load_json("""{`), out)
	const blob = "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAgAAAAAgAQACAAAAAAAAAAIAAAAAAAAAEAAAAAAAAAABAAAAAgAAAAMAAAAEAAAA"
	require.Contains(t, out, blob)
	back := parseOrFail(t, "constants.tvms", []byte(out))
	require.Nil(t, ir.Diff(mod, back, ir.EqualOptions{}))
	require.Equal(t, out, Print(back))
}

// Modules built by code (not parsed) print to text that parses back to a
// structurally equal module.
func TestPrintBuiltModulesParseBack(t *testing.T) {
	mods := map[string]*ir.Module{
		"reference": referenceModule(t),
		"chain":     irgen.MustNormalize(irgen.Chain(50)),
		"multifunc": irgen.MustNormalize(irgen.MultiFunc(4, 10)),
	}
	for name, mod := range mods {
		t.Run(name, func(t *testing.T) {
			text := Print(mod)
			back, diags := syntax.Parse(name, []byte(text))
			require.False(t, diags.HasErrors(), "%s\n%s", syntax.FormatDiagnostics(diags, []byte(text)), text)
			d := ir.Diff(mod, back, ir.EqualOptions{})
			assert.Nil(t, d, "%s\n%s", d, text)
		})
	}
}

// TestPrintTriangularLoopsNotGrid: an inner loop whose extent uses an outer
// loop's variable stays nested; T.grid would read it before it is bound.
func TestPrintTriangularLoopsNotGrid(t *testing.T) {
	mod := mustParse(t, header+`@I.ir_module
class Module:
    @T.prim_func
    def tri(A: T.Buffer((4, 4), "float32")):
        for i in range(4):
            for j in range(i):
                A[i, j] = T.float32(0.0)
`)
	got := Print(mod)
	want := "        for i in range(4):\n            for j in range(i):\n"
	assert.Contains(t, got, want, "want the loops nested")
}

// TestPrintIterVarRuns: TVM's printer (src/script/printer/tir/block.cc)
// groups consecutive loop-bound iteration variables into T.axis.remap only
// when there are at least two of them; a lone one, or one that is not a
// loop variable, prints as T.axis.spatial / T.axis.reduce. A non-float32
// T.alloc_buffer names its dtype, a float32 one does not.
func TestPrintIterVarRuns(t *testing.T) {
	src := `# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def f(A: T.Buffer((T.int64(4), T.int64(6), T.int64(8)), "float32"), B: T.Buffer((T.int64(4), T.int64(8)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        C = T.alloc_buffer((T.int64(4),), "int32")
        D = T.alloc_buffer((T.int64(4),))
        for i, j, k in T.grid(T.int64(4), T.int64(6), T.int64(8)):
            with T.block("B"):
                v_i = T.axis.spatial(T.int64(4), i)
                v_j = T.axis.reduce(T.int64(6), j * T.int64(0))
                v_k, v_j2 = T.axis.remap("SR", [k, j])
                T.reads(A[v_i, v_j2, v_k])
                T.writes(B[v_i, v_k])
                with T.init():
                    B[v_i, v_k] = T.float32(0.0)
                B[v_i, v_k] = B[v_i, v_k] + A[v_i, v_j2, v_k]
`
	mod := parseOrFail(t, "runs.tvms", []byte(src))
	require.Equal(t, src, Print(mod))
}
