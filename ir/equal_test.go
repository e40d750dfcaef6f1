package ir

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chainSpec describes a small Relax function built by chainFunc:
//
//	def f(x: R.Tensor((n, 4), "float32")) -> R.Tensor((n, 4), "float32"):
//	    with R.dataflow():
//	        lv0 = R.add(x, x)
//	        lv1 = R.add(lv0, x)
//	        lv2 = R.add(lv1, x)
//	        gv = R.reshape(lv2, R.shape([8]))   # a non-dataflow output
//	        R.output(gv)
//	    return gv
type chainSpec struct {
	prefix    string   // variable name prefix (renaming)
	sym       string   // symbolic variable name
	swap      bool     // lv1 = R.add(x, lv0)
	reshapeTo int64    // reshape target (default 8)
	dimType   DataType // type of the constant dimension (default int64)
	plainVars bool     // bind lv* to non-dataflow vars
	attrs     Attrs
}

func chainFunc(s chainSpec) *Function {
	add, reshape := testOp("relax.add"), testOp("relax.reshape")
	if s.dimType.IsVoid() {
		s.dimType = Int64
	}
	if s.reshapeTo == 0 {
		s.reshapeTo = 8
	}
	n := SymVar(s.sym + "n")
	ti := TensorInfoOf(Float32, n, NewInt(s.dimType, 4))
	x := NewVar(s.prefix+"x", ti)
	mk := func(name string) *Var {
		if s.plainVars {
			return NewVar(s.prefix+name, ti)
		}
		return NewDataflowVar(s.prefix+name, ti)
	}
	lv0, lv1, lv2 := mk("lv0"), mk("lv1"), mk("lv2")
	gv := NewVar(s.prefix+"gv", TensorInfoOf(Float32, I64(8)))
	second := NewCall(add, lv0, x)
	if s.swap {
		second = NewCall(add, x, lv0)
	}
	block := &BindingBlock{Dataflow: true, Bindings: []Binding{
		NewVarBinding(lv0, NewCall(add, x, x)),
		NewVarBinding(lv1, second),
		NewVarBinding(lv2, NewCall(add, lv1, x)),
		NewVarBinding(gv, NewCall(reshape, lv2, NewShapeExpr(I64(s.reshapeTo)))),
	}}
	return &Function{
		Params: []*Var{x},
		Body:   &SeqExpr{Blocks: []*BindingBlock{block}, Body: gv},
		Ret:    TensorInfoOf(Float32, I64(8)),
		Pure:   true,
		Attrs:  s.attrs,
	}
}

// loopFunc builds a TIR kernel
//
//	def k(A: T.Buffer((m,), "float32"), B: T.Buffer((m,), "float32")):
//	    for i in range(m):
//	        with T.block("B"):
//	            vi = T.axis.spatial(m, i)
//	            B[vi] = A[vi] * T.float32(2)
type loopSpec struct {
	prefix   string
	block    string
	loopType DataType
	readB    bool // read B instead of A
	scale    float64
}

func loopFunc(s loopSpec) *PrimFunc {
	if s.loopType.IsVoid() {
		s.loopType = Int64
	}
	if s.scale == 0 {
		s.scale = 2
	}
	m := NewPrimVar(s.prefix+"m", s.loopType)
	a := NewBuffer(s.prefix+"A", []PrimExpr{m}, Float32)
	b := NewBuffer(s.prefix+"B", []PrimExpr{m}, Float32)
	pa, pb := NewPrimVar(s.prefix+"a", Handle), NewPrimVar(s.prefix+"b", Handle)
	i := NewPrimVar(s.prefix+"i", s.loopType)
	vi := NewPrimVar(s.prefix+"vi", s.loopType)
	src := a
	if s.readB {
		src = b
	}
	zero := NewInt(s.loopType, 0)
	blk := &Block{
		Name:     s.block,
		IterVars: []*IterVar{{Var: vi, Dom: Range{Min: zero, Extent: m}, Kind: IterSpatial}},
		Reads:    []BufferRegion{{Buffer: src, Region: []Range{{Min: vi, Extent: NewInt(s.loopType, 1)}}}},
		Writes:   []BufferRegion{{Buffer: b, Region: []Range{{Min: vi, Extent: NewInt(s.loopType, 1)}}}},
		Body: &BufferStore{Buffer: b, Indices: []PrimExpr{vi},
			Value: Mul(&BufferLoad{Buffer: src, Indices: []PrimExpr{vi}}, NewFloat(Float32, s.scale))},
	}
	return &PrimFunc{
		Params:    []*PrimVar{pa, pb},
		BufferMap: map[*PrimVar]*Buffer{pa: a, pb: b},
		Body: &For{Var: i, Min: zero, Extent: m, Kind: ForSerial,
			Body: &BlockRealize{IterValues: []PrimExpr{i}, Block: blk}},
		Attrs: Attrs{AttrGlobalSymbol: "k", AttrNoAlias: true},
	}
}

func module(funcs ...any) *Module {
	m := NewModule()
	for i := 0; i < len(funcs); i += 2 {
		m.Set(funcs[i].(string), funcs[i+1].(BaseFunc))
	}
	return m
}

// equalCase is a pair of values with the expected outcome, optionally with
// the expected Diff path.
type equalCase struct {
	name  string
	a, b  any
	opts  EqualOptions
	equal bool
	path  string // checked when not equal and non-empty
}

func equalCases() []equalCase {
	n, m := SymVar("n"), SymVar("m")
	x, y := NewVar("x", nil), NewVar("y", nil)
	p, q := NewVar("p", nil), NewVar("q", nil)
	add := testOp("relax.add")

	// Same name, different binding: "lv" refers to the first binding on the
	// left and to the second on the right.
	sameName := func(useFirst bool) *Function {
		xx := NewVar("x", f32T(I64(4)))
		a, b := NewVar("lv", f32T(I64(4))), NewVar("lv", f32T(I64(4)))
		use := a
		if !useFirst {
			use = b
		}
		out := NewVar("out", f32T(I64(4)))
		return &Function{Params: []*Var{xx}, Pure: true, Ret: f32T(I64(4)),
			Body: &SeqExpr{Blocks: []*BindingBlock{{Bindings: []Binding{
				NewVarBinding(a, NewCall(add, xx, xx)),
				NewVarBinding(b, NewCall(add, xx, xx)),
				NewVarBinding(out, NewCall(add, use, xx)),
			}}}, Body: out}}
	}

	// Symbolic parameters: f(x: (n, 4)) -> (n, 4), and a variant whose
	// return mentions a free variable.
	symFunc := func(sym *PrimVar, ret PrimExpr) *Function {
		xx := NewVar("x", f32T(sym, I64(4)))
		return &Function{Params: []*Var{xx}, Pure: true, Ret: f32T(ret, I64(4)),
			Body: &SeqExpr{Body: xx}}
	}
	n2, k := SymVar("n"), SymVar("k")

	// match_cast defines the variables of its struct info.
	matchCast := func(sym string) *Function {
		xx := NewVar("x", TensorInfoNDim(Float32, 1))
		v := SymVar(sym)
		z := NewVar("z", f32T(v))
		w := NewVar("w", ShapeInfoOf(Mul(v, I64(2))))
		return &Function{Params: []*Var{xx}, Pure: true, Ret: ShapeInfoNDim(1),
			Body: &SeqExpr{Blocks: []*BindingBlock{{Bindings: []Binding{
				NewMatchCast(z, xx, f32T(v)),
				NewVarBinding(w, NewShapeExpr(Mul(v, I64(2)))),
			}}}, Body: w}}
	}

	canonFunc := func(sym *PrimVar, ret PrimExpr) *Function {
		xx := NewVar("x", f32T(sym))
		r := NewVar("r", f32T(ret))
		return &Function{Params: []*Var{xx}, Pure: true, Ret: f32T(ret),
			Body: &SeqExpr{Blocks: []*BindingBlock{{Bindings: []Binding{
				NewMatchCast(r, xx, f32T(ret)),
			}}}, Body: r}}
	}

	return []equalCase{
		{name: "renamed vars", a: chainFunc(chainSpec{}), b: chainFunc(chainSpec{prefix: "r_", sym: "s"}), equal: true},
		{name: "identical module", a: module("main", chainFunc(chainSpec{})), b: module("main", chainFunc(chainSpec{prefix: "z"})), equal: true},
		{name: "swapped uses", a: chainFunc(chainSpec{}), b: chainFunc(chainSpec{swap: true}),
			path: "body.blocks[0].bindings[1].value.args[0]"},
		{name: "reshape target", a: module("main", chainFunc(chainSpec{})), b: module("main", chainFunc(chainSpec{reshapeTo: 16})),
			path: "main.body.blocks[0].bindings[3].value.args[1]"},
		{name: "same name different binding", a: sameName(true), b: sameName(false),
			path: "body.blocks[0].bindings[2].value.args[0]"},
		{name: "dataflow var vs var", a: chainFunc(chainSpec{}), b: chainFunc(chainSpec{plainVars: true}),
			path: "body.blocks[0].bindings[0].var"},
		{name: "int32 vs int64 dims", a: chainFunc(chainSpec{}), b: chainFunc(chainSpec{dimType: Int32}),
			path: "params[0].struct_info"},
		{name: "int32 vs int64 struct info", a: f32T(I64(4)), b: f32T(NewInt(Int32, 4))},
		{name: "symbolic params renamed", a: symFunc(n, n), b: symFunc(n2, n2), equal: true},
		{name: "return mentions a free var", a: symFunc(n, n), b: symFunc(n2, k), path: "ret"},
		{name: "match_cast defines", a: matchCast("a"), b: matchCast("b"), equal: true},
		{name: "canonical symbolic forms",
			a: canonFunc(n, Mul(I64(4), Mul(I64(2), n))), b: canonFunc(m, Mul(I64(8), m)), equal: true},
		{name: "different symbolic forms",
			a: canonFunc(n, Mul(I64(4), n)), b: canonFunc(m, Mul(I64(8), m)), path: "ret"},
		{name: "canonical sum order", a: f32T(Add(n, m)), b: f32T(Add(m, n)), equal: true},

		// Free variables.
		{name: "free vars, same objects", a: NewCall(add, x, y), b: NewCall(add, x, y), equal: true},
		{name: "free vars not mapped", a: NewCall(add, x, y), b: NewCall(add, p, q), path: "args[0]"},
		{name: "free vars mapped", a: NewCall(add, x, y), b: NewCall(add, p, q), opts: EqualOptions{MapFreeVars: true}, equal: true},
		{name: "free vars mapped inconsistently", a: NewCall(add, x, x), b: NewCall(add, p, q),
			opts: EqualOptions{MapFreeVars: true}, path: "args[1]"},
		{name: "free vars mapped non-injectively", a: NewCall(add, x, y), b: NewCall(add, p, p),
			opts: EqualOptions{MapFreeVars: true}, path: "args[1]"},
		{name: "free symbolic vars", a: f32T(n), b: f32T(m)},
		{name: "free symbolic vars mapped", a: f32T(n, m), b: f32T(m, n), opts: EqualOptions{MapFreeVars: true}, equal: true},

		// Modules.
		{name: "function order irrelevant",
			a: module("main", chainFunc(chainSpec{}), "k", loopFunc(loopSpec{})),
			b: module("k", loopFunc(loopSpec{prefix: "q"}), "main", chainFunc(chainSpec{prefix: "u"})), equal: true},
		{name: "missing function", a: module("main", chainFunc(chainSpec{}), "g", chainFunc(chainSpec{})),
			b: module("main", chainFunc(chainSpec{})), path: `functions["g"]`},
		{name: "module attrs", a: &Module{funcs: map[string]BaseFunc{}, Attrs: Attrs{"phase": "Ingest"}},
			b: &Module{funcs: map[string]BaseFunc{}, Attrs: Attrs{"phase": "Lower"}}, path: `attrs["phase"]`},

		// Attributes are dictionaries compared by value.
		{name: "attrs as dicts",
			a: chainFunc(chainSpec{attrs: Attrs{"global_symbol": "main", "num_input": int64(1),
				"bounds": Attrs{"n": Mul(I64(2), n)}, "list": []any{int64(1), "a"}}}),
			b: chainFunc(chainSpec{attrs: Attrs{"list": []any{int64(1), "a"}, "num_input": int64(1),
				"bounds": Attrs{"n": Add(n, n)}, "global_symbol": "main"}}), equal: true},
		{name: "attr value differs",
			a:    chainFunc(chainSpec{attrs: Attrs{"global_symbol": "main", "num_input": int64(1)}}),
			b:    chainFunc(chainSpec{attrs: Attrs{"global_symbol": "main", "num_input": int64(2)}}),
			path: `attrs["num_input"]`},
		{name: "attr missing",
			a: chainFunc(chainSpec{attrs: Attrs{"global_symbol": "main"}}),
			b: chainFunc(chainSpec{attrs: Attrs{}}), path: `attrs["global_symbol"]`},
		{name: "nested attr list differs",
			a:    chainFunc(chainSpec{attrs: Attrs{"d": Attrs{"l": []any{int64(1), int64(2)}}}}),
			b:    chainFunc(chainSpec{attrs: Attrs{"d": Attrs{"l": []any{int64(1), int64(3)}}}}),
			path: `attrs["d"]["l"][1]`},

		// TIR.
		{name: "TIR loops renamed", a: loopFunc(loopSpec{block: "B"}), b: loopFunc(loopSpec{prefix: "t", block: "other"}), equal: true},
		{name: "TIR reads another buffer", a: loopFunc(loopSpec{}), b: loopFunc(loopSpec{readB: true}),
			path: "body.body.block.reads[0]"},
		{name: "TIR loop var width", a: loopFunc(loopSpec{}), b: loopFunc(loopSpec{loopType: Int32}), path: "params[0].buffer"},
		{name: "TIR constant", a: loopFunc(loopSpec{}), b: loopFunc(loopSpec{scale: 3}), path: "body.body.block.body.value"},

		// Expression kinds.
		{name: "tuple index", a: &TupleGetItem{Tuple: x, Index: 0}, b: &TupleGetItem{Tuple: x, Index: 1}, path: ""},
		{name: "tuple fields", a: NewTuple(x, NewTuple(y, x)), b: NewTuple(x, NewTuple(y, y)), path: "fields[1].fields[1]"},
		{name: "constants equal", a: &Constant{Data: NewScalarArray(Float32, 1.5)}, b: &Constant{Data: NewScalarArray(Float32, 1.5)}, equal: true},
		{name: "constants differ", a: &Constant{Data: NewScalarArray(Float32, 1.5)}, b: &Constant{Data: NewScalarArray(Float32, 2)}},
		{name: "constant dtypes differ", a: &Constant{Data: NewScalarArray(Float32, 1)}, b: &Constant{Data: NewScalarArray(Float64, 1)}},
		{name: "globals by name", a: NewCall(NewGlobalVar("f"), x), b: NewCall(NewGlobalVar("f"), x), equal: true},
		{name: "globals differ", a: NewCall(NewGlobalVar("f"), x), b: NewCall(NewGlobalVar("g"), x), path: "op"},
		{name: "extern symbols", a: NewCall(NewExternFunc("f"), x), b: NewCall(NewExternFunc("g"), x), path: "op"},
		{name: "sinfo args", a: &Call{Op: NewExternFunc("f"), Args: []Expr{x}, SInfoArgs: []StructInfo{f32T(I64(2))}},
			b: &Call{Op: NewExternFunc("f"), Args: []Expr{x}, SInfoArgs: []StructInfo{f32T(I64(3))}}, path: "sinfo_args[0]"},
		{name: "call attrs", a: &Call{Op: add, Args: []Expr{x, y}, Attrs: Attrs{"axis": int64(1)}},
			b: &Call{Op: add, Args: []Expr{x, y}, Attrs: Attrs{"axis": int64(1)}}, equal: true},
		{name: "if branches", a: &If{Cond: x, Then: &SeqExpr{Body: y}, Else: &SeqExpr{Body: x}},
			b: &If{Cond: x, Then: &SeqExpr{Body: y}, Else: &SeqExpr{Body: y}}, path: "else.body"},
		{name: "prim values", a: NewPrimValue(Mul(I64(2), n)), b: NewPrimValue(Add(n, n)), equal: true},
		{name: "string imms", a: NewStringImm("a"), b: NewStringImm("b")},
		{name: "binding kinds", a: NewVarBinding(NewVar("v", nil), x), b: NewMatchCast(NewVar("v", nil), x, Object())},
		{name: "shape var tensors mapped",
			a:    &TensorInfo{Shape: NewVar("s", ShapeInfoNDim(1)), DType: Float32, NDim: 1},
			b:    &TensorInfo{Shape: NewVar("t", ShapeInfoNDim(1)), DType: Float32, NDim: 1},
			opts: EqualOptions{MapFreeVars: true}, equal: true},

		// Other entry points.
		{name: "prim exprs", a: Mul(I64(4), Mul(I64(2), n)), b: Mul(I64(8), n), equal: true},
		{name: "binding blocks", a: chainFunc(chainSpec{}).Body.(*SeqExpr).Blocks[0],
			b: chainFunc(chainSpec{}).Body.(*SeqExpr).Blocks[0], opts: EqualOptions{MapFreeVars: true}, equal: true},
		{name: "kinds differ", a: f32T(n), b: NewCall(add, x, y)},
	}
}

func TestStructuralEqual(t *testing.T) {
	for _, c := range equalCases() {
		got := StructuralEqual(c.a, c.b, c.opts)
		d := Diff(c.a, c.b, c.opts)
		assert.Equal(t, c.equal, got, "%s: StructuralEqual (diff: %v)", c.name, d)
		assert.Equal(t, got, d == nil, "%s: Diff (%v) disagrees with StructuralEqual (%v)", c.name, d, got)
		if !c.equal && c.path != "" && d != nil {
			assert.Equal(t, c.path, d.Path, "%s: Diff path (%s)", c.name, d)
		}
		// Symmetry.
		assert.Equal(t, c.equal, StructuralEqual(c.b, c.a, c.opts), "%s: comparison is not symmetric", c.name)
	}
}

func TestStructuralHashConsistent(t *testing.T) {
	for _, c := range equalCases() {
		if !c.equal || c.opts.MapFreeVars {
			continue
		}
		assert.Equal(t, StructuralHash(c.a), StructuralHash(c.b), "%s: equal values hash differently", c.name)
	}
	// Different values should (in these cases) hash differently.
	for _, name := range []string{"swapped uses", "reshape target", "same name different binding",
		"dataflow var vs var", "int32 vs int64 dims", "different symbolic forms", "TIR reads another buffer",
		"TIR constant", "attr value differs", "missing function"} {
		found := false
		for _, c := range equalCases() {
			if c.name == name {
				found = true
				assert.NotEqual(t, StructuralHash(c.a), StructuralHash(c.b), "%s: different values hash the same", name)
			}
		}
		assert.True(t, found, "no case named %q", name)
	}
	// Hashing is deterministic and independent of variable names.
	a, b := chainFunc(chainSpec{}), chainFunc(chainSpec{prefix: "other"})
	assert.Equal(t, StructuralHash(a), StructuralHash(a), "hash is not deterministic")
	assert.Equal(t, StructuralHash(a), StructuralHash(b), "hash depends on names")
}

func TestDiffReport(t *testing.T) {
	a := module("main", chainFunc(chainSpec{}))
	b := module("main", chainFunc(chainSpec{reshapeTo: 16}))
	d := Diff(a, b, EqualOptions{})
	want := Mismatch{Path: "main.body.blocks[0].bindings[3].value.args[1]", Left: "R.shape([8])", Right: "R.shape([16])"}
	require.NotNil(t, d, "Diff")
	require.Equal(t, want, *d, "Diff")
	assert.Equal(t, "main.body.blocks[0].bindings[3].value.args[1]: R.shape([8]) vs R.shape([16])", d.String(), "String()")

	d = Diff(module("main", chainFunc(chainSpec{}), "g", chainFunc(chainSpec{})), module("main", chainFunc(chainSpec{})), EqualOptions{})
	if assert.NotNil(t, d, "missing function") {
		assert.Equal(t, Mismatch{Path: `functions["g"]`, Left: "R.function", Right: "<missing>"}, *d, "missing function")
	}

	d = Diff(chainFunc(chainSpec{}), chainFunc(chainSpec{swap: true}), EqualOptions{})
	if assert.NotNil(t, d, "swapped uses") {
		assert.Equal(t, "lv0 (dataflow var)", d.Left, "swapped uses: %v", d)
		assert.Equal(t, "x", d.Right, "swapped uses: %v", d)
	}

	d = Diff(chainFunc(chainSpec{}), chainFunc(chainSpec{dimType: Int32}), EqualOptions{})
	if assert.NotNil(t, d, "int32 dims") {
		assert.Equal(t, `R.Tensor((n, 4), dtype="float32")`, d.Left, "int32 dims: %v", d)
		assert.Equal(t, `R.Tensor((n, T.int32(4)), dtype="float32")`, d.Right, "int32 dims: %v", d)
	}
}

// TestEqualLongFunctions compares functions of 100k bindings, differing
// only in the last one: the comparison must get there (no recursion per
// binding, no quadratic work) and point at it.
func TestEqualLongFunctions(t *testing.T) {
	const n = 100000
	a, b := benchFunc(n, "a"), benchFunc(n, "b")
	require.Nil(t, Diff(a, b, EqualOptions{}), "long chains differ")
	require.Equal(t, StructuralHash(a), StructuralHash(b), "long chains hash differently")
	c := benchFunc(n, "c")
	last := c.Body.(*SeqExpr).Blocks[0].Bindings[n-1].(*VarBinding)
	call := last.Value.(*Call)
	last.Value = NewCall(call.Op, call.Args[1], call.Args[0])
	d := Diff(a, c, EqualOptions{})
	require.NotNil(t, d, "late difference")
	require.Equal(t, fmt.Sprintf("body.blocks[0].bindings[%d].value.args[0]", n-1), d.Path, "late difference: %v", d)
}
