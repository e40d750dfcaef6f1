package op

import (
	"math"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Evaluation tests: expected values are derived by hand or by a plain Go
// loop written independently of the op's implementation.

func tens(t *testing.T, dt ir.DataType, shape []int64, vals ...float64) *tensor.Tensor {
	t.Helper()
	tdt, err := TensorDType(dt)
	require.NoError(t, err)
	x := tensor.New(tdt, shape...)
	require.Equal(t, int(x.NumElements()), len(vals))
	for i, v := range vals {
		x.SetFloat64(i, v)
	}
	return x
}

func elems(x *tensor.Tensor) []float64 {
	out := make([]float64, x.NumElements())
	for i := range out {
		out[i] = x.Float64At(i)
	}
	return out
}

func evalCall(t *testing.T, o *ir.Op, attrs ir.Attrs, args ...Value) (Value, error) {
	t.Helper()
	f, ok := evalOf(o)
	require.True(t, ok, "%s has no evaluation", o.Name)
	call := &ir.Call{Op: o, Attrs: attrs}
	return f(call, args)
}

func evalT(t *testing.T, o *ir.Op, attrs ir.Attrs, args ...Value) *tensor.Tensor {
	t.Helper()
	v, err := evalCall(t, o, attrs, args...)
	require.NoError(t, err)
	x, ok := v.(*tensor.Tensor)
	require.True(t, ok, "got %s", KindOf(v))
	return x
}

func TestEvalIntegerDivisionSemantics(t *testing.T) {
	a := tens(t, ir.Int32, []int64{4}, 7, -7, 7, -7)
	b := tens(t, ir.Int32, []int64{4}, 2, 2, -2, -2)
	cases := []struct {
		op   *ir.Op
		want []float64
	}{
		{Divide, []float64{3, -3, -3, 3}},      // truncating (TIR Div)
		{FloorDivide, []float64{3, -4, -4, 3}}, // floor
		{Mod, []float64{1, -1, 1, -1}},         // sign of the dividend
		{FloorMod, []float64{1, 1, -1, -1}},    // sign of the divisor
	}
	for _, c := range cases {
		got := evalT(t, c.op, nil, a, b)
		assert.Equal(t, c.want, elems(got), c.op.Name)
	}
	_, err := evalCall(t, Divide, nil, a, tens(t, ir.Int32, []int64{1}, 0))
	require.ErrorContains(t, err, "R.divide: integer division by zero")
}

func TestEvalIntegerWraps(t *testing.T) {
	a := tens(t, ir.Int8, []int64{2}, 127, -128)
	got := evalT(t, Add, nil, a, tens(t, ir.Int8, []int64{}, 1))
	assert.Equal(t, []float64{-128, -127}, elems(got))
}

func TestEvalBroadcastAndScalars(t *testing.T) {
	a := tens(t, ir.Float32, []int64{2, 1}, 1, 2)
	b := tens(t, ir.Float32, []int64{3}, 10, 20, 30)
	got := evalT(t, Add, nil, a, b)
	assert.Equal(t, []int64{2, 3}, got.Shape)
	assert.Equal(t, []float64{11, 21, 31, 12, 22, 32}, elems(got))
	// Two scalars give a scalar.
	v, err := evalCall(t, Multiply, nil, PrimFloat(ir.Float32, 1.5), PrimFloat(ir.Float32, 2))
	require.NoError(t, err)
	assert.Equal(t, PrimFloat(ir.Float32, 3), v)
	_, err = evalCall(t, Add, nil, tens(t, ir.Float32, []int64{2}, 1, 2), tens(t, ir.Float32, []int64{3}, 1, 2, 3))
	require.ErrorContains(t, err, "R.add: cannot broadcast dimension 0: 2 against 3")
	_, err = evalCall(t, Add, nil, tens(t, ir.Float32, []int64{1}, 1), tens(t, ir.Int32, []int64{1}, 1))
	require.ErrorContains(t, err, "data types float32 and int32 must be equal")
}

func TestEvalFloat32Rounding(t *testing.T) {
	// 1 + 2^-30 is not a float32: the result rounds to 1.
	got := evalT(t, Add, nil, tens(t, ir.Float32, []int64{}, 1), tens(t, ir.Float32, []int64{}, math.Ldexp(1, -24)))
	assert.Equal(t, float64(float32(1)+float32(math.Ldexp(1, -24))), elems(got)[0])
}

func TestEvalReductions(t *testing.T) {
	x := tens(t, ir.Float32, []int64{2, 3}, 1, 2, 3, 4, 5, 6)
	axis1 := ir.Attrs{"axis": []any{int64(1)}, "keepdims": false}
	assert.Equal(t, []float64{6, 15}, elems(evalT(t, Sum, axis1, x)))
	assert.Equal(t, []float64{2, 5}, elems(evalT(t, Mean, axis1, x)))
	assert.Equal(t, []float64{3, 6}, elems(evalT(t, Max, axis1, x)))
	assert.Equal(t, []float64{1, 4}, elems(evalT(t, Min, axis1, x)))
	assert.Equal(t, []float64{6, 120}, elems(evalT(t, Prod, axis1, x)))
	all := evalT(t, Sum, ir.Attrs{"keepdims": true}, x)
	assert.Equal(t, []int64{1, 1}, all.Shape)
	assert.Equal(t, []float64{21}, elems(all))
	// Integer mean truncates.
	xi := tens(t, ir.Int64, []int64{3}, 1, 2, 4)
	assert.Equal(t, []float64{2}, elems(evalT(t, Mean, ir.Attrs{}, xi)))
	_, err := evalCall(t, Max, ir.Attrs{}, tens(t, ir.Float32, []int64{0}))
	require.ErrorContains(t, err, "empty axis")
}

func TestEvalMatmulAgainstLoop(t *testing.T) {
	// (2, 2, 3) x (3, 4): a batched left operand against a broadcast right one.
	av := make([]float64, 12)
	bv := make([]float64, 12)
	for i := range av {
		av[i], bv[i] = float64(i)-5, float64(i%5)-2
	}
	a := tens(t, ir.Float32, []int64{2, 2, 3}, av...)
	b := tens(t, ir.Float32, []int64{3, 4}, bv...)
	got := evalT(t, Matmul, nil, a, b)
	require.Equal(t, []int64{2, 2, 4}, got.Shape)
	for bi := 0; bi < 2; bi++ {
		for i := 0; i < 2; i++ {
			for j := 0; j < 4; j++ {
				s := 0.0
				for k := 0; k < 3; k++ {
					s += av[bi*6+i*3+k] * bv[k*4+j]
				}
				assert.Equal(t, s, got.Float64At(bi*8+i*4+j))
			}
		}
	}
	// A vector on the left drops its unit dimension.
	v := evalT(t, Matmul, nil, tens(t, ir.Float32, []int64{3}, 1, 1, 1), b)
	assert.Equal(t, []int64{4}, v.Shape)
	_, err := evalCall(t, Matmul, nil, b, b)
	require.ErrorContains(t, err, "x1 dimension 1 is 4 but x2 dimension 0 is 3")
}

func TestEvalSoftmaxAndNorms(t *testing.T) {
	x := tens(t, ir.Float64, []int64{1, 3}, 1, 2, 3)
	got := elems(evalT(t, Softmax, ir.Attrs{"axis": int64(-1)}, x))
	z := math.Exp(1) + math.Exp(2) + math.Exp(3)
	for i, w := range []float64{math.Exp(1) / z, math.Exp(2) / z, math.Exp(3) / z} {
		assert.InDelta(t, w, got[i], 1e-12)
	}
	ls := elems(evalT(t, LogSoftmax, ir.Attrs{"axis": int64(1)}, x))
	assert.InDelta(t, 1-math.Log(z), ls[0], 1e-12)
	gamma := tens(t, ir.Float64, []int64{3}, 1, 2, 1)
	beta := tens(t, ir.Float64, []int64{3}, 0, 0, 1)
	ln := elems(evalT(t, LayerNorm, ir.Attrs{"axes": []any{int64(-1)}, "epsilon": 0.0, "center": true, "scale": true}, x, gamma, beta))
	sd := math.Sqrt(2.0 / 3)
	assert.InDeltaSlice(t, []float64{-1 / sd, 0, 1/sd + 1}, ln, 1e-12)
	rms := elems(evalT(t, RMSNorm, ir.Attrs{"axes": []any{int64(-1)}, "epsilon": 0.0}, x, gamma))
	r := math.Sqrt(14.0 / 3)
	assert.InDeltaSlice(t, []float64{1 / r, 4 / r, 3 / r}, rms, 1e-12)
}

func TestEvalManipulation(t *testing.T) {
	x := tens(t, ir.Int32, []int64{2, 3}, 0, 1, 2, 3, 4, 5)
	p := evalT(t, PermuteDims, ir.Attrs{}, x)
	assert.Equal(t, []int64{3, 2}, p.Shape)
	assert.Equal(t, []float64{0, 3, 1, 4, 2, 5}, elems(p))
	r := evalT(t, Reshape, nil, x, Shape{3, -1})
	assert.Equal(t, []int64{3, 2}, r.Shape)
	_, err := evalCall(t, Reshape, nil, x, Shape{4, 2})
	require.ErrorContains(t, err, "cannot reshape 6 elements")
	c := evalT(t, Concat, ir.Attrs{"axis": int64(1)}, Tuple{x, tens(t, ir.Int32, []int64{2, 1}, 9, 8)})
	assert.Equal(t, []float64{0, 1, 2, 9, 3, 4, 5, 8}, elems(c))
	s := evalT(t, StridedSlice, ir.Attrs{}, x,
		Tuple{PrimInt(ir.Int64, 1)}, Tuple{PrimInt(ir.Int64, -1)}, Tuple{PrimInt(ir.Int64, -4)}, Tuple{PrimInt(ir.Int64, -2)})
	assert.Equal(t, []float64{2, 0, 5, 3}, elems(s)) // x[:, -1:-4:-2]
	tk := evalT(t, Take, ir.Attrs{"axis": int64(1), "mode": "fast"}, x, tens(t, ir.Int64, []int64{2}, 2, -3))
	assert.Equal(t, []float64{2, 0, 5, 3}, elems(tk))
	_, err = evalCall(t, Take, ir.Attrs{"axis": int64(1), "mode": "fast"}, x, tens(t, ir.Int64, []int64{1}, 3))
	require.ErrorContains(t, err, "index 3 is out of range for axis 1 of length 3")
	sp, err := evalCall(t, Split, ir.Attrs{"indices_or_sections": []any{int64(1)}, "axis": int64(1)}, x)
	require.NoError(t, err)
	parts := sp.(Tuple)
	require.Len(t, parts, 2)
	assert.Equal(t, []float64{1, 2, 4, 5}, elems(parts[1].(*tensor.Tensor)))
	b := evalT(t, BroadcastTo, nil, tens(t, ir.Int32, []int64{1, 2}, 1, 2), Shape{2, 2})
	assert.Equal(t, []float64{1, 2, 1, 2}, elems(b))
	e := evalT(t, ExpandDims, ir.Attrs{"axis": []any{int64(0), int64(-1)}}, x)
	assert.Equal(t, []int64{1, 2, 3, 1}, e.Shape)
	q := evalT(t, Squeeze, ir.Attrs{}, e)
	assert.Equal(t, []int64{2, 3}, q.Shape)
}

func TestEvalCastAndCreation(t *testing.T) {
	x := tens(t, ir.Float32, []int64{4}, 1.7, -1.7, 300, 0)
	assert.Equal(t, []float64{1, -1, 44, 0}, elems(evalT(t, AsType, ir.Attrs{"dtype": ir.Int8}, x)))
	assert.Equal(t, []float64{1, 1, 1, 0}, elems(evalT(t, AsType, ir.Attrs{"dtype": ir.Bool}, x)))
	f := evalT(t, Full, ir.Attrs{"dtype": ir.Void}, Shape{2}, PrimInt(ir.Int32, 7))
	assert.Equal(t, tensor.Int32, f.DType)
	assert.Equal(t, []float64{7, 7}, elems(f))
	o := evalT(t, OnesLike, ir.Attrs{"dtype": ir.Float64}, x)
	assert.Equal(t, tensor.Float64, o.DType)
	assert.Equal(t, []float64{1, 1, 1, 1}, elems(o))
}

func TestEvalUnary(t *testing.T) {
	x := tens(t, ir.Float64, []int64{3}, -1, 0, 2)
	assert.Equal(t, []float64{0, 0, 2}, elems(evalT(t, Relu, nil, x)))
	g := elems(evalT(t, Gelu, nil, x))
	assert.InDelta(t, -1*0.5*(1+math.Erf(-1/math.Sqrt2)), g[0], 1e-15)
	_, err := evalCall(t, Exp, nil, tens(t, ir.Int32, []int64{1}, 1))
	require.ErrorContains(t, err, "R.exp: x must be a float tensor")
	assert.Equal(t, []float64{1, 0, 1}, elems(evalT(t, Abs, nil, tens(t, ir.Int32, []int64{3}, -1, 0, 1))))
}

// Every tensor op that LegalizeOps and the evaluator know has an
// evaluation.
func TestEveryTensorOpEvaluates(t *testing.T) {
	for _, o := range ir.Ops() {
		if o.Category != ir.CatTensor && o.Category != ir.CatShape {
			continue
		}
		_, ok := evalOf(o)
		assert.True(t, ok, "%s has no evaluation", o.Name)
	}
}

func TestEvalSearchScanAndTiling(t *testing.T) {
	x := tens(t, ir.Float32, []int64{2, 3}, 3, 1, 3, 0, 5, 5)
	assert.Equal(t, []float64{0, 1}, elems(evalT(t, Argmax, ir.Attrs{"axis": int64(1), "keepdims": false}, x))) // first maximum wins
	assert.Equal(t, []float64{1, 0, 0}, elems(evalT(t, Argmin, ir.Attrs{"axis": int64(0), "keepdims": false}, x)))
	c := tens(t, ir.Bool, []int64{2, 1}, 1, 0)
	assert.Equal(t, []float64{3, 1, 3, 9, 9, 9}, elems(evalT(t, Where, nil, c, x, tens(t, ir.Float32, []int64{}, 9))))
	cs := evalT(t, Cumsum, ir.Attrs{"axis": int64(1), "exclusive": false, "dtype": ir.Void}, x)
	assert.Equal(t, []float64{3, 4, 7, 0, 5, 10}, elems(cs))
	ex := evalT(t, Cumprod, ir.Attrs{"axis": int64(1), "exclusive": true, "dtype": ir.Void}, x)
	assert.Equal(t, []float64{1, 3, 3, 1, 0, 0}, elems(ex))
	tl := evalT(t, Tile, ir.Attrs{"repeats": []any{int64(2)}}, tens(t, ir.Int32, []int64{2}, 1, 2))
	assert.Equal(t, []float64{1, 2, 1, 2}, elems(tl))
	rp := evalT(t, Repeat, ir.Attrs{"repeats": int64(2), "axis": int64(0)}, tens(t, ir.Int32, []int64{2}, 1, 2))
	assert.Equal(t, []float64{1, 1, 2, 2}, elems(rp))
	st := evalT(t, Stack, ir.Attrs{"axis": int64(1)}, Tuple{tens(t, ir.Int32, []int64{2}, 1, 2), tens(t, ir.Int32, []int64{2}, 3, 4)})
	assert.Equal(t, []int64{2, 2}, st.Shape)
	assert.Equal(t, []float64{1, 3, 2, 4}, elems(st))
	tr := evalT(t, Tril, ir.Attrs{"k": int64(0)}, tens(t, ir.Int32, []int64{2, 2}, 1, 2, 3, 4))
	assert.Equal(t, []float64{1, 0, 3, 4}, elems(tr))
	v := evalT(t, Variance, ir.Attrs{"keepdims": false}, tens(t, ir.Float64, []int64{4}, 1, 2, 3, 4))
	assert.Equal(t, []float64{1.25}, elems(v))
	cl := evalT(t, Clip, nil, tens(t, ir.Int32, []int64{3}, -5, 2, 9), PrimInt(ir.Int64, 0), PrimInt(ir.Int64, 3))
	assert.Equal(t, []float64{0, 2, 3}, elems(cl))
	fl := evalT(t, Flip, ir.Attrs{"axis": int64(0)}, tens(t, ir.Int32, []int64{3}, 1, 2, 3))
	assert.Equal(t, []float64{3, 2, 1}, elems(fl))
}

func TestEvalGatherElementsAndPRelu(t *testing.T) {
	x := tens(t, ir.Float32, []int64{2, 2}, 1, 2, 3, 4)
	g := evalT(t, GatherElements, ir.Attrs{"axis": int64(1)}, x, tens(t, ir.Int64, []int64{2, 2}, 0, 0, 1, -2))
	assert.Equal(t, []float64{1, 1, 4, 3}, elems(g))
	_, err := evalCall(t, GatherElements, ir.Attrs{"axis": int64(0)}, x, tens(t, ir.Int64, []int64{1, 2}, 2, 0))
	require.ErrorContains(t, err, "index 2 is out of range for axis 0 of length 2")
	// Every later bad index too is an error, never an out-of-range read.
	_, err = evalCall(t, GatherElements, ir.Attrs{"axis": int64(0)}, x, tens(t, ir.Int64, []int64{2, 2}, -7, 5, -9, 3))
	require.ErrorContains(t, err, "index -7 is out of range for axis 0 of length 2")
	p := evalT(t, PRelu, ir.Attrs{"axis": int64(1)}, tens(t, ir.Float32, []int64{2, 2}, -1, -2, 3, -4), tens(t, ir.Float32, []int64{2}, 0.5, 2))
	assert.Equal(t, []float64{-0.5, -4, 3, -8}, elems(p))
	w := evalT(t, WrapParam, ir.Attrs{"dtype": ir.Float64}, x)
	assert.Equal(t, tensor.Float64, w.DType)
}
