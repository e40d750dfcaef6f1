package onnx

import (
	"fmt"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// RNN, GRU and LSTM, unrolled over the (static) sequence length: TVM's
// Relax frontend has no converter for them (its Relay frontend unrolled
// them the same way). Per direction the input projection X·Wᵀ + Wb is one
// matmul over all steps; each step adds H·Rᵀ + Rb and applies the gates
// of the ONNX definitions (onnx/defs/rnn/defs.cc: gate order z, r, h for
// GRU; i, o, f, c for LSTM, peepholes i, o, f). sequence_lens (forward
// only: a batch entry stops updating after its length, its Y rows are 0)
// is applied with where; LSTM's input_forget is unsupported.

func registerRNN() {
	converters["RNN"] = rnnConverter("rnn")
	converters["GRU"] = rnnConverter("gru")
	converters["LSTM"] = rnnConverter("lstm")
}

func rnnConverter(kind string) converter {
	return func(c *nodeCtx) ([]ir.Expr, error) { return convertRNN(c, kind) }
}

func convertRNN(c *nodeCtx, kind string) ([]ir.Expr, error) {
	gates := map[string]int{"rnn": 1, "gru": 3, "lstm": 4}[kind]
	x, err := c.arg(0)
	if err != nil {
		return nil, err
	}
	xs, ok := c.staticShape(0)
	if !ok || len(xs) != 3 {
		return nil, unsupported("%s of an input of non-static shape", kind)
	}
	layout := c.attrInt("layout", 0)
	if layout == 1 {
		x = c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts([]int64{1, 0, 2})}, x)
		xs[0], xs[1] = xs[1], xs[0]
	}
	seq, batch := xs[0], xs[1]
	ws, ok := c.staticShape(1)
	if !ok || len(ws) != 3 {
		return nil, fmt.Errorf("W must be 3-D of static shape")
	}
	hidden := c.attrInt("hidden_size", ws[1]/int64(gates))
	dirs := ws[0]
	direction := c.attrString("direction", "forward")
	if want := map[string]int64{"forward": 1, "reverse": 1, "bidirectional": 2}[direction]; want == 0 || want != dirs {
		return nil, fmt.Errorf("direction %q with W for %d directions", direction, dirs)
	}
	var lens ir.Expr // (batch, 1): a step t updates batch b while t < lens[b]
	if c.has(4) {
		if direction != "forward" {
			return nil, unsupported("%s with sequence_lens in direction %q", strings.ToUpper(kind), direction)
		}
		lens = c.emitOp(op.Reshape, nil, c.i64(c.in[4]), shapeExpr(i64Dims([]int64{batch, 1})))
	}
	if c.attrInt("input_forget", 0) != 0 {
		return nil, unsupported("LSTM with input_forget")
	}
	acts, err := c.rnnActivations(kind, int(dirs))
	if err != nil {
		return nil, err
	}
	dt := dtypeOf(x)
	clip, hasClip := c.attrs["clip"]
	gate := func(v ir.Expr) ir.Expr {
		if hasClip {
			lim := float64(clip.GetF())
			return c.emitOp(op.Clip, nil, v, ir.NewPrimValue(ir.NewFloat(ir.Float64, -lim)), ir.NewPrimValue(ir.NewFloat(ir.Float64, lim)))
		}
		return v
	}
	slice := func(v ir.Expr, axis int, from, to int64) ir.Expr {
		return c.emitOp(op.StridedSlice, nil, v, primTuple([]int64{int64(axis)}), primTuple([]int64{from}), primTuple([]int64{to}), primTuple([]int64{1}))
	}
	pick := func(i int, d int64) ir.Expr { // input i's direction d, without the leading axis
		v := slice(c.in[i], 0, d, d+1)
		s, _ := c.staticShape(i)
		return c.emitOp(op.Reshape, nil, v, shapeExpr(i64Dims(s[1:])))
	}
	H := hidden
	var ys, hs, cs []ir.Expr
	for d := range dirs {
		w, r := pick(1, d), pick(2, d)
		wt := c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts([]int64{1, 0})}, w)
		rt := c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts([]int64{1, 0})}, r)
		xw := c.emitOp(op.Matmul, nil, x, wt) // (seq, batch, gates*H)
		var rb ir.Expr
		if c.has(3) {
			b := pick(3, d)
			xw = c.bin(op.Add, xw, slice(b, 0, 0, int64(gates)*H))
			rb = slice(b, 0, int64(gates)*H, 2*int64(gates)*H)
		}
		var h, cell ir.Expr
		if c.has(5) {
			h = pick(5, d)
		} else {
			h = c.emitOp(op.Full, ir.Attrs{"dtype": dt}, shapeExpr(i64Dims([]int64{batch, H})), scalarConst(0, dt))
		}
		var peep [3]ir.Expr
		if kind == "lstm" {
			if c.has(6) {
				cell = pick(6, d)
			} else {
				cell = c.emitOp(op.Full, ir.Attrs{"dtype": dt}, shapeExpr(i64Dims([]int64{batch, H})), scalarConst(0, dt))
			}
			if c.has(7) {
				p := pick(7, d)
				for k := range peep {
					peep[k] = slice(p, 0, int64(k)*H, int64(k+1)*H)
				}
			}
		}
		act := acts[d]
		steps := make([]ir.Expr, seq)
		for s := range seq {
			t := s
			if direction == "reverse" || d == 1 {
				t = seq - 1 - s
			}
			prevH, prevC := h, cell
			xt := c.emitOp(op.Reshape, nil, slice(xw, 0, t, t+1), shapeExpr(i64Dims([]int64{batch, int64(gates) * H})))
			part := func(v ir.Expr, k int) ir.Expr { return slice(v, 1, int64(k)*H, int64(k+1)*H) }
			rpart := func(k int) ir.Expr { // R_k·h + Rb_k
				rk := slice(rt, 1, int64(k)*H, int64(k+1)*H)
				v := c.emitOp(op.Matmul, nil, h, rk)
				if rb != nil {
					v = c.bin(op.Add, v, slice(rb, 0, int64(k)*H, int64(k+1)*H))
				}
				return v
			}
			switch kind {
			case "rnn":
				h = act[0](gate(c.bin(op.Add, xt, rpart(0))))
			case "gru":
				z := act[0](gate(c.bin(op.Add, part(xt, 0), rpart(0))))
				rr := act[0](gate(c.bin(op.Add, part(xt, 1), rpart(1))))
				var hh ir.Expr
				if c.attrInt("linear_before_reset", 0) != 0 {
					hh = c.bin(op.Add, part(xt, 2), c.bin(op.Multiply, rr, rpart(2)))
				} else {
					rh := slice(rt, 1, 2*H, 3*H)
					v := c.emitOp(op.Matmul, nil, c.bin(op.Multiply, rr, h), rh)
					if rb != nil {
						v = c.bin(op.Add, v, slice(rb, 0, 2*H, 3*H))
					}
					hh = c.bin(op.Add, part(xt, 2), v)
				}
				hh = act[1](gate(hh))
				one := scalarConst(1, dt)
				h = c.bin(op.Add, c.bin(op.Multiply, c.bin(op.Subtract, one, z), hh), c.bin(op.Multiply, z, h))
			case "lstm":
				pre := func(k int, p ir.Expr, cc ir.Expr) ir.Expr {
					v := c.bin(op.Add, part(xt, k), rpart(k))
					if p != nil {
						v = c.bin(op.Add, v, c.bin(op.Multiply, p, cc))
					}
					return gate(v)
				}
				i := act[0](pre(0, peep[0], cell))
				f := act[0](pre(2, peep[2], cell))
				cand := act[1](pre(3, nil, nil))
				cell = c.bin(op.Add, c.bin(op.Multiply, f, cell), c.bin(op.Multiply, i, cand))
				o := act[0](pre(1, peep[1], cell))
				h = c.bin(op.Multiply, o, act[2](cell))
			}
			out := h
			if lens != nil {
				live := c.bin(op.Greater, lens, ic(t))
				out = c.emitOp(op.Where, nil, live, h, scalarConst(0, dt))
				h = c.emitOp(op.Where, nil, live, h, prevH)
				if cell != nil {
					cell = c.emitOp(op.Where, nil, live, cell, prevC)
				}
			}
			steps[t] = c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{0})}, out)
		}
		y := c.emitOp(op.Concat, ir.Attrs{"axis": int64(0)}, ir.NewTuple(steps...)) // (seq, batch, H)
		ys = append(ys, c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{1})}, y))
		hs = append(hs, c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{0})}, h))
		if cell != nil {
			cs = append(cs, c.emitOp(op.ExpandDims, ir.Attrs{"axis": anyInts([]int64{0})}, cell))
		}
	}
	cat := func(vs []ir.Expr, axis int) ir.Expr {
		if len(vs) == 1 {
			return vs[0]
		}
		return c.emitOp(op.Concat, ir.Attrs{"axis": int64(axis)}, ir.NewTuple(vs...))
	}
	y, yh := cat(ys, 1), cat(hs, 0) // (seq, dirs, batch, H), (dirs, batch, H)
	var yc ir.Expr
	if cs != nil {
		yc = cat(cs, 0)
	}
	if layout == 1 {
		y = c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts([]int64{2, 0, 1, 3})}, y)
		yh = c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts([]int64{1, 0, 2})}, yh)
		if yc != nil {
			yc = c.emitOp(op.PermuteDims, ir.Attrs{"axes": anyInts([]int64{1, 0, 2})}, yc)
		}
	}
	outs := []ir.Expr{y, yh}
	if kind == "lstm" {
		outs = append(outs, yc)
	}
	return outs[:min(len(outs), len(c.node.GetOutput()))], nil
}

// rnnActivations are the activation functions per direction (f, g, h as
// the op has them), from the activations attribute or the defaults.
func (c *nodeCtx) rnnActivations(kind string, dirs int) ([][]func(ir.Expr) ir.Expr, error) {
	defaults := map[string][]string{"rnn": {"Tanh"}, "gru": {"Sigmoid", "Tanh"}, "lstm": {"Sigmoid", "Tanh", "Tanh"}}[kind]
	names := make([]string, 0, len(defaults)*dirs)
	if a, ok := c.attrs["activations"]; ok {
		for _, s := range a.GetStrings() {
			names = append(names, string(s))
		}
	}
	if len(names) == 0 {
		for range dirs {
			names = append(names, defaults...)
		}
	}
	if len(names) != len(defaults)*dirs {
		return nil, fmt.Errorf("%d activations for %d directions of %d functions", len(names), dirs, len(defaults))
	}
	if _, ok := c.attrs["activation_alpha"]; ok {
		return nil, unsupported("activation_alpha")
	}
	out := make([][]func(ir.Expr) ir.Expr, dirs)
	for d := range dirs {
		for _, n := range names[d*len(defaults) : (d+1)*len(defaults)] {
			o := map[string]*ir.Op{"tanh": op.Tanh, "sigmoid": op.Sigmoid, "relu": op.Relu}[strings.ToLower(n)]
			if o == nil {
				return nil, unsupported("activation %q", n)
			}
			out[d] = append(out[d], func(v ir.Expr) ir.Expr { return c.emitOp(o, nil, v) })
		}
	}
	return out, nil
}
