package kernel_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/phasec/phasec/ir"
)

// Random well-typed TIR loop nests: an output written by a grid of loops
// (optionally a block with iteration variables, T.where, a reduction with
// T.init), reading inputs through identity, broadcast, reversed and
// modular indices, with random expression trees over every operator. Each
// program runs in the reference interpreter and in every compiled mode.

type gen struct {
	r      *rand.Rand
	vars   []*ir.PrimVar // spatial index variables, one per output dimension
	kvar   *ir.PrimVar   // reduction index variable, or nil
	ext    []int64
	kext   int64
	inputs []genInput
}

type genInput struct {
	buf *ir.Buffer
	idx []ir.PrimExpr
}

var genTypes = []ir.DataType{ir.Float32, ir.Float64, ir.Int32, ir.Int64, ir.Float32, ir.Int32, ir.Int8, ir.UInt8, ir.Int16}

func (g *gen) pick(n int) int { return g.r.IntN(n) }

func (g *gen) extent() int64 {
	return []int64{0, 1, 2, 3, 5, 17, 4, 1, 3, 260}[g.pick(10)]
}

// program builds a random PrimFunc and the runtime values of its symbolic
// variables.
func (g *gen) program() (*ir.PrimFunc, map[string]int64) {
	nd := 1 + g.pick(3)
	vals := map[string]int64{}
	total := int64(1)
	outShape := make([]ir.PrimExpr, nd)
	for d := range nd {
		e := g.extent()
		if total*max(e, 1) > 1500 {
			e = 3
		}
		total *= max(e, 1)
		g.ext = append(g.ext, e)
		if g.pick(3) == 0 {
			v := ir.SymVar(fmt.Sprintf("n%d", d))
			vals[v.Name] = e
			outShape[d] = v
		} else {
			outShape[d] = ir.I64(e)
		}
	}
	reduce := g.pick(3) == 0
	if reduce {
		g.kext = []int64{1, 3, 7, 300, 0}[g.pick(5)]
		if total*max(g.kext, 1) > 4000 {
			g.kext = 5
		}
	}
	outT := genTypes[g.pick(len(genTypes))]
	out := ir.NewBuffer("out", outShape, outT)
	var params []*ir.PrimVar
	bmap := map[*ir.PrimVar]*ir.Buffer{}
	addParam := func(b *ir.Buffer) {
		h := ir.NewPrimVar(b.Name+"_h", ir.Handle)
		params = append(params, h)
		bmap[h] = b
	}
	// Loop (and maybe block) variables.
	loops := make([]*ir.PrimVar, nd)
	for d := range nd {
		loops[d] = ir.NewPrimVar(fmt.Sprintf("i%d", d), ir.Int64)
	}
	var kloop *ir.PrimVar
	if reduce {
		kloop = ir.NewPrimVar("k", ir.Int64)
	}
	useBlock := reduce || g.pick(10) < 7
	if useBlock {
		for d := range nd {
			g.vars = append(g.vars, ir.NewPrimVar(fmt.Sprintf("v%d", d), ir.Int64))
		}
		if reduce {
			g.kvar = ir.NewPrimVar("vk", ir.Int64)
		}
	} else {
		g.vars = loops
	}
	// Inputs.
	nin := 1 + g.pick(3)
	for i := range nin {
		dt := genTypes[g.pick(len(genTypes))]
		var shape, idx []ir.PrimExpr
		for d := range nd {
			switch g.pick(5) {
			case 0: // broadcast
				shape = append(shape, ir.I64(1))
				idx = append(idx, ir.I64(0))
			case 1: // reversed
				shape = append(shape, outShape[d])
				idx = append(idx, ir.Sub(ir.Sub(outShape[d], ir.I64(1)), g.vars[d]))
			case 2: // modular (not affine)
				shape = append(shape, outShape[d])
				idx = append(idx, ir.FloorMod(ir.Add(g.vars[d], ir.I64(3)), outShape[d]))
			default:
				shape = append(shape, outShape[d])
				idx = append(idx, g.vars[d])
			}
		}
		if reduce && g.pick(3) > 0 {
			shape = append(shape, ir.I64(g.kext))
			idx = append(idx, g.kvar)
		}
		b := ir.NewBuffer(fmt.Sprintf("in%d", i), shape, dt)
		g.inputs = append(g.inputs, genInput{b, idx})
		addParam(b)
	}
	addParam(out)

	outIdx := make([]ir.PrimExpr, nd)
	for d := range nd {
		outIdx[d] = g.vars[d]
	}
	value := g.expr(outT, 3)
	var body ir.Stmt
	if reduce {
		self := &ir.BufferLoad{Buffer: out, Indices: outIdx}
		ops := []ir.BinaryOp{ir.OpAdd, ir.OpMax, ir.OpMin}
		op := ops[g.pick(len(ops))]
		if g.pick(2) == 0 {
			body = &ir.BufferStore{Buffer: out, Indices: outIdx, Value: ir.NewBinary(op, self, value)}
		} else {
			body = &ir.BufferStore{Buffer: out, Indices: outIdx, Value: ir.NewBinary(op, value, self)}
		}
	} else {
		body = &ir.BufferStore{Buffer: out, Indices: outIdx, Value: value}
	}
	if g.pick(4) == 0 {
		// An if (maybe with an else) around the store, on an index
		// variable compared with a constant.
		d := g.pick(nd)
		c := ir.I64(int64(g.pick(int(g.ext[d]) + 2)))
		cond := ir.NewBinary([]ir.BinaryOp{ir.OpLT, ir.OpGE, ir.OpEQ, ir.OpLE}[g.pick(4)], g.vars[d], c)
		ifs := &ir.IfThenElse{Cond: cond, Then: body}
		if !reduce && g.pick(2) == 0 {
			ifs.Else = &ir.BufferStore{Buffer: out, Indices: outIdx, Value: g.expr(outT, 2)}
		}
		body = ifs
	}
	if g.pick(4) == 0 {
		// Bind part of the value to a let.
		lv := ir.NewPrimVar("t", outT)
		inner, isStore := body.(*ir.BufferStore)
		if !isStore {
			inner = body.(*ir.IfThenElse).Then.(*ir.BufferStore)
		}
		inner.Value = ir.Add(inner.Value, lv)
		body = &ir.LetStmt{Var: lv, Value: g.expr(outT, 1), Body: body}
	}
	var realize ir.Stmt = body
	if useBlock {
		blk := &ir.Block{Name: "blk", Body: body}
		br := &ir.BlockRealize{Block: blk}
		for d := range nd {
			blk.IterVars = append(blk.IterVars, &ir.IterVar{Var: g.vars[d], Dom: ir.Range{Min: ir.I64(0), Extent: outShape[d]}, Kind: ir.IterSpatial})
			br.IterValues = append(br.IterValues, loops[d])
		}
		if reduce {
			// A domain starting after the loop's first value puts T.init
			// mid-chunk.
			dmin := ir.I64([]int64{0, 0, 1, 2}[g.pick(4)])
			blk.IterVars = append(blk.IterVars, &ir.IterVar{Var: g.kvar, Dom: ir.Range{Min: dmin, Extent: ir.I64(g.kext)}, Kind: ir.IterReduce})
			br.IterValues = append(br.IterValues, kloop)
			blk.Init = &ir.BufferStore{Buffer: out, Indices: outIdx, Value: g.constant(outT)}
		}
		if g.pick(3) == 0 {
			d := g.pick(nd)
			c := ir.I64(int64(g.pick(int(g.ext[d]) + 2)))
			switch g.pick(3) {
			case 0:
				br.Predicate = ir.NewBinary(ir.OpLT, loops[d], c)
			case 1:
				br.Predicate = ir.NewBinary(ir.OpGE, loops[d], c)
			default:
				br.Predicate = ir.NewBinary(ir.OpEQ, ir.FloorMod(loops[d], ir.I64(2)), ir.I64(0))
			}
		}
		realize = br
	}
	// Loops, innermost first; the reduction loop is innermost or just
	// outside the last spatial loop.
	type lp struct {
		v   *ir.PrimVar
		ext ir.PrimExpr
	}
	var order []lp
	for d := range nd {
		order = append(order, lp{loops[d], outShape[d]})
	}
	if reduce {
		if g.pick(2) == 0 {
			order = append(order, lp{kloop, ir.I64(g.kext)})
		} else {
			last := order[nd-1]
			order = append(order[:nd-1], lp{kloop, ir.I64(g.kext)}, last)
		}
	}
	// Blocks bind their variables to shifted loops: loop l in [-m, ext-m)
	// with value l + m, so T.init and T.where land mid-chunk.
	shift := map[*ir.PrimVar]int64{}
	if br, ok := realize.(*ir.BlockRealize); ok {
		for i, v := range br.IterValues {
			if m := int64(g.pick(3)); m > 0 {
				lv := v.(*ir.PrimVar)
				shift[lv] = m
				br.IterValues[i] = ir.Add(lv, ir.I64(m))
				if br.Predicate != nil {
					br.Predicate = substVar(br.Predicate, lv, br.IterValues[i])
				}
			}
		}
	}
	s := realize
	for i := len(order) - 1; i >= 0; i-- {
		kind := ir.ForSerial
		switch {
		case i == 0 && order[i].v != kloop && g.pick(3) == 0:
			kind = ir.ForParallel
		case g.pick(4) == 0:
			kind = []ir.ForKind{ir.ForUnrolled, ir.ForVectorized}[g.pick(2)]
		}
		s = &ir.For{Var: order[i].v, Min: ir.I64(-shift[order[i].v]), Extent: order[i].ext, Kind: kind, Body: s}
	}
	if !reduce && g.pick(4) == 0 {
		// A whole-function root block with a scratch buffer.
		tmp := ir.NewBuffer("tmp", []ir.PrimExpr{ir.I64(4)}, ir.Float32)
		blk := &ir.Block{Name: "root", Body: s, AllocBuffers: []*ir.Buffer{tmp}}
		s = &ir.BlockRealize{Block: blk}
	}
	return &ir.PrimFunc{Params: params, BufferMap: bmap, Body: s, Ret: ir.Void}, vals
}

func (g *gen) constant(dt ir.DataType) ir.PrimExpr {
	if dt.IsFloat() {
		return ir.NewFloat(dt, float64(g.pick(9)-4)/2)
	}
	return ir.NewInt(dt, int64(g.pick(9)-4))
}

func (g *gen) cast(dt ir.DataType, e ir.PrimExpr) ir.PrimExpr {
	if e.DType() == dt {
		return e
	}
	return &ir.Cast{Type: dt, Value: e}
}

// expr is a random expression of type dt.
func (g *gen) expr(dt ir.DataType, depth int) ir.PrimExpr {
	if depth == 0 || g.pick(4) == 0 {
		switch g.pick(4) {
		case 0:
			return g.constant(dt)
		case 1:
			all := append([]*ir.PrimVar{}, g.vars...)
			if g.kvar != nil {
				all = append(all, g.kvar)
			}
			return g.cast(dt, all[g.pick(len(all))])
		default:
			in := g.inputs[g.pick(len(g.inputs))]
			return g.cast(dt, &ir.BufferLoad{Buffer: in.buf, Indices: in.idx})
		}
	}
	a, b := g.expr(dt, depth-1), g.expr(dt, depth-1)
	if dt.IsFloat() {
		switch g.pick(12) {
		case 0:
			return ir.NewBinary(ir.OpDiv, a, ir.Add(ir.NewFloat(dt, 3), &ir.PrimCall{Op: "fabs", Args: []ir.PrimExpr{b}, Type: dt}))
		case 1:
			fn := []string{"exp", "tanh", "sigmoid", "floor", "ceil", "round", "erf", "fabs"}[g.pick(8)]
			if fn == "exp" {
				a = &ir.PrimCall{Op: "tanh", Args: []ir.PrimExpr{a}, Type: dt}
			}
			return &ir.PrimCall{Op: fn, Args: []ir.PrimExpr{a}, Type: dt}
		case 2:
			return &ir.PrimCall{Op: "sqrt", Args: []ir.PrimExpr{&ir.PrimCall{Op: "fabs", Args: []ir.PrimExpr{a}, Type: dt}}, Type: dt}
		case 3:
			return &ir.Select{Cond: g.cond(depth - 1), True: a, False: b}
		case 4:
			return &ir.PrimCall{Op: "if_then_else", Args: []ir.PrimExpr{g.cond(depth - 1), a, b}, Type: dt}
		case 5:
			return ir.NewBinary([]ir.BinaryOp{ir.OpMin, ir.OpMax}[g.pick(2)], a, b)
		case 6:
			return ir.NewBinary(ir.OpFloorMod, a, ir.NewFloat(dt, 1.5))
		case 7:
			if p := g.guarded(dt); p != nil {
				return p
			}
		}
		return ir.NewBinary([]ir.BinaryOp{ir.OpAdd, ir.OpSub, ir.OpMul}[g.pick(3)], a, b)
	}
	switch g.pick(10) {
	case 0, 1:
		div := int64(g.pick(7) - 3)
		if div == 0 {
			div = 5
		}
		ops := []ir.BinaryOp{ir.OpFloorDiv, ir.OpFloorMod, ir.OpDiv, ir.OpMod}
		return ir.NewBinary(ops[g.pick(4)], a, ir.NewInt(dt, div))
	case 2:
		return &ir.Select{Cond: g.cond(depth - 1), True: a, False: b}
	case 3:
		return ir.NewBinary([]ir.BinaryOp{ir.OpMin, ir.OpMax}[g.pick(2)], a, b)
	case 4:
		return g.cast(dt, &ir.PrimCall{Op: "floor", Args: []ir.PrimExpr{g.expr(ir.Float32, depth-1)}, Type: ir.Float32})
	}
	return ir.NewBinary([]ir.BinaryOp{ir.OpAdd, ir.OpSub, ir.OpMul}[g.pick(3)], a, b)
}

// guarded is a padding-style load: an input read one element off along a
// dimension, under T.if_then_else of the condition that keeps it in
// bounds (nil when no input has an identity dimension).
func (g *gen) guarded(dt ir.DataType) ir.PrimExpr {
	for _, in := range g.inputs {
		for d, e := range in.idx {
			if d >= len(g.vars) || e != g.vars[d] {
				continue
			}
			idx := append([]ir.PrimExpr(nil), in.idx...)
			var cond ir.PrimExpr
			if g.pick(2) == 0 {
				idx[d] = ir.Sub(g.vars[d], ir.I64(1))
				cond = ir.NewBinary(ir.OpGE, g.vars[d], ir.I64(1))
			} else {
				idx[d] = ir.Add(g.vars[d], ir.I64(1))
				cond = ir.NewBinary(ir.OpLT, ir.Add(g.vars[d], ir.I64(1)), in.buf.Shape[d])
			}
			if g.pick(2) == 0 {
				cond = ir.NewBinary(ir.OpAnd, cond, ir.NewBinary(ir.OpLE, g.vars[d], ir.I64(int64(g.pick(300)))))
			}
			load := g.cast(dt, &ir.BufferLoad{Buffer: in.buf, Indices: idx})
			return &ir.PrimCall{Op: "if_then_else", Args: []ir.PrimExpr{cond, load, g.constant(dt)}, Type: dt}
		}
	}
	return nil
}

func (g *gen) cond(depth int) ir.PrimExpr {
	dt := genTypes[g.pick(len(genTypes))]
	c := ir.NewBinary([]ir.BinaryOp{ir.OpLT, ir.OpLE, ir.OpGT, ir.OpGE, ir.OpEQ, ir.OpNE}[g.pick(6)], g.expr(dt, depth), g.expr(dt, depth))
	switch g.pick(5) {
	case 0:
		return &ir.Not{A: c}
	case 1:
		return ir.NewBinary(ir.OpAnd, c, g.cond(0))
	case 2:
		return ir.NewBinary(ir.OpOr, c, g.cond(0))
	}
	return c
}

func checkRandom(t *testing.T, seed uint64) {
	g := &gen{r: rand.New(rand.NewPCG(seed, 7))}
	f, vals := g.program()
	args := makeArgs(t, f, withVars(f, nil, vals), rand.New(rand.NewPCG(seed, 9)))
	checkAll(t, f, args)
}

func TestRandomKernels(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 60
	}
	for seed := range uint64(n) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkRandom(t, seed) })
	}
}

func FuzzKernels(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkRandom(t, seed) })
}

// substVar replaces v by by in a predicate built by the generator.
func substVar(e ir.PrimExpr, v *ir.PrimVar, by ir.PrimExpr) ir.PrimExpr {
	switch e := e.(type) {
	case *ir.PrimVar:
		if e == v {
			return by
		}
	case *ir.Binary:
		return ir.NewBinary(e.Op, substVar(e.A, v, by), substVar(e.B, v, by))
	}
	return e
}
