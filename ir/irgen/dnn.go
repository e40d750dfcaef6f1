package irgen

import (
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// DNN-like modules in legalized form: every tensor op is an R.call_tir of a
// kernel stub, in one dataflow block, so the lower barrier (ToNonDataflow,
// RemovePurityChecking, CallTIRRewrite) and the build barrier's memory
// planning see the allocation pattern of a real network: chains, residual
// branches that keep a tensor alive across a block, and fan-out (q, k and v
// from one input). The kernels are stubs (T.evaluate(0)) with one handle
// parameter per argument and output: only the shapes matter.

// DNNOptions configure ResNet and Transformer.
type DNNOptions struct {
	// Batch is the batch size, or, with Symbolic, its upper bound.
	Batch int64
	// Symbolic makes the batch a symbolic var "batch", bounded by Batch
	// through the tir_var_upper_bound attribute.
	Symbolic bool
}

// dnnBuilder accumulates the bindings of one dataflow block.
type dnnBuilder struct {
	mod    *ir.Module
	binds  []ir.Binding
	params []*ir.Var
	n      int
}

// kernel returns the stub PrimFunc taking arity handles, adding it to the
// module on first use.
func (d *dnnBuilder) kernel(arity int) *ir.GlobalVar {
	name := fmt.Sprintf("k%d", arity)
	if d.mod.PrimFunc(name) == nil {
		params := make([]*ir.PrimVar, arity)
		for i := range params {
			params[i] = ir.NewPrimVar(fmt.Sprintf("var_%c", 'A'+i), ir.Handle)
		}
		d.mod.Set(name, &ir.PrimFunc{Params: params, BufferMap: map[*ir.PrimVar]*ir.Buffer{},
			Body: &ir.Evaluate{Value: ir.NewInt(ir.Int32, 0)}, Ret: ir.Void, Attrs: ir.Attrs{ir.AttrGlobalSymbol: name}})
	}
	return ir.NewGlobalVar(name)
}

// op binds lv = R.call_tir(k, (args...), out_sinfo=R.Tensor(dims, "float32")).
func (d *dnnBuilder) op(dims []ir.PrimExpr, args ...ir.Expr) *ir.Var {
	call := &ir.Call{Op: op.CallTIR, Args: []ir.Expr{d.kernel(len(args) + 1), ir.NewTuple(args...)},
		SInfoArgs: []ir.StructInfo{tensor(dims...)}}
	v := ir.NewDataflowVar(fmt.Sprintf("lv%d", d.n), nil)
	d.n++
	d.binds = append(d.binds, ir.NewVarBinding(v, call))
	return v
}

func (d *dnnBuilder) param(name string, dims ...ir.PrimExpr) *ir.Var {
	v := ir.NewVar(name, tensor(dims...))
	d.params = append(d.params, v)
	return v
}

// finish makes main from the bindings, the last one the block's output.
func (d *dnnBuilder) finish(out *ir.Var, ret ir.StructInfo, opts DNNOptions) *ir.Module {
	last := d.binds[len(d.binds)-1].(*ir.VarBinding)
	gv := ir.NewVar("gv", nil)
	d.binds[len(d.binds)-1] = ir.NewVarBinding(gv, last.Value)
	if last.Var != out {
		panic("irgen: the output must be the last binding")
	}
	attrs := ir.Attrs{ir.AttrGlobalSymbol: "main"}
	if opts.Symbolic {
		attrs = attrs.With(ir.AttrTIRVarUpperBound, ir.Attrs{"batch": opts.Batch})
	}
	d.mod.Set("main", &ir.Function{
		Params: d.params,
		Body:   &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Dataflow: true, Bindings: d.binds}}, Body: gv},
		Ret:    ret,
		Pure:   true,
		Attrs:  attrs,
	})
	return d.mod
}

func batchDim(opts DNNOptions) ir.PrimExpr {
	if opts.Symbolic {
		return ir.SymVar("batch")
	}
	return ir.I64(opts.Batch)
}

func i64s(vs ...int64) []ir.PrimExpr {
	out := make([]ir.PrimExpr, len(vs))
	for i, v := range vs {
		out[i] = ir.I64(v)
	}
	return out
}

// ResNet returns a ResNet-like network in call_tir form: a stem and
// stages of residual blocks (two 3x3 "convolutions", the residual add and a
// relu), each later stage halving the spatial size and doubling the
// channels through a projection shortcut:
//
//	stage s (0-based): C = 64·2^s, H = W = 56/2^s, blocksPerStage blocks
//	block: a = conv(x); r = relu(a); b = conv(r); c = add(b, shortcut); y = relu(c)
//
// Tensors are (batch, C, H, W) float32.
func ResNet(stages, blocksPerStage int, opts DNNOptions) *ir.Module {
	if stages < 1 || stages > 4 || blocksPerStage < 1 {
		panic("irgen: ResNet needs 1-4 stages of at least one block")
	}
	d := &dnnBuilder{mod: ir.NewModule()}
	batch := batchDim(opts)
	shape := func(c, hw int64) []ir.PrimExpr { return append([]ir.PrimExpr{batch}, i64s(c, hw, hw)...) }
	x := d.param("x", shape(3, 224)...)
	stem := d.param("w_stem", i64s(64, 3, 7, 7)...)
	cur := d.op(shape(64, 56), x, stem)
	for s := 0; s < stages; s++ {
		c, hw := int64(64)<<s, int64(56)>>s
		for b := 0; b < blocksPerStage; b++ {
			in := cur
			shortcut := ir.Expr(in)
			if s > 0 && b == 0 {
				w := d.param(fmt.Sprintf("w_proj%d", s), i64s(c, c/2, 1, 1)...)
				shortcut = d.op(shape(c, hw), in, w)
			}
			w1 := d.param(fmt.Sprintf("w%d_%d_a", s, b), i64s(c, c, 3, 3)...)
			w2 := d.param(fmt.Sprintf("w%d_%d_b", s, b), i64s(c, c, 3, 3)...)
			a := d.op(shape(c, hw), in, w1)
			r := d.op(shape(c, hw), a)
			bb := d.op(shape(c, hw), r, w2)
			sum := d.op(shape(c, hw), bb, shortcut)
			cur = d.op(shape(c, hw), sum)
		}
	}
	c, hw := int64(64)<<(stages-1), int64(56)>>(stages-1)
	return d.finish(cur, tensor(shape(c, hw)...), opts)
}

// Transformer returns a transformer-like encoder in call_tir form: layers
// of pre-norm attention (q, k and v projected from one normalized input,
// scores and probabilities of shape (batch, heads, seq, seq)) and an MLP
// four times wider than the model, each with a residual add. Tensors are
// float32 with seq 128, model width 256 and 4 heads.
func Transformer(layers int, opts DNNOptions) *ir.Module {
	if layers < 1 {
		panic("irgen: Transformer needs at least one layer")
	}
	const seq, width, heads = 128, 256, 4
	d := &dnnBuilder{mod: ir.NewModule()}
	batch := batchDim(opts)
	act := func(w int64) []ir.PrimExpr { return append([]ir.PrimExpr{batch}, i64s(seq, w)...) }
	scores := append([]ir.PrimExpr{batch}, i64s(heads, seq, seq)...)
	x := d.param("x", act(width)...)
	cur := x
	for l := 0; l < layers; l++ {
		w := func(name string, dims ...int64) *ir.Var {
			return d.param(fmt.Sprintf("%s%d", name, l), i64s(dims...)...)
		}
		wq, wk, wv, wo := w("wq", width, width), w("wk", width, width), w("wv", width, width), w("wo", width, width)
		w1, w2 := w("w_up", width, 4*width), w("w_down", 4*width, width)
		ln1 := d.op(act(width), cur)
		q := d.op(act(width), ln1, wq)
		k := d.op(act(width), ln1, wk)
		v := d.op(act(width), ln1, wv)
		s := d.op(scores, q, k)
		p := d.op(scores, s)
		ctx := d.op(act(width), p, v)
		o := d.op(act(width), ctx, wo)
		r1 := d.op(act(width), o, cur)
		ln2 := d.op(act(width), r1)
		up := d.op(act(4*width), ln2, w1)
		g := d.op(act(4*width), up)
		down := d.op(act(width), g, w2)
		cur = d.op(act(width), down, r1)
	}
	return d.finish(cur, tensor(act(width)...), opts)
}

// LegalizedChain returns a chain of n call_tir bindings over (batch, 16)
// tensors, alternating one- and two-input kernels (the second input the
// function's parameter), for compile-time scaling.
func LegalizedChain(n int, opts DNNOptions) *ir.Module {
	if n < 1 {
		panic("irgen: a chain needs at least one binding")
	}
	d := &dnnBuilder{mod: ir.NewModule()}
	dims := []ir.PrimExpr{batchDim(opts), ir.I64(Width)}
	x := d.param("x", dims...)
	cur := x
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			cur = d.op(dims, cur)
		} else {
			cur = d.op(dims, cur, x)
		}
	}
	return d.finish(cur, tensor(dims...), opts)
}

// RandomDAG returns n call_tir bindings of a deterministic pseudo-random
// DAG (seeded by seed): each kernel reads one to three of the eight most
// recent tensors (or the input) and writes a float32 tensor of one of a
// few sizes (16 to 4096 elements), so lifetimes overlap irregularly. For
// property tests of memory planning.
func RandomDAG(seed uint64, n int, opts DNNOptions) *ir.Module {
	if n < 1 {
		panic("irgen: a DAG needs at least one binding")
	}
	rng := seed*6364136223846793005 + 1442695040888963407
	next := func(k int) int {
		rng = rng*6364136223846793005 + 1442695040888963407
		return int((rng >> 33) % uint64(k))
	}
	d := &dnnBuilder{mod: ir.NewModule()}
	batch := batchDim(opts)
	widths := []int64{16, 64, 256, 512, 4096}
	x := d.param("x", batch, ir.I64(16))
	recent := []ir.Expr{x}
	var cur *ir.Var
	var dims []ir.PrimExpr
	for i := 0; i < n; i++ {
		args := make([]ir.Expr, 1+next(3))
		for j := range args {
			args[j] = recent[len(recent)-1-next(min(len(recent), 8))]
		}
		dims = []ir.PrimExpr{batch, ir.I64(widths[next(len(widths))])}
		cur = d.op(dims, args...)
		recent = append(recent, cur)
	}
	return d.finish(cur, tensor(dims...), opts)
}
