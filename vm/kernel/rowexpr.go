package kernel

import (
	"math"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/vm/blas"
)

// Vector expressions of row kernels. An fp32 expression that mentions the
// inner variable compiles to a vexpr: a closure producing elements
// [lo, hi) of the inner range (hi-lo <= rowChunk) as a slice, either a view
// of a buffer (a contiguous load) or a temporary holding the result of a
// vm/blas call: + - * / max min on vectors and per-row scalars, and the
// transcendental intrinsics through vm/blas's vector math. Subtrees
// without the inner variable are per-row scalars (compileF, evaluated once
// per row into rowState.sc).
//
// Temporaries are numbered like a stack: a node at depth t writes temp t
// (its left operand's too, in place) and its right operand uses t+1, so an
// expression needs depth+2 of them. The root writes the destination
// directly when the caller passes one.
//
// +, -, *, / and max/min give the general path's results exactly (float32
// arithmetic rounds the same either way); the intrinsics are within the
// error vm/blas states for them (the general path calls Go's math in
// float64).

// vexpr computes elements [lo, hi) into dst when dst is not nil (and may
// return a view instead when the expression is a plain load).
type vexpr func(rs *rowState, lo, hi int, dst []float32) []float32

// rowCompiler compiles one nest's expressions.
type rowCompiler struct {
	c       *compiler
	n       *nest
	rn      *rowNest
	maxTemp int
}

// rowOperand is a compiled subexpression: a vector or a per-row scalar.
type rowOperand struct {
	vec vexpr
	sc  int // scalar number when vec is nil
}

func (rc *rowCompiler) isInner(e ir.PrimExpr) bool {
	return rc.n.varIndex(e) == rc.rn.inner
}

// class classifies an index for grouping.
func (rc *rowCompiler) class(e ir.PrimExpr) idxClass {
	if k, ok := constI(e); ok {
		if k == 0 {
			return idxClass{kind: clsZero}
		}
		return idxClass{kind: clsConst, n: k}
	}
	v := rc.n.varIndex(e)
	if v < 0 {
		return idxClass{kind: clsOther}
	}
	switch rc.rn.roles[v] {
	case roleZero:
		return idxClass{kind: clsZero}
	case roleInner:
		return idxClass{kind: clsInner}
	case roleRow:
		for p, r := range rc.rn.rows {
			if r == v {
				return idxClass{kind: clsRow, n: int64(p)}
			}
		}
	}
	return idxClass{kind: clsOther}
}

func (rc *rowCompiler) record(b *ir.Buffer, idx []ir.PrimExpr) {
	cl := make([]idxClass, len(idx))
	for d, e := range idx {
		cl[d] = rc.class(e)
	}
	bi := rc.c.bufIdx[b]
	rc.rn.classes[bi] = append(rc.rn.classes[bi], cl)
}

// classify records the index classes of every load in e.
func (rc *rowCompiler) classify(e ir.PrimExpr) bool {
	walkExpr(e, func(x ir.PrimExpr) {
		if l, ok := x.(*ir.BufferLoad); ok {
			rc.record(l.Buffer, l.Indices)
		}
	})
	return true
}

// access adds a vector access (inner: the inner variable is the last
// index) or the store of a reduce-form nest; every index a variable of the
// nest or a constant.
func (rc *rowCompiler) access(b *ir.Buffer, idx []ir.PrimExpr, inner bool) (int, bool) {
	if storageOf(b.DType) != stF32 || len(idx) == 0 {
		return 0, false
	}
	bi, ok := rc.c.bufIdx[b]
	if !ok {
		return 0, false
	}
	a := vAccess{buf: bi, inner: inner}
	for d, e := range idx {
		if rc.isInner(e) {
			if !inner || d != len(idx)-1 {
				return 0, false
			}
			a.idx = append(a.idx, vIndex{terms: []vTerm{{v: rc.rn.inner, a: 1}}})
			continue
		}
		if inner && d == len(idx)-1 {
			return 0, false
		}
		x, ok := rc.affine(e)
		if !ok || mentionsVars(e, []*ir.PrimVar{rc.n.vars[rc.rn.inner]}) {
			return 0, false
		}
		a.idx = append(a.idx, x)
	}
	rc.record(b, idx)
	rc.rn.accesses = append(rc.rn.accesses, a)
	return len(rc.rn.accesses) - 1, true
}

// affine parses an index c + sum a*v over nest variables with constant
// a > 0 (an integer expression of +, * by a constant, variables and
// constants).
func (rc *rowCompiler) affine(e ir.PrimExpr) (vIndex, bool) {
	if k, ok := constI(e); ok {
		return vIndex{c: k}, true
	}
	if v := rc.n.varIndex(e); v >= 0 {
		return vIndex{terms: []vTerm{{v: v, a: 1}}}, true
	}
	b, ok := e.(*ir.Binary)
	if !ok {
		return vIndex{}, false
	}
	switch b.Op {
	case ir.OpAdd:
		x, ok1 := rc.affine(b.A)
		y, ok2 := rc.affine(b.B)
		if !ok1 || !ok2 {
			return vIndex{}, false
		}
		return vIndex{terms: append(x.terms[:len(x.terms):len(x.terms)], y.terms...), c: x.c + y.c}, true
	case ir.OpMul:
		x, k := b.A, b.B
		if _, isConst := constI(x); isConst {
			x, k = k, x
		}
		a, ok := constI(k)
		if !ok || a <= 0 {
			return vIndex{}, false
		}
		v, ok := rc.affine(x)
		if !ok {
			return vIndex{}, false
		}
		out := vIndex{c: v.c * a}
		for _, t := range v.terms {
			out.terms = append(out.terms, vTerm{v: t.v, a: t.a * a})
		}
		return out, true
	}
	return vIndex{}, false
}

// vector compiles e as a vector (a scalar is broadcast).
func (rc *rowCompiler) vector(e ir.PrimExpr, t int) (vexpr, bool) {
	op, ok := rc.operand(e, t)
	if !ok {
		return nil, false
	}
	if op.vec != nil {
		return op.vec, true
	}
	rc.useTemp(t)
	k := op.sc
	return func(rs *rowState, lo, hi int, dst []float32) []float32 {
		d := rs.dest(dst, t, hi-lo)
		s := rs.sc[k]
		for i := range d {
			d[i] = s
		}
		return d
	}, true
}

func (rc *rowCompiler) useTemp(t int) { rc.maxTemp = max(rc.maxTemp, t) }

// dest is dst, or temp t cut to n elements.
func (rs *rowState) dest(dst []float32, t, n int) []float32 {
	if dst != nil {
		return dst[:n]
	}
	return rs.tmp[t][:n]
}

func (rc *rowCompiler) operand(e ir.PrimExpr, t int) (rowOperand, bool) {
	if e.DType() != ir.Float32 {
		return rowOperand{}, false
	}
	inner := rc.n.vars[rc.rn.inner]
	if !mentionsVars(e, []*ir.PrimVar{inner}) {
		rc.classify(e)
		if hasLoad(e) || mentionsVars(e, rc.n.vars) {
			rc.rn.rowScalars = true
		}
		rc.rn.scalars = append(rc.rn.scalars, rc.c.compileF(e))
		return rowOperand{sc: len(rc.rn.scalars) - 1}, true
	}
	if x, f := matchGelu(e); x != nil {
		return rc.unary(f, x, t)
	}
	if op, ok := rc.norm(e, t); ok {
		return op, true
	}
	switch e := e.(type) {
	case *ir.BufferLoad:
		a, ok := rc.access(e.Buffer, e.Indices, true)
		if !ok {
			return rowOperand{}, false
		}
		buf := rc.rn.accesses[a].buf
		return rowOperand{vec: func(rs *rowState, lo, hi int, _ []float32) []float32 {
			off := rs.off[a]
			return rs.fr.bufs[buf].f32[off+lo : off+hi]
		}}, true
	case *ir.Binary:
		return rc.binary(e, t)
	case *ir.PrimCall:
		return rc.call(e, t)
	}
	return rowOperand{}, false
}

func (rc *rowCompiler) binary(e *ir.Binary, t int) (rowOperand, bool) {
	switch e.Op {
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDiv, ir.OpMax, ir.OpMin:
	default:
		return rowOperand{}, false
	}
	x, ok := rc.operand(e.A, t)
	if !ok {
		return rowOperand{}, false
	}
	y, ok := rc.operand(e.B, t+1)
	if !ok {
		return rowOperand{}, false
	}
	rc.useTemp(t + 1)
	op := e.Op
	switch {
	case x.vec != nil && y.vec != nil:
		f := vecVec(op)
		return rowOperand{vec: func(rs *rowState, lo, hi int, dst []float32) []float32 {
			a := x.vec(rs, lo, hi, nil)
			b := y.vec(rs, lo, hi, nil)
			d := rs.dest(dst, t, hi-lo)
			f(d, a, b)
			return d
		}}, true
	case x.vec != nil:
		k := y.sc
		return rowOperand{vec: func(rs *rowState, lo, hi int, dst []float32) []float32 {
			a := x.vec(rs, lo, hi, nil)
			d := rs.dest(dst, t, hi-lo)
			vecScalar(op, d, a, rs.sc[k], rs.tmp[t+1])
			return d
		}}, true
	default:
		k := x.sc
		return rowOperand{vec: func(rs *rowState, lo, hi int, dst []float32) []float32 {
			b := y.vec(rs, lo, hi, nil)
			d := rs.dest(dst, t, hi-lo)
			scalarVec(op, d, rs.sc[k], b, rs.tmp[t+1])
			return d
		}}, true
	}
}

func vecVec(op ir.BinaryOp) func(dst, a, b []float32) {
	switch op {
	case ir.OpAdd:
		return blas.AddF32
	case ir.OpSub:
		return blas.SubF32
	case ir.OpMul:
		return blas.MulF32
	case ir.OpDiv:
		return blas.DivF32
	case ir.OpMax:
		return blas.MaximumF32
	default:
		return blas.MinimumF32
	}
}

// vecScalar sets d = a op s; scratch holds a broadcast s where vm/blas has
// no scalar form.
func vecScalar(op ir.BinaryOp, d, a []float32, s float32, scratch []float32) {
	switch op {
	case ir.OpAdd:
		blas.AddScalarF32(d, a, s)
	case ir.OpSub:
		blas.AddScalarF32(d, a, -s) // a - s == a + (-s) exactly
	case ir.OpMul:
		blas.ScaleF32(d, a, s)
	case ir.OpDiv:
		if r, ok := exactReciprocal(s); ok {
			blas.ScaleF32(d, a, r)
			return
		}
		b := splat(scratch, s, len(d))
		blas.DivF32(d, a, b)
	case ir.OpMax:
		if s == s {
			blas.MaxScalarF32(d, a, s)
			return
		}
		blas.MaximumF32(d, a, splat(scratch, s, len(d)))
	default:
		blas.MinimumF32(d, a, splat(scratch, s, len(d)))
	}
}

// exactReciprocal returns 1/s when s is a normal power of two (attention's
// scale 1/sqrt(64) = 1/8, say): then 1/s is exactly representable (down
// to 2^-127, a subnormal), a*(1/s) is the same real number as a/s and so
// rounds to the same float32 for every a (±0, ±Inf and NaN included),
// and a multiply costs a fraction of a divide.
func exactReciprocal(s float32) (float32, bool) {
	bits := math.Float32bits(s)
	if exp := bits >> 23 & 0xff; bits&(1<<23-1) != 0 || exp == 0 || exp == 0xff {
		return 0, false
	}
	return 1 / s, true
}

// scalarVec sets d = s op b.
func scalarVec(op ir.BinaryOp, d []float32, s float32, b, scratch []float32) {
	switch op {
	case ir.OpAdd, ir.OpMul, ir.OpMax, ir.OpMin:
		vecScalar(op, d, b, s, scratch)
	case ir.OpSub:
		blas.AddScalarF32(d, b, -s) // b - s, then negated: s - b exactly
		blas.ScaleF32(d, d, -1)
	case ir.OpDiv:
		blas.DivF32(d, splat(scratch, s, len(d)), b)
	}
}

// splat sets s[:n] to v (1*v is exactly v, even for ±0, ±Inf and NaN) on
// the vector unit.
func splat(s []float32, v float32, n int) []float32 {
	s = s[:n]
	blas.ScaleF32(s, ones[:n], v)
	return s
}

var ones = func() []float32 {
	s := make([]float32, rowChunk)
	for i := range s {
		s[i] = 1
	}
	return s
}()

// vectorMath maps TIR intrinsics to vm/blas's vector math.
var vectorMath = map[string]func(dst, x []float32){
	"exp": blas.ExpF32, "log": blas.LogF32, "erf": blas.ErfF32, "tanh": blas.TanhF32,
	"sigmoid": blas.SigmoidF32, "sqrt": blas.SqrtF32, "rsqrt": blas.RsqrtF32,
}

func (rc *rowCompiler) call(e *ir.PrimCall, t int) (rowOperand, bool) {
	if e.Op == "pow" && len(e.Args) == 2 {
		return rc.pow(e.Args[0], e.Args[1], t)
	}
	if len(e.Args) != 1 {
		return rowOperand{}, false
	}
	f := vectorMath[e.Op]
	if f == nil {
		g, ok := unaryMath[e.Op]
		if !ok {
			return rowOperand{}, false
		}
		// Other intrinsics element by element (Go's math, as the general
		// path).
		f = func(dst, x []float32) {
			for i, v := range x {
				dst[i] = float32(g(float64(v)))
			}
		}
	}
	return rc.unary(f, e.Args[0], t)
}

// unary applies f to the vector e.
func (rc *rowCompiler) unary(f func(dst, x []float32), e ir.PrimExpr, t int) (rowOperand, bool) {
	x, ok := rc.vector(e, t)
	if !ok {
		return rowOperand{}, false
	}
	rc.useTemp(t)
	return rowOperand{vec: func(rs *rowState, lo, hi int, dst []float32) []float32 {
		a := x(rs, lo, hi, nil)
		d := rs.dest(dst, t, hi-lo)
		f(d, a)
		return d
	}}, true
}

// combine folds a chunk into a reduce-form accumulator.
func combine(op ir.BinaryOp, acc float32, v []float32) float32 {
	switch op {
	case ir.OpAdd:
		return acc + blas.SumF32(v)
	case ir.OpMax:
		return max(acc, blas.MaxF32(v))
	default:
		m := acc
		for _, x := range v {
			m = min(m, x)
		}
		return m
	}
}

// matchGelu recognises GELU's two legalized forms, whatever the operand
// order: x * (0.5 + erf(x * 1/√2) * 0.5) (exact) and
// 0.5 * x * (1 + tanh(√(2/π) * (x + 0.044715 * (x*x*x)))) (tanh form),
// returning x and the fused vm/blas function (one pass instead of five or
// eight; within vm/blas's stated error of the formula).
func matchGelu(e ir.PrimExpr) (ir.PrimExpr, func(dst, x []float32)) {
	var x, rest ir.PrimExpr
	if !mulOf(e, &x, &rest) {
		return nil, nil
	}
	try := func(x, rest ir.PrimExpr) (ir.PrimExpr, func(dst, x []float32)) {
		// exact: rest = 0.5 + erf(x * c) * 0.5
		var a, b ir.PrimExpr
		if addOf(rest, &a, &b) {
			for _, p := range [][2]ir.PrimExpr{{a, b}, {b, a}} {
				var k, call ir.PrimExpr
				if isConst(p[0], 0.5) && mulOf(p[1], &k, &call) {
					for _, q := range [][2]ir.PrimExpr{{k, call}, {call, k}} {
						if isConst(q[0], 0.5) {
							if arg := intrinsicArg(q[1], "erf"); arg != nil {
								var y, c ir.PrimExpr
								if mulOf(arg, &y, &c) && scaledBy(y, c, x, 1/math.Sqrt2) {
									return x, geluExact
								}
							}
						}
					}
				}
			}
		}
		return nil, nil
	}
	if r, f := try(x, rest); r != nil {
		return r, f
	}
	if r, f := try(rest, x); r != nil {
		return r, f
	}
	// tanh form: (0.5 * x) * (1 + tanh(c * (x + 0.044715 * (x*x*x))))
	for _, p := range [][2]ir.PrimExpr{{x, rest}, {rest, x}} {
		var h, v ir.PrimExpr
		if !mulOf(p[0], &h, &v) {
			continue
		}
		for _, q := range [][2]ir.PrimExpr{{h, v}, {v, h}} {
			if !isConst(q[0], 0.5) {
				continue
			}
			x := q[1]
			var one, th ir.PrimExpr
			if !addOf(p[1], &one, &th) {
				continue
			}
			if !isConst(one, 1) {
				one, th = th, one
			}
			arg := intrinsicArg(th, "tanh")
			if !isConst(one, 1) || arg == nil {
				continue
			}
			var inner, c ir.PrimExpr
			if !mulOf(arg, &inner, &c) {
				continue
			}
			if !isConst(c, math.Sqrt(2/math.Pi)) {
				inner, c = c, inner
			}
			var lin, cubic ir.PrimExpr
			if !isConst(c, math.Sqrt(2/math.Pi)) || !addOf(inner, &lin, &cubic) {
				continue
			}
			if !sameExpr(lin, x) {
				lin, cubic = cubic, lin
			}
			var k, cube ir.PrimExpr
			if !sameExpr(lin, x) || !mulOf(cubic, &k, &cube) {
				continue
			}
			if !isConst(k, 0.044715) {
				k, cube = cube, k
			}
			var sq, x3 ir.PrimExpr
			if isConst(k, 0.044715) && mulOf(cube, &sq, &x3) && sameExpr(x3, x) {
				var x1, x2 ir.PrimExpr
				if mulOf(sq, &x1, &x2) && sameExpr(x1, x) && sameExpr(x2, x) {
					return x, geluTanh
				}
			}
		}
	}
	return nil, nil
}

var (
	geluExact = blas.GeluF32
	geluTanh  = blas.GeluTanhF32
)

func mulOf(e ir.PrimExpr, a, b *ir.PrimExpr) bool { return binOf(e, ir.OpMul, a, b) }
func addOf(e ir.PrimExpr, a, b *ir.PrimExpr) bool { return binOf(e, ir.OpAdd, a, b) }

func binOf(e ir.PrimExpr, op ir.BinaryOp, a, b *ir.PrimExpr) bool {
	bin, ok := e.(*ir.Binary)
	if !ok || bin.Op != op || bin.DType() != ir.Float32 {
		return false
	}
	*a, *b = bin.A, bin.B
	return true
}

// isConst reports whether e is a float constant within float32 rounding
// of v.
func isConst(e ir.PrimExpr, v float64) bool {
	c, ok := e.(*ir.FloatImm)
	return ok && math.Abs(c.Value-v) <= 1e-6*math.Abs(v)
}

func intrinsicArg(e ir.PrimExpr, op string) ir.PrimExpr {
	c, ok := e.(*ir.PrimCall)
	if !ok || c.Op != op || len(c.Args) != 1 {
		return nil
	}
	return c.Args[0]
}

// scaledBy reports whether y*c is x times the constant v, in either order.
func scaledBy(y, c, x ir.PrimExpr, v float64) bool {
	return (sameExpr(y, x) && isConst(c, v)) || (sameExpr(c, x) && isConst(y, v))
}

// norm compiles a normalization, ((V - s1) * s2) * W + U with V, W, U
// vectors and s1, s2 per-row scalars, whatever the operand order of the
// multiplies and the add (layer norm; RMS norm is (V * s2) * W, s1 = 0
// and V - 0 = V exactly; U may be absent), as one vm/blas.NormF32 pass
// instead of four.
func (rc *rowCompiler) norm(e ir.PrimExpr, t int) (rowOperand, bool) {
	inner := []*ir.PrimVar{rc.n.vars[rc.rn.inner]}
	isVec := func(x ir.PrimExpr) bool { return mentionsVars(x, inner) }
	var p, u ir.PrimExpr = e, nil
	var a, b ir.PrimExpr
	if addOf(e, &a, &b) {
		p, u = a, b
		if !mulOf(p, new(ir.PrimExpr), new(ir.PrimExpr)) {
			p, u = b, a
		}
		if !isVec(u) {
			return rowOperand{}, false
		}
	}
	// p = q * W, q = (V - s1) * s2 or V * s2.
	if !mulOf(p, &a, &b) {
		return rowOperand{}, false
	}
	var v, s1, s2, w ir.PrimExpr
	for _, pair := range [][2]ir.PrimExpr{{a, b}, {b, a}} {
		q, wc := pair[0], pair[1]
		var c, d ir.PrimExpr
		if !isVec(wc) || !mulOf(q, &c, &d) {
			continue
		}
		if isVec(d) {
			c, d = d, c
		}
		if !isVec(c) || isVec(d) {
			continue
		}
		v, s1, s2, w = c, nil, d, wc
		var x, y ir.PrimExpr
		if binOf(c, ir.OpSub, &x, &y) && isVec(x) && !isVec(y) {
			v, s1 = x, y
		}
		break
	}
	if v == nil {
		return rowOperand{}, false
	}
	vx, ok := rc.vector(v, t)
	if !ok {
		return rowOperand{}, false
	}
	wx, ok := rc.vector(w, t+1)
	if !ok {
		return rowOperand{}, false
	}
	var ux vexpr
	if u != nil {
		if ux, ok = rc.vector(u, t+2); !ok {
			return rowOperand{}, false
		}
	}
	rc.useTemp(t + 2)
	m := -1
	if s1 != nil {
		op, ok := rc.operand(s1, t)
		if !ok || op.vec != nil {
			return rowOperand{}, false
		}
		m = op.sc
	}
	rop, ok := rc.operand(s2, t)
	if !ok || rop.vec != nil {
		return rowOperand{}, false
	}
	r := rop.sc
	return rowOperand{vec: func(rs *rowState, lo, hi int, dst []float32) []float32 {
		x := vx(rs, lo, hi, nil)
		g := wx(rs, lo, hi, nil)
		var h []float32
		if ux != nil {
			h = ux(rs, lo, hi, nil)
		}
		var mean float32
		if m >= 0 {
			mean = rs.sc[m]
		}
		d := rs.dest(dst, t, hi-lo)
		blas.NormF32(d, x, mean, rs.sc[r], g, h)
		return d
	}}, true
}

// pow compiles T.pow(x, y) with x a vector and y a per-row scalar or a
// vector, on vm/blas's PowScalarF32 / PowF32 (math.Pow's results, as the
// general path, within PowMaxULP).
func (rc *rowCompiler) pow(x, y ir.PrimExpr, t int) (rowOperand, bool) {
	xv, ok := rc.vector(x, t)
	if !ok {
		return rowOperand{}, false
	}
	yo, ok := rc.operand(y, t+1)
	if !ok {
		return rowOperand{}, false
	}
	rc.useTemp(t + 1)
	if yo.vec == nil {
		k := yo.sc
		return rowOperand{vec: func(rs *rowState, lo, hi int, dst []float32) []float32 {
			a := xv(rs, lo, hi, nil)
			d := rs.dest(dst, t, hi-lo)
			blas.PowScalarF32(d, a, rs.sc[k])
			return d
		}}, true
	}
	yv := yo.vec
	return rowOperand{vec: func(rs *rowState, lo, hi int, dst []float32) []float32 {
		a := xv(rs, lo, hi, nil)
		b := yv(rs, lo, hi, nil)
		d := rs.dest(dst, t, hi-lo)
		blas.PowF32(d, a, b)
		return d
	}}, true
}
