// Package irgen builds deterministic synthetic Relax modules for benchmarks
// and tests across phasec: long dataflow chains over symbolic shapes and
// modules of many functions calling each other.
//
// Generated modules are NOT normalized: bound variables and calls carry no
// struct info (parameters and return types are annotated, as a parser
// would produce them). Run ir.NormalizeModule, or use MustNormalize, to get
// the normal form. The same arguments always give the same module
// (structurally; every call allocates fresh nodes).
//
// The ops used are real registered ops (relax.matmul, relax.add,
// relax.nn.relu, relax.multiply), looked up when a generator runs.
package irgen

import (
	"fmt"

	"github.com/phasec/phasec/ir"
)

// Width is the feature dimension of every generated tensor: tensors are
// R.Tensor((batch, Width), "float32") with batch a symbolic variable.
const Width = 16

// Chain returns a module with one public function "main":
//
//	@R.function
//	def main(x: R.Tensor(("batch", 16), "float32"), w: R.Tensor((16, 16), "float32"),
//	         b: R.Tensor((16,), "float32")) -> R.Tensor(("batch", 16), "float32"):
//	    with R.dataflow():
//	        lv0 = R.matmul(x, w)
//	        lv1 = R.add(lv0, b)
//	        lv2 = R.nn.relu(lv1)
//	        lv3 = R.multiply(lv2, x)
//	        ...                      # n bindings in total, cycling through the four ops
//	        gv = ...                 # the n-th binding is the block's output
//	        R.output(gv)
//	    return gv
//
// n must be at least 1.
func Chain(n int) *ir.Module {
	mod := ir.NewModule()
	f := chainFunc(n)
	f.Attrs = ir.Attrs{ir.AttrGlobalSymbol: "main"}
	mod.Set("main", f)
	return mod
}

func tensor(dims ...ir.PrimExpr) *ir.TensorInfo { return ir.TensorInfoOf(ir.Float32, dims...) }

// chainFunc builds the function Chain describes, with a fresh batch var.
func chainFunc(n int) *ir.Function {
	if n < 1 {
		panic("irgen: a chain needs at least one binding")
	}
	batch := ir.SymVar("batch")
	x := ir.NewVar("x", tensor(batch, ir.I64(Width)))
	w := ir.NewVar("w", tensor(ir.I64(Width), ir.I64(Width)))
	b := ir.NewVar("b", tensor(ir.I64(Width)))
	ops := [4]*ir.Op{ir.MustOp("relax.matmul"), ir.MustOp("relax.add"), ir.MustOp("relax.nn.relu"), ir.MustOp("relax.multiply")}

	binds := make([]ir.Binding, 0, n)
	prev := ir.Expr(x)
	var last *ir.Var
	for i := 0; i < n; i++ {
		var call *ir.Call
		switch i % 4 {
		case 0:
			call = ir.NewCall(ops[0], prev, w)
		case 1:
			call = ir.NewCall(ops[1], prev, b)
		case 2:
			call = ir.NewCall(ops[2], prev)
		case 3:
			call = ir.NewCall(ops[3], prev, x)
		}
		if i == n-1 {
			last = ir.NewVar("gv", nil)
		} else {
			last = ir.NewDataflowVar(fmt.Sprintf("lv%d", i), nil)
		}
		binds = append(binds, ir.NewVarBinding(last, call))
		prev = last
	}
	body := &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Dataflow: true, Bindings: binds}}, Body: last}
	return &ir.Function{
		Params: []*ir.Var{x, w, b},
		Body:   body,
		Ret:    tensor(batch, ir.I64(Width)),
		Pure:   true,
	}
}

// MultiFunc returns a module of funcs private chain functions "f0", "f1",
// ... (each as in Chain, with bindingsEach bindings and its own batch
// variable) and a public "main" that calls them in sequence in a plain
// (non-dataflow) block, feeding each result to the next:
//
//	def main(x, w, b) -> R.Tensor(("batch", 16), "float32"):
//	    y0 = f0(x, w, b)
//	    y1 = f1(y0, w, b)
//	    ...
//	    return y{funcs-1}
//
// funcs and bindingsEach must be at least 1.
func MultiFunc(funcs, bindingsEach int) *ir.Module {
	if funcs < 1 {
		panic("irgen: MultiFunc needs at least one function")
	}
	mod := ir.NewModule()
	for i := 0; i < funcs; i++ {
		mod.Set(funcName(i), chainFunc(bindingsEach))
	}
	batch := ir.SymVar("batch")
	x := ir.NewVar("x", tensor(batch, ir.I64(Width)))
	w := ir.NewVar("w", tensor(ir.I64(Width), ir.I64(Width)))
	b := ir.NewVar("b", tensor(ir.I64(Width)))
	binds := make([]ir.Binding, 0, funcs)
	prev := ir.Expr(x)
	var last *ir.Var
	for i := 0; i < funcs; i++ {
		last = ir.NewVar(fmt.Sprintf("y%d", i), nil)
		binds = append(binds, ir.NewVarBinding(last, ir.NewCall(ir.NewGlobalVar(funcName(i)), prev, w, b)))
		prev = last
	}
	mod.Set("main", &ir.Function{
		Params: []*ir.Var{x, w, b},
		Body:   &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: binds}}, Body: last},
		Ret:    tensor(batch, ir.I64(Width)),
		Pure:   true,
		Attrs:  ir.Attrs{ir.AttrGlobalSymbol: "main"},
	})
	return mod
}

func funcName(i int) string { return fmt.Sprintf("f%d", i) }

// MustNormalize returns ir.NormalizeModule(mod), panicking on any
// diagnostic (generated modules are valid by construction).
func MustNormalize(mod *ir.Module) *ir.Module {
	out, diags := ir.NormalizeModule(mod)
	if len(diags) > 0 {
		panic(fmt.Sprintf("irgen: generated module does not normalize: %v", diags[0]))
	}
	return out
}
