package kernel

import (
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Vector mode: an innermost loop runs chunkSize iterations per step, each
// statement over the whole chunk (see the package doc for when that is
// valid). Expressions that vary with the loop variable compile to vf
// closures filling a slice of lanes; invariant ones stay scalar closures
// evaluated once per chunk.

// vf evaluates an expression for loop values x0, x0+1, ..., x0+len(dst)-1.
// It returns a slice of len(dst) lanes: dst, or a slice of a buffer when
// the lanes are contiguous there (the caller must not write to it).
type vf[T any] func(fr *frame, x0 int64, dst []T) []T

// vstmt runs a statement for n iterations starting at x0.
type vstmt func(fr *frame, x0 int64, n int)

type floatT interface{ ~float32 | ~float64 }

// notVector aborts vector compilation; compileVector falls back to scalar.
type notVector struct{ why string }

// vcomp compiles one innermost loop.
type vcomp struct {
	c     *compiler
	x     *ir.PrimVar
	xslot int // the loop variable's slot (holds the chunk start)
	// sub maps block iteration variables and lets whose values vary with x
	// to those values (vector code inlines them).
	sub map[*ir.PrimVar]ir.PrimExpr
}

func (vc *vcomp) no(why string) { panic(notVector{why}) }

// varies reports whether e depends on the loop variable.
func (vc *vcomp) varies(e ir.PrimExpr) bool {
	switch e := e.(type) {
	case *ir.PrimVar:
		if e == vc.x {
			return true
		}
		_, ok := vc.sub[e]
		return ok
	case *ir.IntImm, *ir.FloatImm, *ir.PrimStr:
		return false
	case *ir.Binary:
		return vc.varies(e.A) || vc.varies(e.B)
	case *ir.Not:
		return vc.varies(e.A)
	case *ir.Cast:
		return vc.varies(e.Value)
	case *ir.Select:
		return vc.varies(e.Cond) || vc.varies(e.True) || vc.varies(e.False)
	case *ir.BufferLoad:
		for _, i := range e.Indices {
			if vc.varies(i) {
				return true
			}
		}
		return false
	case *ir.PrimCall:
		for _, a := range e.Args {
			if vc.varies(a) {
				return true
			}
		}
		return false
	}
	return true
}

// coef returns a with e = a*x + (something invariant), or ok=false.
func (vc *vcomp) coef(e ir.PrimExpr) (int64, bool) {
	if !vc.varies(e) {
		return 0, true
	}
	switch e := e.(type) {
	case *ir.PrimVar:
		if e == vc.x {
			return 1, true
		}
		return vc.coef(vc.sub[e])
	case *ir.Binary:
		switch e.Op {
		case ir.OpAdd, ir.OpSub:
			a, ok1 := vc.coef(e.A)
			b, ok2 := vc.coef(e.B)
			if e.Op == ir.OpSub {
				b = -b
			}
			return a + b, ok1 && ok2
		case ir.OpMul:
			if k, ok := constI(e.B); ok {
				a, ok := vc.coef(e.A)
				return a * k, ok
			}
			if k, ok := constI(e.A); ok {
				b, ok := vc.coef(e.B)
				return b * k, ok
			}
		}
	case *ir.Cast:
		if e.Type.IsInteger() && e.Value.DType().IsInteger() && e.Type.Bits >= e.Value.DType().Bits {
			return vc.coef(e.Value)
		}
	}
	return 0, false
}

// vaddr is an affine buffer access: per dimension a base (the index at
// the iteration in the loop variable's slot) and a constant coefficient.
type vaddr struct {
	buf   int
	xslot int
	name  string
	dims  []vdim
}

// vdim is one dimension of a vaddr: index = ints[slot] + add (slot -1:
// add alone) when fn is nil, else fn; plus coef per iteration.
type vdim struct {
	slot int
	add  int64
	fn   iexpr
	coef int64
}

// simpleIndex recognises v, v + c, v - c and c, whose value needs no
// closure call.
func (c *compiler) simpleIndex(e ir.PrimExpr) (slot int, add int64, ok bool) {
	if k, isConst := constI(e); isConst {
		return -1, k, true
	}
	if v, isVar := e.(*ir.PrimVar); isVar && v.Type.IsInteger() && v.Type.Bits == 64 {
		if s, bound := c.ints[v]; bound {
			return s, 0, true
		}
	}
	if b, isBin := e.(*ir.Binary); isBin && (b.Op == ir.OpAdd || b.Op == ir.OpSub) && b.DType().Bits == 64 {
		if k, isConst := constI(b.B); isConst {
			if s, a, ok := c.simpleIndex(b.A); ok && s >= 0 && a == 0 {
				if b.Op == ir.OpSub {
					k = -k
				}
				return s, k, true
			}
		}
	}
	return -1, 0, false
}

func (vc *vcomp) addr(b *ir.Buffer, idx []ir.PrimExpr, at ir.PrimExpr) *vaddr {
	c := vc.c
	a := &vaddr{buf: c.buffer(b, at), name: b.Name, xslot: vc.xslot}
	if len(idx) != len(b.Shape) {
		c.fail(at, "buffer %s has %d dimensions, indexed with %d", b.Name, len(b.Shape), len(idx))
	}
	for _, e := range idx {
		k, ok := vc.coef(e)
		if !ok {
			vc.no("non-affine index")
		}
		d := vdim{coef: k}
		if slot, add, simple := c.simpleIndex(e); simple {
			d.slot, d.add = slot, add
		} else {
			d.fn = c.compileI(e)
		}
		a.dims = append(a.dims, d)
	}
	return a
}

// affine reports whether every index is affine in the loop variable.
func (vc *vcomp) affine(idx []ir.PrimExpr) bool {
	for _, e := range idx {
		if _, ok := vc.coef(e); !ok {
			return false
		}
	}
	return true
}

// gather compiles a load whose indices are not affine in the loop
// variable (reshapes, modular indices, indirect reads): each varying
// index is an int vector, and every lane is bounds-checked.
func gather[S intS | floatT, T int64 | floatT](vc *vcomp, e *ir.BufferLoad, get func(*bufData) []S) vf[T] {
	c := vc.c
	b := c.buffer(e.Buffer, e)
	if len(e.Indices) != len(e.Buffer.Shape) {
		c.fail(e, "buffer %s has %d dimensions, indexed with %d", e.Buffer.Name, len(e.Buffer.Shape), len(e.Indices))
	}
	idx := make([]operand[int64], len(e.Indices))
	for d, ix := range e.Indices {
		idx[d] = intOperand(vc, ix)
	}
	offs := newScratch[int64](c)
	name := e.Buffer.Name
	return func(fr *frame, x0 int64, dst []T) []T {
		n := len(dst)
		bd := &fr.bufs[b]
		off := offs(fr)[:n]
		clear(off)
		for d := range idx {
			ext, stride := bd.shape[d], bd.stride[d]
			if idx[d].vec == nil {
				i := idx[d].inv(fr)
				if i < 0 || i >= ext {
					fault("index out of bounds: buffer %s dimension %d (extent %d) indexed at %d", name, d, ext, i)
				}
				for t := range off {
					off[t] += i * stride
				}
				continue
			}
			iv := idx[d].eval(fr, x0, n)
			for t, i := range iv {
				if uint64(i) >= uint64(ext) {
					fault("index out of bounds: buffer %s dimension %d (extent %d) indexed at %d", name, d, ext, i)
				}
				off[t] += i * stride
			}
		}
		src := get(bd)
		for t, o := range off {
			dst[t] = T(src[o])
		}
		return dst
	}
}

// at returns the flat offset of lane 0 (iteration x0) and the step
// between lanes, checking every dimension at both ends of the n lanes.
func (a *vaddr) at(fr *frame, x0 int64, n int) (off, step int64) {
	bd := &fr.bufs[a.buf]
	last := int64(n - 1)
	delta := x0 - fr.ints[a.xslot]
	for d := range a.dims {
		dm := &a.dims[d]
		var b int64
		switch {
		case dm.fn != nil:
			b = dm.fn(fr)
		case dm.slot >= 0:
			b = fr.ints[dm.slot] + dm.add
		default:
			b = dm.add
		}
		b += dm.coef * delta
		e := b + dm.coef*last
		if b < 0 || b >= bd.shape[d] || e < 0 || e >= bd.shape[d] {
			fault("index out of bounds: buffer %s dimension %d (extent %d) indexed from %d to %d", a.name, d, bd.shape[d], b, e)
		}
		off += b * bd.stride[d]
		step += dm.coef * bd.stride[d]
	}
	return off, step
}

// newScratch reserves a chunk-sized scratch vector of T in every frame.
func newScratch[T any](c *compiler) func(fr *frame) []T {
	var z T
	var f any
	switch any(z).(type) {
	case float32:
		id := c.nS32
		c.nS32++
		f = func(fr *frame) []float32 { return fr.s32[id] }
	case float64:
		id := c.nS64
		c.nS64++
		f = func(fr *frame) []float64 { return fr.s64[id] }
	case int64:
		id := c.nSI
		c.nSI++
		f = func(fr *frame) []int64 { return fr.si[id] }
	}
	return f.(func(fr *frame) []T)
}

// operand is a vector or invariant operand of type T.
type operand[T any] struct {
	vec     vf[T]
	scratch func(fr *frame) []T
	inv     func(fr *frame) T
}

func (o *operand[T]) eval(fr *frame, x0 int64, n int) []T {
	return o.vec(fr, x0, o.scratch(fr)[:n])[:n]
}

// into writes the lanes of o for iterations x0... into dst.
func (o *operand[T]) into(fr *frame, x0 int64, dst []T) {
	if len(dst) == 0 {
		return
	}
	if o.vec == nil {
		v := o.inv(fr)
		for i := range dst {
			dst[i] = v
		}
		return
	}
	if r := o.vec(fr, x0, dst); &r[0] != &dst[0] {
		copy(dst, r)
	}
}

// materialize returns the lanes of o, broadcasting an invariant.
func (o *operand[T]) materialize(fr *frame, x0 int64, n int) []T {
	if o.vec != nil {
		return o.eval(fr, x0, n)
	}
	v := o.inv(fr)
	s := o.scratch(fr)[:n]
	for i := range s {
		s[i] = v
	}
	return s
}

func floatOperand[T floatT](vc *vcomp, e ir.PrimExpr) operand[T] {
	o := operand[T]{scratch: newScratch[T](vc.c)}
	if vc.varies(e) {
		o.vec = vecFloat[T](vc, e)
	} else {
		f := vc.c.compileF(e)
		o.inv = func(fr *frame) T { return T(f(fr)) }
	}
	return o
}

func intOperand(vc *vcomp, e ir.PrimExpr) operand[int64] {
	o := operand[int64]{scratch: newScratch[int64](vc.c)}
	if vc.varies(e) {
		o.vec = vc.vecInt(e)
	} else {
		o.inv = vc.c.compileI(e)
	}
	return o
}

// vecFloat compiles a varying float expression of element type T.
func vecFloat[T floatT](vc *vcomp, e ir.PrimExpr) vf[T] {
	switch e := e.(type) {
	case *ir.PrimVar:
		if s, ok := vc.sub[e]; ok {
			return vecFloat[T](vc, s)
		}
	case *ir.BufferLoad:
		return loadFloat[T](vc, e)
	case *ir.Binary:
		if e.Op.IsCompare() || e.Op.IsLogical() {
			break
		}
		return vecFloatBinary[T](vc, e)
	case *ir.Select:
		return vecFloatSelect[T](vc, e.Cond, e.True, e.False)
	case *ir.Cast:
		from := e.Value.DType()
		if from.IsFloat() {
			switch storageOf(from) {
			case stF32:
				return convertVec[float32, T](floatOperand[float32](vc, e.Value))
			case stF64:
				return convertVec[float64, T](floatOperand[float64](vc, e.Value))
			}
			vc.no("cast from half")
		}
		if from.IsUInt() && from.Bits == 64 {
			vc.no("uint64 cast")
		}
		return convertVec[int64, T](intOperand(vc, e.Value))
	case *ir.PrimCall:
		return vecFloatCall[T](vc, e)
	}
	vc.no("float expression")
	return nil
}

func loadFloat[T floatT](vc *vcomp, e *ir.BufferLoad) vf[T] {
	var get func(bd *bufData) []T
	switch storageOf(e.Buffer.DType) {
	case stF32:
		get = any(func(bd *bufData) []float32 { return bd.f32 }).(func(*bufData) []T)
	case stF64:
		get = any(func(bd *bufData) []float64 { return bd.f64 }).(func(*bufData) []T)
	default:
		vc.no("load type")
	}
	if !vc.affine(e.Indices) {
		return gather[T, T](vc, e, get)
	}
	a := vc.addr(e.Buffer, e.Indices, e)
	return func(fr *frame, x0 int64, dst []T) []T {
		n := len(dst)
		off, step := a.at(fr, x0, n)
		src := get(&fr.bufs[a.buf])
		if step == 1 {
			return src[off : off+int64(n)]
		}
		_ = src[off+step*int64(n-1)]
		for i := range dst {
			dst[i] = src[off]
			off += step
		}
		return dst
	}
}

func vecFloatCall[T floatT](vc *vcomp, e *ir.PrimCall) vf[T] {
	switch e.Op {
	case "likely":
		return vecFloat[T](vc, e.Args[0])
	case "if_then_else":
		if len(e.Args) != 3 {
			break
		}
		if !hasLoad(e.Args[1]) && !hasLoad(e.Args[2]) {
			return vecFloatSelect[T](vc, e.Args[0], e.Args[1], e.Args[2])
		}
		// Only the taken arm may be evaluated (a guarded load may be out
		// of bounds otherwise). A condition affine in the loop variable
		// (padding: 1 <= i and i < n + 1) holds on one interval of the
		// lanes: each arm runs on its own lanes. Others stay scalar.
		conds := vc.conjuncts(e.Args[0])
		t, f := floatOperand[T](vc, e.Args[1]), floatOperand[T](vc, e.Args[2])
		xslot := vc.xslot
		return func(fr *frame, x0 int64, dst []T) []T {
			n := int64(len(dst))
			a, b := int64(0), n
			for i := range conds {
				pa, pb := conds[i].intervalAt(fr, x0, n, xslot)
				a, b = max(a, pa), min(b, pb)
			}
			if a >= b {
				f.into(fr, x0, dst)
				return dst
			}
			f.into(fr, x0, dst[:a])
			t.into(fr, x0+a, dst[a:b])
			f.into(fr, x0+b, dst[b:])
			return dst
		}
	}
	if fn, ok := unaryMath[e.Op]; ok && len(e.Args) == 1 {
		a := floatOperand[T](vc, e.Args[0])
		return func(fr *frame, x0 int64, dst []T) []T {
			av := a.eval(fr, x0, len(dst))
			for i := range dst {
				dst[i] = T(fn(float64(av[i])))
			}
			return dst
		}
	}
	if fn, ok := binaryMath[e.Op]; ok && len(e.Args) == 2 {
		a, b := floatOperand[T](vc, e.Args[0]), floatOperand[T](vc, e.Args[1])
		return func(fr *frame, x0 int64, dst []T) []T {
			n := len(dst)
			av, bv := a.materialize(fr, x0, n), b.materialize(fr, x0, n)
			for i := range dst {
				dst[i] = T(fn(float64(av[i]), float64(bv[i])))
			}
			return dst
		}
	}
	vc.no("float intrinsic")
	return nil
}

func hasLoad(e ir.PrimExpr) bool {
	found := false
	walkExpr(e, func(x ir.PrimExpr) {
		if _, ok := x.(*ir.BufferLoad); ok {
			found = true
		}
	})
	return found
}

// walkExpr calls f on e and every subexpression (including indices).
func walkExpr(e ir.PrimExpr, f func(ir.PrimExpr)) {
	f(e)
	switch e := e.(type) {
	case *ir.Binary:
		walkExpr(e.A, f)
		walkExpr(e.B, f)
	case *ir.Not:
		walkExpr(e.A, f)
	case *ir.Cast:
		walkExpr(e.Value, f)
	case *ir.Select:
		walkExpr(e.Cond, f)
		walkExpr(e.True, f)
		walkExpr(e.False, f)
	case *ir.BufferLoad:
		for _, i := range e.Indices {
			walkExpr(i, f)
		}
	case *ir.PrimCall:
		for _, a := range e.Args {
			walkExpr(a, f)
		}
	}
}

func convertVec[S, T floatT | int64](a operand[S]) vf[T] {
	return func(fr *frame, x0 int64, dst []T) []T {
		av := a.eval(fr, x0, len(dst))
		for i := range dst {
			dst[i] = T(av[i])
		}
		return dst
	}
}

func vecFloatSelect[T floatT](vc *vcomp, cond, t, f ir.PrimExpr) vf[T] {
	cv := intOperand(vc, cond)
	a, b := floatOperand[T](vc, t), floatOperand[T](vc, f)
	return func(fr *frame, x0 int64, dst []T) []T {
		n := len(dst)
		cs := cv.materialize(fr, x0, n)
		av, bv := a.materialize(fr, x0, n), b.materialize(fr, x0, n)
		for i := range dst {
			if cs[i] != 0 {
				dst[i] = av[i]
			} else {
				dst[i] = bv[i]
			}
		}
		return dst
	}
}

func vecFloatBinary[T floatT](vc *vcomp, e *ir.Binary) vf[T] {
	a, b := floatOperand[T](vc, e.A), floatOperand[T](vc, e.B)
	var op func(x, y T) T
	switch e.Op {
	case ir.OpAdd:
		op = func(x, y T) T { return x + y }
	case ir.OpSub:
		op = func(x, y T) T { return x - y }
	case ir.OpMul:
		op = func(x, y T) T { return x * y }
	case ir.OpDiv:
		op = func(x, y T) T { return x / y }
	case ir.OpMin:
		op = func(x, y T) T { return min(x, y) }
	case ir.OpMax:
		op = func(x, y T) T { return max(x, y) }
	default:
		// The rest is computed in float64, as the scalar path does.
		f := floatBinop(e.Op)
		if f == nil {
			vc.no("float operator")
		}
		op = func(x, y T) T { return T(f(float64(x), float64(y))) }
	}
	vv, vs, sv := lanesVV[T](e.Op), lanesVS[T](e.Op), lanesSV[T](e.Op)
	switch {
	case a.vec != nil && b.vec != nil:
		if vv == nil {
			vv = func(dst, x, y []T) {
				x, y = x[:len(dst)], y[:len(dst)]
				for i := range dst {
					dst[i] = op(x[i], y[i])
				}
			}
		}
		return func(fr *frame, x0 int64, dst []T) []T {
			n := len(dst)
			vv(dst, a.eval(fr, x0, n), b.eval(fr, x0, n))
			return dst
		}
	case a.vec != nil:
		if vs == nil {
			vs = func(dst, x []T, s T) {
				x = x[:len(dst)]
				for i := range dst {
					dst[i] = op(x[i], s)
				}
			}
		}
		return func(fr *frame, x0 int64, dst []T) []T {
			vs(dst, a.eval(fr, x0, len(dst)), b.inv(fr))
			return dst
		}
	case b.vec != nil:
		if sv == nil {
			sv = func(dst, y []T, s T) {
				y = y[:len(dst)]
				for i := range dst {
					dst[i] = op(s, y[i])
				}
			}
		}
		return func(fr *frame, x0 int64, dst []T) []T {
			sv(dst, b.eval(fr, x0, len(dst)), a.inv(fr))
			return dst
		}
	}
	return func(fr *frame, x0 int64, dst []T) []T {
		v := op(a.inv(fr), b.inv(fr))
		for i := range dst {
			dst[i] = v
		}
		return dst
	}
}

// lanesVV, lanesVS and lanesSV are the tuned loops of the common
// operators (vector-vector, vector-scalar, scalar-vector); nil for others.
func lanesVV[T floatT](op ir.BinaryOp) func(dst, x, y []T) {
	var z T
	if _, f32 := any(z).(float32); f32 {
		// vm/blas's AVX2 loops (plain Go elsewhere), same IEEE results.
		var f func(dst, x, y []float32)
		switch op {
		case ir.OpAdd:
			f = blas.AddF32
		case ir.OpSub:
			f = blas.SubF32
		case ir.OpMul:
			f = blas.MulF32
		case ir.OpDiv:
			f = blas.DivF32
		}
		if f != nil {
			return any(f).(func(dst, x, y []T))
		}
	}
	switch op {
	case ir.OpAdd:
		return addVV[T]
	case ir.OpSub:
		return func(dst, x, y []T) {
			x, y = x[:len(dst)], y[:len(dst)]
			for i := range dst {
				dst[i] = x[i] - y[i]
			}
		}
	case ir.OpMul:
		return func(dst, x, y []T) {
			x, y = x[:len(dst)], y[:len(dst)]
			for i := range dst {
				dst[i] = x[i] * y[i]
			}
		}
	case ir.OpDiv:
		return func(dst, x, y []T) {
			x, y = x[:len(dst)], y[:len(dst)]
			for i := range dst {
				dst[i] = x[i] / y[i]
			}
		}
	case ir.OpMax:
		return func(dst, x, y []T) {
			x, y = x[:len(dst)], y[:len(dst)]
			for i := range dst {
				dst[i] = max(x[i], y[i])
			}
		}
	}
	return nil
}

func lanesVS[T floatT](op ir.BinaryOp) func(dst, x []T, s T) {
	var z T
	if _, f32 := any(z).(float32); f32 {
		var f func(dst, x []float32, s float32)
		switch op {
		case ir.OpAdd:
			f = blas.AddScalarF32
		case ir.OpSub:
			// x - s is x + (-s) exactly in IEEE arithmetic.
			f = func(dst, x []float32, s float32) { blas.AddScalarF32(dst, x, -s) }
		case ir.OpMul:
			f = blas.ScaleF32
		}
		if f != nil {
			return any(f).(func(dst, x []T, s T))
		}
	}
	switch op {
	case ir.OpAdd:
		return func(dst, x []T, s T) {
			x = x[:len(dst)]
			for i := range dst {
				dst[i] = x[i] + s
			}
		}
	case ir.OpSub:
		return func(dst, x []T, s T) {
			x = x[:len(dst)]
			for i := range dst {
				dst[i] = x[i] - s
			}
		}
	case ir.OpMul:
		return func(dst, x []T, s T) {
			x = x[:len(dst)]
			for i := range dst {
				dst[i] = x[i] * s
			}
		}
	case ir.OpDiv:
		return func(dst, x []T, s T) {
			x = x[:len(dst)]
			for i := range dst {
				dst[i] = x[i] / s
			}
		}
	case ir.OpMax:
		return func(dst, x []T, s T) {
			x = x[:len(dst)]
			for i := range dst {
				dst[i] = max(x[i], s)
			}
		}
	case ir.OpMin:
		return func(dst, x []T, s T) {
			x = x[:len(dst)]
			for i := range dst {
				dst[i] = min(x[i], s)
			}
		}
	}
	return nil
}

// lanesSV computes s op y[i].
func lanesSV[T floatT](op ir.BinaryOp) func(dst, y []T, s T) {
	switch op {
	case ir.OpAdd, ir.OpMul, ir.OpMax, ir.OpMin:
		return lanesVS[T](op) // commutative, NaN included
	case ir.OpSub:
		return func(dst, y []T, s T) {
			y = y[:len(dst)]
			for i := range dst {
				dst[i] = s - y[i]
			}
		}
	case ir.OpDiv:
		return func(dst, y []T, s T) {
			y = y[:len(dst)]
			for i := range dst {
				dst[i] = s / y[i]
			}
		}
	}
	return nil
}

func addVV[T floatT](dst, x, y []T) {
	x, y = x[:len(dst)], y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] + y[i]
	}
}

// vecInt compiles a varying integer or boolean expression (lanes hold
// values wrapped to the expression's type, booleans as 0/1).
func (vc *vcomp) vecInt(e ir.PrimExpr) vf[int64] {
	dt := e.DType()
	if dt.Lanes > 1 || (dt.IsUInt() && dt.Bits == 64) {
		vc.no("int type")
	}
	switch e := e.(type) {
	case *ir.PrimVar:
		if e == vc.x {
			return func(fr *frame, x0 int64, dst []int64) []int64 {
				for i := range dst {
					dst[i] = x0 + int64(i)
				}
				return dst
			}
		}
		if s, ok := vc.sub[e]; ok {
			return vc.vecInt(s)
		}
	case *ir.BufferLoad:
		return vc.loadInts(e)
	case *ir.Not:
		a := intOperand(vc, e.A)
		return func(fr *frame, x0 int64, dst []int64) []int64 {
			av := a.eval(fr, x0, len(dst))
			for i := range dst {
				dst[i] = av[i] ^ 1
			}
			return dst
		}
	case *ir.Cast:
		return vc.vecIntCast(e)
	case *ir.Select:
		cv, a, b := intOperand(vc, e.Cond), intOperand(vc, e.True), intOperand(vc, e.False)
		return func(fr *frame, x0 int64, dst []int64) []int64 {
			n := len(dst)
			cs, av, bv := cv.materialize(fr, x0, n), a.materialize(fr, x0, n), b.materialize(fr, x0, n)
			for i := range dst {
				if cs[i] != 0 {
					dst[i] = av[i]
				} else {
					dst[i] = bv[i]
				}
			}
			return dst
		}
	case *ir.Binary:
		return vc.vecIntBinary(e)
	case *ir.PrimCall:
		if e.Op == "likely" {
			return vc.vecInt(e.Args[0])
		}
	}
	vc.no("int expression")
	return nil
}

func (vc *vcomp) vecIntCast(e *ir.Cast) vf[int64] {
	from := e.Value.DType()
	w := wrapInt(e.Type)
	if e.Type.IsBool() {
		w = func(v int64) int64 { return b2i(v != 0) }
	}
	if !from.IsFloat() {
		return wrapVec(vc.vecInt(e.Value), w)
	}
	if e.Type.IsBool() {
		vc.no("float to bool")
	}
	switch storageOf(from) {
	case stF32:
		return wrapVec(convertVec[float32, int64](floatOperand[float32](vc, e.Value)), w)
	case stF64:
		return wrapVec(convertVec[float64, int64](floatOperand[float64](vc, e.Value)), w)
	}
	vc.no("cast from half")
	return nil
}

func wrapVec(v vf[int64], w func(int64) int64) vf[int64] {
	if w == nil {
		return v
	}
	return func(fr *frame, x0 int64, dst []int64) []int64 {
		r := v(fr, x0, dst)
		if len(r) > 0 && &r[0] != &dst[0] {
			copy(dst, r)
		}
		for i := range dst {
			dst[i] = w(dst[i])
		}
		return dst
	}
}

func (vc *vcomp) vecIntBinary(e *ir.Binary) vf[int64] {
	var op func(a, b int64) int64
	at := e.A.DType()
	if e.Op.IsCompare() && at.IsFloat() {
		cmp := floatCompare(e.Op)
		switch storageOf(at) {
		case stF32:
			return cmpVec(floatOperand[float32](vc, e.A), floatOperand[float32](vc, e.B), func(x, y float32) bool { return cmp(float64(x), float64(y)) })
		case stF64:
			return cmpVec(floatOperand[float64](vc, e.A), floatOperand[float64](vc, e.B), cmp)
		}
		vc.no("half compare")
	}
	if at.IsUInt() && at.Bits == 64 {
		vc.no("uint64")
	}
	a, b := intOperand(vc, e.A), intOperand(vc, e.B)
	switch {
	case e.Op.IsCompare():
		return cmpVec(a, b, intCompare(e.Op))
	case e.Op == ir.OpAnd:
		op = func(x, y int64) int64 { return x & y }
	case e.Op == ir.OpOr:
		op = func(x, y int64) int64 { return x | y }
	default:
		op = intBinop(e.Op, e.DType().IsUInt())
		if op == nil {
			vc.no("int operator")
		}
		if w := wrapInt(e.DType()); w != nil {
			raw := op
			op = func(x, y int64) int64 { return w(raw(x, y)) }
		}
	}
	return func(fr *frame, x0 int64, dst []int64) []int64 {
		n := len(dst)
		av, bv := a.materialize(fr, x0, n), b.materialize(fr, x0, n)
		for i := range dst {
			dst[i] = op(av[i], bv[i])
		}
		return dst
	}
}

func cmpVec[T floatT | int64](a, b operand[T], cmp func(x, y T) bool) vf[int64] {
	return func(fr *frame, x0 int64, dst []int64) []int64 {
		n := len(dst)
		av, bv := a.materialize(fr, x0, n), b.materialize(fr, x0, n)
		for i := range dst {
			dst[i] = b2i(cmp(av[i], bv[i]))
		}
		return dst
	}
}

func floatCompare(op ir.BinaryOp) func(x, y float64) bool {
	switch op {
	case ir.OpEQ:
		return func(x, y float64) bool { return x == y }
	case ir.OpNE:
		return func(x, y float64) bool { return x != y }
	case ir.OpLT:
		return func(x, y float64) bool { return x < y }
	case ir.OpLE:
		return func(x, y float64) bool { return x <= y }
	case ir.OpGT:
		return func(x, y float64) bool { return x > y }
	}
	return func(x, y float64) bool { return x >= y }
}

func intCompare(op ir.BinaryOp) func(x, y int64) bool {
	switch op {
	case ir.OpEQ:
		return func(x, y int64) bool { return x == y }
	case ir.OpNE:
		return func(x, y int64) bool { return x != y }
	case ir.OpLT:
		return func(x, y int64) bool { return x < y }
	case ir.OpLE:
		return func(x, y int64) bool { return x <= y }
	case ir.OpGT:
		return func(x, y int64) bool { return x > y }
	}
	return func(x, y int64) bool { return x >= y }
}

type intS interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32
}

func (vc *vcomp) loadInts(e *ir.BufferLoad) vf[int64] {
	if !vc.affine(e.Indices) {
		switch storageOf(e.Buffer.DType) {
		case stI32:
			return gather[int32, int64](vc, e, func(bd *bufData) []int32 { return bd.i32 })
		case stI64:
			return gather[int64, int64](vc, e, func(bd *bufData) []int64 { return bd.i64 })
		}
		vc.no("non-affine index")
	}
	a := vc.addr(e.Buffer, e.Indices, e)
	switch storageOf(e.Buffer.DType) {
	case stI8:
		return gatherInts(a, func(bd *bufData) []int8 { return bd.i8 })
	case stI16:
		return gatherInts(a, func(bd *bufData) []int16 { return bd.i16 })
	case stI32:
		return gatherInts(a, func(bd *bufData) []int32 { return bd.i32 })
	case stI64:
		return gatherInts(a, func(bd *bufData) []int64 { return bd.i64 })
	case stU8:
		g := gatherInts(a, func(bd *bufData) []uint8 { return bd.u8 })
		if e.Buffer.DType.IsBool() {
			return wrapVec(g, func(v int64) int64 { return v & 1 })
		}
		return g
	case stU16:
		return gatherInts(a, func(bd *bufData) []uint16 { return bd.u16 })
	case stU32:
		return gatherInts(a, func(bd *bufData) []uint32 { return bd.u32 })
	}
	vc.no("int load type")
	return nil
}

func gatherInts[S intS](a *vaddr, get func(*bufData) []S) vf[int64] {
	return func(fr *frame, x0 int64, dst []int64) []int64 {
		n := len(dst)
		off, step := a.at(fr, x0, n)
		src := get(&fr.bufs[a.buf])
		_ = src[off+step*int64(n-1)]
		for i := range dst {
			dst[i] = int64(src[off])
			off += step
		}
		return dst
	}
}

func scatterInts[S intS](a *vaddr, get func(*bufData) []S, v operand[int64]) vstmt {
	return func(fr *frame, x0 int64, n int) {
		off, step := a.at(fr, x0, n)
		vals := v.materialize(fr, x0, n)
		dst := get(&fr.bufs[a.buf])
		_ = dst[off+step*int64(n-1)]
		for _, x := range vals {
			dst[off] = S(x)
			off += step
		}
	}
}

// storeFloat compiles an elementwise store of a float buffer.
func storeFloat[T floatT](vc *vcomp, s *ir.BufferStore, a *vaddr, get func(*bufData) []T) vstmt {
	v := floatOperand[T](vc, s.Value)
	return func(fr *frame, x0 int64, n int) {
		off, step := a.at(fr, x0, n)
		buf := get(&fr.bufs[a.buf])
		if step == 1 {
			dst := buf[off : off+int64(n)]
			if v.vec == nil {
				x := v.inv(fr)
				for i := range dst {
					dst[i] = x
				}
				return
			}
			if r := v.vec(fr, x0, dst); &r[0] != &dst[0] {
				copy(dst, r)
			}
			return
		}
		vals := v.materialize(fr, x0, n)
		_ = buf[off+step*int64(n-1)]
		for _, x := range vals {
			buf[off] = x
			off += step
		}
	}
}

// reduceFloat compiles target = target op e with target invariant in the
// loop: the chunk's values of e are combined in iteration order, so the
// result is bit-identical to the scalar loop.
func reduceFloat[T floatT](vc *vcomp, a *vaddr, get func(*bufData) []T, op ir.BinaryOp, e ir.PrimExpr) vstmt {
	v := floatOperand[T](vc, e)
	var combine func(acc T, xs []T) T
	switch op {
	case ir.OpAdd:
		combine = func(acc T, xs []T) T {
			for _, x := range xs {
				acc += x
			}
			return acc
		}
	case ir.OpMul:
		combine = func(acc T, xs []T) T {
			for _, x := range xs {
				acc *= x
			}
			return acc
		}
	case ir.OpMax:
		combine = func(acc T, xs []T) T {
			for _, x := range xs {
				acc = max(acc, x)
			}
			return acc
		}
	case ir.OpMin:
		combine = func(acc T, xs []T) T {
			for _, x := range xs {
				acc = min(acc, x)
			}
			return acc
		}
	}
	return func(fr *frame, x0 int64, n int) {
		off, _ := a.at(fr, x0, 1)
		buf := get(&fr.bufs[a.buf])
		buf[off] = combine(buf[off], v.materialize(fr, x0, n))
	}
}

// reduceInt is reduceFloat for integer buffers, via scalar load and store.
func reduceInt(vc *vcomp, s *ir.BufferStore, op ir.BinaryOp, e ir.PrimExpr) vstmt {
	c := vc.c
	v := intOperand(vc, e)
	self := c.compileI(&ir.BufferLoad{Buffer: s.Buffer, Indices: s.Indices})
	acc := ir.NewPrimVar("acc", s.Buffer.DType)
	c.defineVar(acc)
	slot := c.ints[acc]
	set := c.store(&ir.BufferStore{Buffer: s.Buffer, Indices: s.Indices, Value: acc})
	f := intBinop(op, s.Buffer.DType.IsUInt())
	w := wrapInt(s.Buffer.DType)
	return func(fr *frame, x0 int64, n int) {
		r := self(fr)
		for _, x := range v.materialize(fr, x0, n) {
			r = f(r, x)
			if w != nil {
				r = w(r)
			}
		}
		fr.ints[slot] = r
		set(fr)
	}
}
