package ir

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Recursive local functions: the var bound to a local function is in scope
// in the function's own body, so equality, Diff and hashing must define it
// before visiting the value (testdata/passes/LambdaLift/recursion.tvms).

// callee says what the inner call of recFunc calls.
type callee int

const (
	calleeSelf   callee = iota // count(i): recursion
	calleeHelper               // helper(i): an earlier local function
	calleeFree                 // ext(i): a variable defined nowhere
)

// recFunc builds
//
//	def main(x: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
//	    @R.function
//	    def helper(i: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
//	        return i
//	    @R.function
//	    def count(i: R.Tensor((), "int64")) -> R.Tensor((), "int64"):
//	        r = count(i)        # or helper(i), ext(i)
//	        return r
//	    res = count(x)
//	    return res
//
// with fresh variables on every call; prefix renames them all. ext is the
// free variable used by calleeFree (shared, so both sides may use it).
func recFunc(prefix string, c callee, ext *Var) *Function {
	scalar := TensorInfoOf(Int64)
	fn := NewFuncInfo([]StructInfo{scalar}, scalar, true)
	local := func(body func(i *Var) Expr) *Function {
		i := NewVar(prefix+"i", scalar)
		r := NewVar(prefix+"r", scalar)
		return &Function{Params: []*Var{i}, Ret: scalar, Pure: true,
			Body: &SeqExpr{Blocks: []*BindingBlock{{Bindings: []Binding{
				NewVarBinding(r, body(i)),
			}}}, Body: r}}
	}
	helper := NewVar(prefix+"helper", fn)
	count := NewVar(prefix+"count", fn)
	target := map[callee]*Var{calleeSelf: count, calleeHelper: helper, calleeFree: ext}[c]
	x := NewVar(prefix+"x", scalar)
	res := NewVar(prefix+"res", scalar)
	return &Function{Params: []*Var{x}, Ret: scalar, Pure: true,
		Body: &SeqExpr{Blocks: []*BindingBlock{{Bindings: []Binding{
			NewVarBinding(helper, local(func(i *Var) Expr { return i })),
			NewVarBinding(count, local(func(i *Var) Expr { return NewCall(target, i) })),
			NewVarBinding(res, NewCall(count, x)),
		}}}, Body: res}}
}

func TestEqualRecursiveLocalFunction(t *testing.T) {
	ext := NewVar("ext", nil)
	innerCall := "body.blocks[0].bindings[1].value.body.blocks[0].bindings[0].value.op"
	cases := []equalCase{
		// Two builds of the same text: the round-trip case that failed.
		{name: "recursion, same names", a: recFunc("", calleeSelf, ext), b: recFunc("", calleeSelf, ext), equal: true},
		{name: "recursion, renamed", a: recFunc("", calleeSelf, ext), b: recFunc("q_", calleeSelf, ext), equal: true},
		{name: "recursion, free vars mapped", a: recFunc("", calleeSelf, ext), b: recFunc("q_", calleeSelf, ext),
			opts: EqualOptions{MapFreeVars: true}, equal: true},
		{name: "recursion in a module", a: module("main", recFunc("", calleeSelf, ext)),
			b: module("main", recFunc("q_", calleeSelf, ext)), equal: true},
		{name: "recursion vs call of an earlier function", a: recFunc("", calleeSelf, ext),
			b: recFunc("", calleeHelper, ext), path: innerCall},
		{name: "recursion vs call of a free var", a: recFunc("", calleeSelf, ext),
			b: recFunc("", calleeFree, ext), path: innerCall},
		// Mapping free variables must not let ext pair with count.
		{name: "recursion vs call of a free var, mapped", a: recFunc("", calleeSelf, ext),
			b: recFunc("", calleeFree, ext), opts: EqualOptions{MapFreeVars: true}, path: innerCall},
		{name: "calls of an earlier function", a: recFunc("", calleeHelper, ext), b: recFunc("q_", calleeHelper, ext), equal: true},
	}
	for _, c := range cases {
		for _, swap := range []bool{false, true} {
			a, b := c.a, c.b
			if swap {
				a, b = b, a
			}
			got := StructuralEqual(a, b, c.opts)
			d := Diff(a, b, c.opts)
			assert.Equal(t, c.equal, got, "%s (swapped %v): StructuralEqual (diff: %v)", c.name, swap, d)
			assert.Equal(t, got, d == nil, "%s (swapped %v): Diff (%v) disagrees with StructuralEqual (%v)", c.name, swap, d, got)
			if !c.equal && d != nil {
				assert.Equal(t, c.path, d.Path, "%s (swapped %v): Diff path (%s)", c.name, swap, d)
			}
			if c.opts.MapFreeVars {
				continue
			}
			ha, hb := StructuralHash(a), StructuralHash(b)
			assert.Equal(t, c.equal, ha == hb, "%s (swapped %v): hashes %x, %x equal", c.name, swap, ha, hb)
		}
	}
}

// TestEqualRecursiveBindingVarFirst checks the definition order directly:
// the binding var's struct info is compared before the value, so a
// mismatch in both is reported at the var.
func TestEqualRecursiveBindingVarFirst(t *testing.T) {
	a, b := recFunc("", calleeSelf, nil), recFunc("", calleeSelf, nil)
	count := b.Body.(*SeqExpr).Blocks[0].Bindings[1].(*VarBinding)
	count.Var.SetStructInfo(NewFuncInfo([]StructInfo{TensorInfoOf(Int32)}, TensorInfoOf(Int64), true))
	count.Value.(*Function).Pure = false
	d := Diff(a, b, EqualOptions{})
	if assert.NotNil(t, d, "Diff: want a mismatch") {
		assert.Equal(t, "body.blocks[0].bindings[1].var.struct_info.params[0]", d.Path, "Diff's mismatch (%s)", d)
	}
	// A non-function value is still compared first.
	c := recFunc("", calleeSelf, nil)
	res := c.Body.(*SeqExpr).Blocks[0].Bindings[2].(*VarBinding)
	res.Var.SetStructInfo(TensorInfoOf(Int32))
	res.Value = NewCall(c.Params[0], c.Params[0])
	d = Diff(a, c, EqualOptions{})
	if assert.NotNil(t, d, "Diff: want a mismatch") {
		assert.Equal(t, "body.blocks[0].bindings[2].value.op", d.Path, "Diff's mismatch (%s)", d)
	}
}
