package kernel

import (
	"fmt"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// stmt is a compiled statement.
type stmt func(fr *frame)

// CompileError is an unsupported or malformed construct, positioned.
type CompileError struct {
	Func string
	Span diag.Span
	Msg  string
}

func (e *CompileError) Error() string {
	if e.Span.IsValid() {
		return fmt.Sprintf("%s: PrimFunc %s: %s", e.Span, e.Func, e.Msg)
	}
	return fmt.Sprintf("PrimFunc %s: %s", e.Func, e.Msg)
}

// compiler holds the slot assignment while one PrimFunc is compiled.
type compiler struct {
	f      *ir.PrimFunc
	k      *Kernel
	name   string
	opts   Options
	ints   map[*ir.PrimVar]int
	flts   map[*ir.PrimVar]int
	bufIdx map[*ir.Buffer]int
	bufs   []*ir.Buffer
	nInts  int
	nFlts  int
	// vector scratch counts (see frame)
	nS32, nS64, nSI int
	// vectorLoops counts loops compiled in vector mode; scalarLoops says
	// why the others were not (for tests and Kernel.Stats).
	vectorLoops int
	scalarLoops []string
	// lastSpan is the innermost positioned node being compiled, for errors
	// on nodes built without a span.
	lastSpan diag.Span
	// scheduled maps the first loop of each nest a Schedule changes to
	// its rewrite; marks holds the rewritten loops' decisions (schedule.go).
	scheduled map[*ir.For]*ir.For
	marks     map[*ir.For]loopMark
	// noEpilogue turns off producer + epilogue fusion while a run's
	// unfused fallback compiles (epilogue_gemm.go).
	noEpilogue bool
}

func (c *compiler) fail(n interface{ Span() diag.Span }, format string, args ...any) {
	sp := c.lastSpan
	if n != nil && n.Span().IsValid() {
		sp = n.Span()
	}
	panic(&CompileError{Func: c.name, Span: sp, Msg: fmt.Sprintf(format, args...)})
}

// defineVar gives v a fresh slot of its kind.
func (c *compiler) defineVar(v *ir.PrimVar) {
	if isFloatType(v.Type) {
		if _, ok := c.flts[v]; !ok {
			c.flts[v] = c.nFlts
			c.nFlts++
		}
		return
	}
	if v.Type.IsHandle() || v.Type.IsVoid() || v.Type.Lanes > 1 {
		c.fail(v, "unsupported variable %s of type %s", v.Name, typeName(v.Type))
	}
	if _, ok := c.ints[v]; !ok {
		c.ints[v] = c.nInts
		c.nInts++
	}
}

func (c *compiler) intVar(v *ir.PrimVar) int {
	s, ok := c.ints[v]
	if !ok {
		c.fail(v, "undefined variable %s", v.Name)
	}
	return s
}

func (c *compiler) fltVar(v *ir.PrimVar) int {
	s, ok := c.flts[v]
	if !ok {
		c.fail(v, "undefined variable %s", v.Name)
	}
	return s
}

func (c *compiler) addBuffer(b *ir.Buffer) int {
	if i, ok := c.bufIdx[b]; ok {
		return i
	}
	if storageOf(b.DType) == stNone {
		c.fail(b, "buffer %s has unsupported dtype %s", b.Name, typeName(b.DType))
	}
	if b.Scope != "" && b.Scope != "global" && b.Scope != "local" && b.Scope != "shared" {
		c.fail(b, "buffer %s has unsupported storage scope %q", b.Name, b.Scope)
	}
	c.bufIdx[b] = len(c.bufs)
	c.bufs = append(c.bufs, b)
	return len(c.bufs) - 1
}

func (c *compiler) buffer(b *ir.Buffer, at interface{ Span() diag.Span }) int {
	i, ok := c.bufIdx[b]
	if !ok {
		c.fail(at, "buffer %s is not a parameter or an allocated buffer in scope", b.Name)
	}
	return i
}

// staticShape returns the buffer's shape when every dimension is constant.
func staticShape(b *ir.Buffer) ([]int64, bool) {
	out := make([]int64, len(b.Shape))
	for i, d := range b.Shape {
		v, ok := constI(d)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// offset compiles the flat element offset of buf[idx].
func (c *compiler) offset(b *ir.Buffer, idx []ir.PrimExpr, at interface{ Span() diag.Span }) iexpr {
	bi := c.buffer(b, at)
	if len(idx) != len(b.Shape) {
		c.fail(at, "buffer %s has %d dimensions, indexed with %d", b.Name, len(b.Shape), len(idx))
	}
	ix := make([]iexpr, len(idx))
	for i, e := range idx {
		ix[i] = c.compileI(e)
	}
	// Every dimension is checked (a one-dimensional index is checked by
	// the slice access itself).
	name := b.Name
	if !b.CompactLayout() && !isParamOf(c.f, b) {
		// An allocated buffer with declared strides (layOut): every
		// dimension through the frame's strides.
		return func(fr *frame) int64 {
			var off int64
			bd := &fr.bufs[bi]
			for d, f := range ix {
				i := f(fr)
				if uint64(i) >= uint64(bd.shape[d]) {
					outOfBounds(name, d, bd.shape[d], i)
				}
				off += i * bd.stride[d]
			}
			return off
		}
	}
	switch len(ix) {
	case 0:
		return func(*frame) int64 { return 0 }
	case 1:
		return ix[0]
	}
	if shape, ok := staticShape(b); ok {
		strides := make([]int64, len(shape))
		s := int64(1)
		for d := len(shape) - 1; d >= 0; d-- {
			strides[d] = s
			s *= shape[d]
		}
		if len(ix) == 2 {
			i0, i1, s0, e0, e1 := ix[0], ix[1], strides[0], shape[0], shape[1]
			return func(fr *frame) int64 {
				a, b := i0(fr), i1(fr)
				if uint64(a) >= uint64(e0) {
					outOfBounds(name, 0, e0, a)
				}
				if uint64(b) >= uint64(e1) {
					outOfBounds(name, 1, e1, b)
				}
				return a*s0 + b
			}
		}
		return func(fr *frame) int64 {
			var off int64
			for d, f := range ix {
				i := f(fr)
				if uint64(i) >= uint64(shape[d]) {
					outOfBounds(name, d, shape[d], i)
				}
				off += i * strides[d]
			}
			return off
		}
	}
	if len(ix) == 2 {
		i0, i1 := ix[0], ix[1]
		return func(fr *frame) int64 {
			bd := &fr.bufs[bi]
			a, b := i0(fr), i1(fr)
			if uint64(a) >= uint64(bd.shape[0]) {
				outOfBounds(name, 0, bd.shape[0], a)
			}
			if uint64(b) >= uint64(bd.shape[1]) {
				outOfBounds(name, 1, bd.shape[1], b)
			}
			return a*bd.stride[0] + b
		}
	}
	return func(fr *frame) int64 {
		var off int64
		bd := &fr.bufs[bi]
		for d, f := range ix {
			i := f(fr)
			if uint64(i) >= uint64(bd.shape[d]) {
				outOfBounds(name, d, bd.shape[d], i)
			}
			off += i * bd.stride[d]
		}
		return off
	}
}

// outOfBounds reports an index outside a buffer's shape (the cold path of
// offset, kept out of line).
//
//go:noinline
func outOfBounds(name string, d int, ext, i int64) {
	fault("index out of bounds: buffer %s dimension %d (extent %d) indexed at %d", name, d, ext, i)
}

func (c *compiler) loadF(e *ir.BufferLoad) fexpr {
	off := c.offset(e.Buffer, e.Indices, e)
	b := c.bufIdx[e.Buffer]
	switch storageOf(e.Buffer.DType) {
	case stF32:
		return func(fr *frame) float64 { return float64(fr.bufs[b].f32[off(fr)]) }
	case stF64:
		return func(fr *frame) float64 { return fr.bufs[b].f64[off(fr)] }
	case stF16:
		return func(fr *frame) float64 { return float64(f16ToF32(fr.bufs[b].f16[off(fr)])) }
	case stBF16:
		return func(fr *frame) float64 { return float64(bf16ToF32(fr.bufs[b].f16[off(fr)])) }
	}
	c.fail(e, "unsupported load of %s", typeName(e.Buffer.DType))
	return nil
}

func (c *compiler) loadI(e *ir.BufferLoad) iexpr {
	off := c.offset(e.Buffer, e.Indices, e)
	b := c.bufIdx[e.Buffer]
	switch storageOf(e.Buffer.DType) {
	case stI8:
		return func(fr *frame) int64 { return int64(fr.bufs[b].i8[off(fr)]) }
	case stI16:
		return func(fr *frame) int64 { return int64(fr.bufs[b].i16[off(fr)]) }
	case stI32:
		return func(fr *frame) int64 { return int64(fr.bufs[b].i32[off(fr)]) }
	case stI64:
		return func(fr *frame) int64 { return fr.bufs[b].i64[off(fr)] }
	case stU8:
		if e.Buffer.DType.IsBool() {
			return func(fr *frame) int64 { return int64(fr.bufs[b].u8[off(fr)] & 1) }
		}
		return func(fr *frame) int64 { return int64(fr.bufs[b].u8[off(fr)]) }
	case stU16:
		return func(fr *frame) int64 { return int64(fr.bufs[b].u16[off(fr)]) }
	case stU32:
		return func(fr *frame) int64 { return int64(fr.bufs[b].u32[off(fr)]) }
	case stU64:
		return func(fr *frame) int64 { return int64(fr.bufs[b].u64[off(fr)]) }
	}
	c.fail(e, "unsupported load of %s", typeName(e.Buffer.DType))
	return nil
}

func (c *compiler) store(s *ir.BufferStore) stmt {
	bt, vt := s.Buffer.DType, s.Value.DType()
	if bt.Lanes > 1 || vt.Lanes > 1 {
		c.fail(s, "vector (multi-lane) stores are not supported")
	}
	if isFloatType(bt) != isFloatType(vt) || (bt.IsBool() != vt.IsBool()) {
		c.fail(s, "cannot store a %s value into buffer %s of dtype %s", typeName(vt), s.Buffer.Name, typeName(bt))
	}
	off := c.offset(s.Buffer, s.Indices, s)
	b := c.bufIdx[s.Buffer]
	if isFloatType(bt) {
		v := c.compileF(s.Value)
		switch storageOf(bt) {
		case stF32:
			return func(fr *frame) { fr.bufs[b].f32[off(fr)] = float32(v(fr)) }
		case stF64:
			return func(fr *frame) { fr.bufs[b].f64[off(fr)] = v(fr) }
		case stF16:
			return func(fr *frame) { fr.bufs[b].f16[off(fr)] = f32ToF16(float32(v(fr))) }
		case stBF16:
			return func(fr *frame) { fr.bufs[b].f16[off(fr)] = f32ToBF16(float32(v(fr))) }
		}
	}
	v := c.compileI(s.Value)
	switch storageOf(bt) {
	case stI8:
		return func(fr *frame) { fr.bufs[b].i8[off(fr)] = int8(v(fr)) }
	case stI16:
		return func(fr *frame) { fr.bufs[b].i16[off(fr)] = int16(v(fr)) }
	case stI32:
		return func(fr *frame) { fr.bufs[b].i32[off(fr)] = int32(v(fr)) }
	case stI64:
		return func(fr *frame) { fr.bufs[b].i64[off(fr)] = v(fr) }
	case stU8:
		return func(fr *frame) { fr.bufs[b].u8[off(fr)] = uint8(v(fr)) }
	case stU16:
		return func(fr *frame) { fr.bufs[b].u16[off(fr)] = uint16(v(fr)) }
	case stU32:
		return func(fr *frame) { fr.bufs[b].u32[off(fr)] = uint32(v(fr)) }
	case stU64:
		return func(fr *frame) { fr.bufs[b].u64[off(fr)] = uint64(v(fr)) }
	}
	c.fail(s, "unsupported store into %s", typeName(bt))
	return nil
}

// compileStmt compiles a statement with scalar closures (vector mode is
// tried for innermost loops).
func (c *compiler) compileStmt(s ir.Stmt) stmt {
	if s == nil {
		return func(*frame) {}
	}
	if s.Span().IsValid() {
		saved := c.lastSpan
		c.lastSpan = s.Span()
		defer func() { c.lastSpan = saved }()
	}
	switch s := s.(type) {
	case *ir.SeqStmt:
		parts := make([]stmt, 0, len(s.Stmts))
		for _, x := range s.Stmts {
			parts = append(parts, c.compileStmt(x))
		}
		switch len(parts) {
		case 0:
			return func(*frame) {}
		case 1:
			return parts[0]
		case 2:
			a, b := parts[0], parts[1]
			return func(fr *frame) { a(fr); b(fr) }
		}
		return func(fr *frame) {
			for _, p := range parts {
				p(fr)
			}
		}
	case *ir.BufferStore:
		return c.store(s)
	case *ir.For:
		return c.compileFor(s)
	case *ir.IfThenElse:
		cond := c.compileI(s.Cond)
		then := c.compileStmt(s.Then)
		if s.Else == nil {
			return func(fr *frame) {
				if cond(fr) != 0 {
					then(fr)
				}
			}
		}
		els := c.compileStmt(s.Else)
		return func(fr *frame) {
			if cond(fr) != 0 {
				then(fr)
			} else {
				els(fr)
			}
		}
	case *ir.While:
		cond := c.compileI(s.Cond)
		body := c.compileStmt(s.Body)
		return func(fr *frame) {
			for cond(fr) != 0 {
				body(fr)
			}
		}
	case *ir.LetStmt:
		set := c.assign(s.Var, s.Value)
		body := c.compileStmt(s.Body)
		return func(fr *frame) { set(fr); body(fr) }
	case *ir.Evaluate:
		if call, ok := s.Value.(*ir.PrimCall); ok && call.Op == "ret" {
			c.fail(s, "T.ret is only supported as the last statement of a PrimFunc")
		}
		// Expressions have no side effects: compile to check, run nothing.
		if isFloatType(s.Value.DType()) {
			c.compileF(s.Value)
		} else if _, isStr := s.Value.(*ir.PrimStr); !isStr {
			c.compileI(s.Value)
		}
		return func(*frame) {}
	case *ir.BlockRealize:
		return c.compileBlock(s)
	case *ir.Allocate:
		if d, ok := ir.AllocatedDeclBuffer(s); ok {
			// A local buffer (T.decl_buffer without data=): allocated as
			// a block's T.alloc_buffer is.
			alloc := c.allocs([]*ir.Buffer{d.Buffer})
			body := c.compileStmt(d.Body)
			return func(fr *frame) { alloc(fr); body(fr) }
		}
		c.fail(s, "T.allocate(...) whose memory is viewed otherwise than by one T.decl_buffer of its shape is not supported by the kernel compiler")
	case *ir.AllocateConst:
		c.fail(s, "T.allocate_const(...) is not supported by the kernel compiler")
	case *ir.DeclBuffer:
		c.fail(s, "T.decl_buffer(..., data=...) viewing existing memory is not supported by the kernel compiler")
	case *ir.AttrStmt:
		if s.Thread != nil {
			c.fail(s, "T.launch_thread(%q, ...) is not supported: the kernel compiler runs unscheduled TIR", s.Tag)
		}
		c.fail(s, "T.attr(..., %q, ...) is not supported by the kernel compiler", s.Key)
	}
	c.fail(s, "unsupported statement %T", s)
	return nil
}

// assign defines v and compiles storing value into its slot.
func (c *compiler) assign(v *ir.PrimVar, value ir.PrimExpr) stmt {
	if isFloatType(v.Type) != isFloatType(value.DType()) {
		c.fail(v, "let %s: type %s does not match value of type %s", v.Name, typeName(v.Type), typeName(value.DType()))
	}
	if isFloatType(v.Type) {
		f := c.compileF(value)
		c.defineVar(v)
		slot := c.flts[v]
		r := roundFloat(v.Type)
		if r != nil && v.Type != value.DType() {
			return func(fr *frame) { fr.flts[slot] = r(f(fr)) }
		}
		return func(fr *frame) { fr.flts[slot] = f(fr) }
	}
	if src, ok := value.(*ir.PrimVar); ok && src.Type == v.Type {
		from := c.intVar(src)
		c.defineVar(v)
		slot := c.ints[v]
		return func(fr *frame) { fr.ints[slot] = fr.ints[from] }
	}
	f := c.compileI(value)
	c.defineVar(v)
	slot := c.ints[v]
	if w := wrapInt(v.Type); w != nil && v.Type != value.DType() {
		return func(fr *frame) { fr.ints[slot] = w(f(fr)) }
	}
	return func(fr *frame) { fr.ints[slot] = f(fr) }
}

func (c *compiler) compileFor(s *ir.For) stmt {
	s, mark := c.scheduledLoop(s)
	if !c.opts.NoVector && mark&markFixed == 0 {
		s = reorderNest(s)
	}
	if !s.Var.Type.IsInteger() {
		c.fail(s, "loop variable %s must be an integer, found %s", s.Var.Name, typeName(s.Var.Type))
	}
	lo, ext := c.compileI(s.Min), c.compileI(s.Extent)
	c.defineVar(s.Var)
	slot := c.ints[s.Var]
	if s.Kind == ir.ForParallel && !c.opts.Serial {
		body := c.compileStmt(s.Body)
		return c.parallelFor(lo, ext, slot, body)
	}
	if !c.opts.NoVector && mark&markScalar == 0 && !containsLoop(s.Body) {
		if v, ok := c.compileVector(s, lo, ext, slot); ok {
			return v
		}
	}
	body := c.compileStmt(s.Body)
	return func(fr *frame) {
		start := lo(fr)
		end := start + ext(fr)
		for x := start; x < end; x++ {
			fr.ints[slot] = x
			body(fr)
		}
	}
}

// compileBlock compiles a block realization: iteration variable bindings,
// the predicate, allocations, T.init and the body.
func (c *compiler) compileBlock(r *ir.BlockRealize) stmt {
	blk := r.Block
	if len(r.IterValues) != len(blk.IterVars) {
		c.fail(r, "block %s has %d iteration variables but %d values", blk.Name, len(blk.IterVars), len(r.IterValues))
	}
	var sets []stmt
	var initSlots []int
	var initMins []iexpr
	for i, iv := range blk.IterVars {
		sets = append(sets, c.assign(iv.Var, r.IterValues[i]))
		if iv.Kind == ir.IterReduce {
			initSlots = append(initSlots, c.ints[iv.Var])
			initMins = append(initMins, c.compileI(iv.Dom.Min))
		}
	}
	var pred iexpr
	if r.Predicate != nil {
		if k, ok := constI(r.Predicate); !ok || k == 0 {
			pred = c.compileI(r.Predicate)
		}
	}
	if len(blk.MatchBuffers) > 0 {
		c.fail(blk, "T.match_buffer in block %s is not supported by the kernel compiler", blk.Name)
	}
	allocs := c.allocs(blk.AllocBuffers)
	var init stmt
	if blk.Init != nil {
		init = c.compileStmt(blk.Init)
	}
	body := c.compileStmt(blk.Body)
	return func(fr *frame) {
		for _, s := range sets {
			s(fr)
		}
		if pred != nil && pred(fr) == 0 {
			return
		}
		if allocs != nil {
			allocs(fr)
		}
		if init != nil {
			first := true
			for i, slot := range initSlots {
				if fr.ints[slot] != initMins[i](fr) {
					first = false
					break
				}
			}
			if first {
				init(fr)
			}
		}
		body(fr)
	}
}

// allocs compiles the allocation of block-local buffers: storage comes
// from the frame and is reused across calls (contents are unspecified, as
// in TIR).
func (c *compiler) allocs(bufs []*ir.Buffer) stmt {
	if len(bufs) == 0 {
		return nil
	}
	type alloc struct {
		idx  int
		dt   ir.DataType
		dims []iexpr
		// strides and offset are the declared layout (nil: compact, 0).
		strides []iexpr
		offset  iexpr
		// defines are the stride and offset variables the buffer defines.
		defines []defined
	}
	var as []alloc
	for _, b := range bufs {
		if _, dup := c.bufIdx[b]; dup {
			c.fail(b, "buffer %s is allocated twice", b.Name)
		}
		a := alloc{dt: b.DType, dims: make([]iexpr, len(b.Shape))}
		for i, d := range b.Shape {
			a.dims[i] = c.compileI(d)
		}
		if !b.CompactLayout() {
			for d, st := range b.Strides {
				if v := c.layoutVar(st); v != nil {
					// A stride variable the buffer defines: the compact
					// stride of dimension d.
					a.strides = append(a.strides, compactStride(a.dims, d))
					a.defines = append(a.defines, defined{slot: c.ints[v], dim: d})
					continue
				}
				a.strides = append(a.strides, c.compileI(st))
			}
			if v := c.layoutVar(b.ElemOffset); v != nil {
				// The offset variable offset_factor= creates: the
				// allocation starts at its data, offset 0.
				a.defines = append(a.defines, defined{slot: c.ints[v], dim: -1})
			} else if b.ElemOffset != nil {
				a.offset = c.compileI(b.ElemOffset)
			}
		}
		a.idx = c.addBuffer(b)
		as = append(as, a)
	}
	name := make([]string, len(bufs))
	for i, b := range bufs {
		name[i] = b.Name
	}
	return func(fr *frame) {
		for ai := range as {
			a := &as[ai]
			bd := &fr.bufs[a.idx]
			n := int64(1)
			for d, f := range a.dims {
				v := f(fr)
				if v < 0 {
					fault("buffer %s: negative extent %d", name[ai], v)
				}
				bd.shape[d] = v
				n *= v
			}
			if a.strides == nil && a.offset == nil {
				st := &fr.alloc[a.idx]
				st.ensure(a.dt, n)
				shape, stride := bd.shape, bd.stride
				*bd = *st
				bd.shape, bd.stride = shape, stride
				bd.setShape(shape)
				continue
			}
			layOut(bd, &fr.alloc[a.idx], a.dt, n, a.strides, a.offset, fr, name[ai])
			for _, d := range a.defines {
				if d.dim < 0 {
					fr.ints[d.slot] = 0
				} else {
					fr.ints[d.slot] = bd.stride[d.dim]
				}
			}
		}
	}
}

// layOut allocates the buffer bd with a declared layout (TVM's BufferNode
// strides and elem_offset): element i0, ..., ik lives at offset +
// sum(i_d * stride_d) of the storage st, which is made large enough for the
// furthest element. bd's slices start at the element offset, so every
// access path (the general offset, vector mode) addresses it through its
// strides alone. n is the element count, shape bd.shape.
func layOut(bd, st *bufData, dt ir.DataType, n int64, strides []iexpr, offset iexpr, fr *frame, name string) {
	var off int64
	if offset != nil {
		if off = offset(fr); off < 0 {
			fault("buffer %s: negative element offset %d", name, off)
		}
	}
	shape, stride := bd.shape, bd.stride
	if strides == nil {
		bd.setShape(shape)
	} else {
		for d, f := range strides {
			if stride[d] = f(fr); stride[d] < 0 {
				fault("buffer %s: negative stride %d in dimension %d", name, stride[d], d)
			}
		}
	}
	size := off
	if n > 0 {
		last := int64(0)
		for d := range shape {
			last += (shape[d] - 1) * stride[d]
		}
		size += last + 1
	}
	st.ensure(dt, size)
	*bd = *st
	bd.shape, bd.stride = shape, stride
	bd.advance(off)
}

// defined is a layout variable an allocated buffer defines: its stride in
// dimension dim, or its element offset when dim < 0.
type defined struct{ slot, dim int }

// layoutVar returns e when it is an integer variable not yet defined (a
// stride or offset variable the buffer declaring it defines), after giving
// it a slot; else nil.
func (c *compiler) layoutVar(e ir.PrimExpr) *ir.PrimVar {
	v, ok := e.(*ir.PrimVar)
	if !ok || !v.Type.IsInteger() {
		return nil
	}
	if _, bound := c.ints[v]; bound {
		return nil
	}
	c.defineVar(v)
	return v
}

// compactStride is the row-major stride of dimension d of a buffer whose
// dimensions dims computes.
func compactStride(dims []iexpr, d int) iexpr {
	inner := dims[d+1:]
	return func(fr *frame) int64 {
		s := int64(1)
		for _, f := range inner {
			s *= f(fr)
		}
		return s
	}
}

// laidOutAlloc reports whether f allocates a buffer with declared strides
// or an element offset: the pattern fast paths address buffers as compact
// arrays, so such a kernel runs on the general path. (A parameter's layout
// is checked compact when the kernel is called, Kernel.bind.)
func laidOutAlloc(f *ir.PrimFunc) bool {
	found := false
	ir.WalkStmt(f.Body, &ir.StmtVisitor{Buffer: func(b *ir.Buffer) {
		found = found || !b.CompactLayout() && !isParamOf(f, b)
	}})
	return found
}

// isParamOf reports whether b is a parameter's buffer of f: bound to a
// compact tensor, whose declared strides and element offset Kernel.bind
// checks.
func isParamOf(f *ir.PrimFunc, b *ir.Buffer) bool {
	for _, pb := range f.BufferMap {
		if pb == b {
			return true
		}
	}
	return false
}

// containsLoop reports whether s has a nested loop (so it is not innermost).
func containsLoop(s ir.Stmt) bool {
	switch s := s.(type) {
	case *ir.For, *ir.While:
		return true
	case *ir.SeqStmt:
		for _, x := range s.Stmts {
			if containsLoop(x) {
				return true
			}
		}
	case *ir.IfThenElse:
		return containsLoop(s.Then) || containsLoop(s.Else)
	case *ir.BlockRealize:
		return containsLoop(s.Block.Body) || containsLoop(s.Block.Init)
	}
	if body, ok := ir.ScopeBody(s); ok {
		return containsLoop(body)
	}
	return false
}
