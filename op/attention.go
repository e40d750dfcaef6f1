package op

import (
	"math"

	"github.com/phasec/phasec/ir"
)

// Attention is R.nn.attention(query, key, value, bias=None, scale=None,
// causal_mask=None, window_size=None) (TVM's nn/attention.py,
// src/relax/op/nn/attention.cc): query (B, S, N, H), key (B, T, N, H),
// value (B, T, N, Hv) give softmax(q·kᵀ * scale + bias) · v of shape
// (B, S, N, Hv); scale defaults to 1/sqrt(H). causal_mask "TopLeft" keeps
// key j for query i when j <= i, "BottomRight" when j <= i + T - S; masked
// scores become the dtype's lowest value before the softmax, as TVM's
// legalization (python/tvm/relax/transform/legalize_ops/nn.py) does.
//
// window_size w makes the mask a causal sliding window: query i keeps the
// w keys d-w+1 .. d ending at its diagonal d (i for "TopLeft", i + T - S
// for "BottomRight" or no causal_mask). This is what TVM's cutlass
// flash-attention offload computes (window_size_left = w - 1,
// window_size_right = 0, bottom-right aligned); TVM's own legalization
// rejects window_size, phasec legalizes it.
var Attention = Define(newAttentionOp())

func newAttentionOp() Def {
	op := &ir.Op{Name: "relax.nn.attention", Doc: "Scaled dot-product multi-head attention.", Pure: true, Category: ir.CatTensor, Pattern: ir.PatternOpaque,
		Params: []ir.Param{{Name: "query", Kind: ir.ArgExpr}, {Name: "key", Kind: ir.ArgExpr}, {Name: "value", Kind: ir.ArgExpr},
			{Name: "bias", Kind: ir.ArgExpr, Optional: true},
			{Name: "scale", Kind: ir.AttrFloat, Optional: true, PrintNone: true}, {Name: "causal_mask", Kind: ir.AttrStr, Optional: true, PrintNone: true},
			{Name: "window_size", Kind: ir.AttrInt, Optional: true, PrintNone: true}}}
	attrs := func(call *ir.Call) (scale float64, hasScale bool, causal string, window int64, err error) {
		if v := opAttr(op, call, "scale"); v != nil {
			scale, hasScale = v.(float64)
		}
		causal, _ = opAttr(op, call, "causal_mask").(string)
		if causal != "" && causal != "TopLeft" && causal != "BottomRight" {
			return 0, false, "", 0, opErrorf(op, "causal_mask must be \"TopLeft\" or \"BottomRight\", got %q", causal)
		}
		window, hasWindow, err := opAttrInt(op, call, "window_size")
		if err != nil {
			return 0, false, "", 0, err
		}
		if hasWindow && window < 1 {
			return 0, false, "", 0, opErrorf(op, "window_size must be positive, got %d", window)
		}
		if hasWindow && causal == "" {
			causal = "BottomRight" // the window ends at the bottom-right diagonal
		}
		return scale, hasScale, causal, window, nil
	}
	op.Infer = func(_ *ir.InferCtx, call *ir.Call) (ir.StructInfo, error) {
		if len(call.Args) < 3 || len(call.Args) > 4 {
			return nil, opErrorf(op, "takes query, key, value and an optional bias, got %d arguments", len(call.Args))
		}
		var ts [3]*ir.TensorInfo
		for i := range ts {
			t, err := tensorArg(op, call, i)
			if err != nil {
				return nil, err
			}
			if t.NDim >= 0 && t.NDim != 4 {
				return nil, opErrorf(op, "%s must be 4-D (batch, seq, heads, dim), got rank %d", opArgName(op, i), t.NDim)
			}
			if i > 0 {
				if _, err := unifyDType(op, ts[0].DType, t.DType); err != nil {
					return nil, err
				}
			}
			ts[i] = t
		}
		if err := requireFloat(op, ts[0].DType); err != nil {
			return nil, err
		}
		if _, _, _, _, err := attrs(call); err != nil {
			return nil, err
		}
		q, okQ := ts[0].Dims()
		k, okK := ts[1].Dims()
		v, okV := ts[2].Dims()
		if !okQ || !okK || !okV {
			return ir.TensorInfoNDim(ts[0].DType, 4), nil
		}
		check := func(a, b ir.PrimExpr, what string) error {
			if dimsProvablyDiffer(a, b) {
				return opErrorf(op, "%s differ: %s vs %s", what, fmtDim(a), fmtDim(b))
			}
			return nil
		}
		for _, c := range []struct {
			a, b ir.PrimExpr
			what string
		}{{q[0], k[0], "query and key batch sizes"}, {k[0], v[0], "key and value batch sizes"},
			{q[2], k[2], "query and key head counts"}, {k[2], v[2], "key and value head counts"},
			{q[3], k[3], "query and key head dims"}, {k[1], v[1], "key and value sequence lengths"}} {
			if err := check(c.a, c.b, c.what); err != nil {
				return nil, err
			}
		}
		if len(call.Args) == 4 {
			b, err := tensorArg(op, call, 3)
			if err != nil {
				return nil, err
			}
			if bd, ok := b.Dims(); ok {
				if len(bd) > 4 {
					return nil, opErrorf(op, "bias must have rank at most 4, got %d", len(bd))
				}
				want := []ir.PrimExpr{q[0], q[2], q[1], k[1]}
				var scratch [4]ir.PrimExpr
				if _, _, err := broadcastDims(op, bd, want, scratch[:]); err != nil {
					return nil, opErrorf(op, "bias does not broadcast to (batch, heads, seq, seq_kv)")
				}
			}
		}
		return newTensor(ts[0].DType, []ir.PrimExpr{q[0], q[1], q[2], v[3]}, true, 4), nil
	}
	op.Normalize = schemaNormalize(op)
	eval := func(call *ir.Call, args []Value) (Value, error) {
		var xs [3]*array
		for i := range xs {
			var err error
			if xs[i], err = argArray(op, args, i); err != nil {
				return nil, err
			}
			if len(xs[i].shape) != 4 || xs[i].f == nil {
				return nil, opErrorf(op, "%s must be a 4-D float tensor, got %s%v", paramName(op, i), xs[i].dt, xs[i].shape)
			}
		}
		q, k, v := xs[0], xs[1], xs[2]
		B, S, N, H := q.shape[0], q.shape[1], q.shape[2], q.shape[3]
		T, Hv := k.shape[1], v.shape[3]
		if k.shape[0] != B || v.shape[0] != B || k.shape[2] != N || v.shape[2] != N || k.shape[3] != H || v.shape[1] != T {
			return nil, opErrorf(op, "query %v, key %v and value %v do not fit", q.shape, k.shape, v.shape)
		}
		scale, hasScale, causal, window, err := attrs(call)
		if err != nil {
			return nil, err
		}
		if !hasScale {
			scale = 1 / math.Sqrt(float64(H))
		}
		var bias *array
		var bb broadcaster
		if len(args) > 3 && args[3] != nil {
			if bias, err = argArray(op, args, 3); err != nil {
				return nil, err
			}
			if _, err := broadcastShape(op, bias.shape, []int64{B, N, S, T}); err != nil {
				return nil, err
			}
			bb = newBroadcaster(bias.shape)
		}
		lowest := -math.MaxFloat64
		if q.dt.Bits == 32 {
			lowest = -math.MaxFloat32
		}
		out := newArray(q.dt, []int64{B, S, N, Hv})
		score := make([]float64, T)
		for b := range B {
			for n := range N {
				for i := range S {
					mx := math.Inf(-1)
					for j := range T {
						s := 0.0
						for h := range H {
							s += q.f[((b*S+i)*N+n)*H+h] * k.f[((b*T+j)*N+n)*H+h]
						}
						s *= scale
						if bias != nil {
							s += bias.float(bb.index([]int64{b, n, i, j}))
						}
						diag := i
						if causal == "BottomRight" {
							diag = i + T - S
						}
						if causal != "" && (j > diag || (window > 0 && j <= diag-window)) {
							s = lowest
						}
						score[j] = s
						mx = math.Max(mx, s)
					}
					sum := 0.0
					for j := range score {
						score[j] = math.Exp(score[j] - mx)
						sum += score[j]
					}
					for hv := range Hv {
						acc := 0.0
						for j := range T {
							acc += score[j] / sum * v.f[((b*T+j)*N+n)*Hv+hv]
						}
						out.setFloat(((b*S+i)*N+n)*Hv+hv, acc)
					}
				}
			}
		}
		return out.tensor()
	}
	legalize := func(kr *Kernel, call *ir.Call) error {
		scale, hasScale, causal, window, err := attrs(call)
		if err != nil {
			return err
		}
		q, err := kr.Input(call.Args[0], "A")
		if err != nil {
			return err
		}
		k, err := kr.Input(call.Args[1], "B")
		if err != nil {
			return err
		}
		v, err := kr.Input(call.Args[2], "C")
		if err != nil {
			return err
		}
		var bias *ir.Buffer
		if len(call.Args) > 3 {
			if bias, err = kr.Input(call.Args[3], "D"); err != nil {
				return err
			}
		}
		if !hasScale {
			h, ok := ir.IntValue(q.Shape[3])
			if !ok {
				return ErrNotLegalizable
			}
			scale = 1 / math.Sqrt(float64(h))
		}
		out, err := kr.Output("T_attention")
		if err != nil {
			return err
		}
		dt := q.DType
		B, S, N, H, T := q.Shape[0], q.Shape[1], q.Shape[2], q.Shape[3], k.Shape[1]
		scoreShape := []ir.PrimExpr{B, N, S, T}
		score := kr.Alloc("T_attn_score", dt, scoreShape)
		kr.Reduce("T_attn_score", score, "ax", []ir.PrimExpr{H}, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, Load(q, []ir.PrimExpr{s[0], s[2], s[1], r[0]}), Load(k, []ir.PrimExpr{s[0], s[3], s[1], r[0]})))
		})
		scaled := kr.Alloc("T_attn_scaled", dt, scoreShape)
		kr.Compute("T_attn_scaled", scaled, "ax", func(x []ir.PrimExpr) ir.PrimExpr {
			var y ir.PrimExpr = ir.NewBinary(ir.OpMul, Load(score, x), constOf(dt, scale))
			if bias != nil {
				y = ir.NewBinary(ir.OpAdd, y, Load(bias, broadcastIndex(bias.Shape, scoreShape, x)))
			}
			var diag ir.PrimExpr // the last key query x[2] sees
			switch causal {
			case "TopLeft":
				diag = x[2]
			case "BottomRight":
				diag = ir.Add(x[2], ir.Sub(T, S))
			default:
				return y
			}
			masked := ir.NewBinary(ir.OpGT, x[3], diag)
			if window > 0 {
				masked = ir.NewBinary(ir.OpOr, masked, ir.NewBinary(ir.OpLE, x[3], ir.Sub(diag, ir.I64(window))))
			}
			return &ir.Select{Cond: masked, True: limitValue(dt, true), False: y}
		})
		rows := []ir.PrimExpr{B, N, S}
		mx := kr.Alloc("T_attn_max", dt, rows)
		kr.Reduce("T_attn_max", mx, "ax", []ir.PrimExpr{T}, limitValue(dt, true), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpMax, acc, Load(scaled, append(append([]ir.PrimExpr{}, s...), r[0])))
		})
		ex := kr.Alloc("T_attn_exp", dt, scoreShape)
		kr.Compute("T_attn_exp", ex, "ax", func(x []ir.PrimExpr) ir.PrimExpr {
			return intrinsic("exp", dt, ir.NewBinary(ir.OpSub, Load(scaled, x), Load(mx, x[:3])))
		})
		sum := kr.Alloc("T_attn_sum", dt, rows)
		kr.Reduce("T_attn_sum", sum, "ax", []ir.PrimExpr{T}, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			return ir.NewBinary(ir.OpAdd, acc, Load(ex, append(append([]ir.PrimExpr{}, s...), r[0])))
		})
		kr.Reduce("T_attention", out, "ax", []ir.PrimExpr{T}, constOf(dt, 0), func(s, r []ir.PrimExpr, acc ir.PrimExpr) ir.PrimExpr {
			// s = (b, i, n, hv)
			p := ir.NewBinary(ir.OpDiv, Load(ex, []ir.PrimExpr{s[0], s[2], s[1], r[0]}), Load(sum, []ir.PrimExpr{s[0], s[2], s[1]}))
			return ir.NewBinary(ir.OpAdd, acc, ir.NewBinary(ir.OpMul, p, Load(v, []ir.PrimExpr{s[0], r[0], s[2], s[3]})))
		})
		return nil
	}
	return Def{Op: op, Eval: eval, Legalize: legalize,
		MixedPrecision: mixedAlways}
}
