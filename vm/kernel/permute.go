package kernel

import (
	"slices"

	"github.com/phasec/phasec/ir"
)

// Data movement: a nest whose body copies one element, Out[v...] = In[f(v)],
// with every output index a distinct nest variable (or a constant) and
// every input index affine in the nest variables with non-negative
// coefficients. That covers permute_dims and transpose, reshape (whose
// legalized indices, (v0*64 + v1) // 768 % 128 and the like, the ir
// analyzer reduces to affine form once it knows the loop extents),
// broadcast_to, and the chains FuseTIR writes of them (one nest per op,
// each taking this path). It runs as a strided copy: contiguous runs with
// copy(), and a transpose (the input's unit-stride variable is not the
// output's) in cache-blocked square tiles, so both sides stream through
// whole cache lines. Rows of the outermost variable split across cores
// for large copies. It is reported as "permute". Concatenation (an
// if_then_else chain on one variable, each arm a load) runs as one such
// copy per input over its range of that variable ("concat").

// maxPermRank bounds the nest depth the permute path takes, so its run-time
// plan lives on the stack.
const maxPermRank = 8

// permTile is the side of the transpose tiles: 32 rows of 32 fp32 elements
// of each side (8 KB together) stay in L1.
const permTile = 32

type permute struct {
	k       *Kernel
	out, in int // buffer numbers
	st      storage
	ext     []iexpr                       // extent of each copy variable
	outIdx  []vIndex                      // output dimension -> affine index over the copy variables
	inIdx   []vIndex                      // input dimension -> affine index
	partFn  func(fr *frame, lo, hi int64) // p.part, bound once
}

// permPlan is one call's strides, from the frame's shapes.
type permPlan struct {
	r        int
	ext      [maxPermRank]int64
	os, is   [maxPermRank]int64 // element strides of each variable in Out and In
	ob, ib   int64              // offsets of the all-zero point
	o, i     int                // the output's and the input's fastest variable
	outer    [maxPermRank]int   // the other variables, outermost first
	nOuter   int
	total    int64
	splitVar int // the variable whose range part's [lo, hi) restricts
}

// matchPermute returns the permute fast path of n (nil when n does not
// copy elements). The copy variables are the nest's variables, except
// that a variable of constant extent E that the input indexes through
// v // k or v % k (k dividing E: a reshape splitting a dimension) is
// split into digits v = d0*k1 + d1 (chains of such k give more digits), so
// that both sides are affine in the digits.
func (c *compiler) matchPermute(n *nest) (string, fastPath) {
	st, ok := n.body.(*ir.BufferStore)
	if !ok || n.init != nil {
		return "", nil
	}
	for _, k := range n.kinds {
		if k != ir.IterSpatial {
			return "", nil
		}
	}
	if ld, ok := st.Value.(*ir.BufferLoad); ok {
		if p := c.buildPermute(n.vars, n.ext, st.Buffer, st.Indices, ld); p != nil {
			return "permute", p.run
		}
		return "", nil
	}
	if pieces := c.matchConcat(n, st); pieces != nil {
		return "concat", func(fr *frame) bool {
			for _, p := range pieces {
				if !p.run(fr) {
					return false // the general path redoes the whole nest
				}
			}
			return true
		}
	}
	return "", nil
}

// matchConcat matches concatenation along one variable v, as LegalizeOps
// writes it: Out[..] = if_then_else(v < k1, A[..], if_then_else(v < k2,
// B[.., v - k1 ..], C[.., v - k2 ..])); each piece is a permute over its
// range of v (v = v' + lo, so its indices simplify to affine form).
func (c *compiler) matchConcat(n *nest, st *ir.BufferStore) []*permute {
	e := st.Value
	vi := -1
	var lo int64
	var pieces []*permute
	for {
		call, ok := e.(*ir.PrimCall)
		var hi ir.PrimExpr
		var ld *ir.BufferLoad
		if ok && call.Op == "if_then_else" && len(call.Args) == 3 {
			cond, ok := call.Args[0].(*ir.Binary)
			if !ok || cond.Op != ir.OpLT {
				return nil
			}
			v := n.varIndex(cond.A)
			k, isConst := constI(cond.B)
			if v < 0 || (vi >= 0 && v != vi) || !isConst || k <= lo {
				return nil
			}
			vi, hi = v, cond.B
			if ld, ok = call.Args[1].(*ir.BufferLoad); !ok {
				return nil
			}
			e = call.Args[2]
		} else {
			// The last piece: up to the extent.
			if ld, ok = e.(*ir.BufferLoad); !ok || vi < 0 {
				return nil
			}
			hi = n.ext[vi]
		}
		x := n.vars[vi]
		piece := ir.NewPrimVar(x.Name+"_piece", x.Type)
		shift := map[*ir.PrimVar]ir.PrimExpr{x: ir.NewBinary(ir.OpAdd, piece, ir.NewInt(x.Type, lo))}
		vars := slices.Clone(n.vars)
		vars[vi] = piece
		exts := slices.Clone(n.ext)
		exts[vi] = ir.Simplify(ir.NewBinary(ir.OpSub, hi, ir.NewInt(x.Type, lo)))
		var outIdx, inIdx []ir.PrimExpr
		for _, ix := range st.Indices {
			outIdx = append(outIdx, ir.SubstitutePrim(ix, shift))
		}
		for _, ix := range ld.Indices {
			inIdx = append(inIdx, ir.SubstitutePrim(ix, shift))
		}
		p := c.buildPermute(vars, exts, st.Buffer, outIdx, &ir.BufferLoad{Buffer: ld.Buffer, Indices: inIdx})
		if p == nil {
			return nil
		}
		pieces = append(pieces, p)
		if _, isCall := e.(*ir.PrimCall); !isCall && hi == n.ext[vi] {
			return pieces
		}
		lo, _ = constI(hi)
	}
}

// buildPermute compiles Out[outIdx] = In[ld.Indices] over vars (all
// spatial, extents exts) as a strided copy, nil when it is not one. The
// copy variables are the given variables, except that a variable of
// constant extent E that the input indexes through v // k or v % k (k
// dividing E: a reshape splitting a dimension) is split into digits
// v = d0*k1 + d1 (chains of such k give more digits), so that both sides
// are affine in the digits.
func (c *compiler) buildPermute(vars []*ir.PrimVar, exts []ir.PrimExpr, out *ir.Buffer, outIdx []ir.PrimExpr, ld *ir.BufferLoad) *permute {
	if len(vars) > maxPermRank || len(vars) == 0 || ld.Buffer == out || ld.Buffer.DType != out.DType || storageOf(out.DType) == stNone {
		return nil
	}
	outBuf, ok1 := c.bufIdx[out]
	inBuf, ok2 := c.bufIdx[ld.Buffer]
	if !ok1 || !ok2 {
		return nil
	}
	p := &permute{k: c.k, out: outBuf, in: inBuf, st: storageOf(out.DType)}
	// Every variable stored exactly once, alone in its dimension with an
	// offset (else elements are written twice, or not at all).
	seen := make([]bool, len(vars))
	outVar := make([]int, len(outIdx))
	outC := make([]int64, len(outIdx))
	for d, e := range outIdx {
		outVar[d] = -1
		x, ok := affineIn(vars, ir.Simplify(e))
		if !ok || len(x.terms) > 1 || (len(x.terms) == 1 && x.terms[0].a != 1) {
			return nil
		}
		outC[d] = x.c
		if len(x.terms) == 0 {
			continue
		}
		v := x.terms[0].v
		if seen[v] {
			return nil
		}
		seen[v], outVar[d] = true, v
	}
	for _, s := range seen {
		if !s {
			return nil
		}
	}
	// The copy variables: digits of split variables, others as they are.
	var cvars []*ir.PrimVar
	digits := make([][]vTerm, len(vars)) // variable -> its digits
	an := ir.NewAnalyzer()
	subst := map[*ir.PrimVar]ir.PrimExpr{}
	for v, x := range vars {
		ext, isConst := constI(exts[v])
		chain := splitChain(x, ext, ld.Indices)
		if !isConst || len(chain) == 0 {
			digits[v] = []vTerm{{v: len(cvars), a: 1}}
			cvars = append(cvars, x)
			if isConst {
				an.SetBounds(x, 0, max(ext-1, 0))
				p.ext = append(p.ext, constIexpr(ext))
			} else {
				an.AssumeNonNegative(x)
				p.ext = append(p.ext, c.compileI(exts[v]))
			}
			continue
		}
		// chain k1 < k2 < ... each dividing the next and ext: digits of
		// extents ext/km, ..., k2/k1, k1 with weights km, ..., k1, 1.
		bounds := append(append([]int64{1}, chain...), ext)
		var sum ir.PrimExpr
		for j := len(bounds) - 2; j >= 0; j-- {
			d := ir.NewPrimVar(x.Name+"_digit", x.Type)
			dext := bounds[j+1] / bounds[j]
			an.SetBounds(d, 0, dext-1)
			digits[v] = append(digits[v], vTerm{v: len(cvars), a: bounds[j]})
			cvars = append(cvars, d)
			p.ext = append(p.ext, constIexpr(dext))
			term := ir.PrimExpr(ir.NewBinary(ir.OpMul, d, ir.NewInt(x.Type, bounds[j])))
			if sum == nil {
				sum = term
			} else {
				sum = ir.NewBinary(ir.OpAdd, sum, term)
			}
		}
		subst[x] = sum
	}
	if len(cvars) > maxPermRank {
		return nil
	}
	for d, v := range outVar {
		if v < 0 {
			p.outIdx = append(p.outIdx, vIndex{c: outC[d]})
			continue
		}
		p.outIdx = append(p.outIdx, vIndex{terms: digits[v], c: outC[d]})
	}
	for _, e := range ld.Indices {
		if len(subst) > 0 {
			e = ir.SubstitutePrim(e, subst)
		}
		x, ok := affineIn(cvars, an.Simplify(e))
		if !ok {
			return nil
		}
		p.inIdx = append(p.inIdx, x)
	}
	p.partFn = p.part
	return p
}

func constIexpr(k int64) iexpr { return func(*frame) int64 { return k } }

// splitChain returns the divisors k (1 < k < ext, each dividing the next
// and ext) of the floordiv/floormod by a constant applied to exactly x in
// idx, nil when there are none or they do not form such a chain.
func splitChain(x *ir.PrimVar, ext int64, idx []ir.PrimExpr) []int64 {
	set := map[int64]bool{}
	for _, e := range idx {
		walkExpr(e, func(y ir.PrimExpr) {
			b, ok := y.(*ir.Binary)
			if !ok || (b.Op != ir.OpFloorDiv && b.Op != ir.OpFloorMod) || b.A != x {
				return
			}
			if k, ok := constI(b.B); ok && k > 1 && k < ext {
				set[k] = true
			}
		})
	}
	if len(set) == 0 || ext <= 0 {
		return nil
	}
	var chain []int64
	for k := range set {
		chain = append(chain, k)
	}
	slices.Sort(chain)
	for j, k := range chain {
		next := ext
		if j+1 < len(chain) {
			next = chain[j+1]
		}
		if next%k != 0 {
			return nil
		}
	}
	return chain
}

// affineIn parses e as c + sum a*v over vars, a > 0, c >= 0.
func affineIn(vars []*ir.PrimVar, e ir.PrimExpr) (vIndex, bool) {
	varIndex := func(e ir.PrimExpr) int {
		for i, v := range vars {
			if v == e {
				return i
			}
		}
		return -1
	}
	var x vIndex
	// An explicit stack, not recursion: the sum's depth is the number of
	// its terms.
	stack := []ir.PrimExpr{e}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if k, ok := constI(e); ok {
			x.c += k
			continue
		}
		if v := varIndex(e); v >= 0 {
			x.terms = append(x.terms, vTerm{v: v, a: 1})
			continue
		}
		b, ok := e.(*ir.Binary)
		if !ok {
			return vIndex{}, false
		}
		switch b.Op {
		case ir.OpAdd:
			stack = append(stack, b.A, b.B)
		case ir.OpMul:
			v, k := b.A, b.B
			if _, isConst := constI(v); isConst {
				v, k = k, v
			}
			a, ok1 := constI(k)
			vi := varIndex(v)
			if !ok1 || a <= 0 || vi < 0 {
				return vIndex{}, false
			}
			x.terms = append(x.terms, vTerm{v: vi, a: a})
		default:
			return vIndex{}, false
		}
	}
	return x, x.c >= 0
}

// plan fills pl from fr's shapes; false when an access could leave its
// buffer (the general path then runs and reports it).
func (p *permute) plan(fr *frame, pl *permPlan) bool {
	pl.r = len(p.ext)
	pl.total = 1
	for v, e := range p.ext {
		pl.ext[v] = e(fr)
		pl.os[v], pl.is[v] = 0, 0
		pl.total *= max(pl.ext[v], 0)
	}
	if pl.total == 0 {
		return true
	}
	out, in := &fr.bufs[p.out], &fr.bufs[p.in]
	if len(out.shape) != len(p.outIdx) || len(in.shape) != len(p.inIdx) || !out.has(p.st) || !in.has(p.st) {
		return false
	}
	pl.ob, pl.ib = 0, 0
	for side, idx := range [2][]vIndex{p.outIdx, p.inIdx} {
		b, strides, base := in, &pl.is, &pl.ib
		if side == 0 {
			b, strides, base = out, &pl.os, &pl.ob
		}
		for d, x := range idx {
			hi := x.c
			for _, t := range x.terms {
				hi += t.a * (pl.ext[t.v] - 1)
				strides[t.v] += t.a * b.stride[d]
			}
			if hi >= b.shape[d] {
				return false
			}
			*base += x.c * b.stride[d]
		}
	}
	// The variables by output stride, outermost first (insertion sort:
	// at most maxPermRank of them).
	var order [maxPermRank]int
	for v := range pl.r {
		j := v
		for ; j > 0 && pl.os[order[j-1]] < pl.os[v]; j-- {
			order[j] = order[j-1]
		}
		order[j] = v
	}
	pl.o = order[pl.r-1]
	pl.i = pl.o
	for _, v := range order[:pl.r] {
		if pl.is[v] == 1 && pl.ext[v] > 1 {
			pl.i = v
		}
	}
	if pl.os[pl.o] != 1 {
		pl.i = pl.o // no unit stride to block for: copy along the output
	}
	pl.nOuter = 0
	for _, v := range order[:pl.r] {
		if v != pl.o && v != pl.i {
			pl.outer[pl.nOuter] = v
			pl.nOuter++
		}
	}
	switch {
	case pl.nOuter > 0:
		pl.splitVar = pl.outer[0]
	case pl.i != pl.o:
		pl.splitVar = pl.i
	default:
		pl.splitVar = pl.o
	}
	return true
}

// has reports whether the buffer holds elements of storage st.
func (b *bufData) has(st storage) bool {
	switch st {
	case stF32:
		return b.f32 != nil
	case stF64:
		return b.f64 != nil
	case stI8:
		return b.i8 != nil
	case stI16:
		return b.i16 != nil
	case stI32:
		return b.i32 != nil
	case stI64:
		return b.i64 != nil
	case stU8:
		return b.u8 != nil
	case stU16:
		return b.u16 != nil
	case stU32:
		return b.u32 != nil
	case stU64:
		return b.u64 != nil
	case stF16, stBF16:
		return b.f16 != nil
	}
	return false
}

func (p *permute) run(fr *frame) bool {
	var pl permPlan
	if !p.plan(fr, &pl) {
		return false
	}
	if pl.total == 0 {
		return true
	}
	n := pl.ext[pl.splitVar]
	runRange(p.k, fr, n*(pl.total/n), pl.total/n, p.partFn)
	return true
}

// part copies the elements whose split variable lies in [lo/unit, hi/unit)
// (runRange's ranges are in elements, multiples of unit).
func (p *permute) part(fr *frame, lo, hi int64) {
	var pl permPlan
	p.plan(fr, &pl) // run checked it
	unit := pl.total / pl.ext[pl.splitVar]
	lo, hi = lo/unit, hi/unit
	out, in := &fr.bufs[p.out], &fr.bufs[p.in]
	switch p.st {
	case stF32:
		permuteRange(out.f32, in.f32, &pl, lo, hi)
	case stF64:
		permuteRange(out.f64, in.f64, &pl, lo, hi)
	case stI8:
		permuteRange(out.i8, in.i8, &pl, lo, hi)
	case stI16:
		permuteRange(out.i16, in.i16, &pl, lo, hi)
	case stI32:
		permuteRange(out.i32, in.i32, &pl, lo, hi)
	case stI64:
		permuteRange(out.i64, in.i64, &pl, lo, hi)
	case stU8:
		permuteRange(out.u8, in.u8, &pl, lo, hi)
	case stU16:
		permuteRange(out.u16, in.u16, &pl, lo, hi)
	case stU32:
		permuteRange(out.u32, in.u32, &pl, lo, hi)
	case stU64:
		permuteRange(out.u64, in.u64, &pl, lo, hi)
	case stF16, stBF16:
		permuteRange(out.f16, in.f16, &pl, lo, hi)
	}
}

// permuteRange copies the points whose split variable is in [lo, hi):
// an odometer over the outer variables, and for each point a 1-D run
// along o or a tiled 2-D transpose of (i, o).
func permuteRange[T any](dst, src []T, pl *permPlan, lo, hi int64) {
	var at [maxPermRank]int64
	start := func(v int) int64 {
		if v == pl.splitVar {
			return lo
		}
		return 0
	}
	end := func(v int) int64 {
		if v == pl.splitVar {
			return hi
		}
		return pl.ext[v]
	}
	for k := range pl.nOuter {
		at[k] = start(pl.outer[k])
		if at[k] >= end(pl.outer[k]) {
			return
		}
	}
	oLo, oHi := start(pl.o), end(pl.o)
	iLo, iHi := start(pl.i), end(pl.i)
	os, is := pl.os[pl.o], pl.is[pl.o]
	for {
		d, s := pl.ob, pl.ib
		for k := range pl.nOuter {
			v := pl.outer[k]
			d += at[k] * pl.os[v]
			s += at[k] * pl.is[v]
		}
		if pl.i == pl.o {
			d += oLo * os
			s += oLo * is
			n := oHi - oLo
			if os == 1 && is == 1 {
				copy(dst[d:d+n], src[s:s+n])
			} else {
				for j := range n {
					dst[d+j*os] = src[s+j*is]
				}
			}
		} else {
			transposeTiles(dst, src, d, s, iLo, iHi, oLo, oHi, pl.os[pl.i], is)
		}
		// Next outer point.
		k := pl.nOuter - 1
		for ; k >= 0; k-- {
			at[k]++
			if at[k] < end(pl.outer[k]) {
				break
			}
			at[k] = start(pl.outer[k])
		}
		if k < 0 {
			return
		}
	}
}

// transposeTiles copies dst[d + a*dsi + b] = src[s + a + b*sso] for a in
// [iLo, iHi), b in [oLo, oHi), tile by tile.
func transposeTiles[T any](dst, src []T, d, s, iLo, iHi, oLo, oHi, dsi, sso int64) {
	for ib := iLo; ib < iHi; ib += permTile {
		ie := min(ib+permTile, iHi)
		for ob := oLo; ob < oHi; ob += permTile {
			oe := min(ob+permTile, oHi)
			for a := ib; a < ie; a++ {
				row := dst[d+a*dsi+ob : d+a*dsi+oe]
				sp := s + a + ob*sso
				for j := range row {
					row[j] = src[sp+int64(j)*sso]
				}
			}
		}
	}
}
