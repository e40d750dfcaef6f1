package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/tensor"
)

// Tolerance bounds how far a float result may be from the reference:
// |got - want| <= Abs + Rel * |want| + Scale * max|want|, the maximum
// over the tensor the element is in. Integers and bools compare exactly.
//
// Scale is for 16-bit storage: a value computed through float16 tensors
// is off by a few roundings of the terms it sums, which are as large as
// the tensor's values, not as the (possibly cancelled) result.
type Tolerance struct{ Rel, Abs, Scale float64 }

var (
	// Float32Tol is the tolerance of arithmetic ops on float32.
	Float32Tol = Tolerance{Rel: 1e-5, Abs: 1e-5}
	// TranscendentalTol is the tolerance once exp, log, tanh, erf, ...
	// take part.
	TranscendentalTol = Tolerance{Rel: 1e-4, Abs: 1e-4}
	// Float16Tol is the tolerance of a module storing tensors in float16
	// (ToMixedPrecision's output) against its float32 original: four units
	// of float16's roundoff (2^-11) of the tensor's largest magnitude, and
	// TranscendentalTol. The golden cases of ToMixedPrecision stay within
	// 1.6 units.
	Float16Tol = Tolerance{Rel: 1e-4, Abs: 1e-4, Scale: 4 * 0x1p-11}
	// BFloat16Tol is Float16Tol for bfloat16 (roundoff 2^-8).
	BFloat16Tol = Tolerance{Rel: 1e-4, Abs: 1e-4, Scale: 4 * 0x1p-8}
)

// HalfPrecisionTol is the tolerance for comparing mod's results with a
// float32 reference: Float16Tol or BFloat16Tol when some tensor of a
// Relax function of mod is stored in that dtype (BFloat16Tol when both
// are), and false when none is.
func HalfPrecisionTol(mod *ir.Module) (Tolerance, bool) {
	var f16, bf16 bool
	note := func(s ir.StructInfo) {
		ir.WalkStructInfo(s, func(s ir.StructInfo) bool {
			if t, ok := s.(*ir.TensorInfo); ok {
				f16 = f16 || t.DType == ir.Float16
				bf16 = bf16 || t.DType == ir.BFloat16
			}
			return true
		})
	}
	ir.WalkModule(mod, &ir.Visitor{StructInfo: note})
	switch {
	case bf16:
		return BFloat16Tol, true
	case f16:
		return Float16Tol, true
	}
	return Tolerance{}, false
}

// transcendental are the name fragments of ops, intrinsics and generated
// PrimFuncs whose results differ in the last bits between implementations.
var transcendental = []string{"exp", "log", "sqrt", "tanh", "sigmoid", "erf", "gelu", "silu",
	"softmax", "norm", "pow", "power", "sin", "cos", "tan", "mean", "variance", "std"}

func isTranscendental(name string) bool {
	for _, w := range transcendental {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// UsesTranscendental reports whether mod computes with such a function: a
// Relax op, a TIR intrinsic, or a PrimFunc named after one (LegalizeOps
// names kernels after their op). Comparisons of such modules use
// TranscendentalTol.
func UsesTranscendental(mod *ir.Module) bool {
	found := false
	ir.WalkModule(mod, &ir.Visitor{Expr: func(e ir.Expr) bool {
		if c, ok := e.(*ir.Call); ok {
			if o, ok := c.Op.(*ir.Op); ok && isTranscendental(o.Name) {
				found = true
			}
		}
		return !found
	}})
	for _, name := range mod.Names() {
		f := mod.PrimFunc(name)
		if found || f == nil {
			continue
		}
		if isTranscendental(name) {
			return true
		}
		ir.WalkStmt(f.Body, &ir.StmtVisitor{Prim: func(e ir.PrimExpr) bool {
			if c, ok := e.(*ir.PrimCall); ok && isTranscendental(c.Op) {
				found = true
			}
			return !found
		}})
	}
	return found
}

// Compare checks got against the reference want, element by element,
// naming the first differing element (by output path and multi-index).
func Compare(got, want op.Value, tol Tolerance) error {
	return compareAt("result", got, want, tol)
}

func compareAt(path string, got, want op.Value, tol Tolerance) error {
	switch w := want.(type) {
	case op.Tuple:
		g, ok := got.(op.Tuple)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: got %s, want %s", path, op.KindOf(got), op.KindOf(want))
		}
		for i := range w {
			if err := compareAt(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], tol); err != nil {
				return err
			}
		}
		return nil
	case *tensor.Tensor:
		g, ok := got.(*tensor.Tensor)
		if !ok {
			return fmt.Errorf("%s: got %s, want %s", path, op.KindOf(got), op.KindOf(want))
		}
		if g.DType != w.DType || !sameShape(g.Shape, w.Shape) {
			return fmt.Errorf("%s: got %s, want %s", path, g, w)
		}
		n := int(w.NumElements())
		idx := make([]int64, len(w.Shape))
		if tol.Scale > 0 && w.DType.IsFloat() {
			largest := 0.0
			for i := 0; i < n; i++ {
				if v := math.Abs(load(w, i).f); !math.IsInf(v, 0) && !math.IsNaN(v) {
					largest = max(largest, v)
				}
			}
			tol.Abs += tol.Scale * largest
		}
		for i := 0; i < n; i++ {
			a, b := load(g, i), load(w, i)
			if w.DType.IsFloat() {
				if within(a.f, b.f, tol) {
					continue
				}
				unravelIndex(int64(i), w.Shape, idx)
				return fmt.Errorf("%s%v: got %g, want %g (|diff| %.3g > %.3g + %.3g*|want|)", path, idx, a.f, b.f, math.Abs(a.f-b.f), tol.Abs, tol.Rel)
			}
			if a.i != b.i {
				unravelIndex(int64(i), w.Shape, idx)
				return fmt.Errorf("%s%v: got %d, want %d", path, idx, a.i, b.i)
			}
		}
		return nil
	case op.Prim:
		g, ok := got.(op.Prim)
		if !ok || g.DType != w.DType {
			return fmt.Errorf("%s: got %s, want %s", path, op.KindOf(got), op.KindOf(want))
		}
		if w.DType.IsFloat() && !within(g.F, w.F, tol) || !w.DType.IsFloat() && g.I != w.I {
			return fmt.Errorf("%s: got %v, want %v", path, g, w)
		}
		return nil
	case op.Shape:
		g, ok := got.(op.Shape)
		if !ok || !sameShape(g, w) {
			return fmt.Errorf("%s: got %v, want shape %v", path, got, []int64(w))
		}
		return nil
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("%s: got %s, want %s", path, op.KindOf(got), op.KindOf(want))
	}
	return nil
}

func within(a, b float64, tol Tolerance) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol.Abs+tol.Rel*math.Abs(b)
}

func unravelIndex(k int64, shape, idx []int64) {
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] > 0 {
			idx[i] = k % shape[i]
			k /= shape[i]
		}
	}
}

// RandomArgs builds arguments for fn from its parameters' struct info:
// tensors of uniform values in [-1, 1) (integers in [-8, 8), bools 0/1,
// unsigned in [0, 16)), with each symbolic dimension set from dims by name
// or to def. It fails for parameters it cannot build (no shape, objects).
func RandomArgs(fn *ir.Function, seed uint64, dims map[string]int64, def int64) ([]op.Value, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	f := newFrame("RandomArgs", nil)
	value := func(e ir.PrimExpr) (int64, error) {
		for _, v := range op.FreeVars(e) {
			if _, ok := f.sym[v]; ok {
				continue
			}
			n, ok := dims[v.Name]
			if !ok {
				n = def
			}
			f.sym[v] = scalar{i: n}
		}
		s, err := f.prim(e)
		return s.i, err
	}
	var build func(s ir.StructInfo, what string) (op.Value, error)
	build = func(s ir.StructInfo, what string) (op.Value, error) {
		switch s := s.(type) {
		case *ir.TensorInfo:
			ds, ok := s.Dims()
			if !ok || s.DType.IsVoid() {
				return nil, fmt.Errorf("%s has no known shape and dtype", what)
			}
			shape := make([]int64, len(ds))
			for i, d := range ds {
				v, err := value(d)
				if err != nil {
					return nil, fmt.Errorf("%s dimension %d: %v", what, i, err)
				}
				shape[i] = v
			}
			t, err := newTensor(s.DType, shape)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", what, err)
			}
			for i := 0; i < int(t.NumElements()); i++ {
				var x float64
				switch {
				case s.DType.IsFloat():
					x = rng.Float64()*2 - 1
				case s.DType.IsBool():
					x = float64(rng.IntN(2))
				case s.DType.IsUInt():
					x = float64(rng.IntN(16))
				default:
					x = float64(rng.IntN(16) - 8)
				}
				t.SetFloat64(i, x)
			}
			return t, nil
		case *ir.PrimInfo:
			if s.Value != nil {
				v, err := value(s.Value)
				return op.Prim{DType: s.DType, I: v}, err
			}
			if s.DType.IsFloat() {
				return op.PrimFloat(s.DType, rng.Float64()*2-1), nil
			}
			return op.PrimInt(s.DType, int64(rng.IntN(8))), nil
		case *ir.ShapeInfo:
			if !s.Known() {
				return nil, fmt.Errorf("%s is a shape of unknown values", what)
			}
			out := make(op.Shape, len(s.Values))
			for i, d := range s.Values {
				v, err := value(d)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		case *ir.TupleInfo:
			out := make(op.Tuple, len(s.Fields))
			for i, fs := range s.Fields {
				v, err := build(fs, fmt.Sprintf("%s field %d", what, i))
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		}
		return nil, fmt.Errorf("cannot build a random value for %s", what)
	}
	args := make([]op.Value, len(fn.Params))
	for i, p := range fn.Params {
		v, err := build(p.StructInfo(), "parameter "+p.Name)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return args, nil
}
