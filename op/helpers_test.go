package op

import (
	"github.com/phasec/phasec/ir"

	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Test helpers for the op registry. Expected struct info is compared
// semantically: symbolic dimensions are evaluated under several variable
// assignments, so the tests do not depend on the simplifier's canonical
// form.

var (
	symN = ir.SymVar("n")
	symM = ir.SymVar("m")
	symK = ir.SymVar("k")
	symB = ir.SymVar("b")
)

// tensorVar is a variable of tensor type (dims may mix int and PrimExpr).
func tensorVar(name string, dtype ir.DataType, dims ...any) *ir.Var {
	return ir.NewVar(name, ir.TensorInfoOf(dtype, toDims(dims)...))
}

func toDims(dims []any) []ir.PrimExpr {
	out := make([]ir.PrimExpr, len(dims))
	for i, d := range dims {
		switch d := d.(type) {
		case int:
			out[i] = ir.I64(int64(d))
		case ir.PrimExpr:
			out[i] = d
		default:
			panic(fmt.Sprintf("bad dim %T", d))
		}
	}
	return out
}

// tinfo builds the expected TensorInfo.
func tinfo(dtype ir.DataType, dims ...any) *ir.TensorInfo {
	return ir.TensorInfoOf(dtype, toDims(dims)...)
}

// shapeLit is R.shape([...]).
func shapeLit(dims ...any) *ir.ShapeExpr { return ir.NewShapeExpr(toDims(dims)...) }

func primLit(v int64) *ir.PrimValue { return ir.NewPrimValue(ir.I64(v)) }

func primTuple(vs ...int64) *ir.Tuple {
	fields := make([]ir.Expr, len(vs))
	for i, v := range vs {
		fields[i] = primLit(v)
	}
	return ir.NewTuple(fields...)
}

// opCall builds a call of op with attrs and args.
func opCall(op *ir.Op, attrs ir.Attrs, args ...ir.Expr) *ir.Call {
	c := ir.NewCall(op, args...)
	c.Attrs = attrs
	return c
}

func inferOf(call *ir.Call, ctx *ir.InferCtx) (ir.StructInfo, error) {
	return call.Op.(*ir.Op).Infer(ctx, call)
}

// evalPrim evaluates an int64 PrimExpr under env.
func evalPrim(e ir.PrimExpr, env map[*ir.PrimVar]int64) (int64, error) {
	switch e := e.(type) {
	case *ir.IntImm:
		return e.Value, nil
	case *ir.PrimVar:
		v, ok := env[e]
		if !ok {
			return 0, fmt.Errorf("unbound %s", e.Name)
		}
		return v, nil
	case *ir.Binary:
		a, err := evalPrim(e.A, env)
		if err != nil {
			return 0, err
		}
		b, err := evalPrim(e.B, env)
		if err != nil {
			return 0, err
		}
		switch e.Op {
		case ir.OpAdd:
			return a + b, nil
		case ir.OpSub:
			return a - b, nil
		case ir.OpMul:
			return a * b, nil
		case ir.OpFloorDiv, ir.OpDiv:
			if b == 0 {
				return 0, fmt.Errorf("division by zero")
			}
			q := a / b
			if e.Op == ir.OpFloorDiv && (a%b != 0) && ((a < 0) != (b < 0)) {
				q--
			}
			return q, nil
		case ir.OpFloorMod, ir.OpMod:
			if b == 0 {
				return 0, fmt.Errorf("division by zero")
			}
			m := a % b
			if e.Op == ir.OpFloorMod && m != 0 && ((m < 0) != (b < 0)) {
				m += b
			}
			return m, nil
		case ir.OpMin:
			return min(a, b), nil
		case ir.OpMax:
			return max(a, b), nil
		}
	case *ir.Cast:
		return evalPrim(e.Value, env)
	}
	return 0, fmt.Errorf("cannot evaluate %T", e)
}

var testEnvs = []map[*ir.PrimVar]int64{
	{symN: 7, symM: 5, symK: 3, symB: 2},
	{symN: 12, symM: 9, symK: 11, symB: 4},
}

func dimsEqual(a, b ir.PrimExpr) bool {
	for _, env := range testEnvs {
		x, err1 := evalPrim(a, env)
		y, err2 := evalPrim(b, env)
		if err1 != nil || err2 != nil || x != y {
			return false
		}
	}
	return true
}

// infoDiff describes how got differs from want ("" when they agree).
func infoDiff(got, want ir.StructInfo) string {
	switch w := want.(type) {
	case *ir.ObjectInfo:
		if _, ok := got.(*ir.ObjectInfo); !ok {
			return fmt.Sprintf("got %s, want R.Object", descInfo(got))
		}
	case *ir.PrimInfo:
		g, ok := got.(*ir.PrimInfo)
		if !ok || g.DType != w.DType {
			return fmt.Sprintf("got %s, want %s", descInfo(got), descInfo(want))
		}
	case *ir.ShapeInfo:
		g, ok := got.(*ir.ShapeInfo)
		if !ok || g.NDim != w.NDim || g.Known() != w.Known() || !dimListEqual(g.Values, w.Values) {
			return fmt.Sprintf("got %s, want %s", descInfo(got), descInfo(want))
		}
	case *ir.TensorInfo:
		g, ok := got.(*ir.TensorInfo)
		if !ok || g.DType != w.DType || g.NDim != w.NDim {
			return fmt.Sprintf("got %s, want %s", descInfo(got), descInfo(want))
		}
		if wv, ok := w.Shape.(*ir.Var); ok {
			if g.Shape != wv {
				return fmt.Sprintf("got shape %v, want shape var %s", g.Shape, wv.Name)
			}
			return ""
		}
		gd, gok := g.Dims()
		wd, wok := w.Dims()
		if gok != wok || !dimListEqual(gd, wd) {
			return fmt.Sprintf("got %s, want %s", descInfo(got), descInfo(want))
		}
	case *ir.TupleInfo:
		g, ok := got.(*ir.TupleInfo)
		if !ok || len(g.Fields) != len(w.Fields) {
			return fmt.Sprintf("got %s, want %s", descInfo(got), descInfo(want))
		}
		for i := range w.Fields {
			if d := infoDiff(g.Fields[i], w.Fields[i]); d != "" {
				return fmt.Sprintf("field %d: %s", i, d)
			}
		}
	case *ir.FuncInfo:
		g, ok := got.(*ir.FuncInfo)
		if !ok || g.Opaque != w.Opaque || g.Pure != w.Pure || len(g.Params) != len(w.Params) {
			return fmt.Sprintf("got %s, want %s", descInfo(got), descInfo(want))
		}
		for i := range w.Params {
			if d := infoDiff(g.Params[i], w.Params[i]); d != "" {
				return fmt.Sprintf("param %d: %s", i, d)
			}
		}
		if d := infoDiff(g.Ret, w.Ret); d != "" {
			return "ret: " + d
		}
	default:
		return fmt.Sprintf("unexpected want %T", want)
	}
	return ""
}

func dimListEqual(a, b []ir.PrimExpr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !dimsEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func descDims(ds []ir.PrimExpr) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		if v, err := evalPrim(d, testEnvs[0]); err == nil {
			parts[i] = fmt.Sprintf("%s=%d", fmtDim(d), v)
		} else {
			parts[i] = fmt.Sprintf("%T", d)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func descInfo(s ir.StructInfo) string {
	switch s := s.(type) {
	case *ir.TensorInfo:
		if d, ok := s.Dims(); ok {
			return fmt.Sprintf("Tensor%s %s", descDims(d), fmtDType(s.DType))
		}
		return fmt.Sprintf("Tensor(ndim=%d) %s", s.NDim, fmtDType(s.DType))
	case *ir.ShapeInfo:
		if s.Known() {
			return "Shape" + descDims(s.Values)
		}
		return fmt.Sprintf("Shape(ndim=%d)", s.NDim)
	case *ir.PrimInfo:
		return "Prim " + fmtDType(s.DType)
	case *ir.TupleInfo:
		parts := make([]string, len(s.Fields))
		for i, f := range s.Fields {
			parts[i] = descInfo(f)
		}
		return "Tuple(" + strings.Join(parts, ", ") + ")"
	}
	return sinfoKind(s)
}

// inferCase is one row of an inference table.
type inferCase struct {
	name string
	call *ir.Call
	want ir.StructInfo // nil when an error is expected
	err  string        // substring of the expected error
}

func runInferCases(t *testing.T, ctx *ir.InferCtx, cases []inferCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := inferOf(c.call, ctx)
			if c.err != "" {
				require.Error(t, err, "want error containing %q, got %s", c.err, descInfo(got))
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Empty(t, infoDiff(got, c.want))
		})
	}
}

// evalOf is o's evaluation, if its record has one.
func evalOf(o *ir.Op) (EvalFunc, bool) {
	if d, ok := DefOf(o); ok && d.Eval != nil {
		return d.Eval, true
	}
	return nil, false
}
