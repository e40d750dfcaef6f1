package tirenc

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/phasec/phasec/ir"
)

// Decode reads a PrimFunc written by Encode. Malformed input is an *Error;
// Decode never panics on it and allocates at most a small multiple of
// len(data).
func Decode(data []byte) (f *ir.PrimFunc, err error) {
	d := &decoder{buf: data}
	if v := d.byte1(); d.err == nil && v != Version {
		return nil, &Error{Offset: 0, Msg: fmt.Sprintf("encoding version %d, this build reads version %d", v, Version)}
	}
	f = &ir.PrimFunc{}
	n := d.count("parameter count", 1)
	f.Params = make([]*ir.PrimVar, n)
	for i := range f.Params {
		f.Params[i] = d.needVar("parameter")
	}
	for _, p := range f.Params {
		if b := d.bufRef(); b != nil && d.err == nil {
			if f.BufferMap == nil {
				f.BufferMap = map[*ir.PrimVar]*ir.Buffer{}
			}
			if old, dup := f.BufferMap[p]; dup && old != b {
				d.fail("parameter %s is bound to two buffers", p.Name)
			}
			f.BufferMap[p] = b
		}
	}
	f.Ret = d.dtype()
	f.Attrs = d.attrs()
	f.Body = d.stmt()
	if d.err == nil && f.Body == nil {
		d.fail("the PrimFunc has no body")
	}
	if d.err == nil && d.pos != len(d.buf) {
		d.fail("%d trailing bytes", len(d.buf)-d.pos)
	}
	if d.err != nil {
		return nil, d.err
	}
	return f, nil
}

// decoder reads from buf, remembering the first error; after an error
// every read returns a zero value, so the callers need not check.
type decoder struct {
	buf   []byte
	pos   int
	vars  []*ir.PrimVar
	bufs  []*ir.Buffer
	depth int
	err   error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = &Error{Offset: d.pos, Msg: fmt.Sprintf(format, args...)}
	}
}

func (d *decoder) enter() bool {
	d.depth++
	if d.depth > MaxDepth {
		d.fail("nesting deeper than %d", MaxDepth)
	}
	return d.err == nil
}

func (d *decoder) leave() { d.depth-- }

func (d *decoder) byte1() byte {
	if d.err != nil {
		return 0
	}
	if d.pos >= len(d.buf) {
		d.fail("truncated")
		return 0
	}
	b := d.buf[d.pos]
	d.pos++
	return b
}

func (d *decoder) uv() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf[d.pos:])
	if n <= 0 {
		d.fail("truncated or overlong varint")
		return 0
	}
	d.pos += n
	return v
}

func (d *decoder) sv() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf[d.pos:])
	if n <= 0 {
		d.fail("truncated or overlong varint")
		return 0
	}
	d.pos += n
	return v
}

// small reads an unsigned varint that must be at most limit.
func (d *decoder) small(what string, limit int) int {
	v := d.uv()
	if d.err == nil && v > uint64(limit) {
		d.fail("%s %d exceeds %d", what, v, limit)
		return 0
	}
	return int(v)
}

// count reads an element count; each element takes at least minBytes, so
// a count larger than the bytes left is corrupt (and never allocated).
func (d *decoder) count(what string, minBytes int) int {
	v := d.uv() // read first: the limit is what follows the count
	if limit := (len(d.buf) - d.pos) / minBytes; d.err == nil && v > uint64(limit) {
		d.fail("%s %d exceeds the %d bytes left", what, v, len(d.buf)-d.pos)
		return 0
	}
	return int(v)
}

// int32 reads a signed varint that must fit in an int32 (buffer layout).
func (d *decoder) int32(what string) int {
	v := d.sv()
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("%s %d out of range", what, v)
		return 0
	}
	return int(v)
}

func (d *decoder) str() string {
	n := d.count("string length", 1)
	if d.err != nil {
		return ""
	}
	s := string(d.buf[d.pos : d.pos+n])
	d.pos += n
	return s
}

func (d *decoder) float() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.buf)-d.pos < 8 {
		d.fail("truncated float")
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.buf[d.pos:]))
	d.pos += 8
	return f
}

func (d *decoder) flag() bool {
	switch b := d.byte1(); b {
	case 0, 1:
		return b == 1
	default:
		d.fail("flag byte %d", b)
		return false
	}
}

func (d *decoder) dtype() ir.DataType {
	code := d.byte1()
	if code > byte(ir.CodeHandle) {
		d.fail("unknown type code %d", code)
	}
	bits := d.byte1()
	lanes := d.small("lane count", math.MaxUint16)
	return ir.DataType{Code: ir.TypeCode(code), Bits: bits, Lanes: uint16(lanes)}
}

// varRef reads a variable reference; nil for none (or after an error).
func (d *decoder) varRef() *ir.PrimVar {
	switch r := d.uv(); {
	case d.err != nil || r == refNone:
		return nil
	case r == refNew:
		v := &ir.PrimVar{Name: d.str(), Type: d.dtype()}
		d.vars = append(d.vars, v)
		return v
	case r-refBase < uint64(len(d.vars)):
		return d.vars[r-refBase]
	default:
		d.fail("variable reference %d out of range (%d variables)", r-refBase, len(d.vars))
		return nil
	}
}

func (d *decoder) needVar(what string) *ir.PrimVar {
	v := d.varRef()
	if v == nil {
		d.fail("%s: missing variable", what)
	}
	return v
}

// bufRef reads a buffer reference; nil for none.
func (d *decoder) bufRef() *ir.Buffer {
	switch r := d.uv(); {
	case d.err != nil || r == refNone:
		return nil
	case r == refNew:
		b := &ir.Buffer{Name: d.str()}
		// Registered before its fields: a buffer's shape cannot refer to
		// the buffer, but a reference to it must not define a second one.
		d.bufs = append(d.bufs, b)
		b.Data = d.needVar("buffer data")
		b.DType = d.dtype()
		b.Scope = d.str()
		b.Shape = d.exprs("buffer shape")
		b.Strides = d.exprs("buffer strides")
		b.ElemOffset = d.optExpr()
		b.Align = d.int32("alignment")
		b.OffsetFactor = d.int32("offset factor")
		b.AutoBroadcast = d.flag()
		if n := d.count("axis separator count", 1); n > 0 {
			b.AxisSeparators = make([]int, n)
			for i := range b.AxisSeparators {
				b.AxisSeparators[i] = d.int32("axis separator")
			}
		}
		return b
	case r-refBase < uint64(len(d.bufs)):
		return d.bufs[r-refBase]
	default:
		d.fail("buffer reference %d out of range (%d buffers)", r-refBase, len(d.bufs))
		return nil
	}
}

func (d *decoder) needBuf(what string) *ir.Buffer {
	b := d.bufRef()
	if b == nil {
		d.fail("%s: missing buffer", what)
	}
	return b
}

// exprs reads a list of required expressions; an empty list is nil.
func (d *decoder) exprs(what string) []ir.PrimExpr {
	n := d.count(what+" length", 1)
	if n == 0 {
		return nil
	}
	xs := make([]ir.PrimExpr, n)
	for i := range xs {
		xs[i] = d.expr(what)
	}
	return xs
}

// expr reads a required expression.
func (d *decoder) expr(what string) ir.PrimExpr {
	x := d.optExpr()
	if x == nil {
		d.fail("%s: missing expression", what)
	}
	return x
}

// optExpr reads an expression that may be absent (nil).
func (d *decoder) optExpr() ir.PrimExpr {
	tag := d.byte1()
	if d.err != nil || tag == exprNone {
		return nil
	}
	if !d.enter() {
		return nil
	}
	defer d.leave()
	var x ir.PrimExpr
	switch tag {
	case exprIntImm:
		x = &ir.IntImm{Type: d.dtype(), Value: d.sv()}
	case exprFloatImm:
		x = &ir.FloatImm{Type: d.dtype(), Value: d.float()}
	case exprStr:
		x = &ir.PrimStr{Value: d.str()}
	case exprVar:
		if v := d.needVar("variable expression"); v != nil {
			x = v
		}
	case exprBinary:
		op := ir.BinaryOp(d.byte1())
		if op > ir.OpOr {
			d.fail("unknown binary operator %d", op)
		}
		a, b := d.expr("left operand"), d.expr("right operand")
		if d.err == nil {
			x = ir.NewBinary(op, a, b)
		}
	case exprNot:
		x = &ir.Not{A: d.expr("negated operand")}
	case exprSelect:
		x = &ir.Select{Cond: d.expr("select condition"), True: d.expr("select true value"), False: d.expr("select false value")}
	case exprCast:
		x = &ir.Cast{Type: d.dtype(), Value: d.expr("cast operand")}
	case exprCall:
		x = &ir.PrimCall{Op: d.str(), Type: d.dtype(), Args: d.exprs("call arguments")}
	case exprLoad:
		x = &ir.BufferLoad{Buffer: d.needBuf("load"), Indices: d.exprs("load indices")}
	default:
		d.fail("unknown expression tag %d", tag)
	}
	if d.err != nil {
		return nil
	}
	return x
}

func (d *decoder) rng(what string) ir.Range {
	return ir.Range{Min: d.expr(what + " min"), Extent: d.expr(what + " extent")}
}

func (d *decoder) region() ir.BufferRegion {
	r := ir.BufferRegion{Buffer: d.needBuf("region")}
	// A range takes at least two bytes (two expression tags).
	if n := d.count("region rank", 2); n > 0 {
		r.Region = make([]ir.Range, n)
		for i := range r.Region {
			r.Region[i] = d.rng("region")
		}
	}
	return r
}

func (d *decoder) regions() []ir.BufferRegion {
	n := d.count("region count", 2)
	if n == 0 {
		return nil
	}
	rs := make([]ir.BufferRegion, n)
	for i := range rs {
		rs[i] = d.region()
	}
	return rs
}

// stmt reads a statement that may be absent (nil).
func (d *decoder) stmt() ir.Stmt {
	tag := d.byte1()
	if d.err != nil || tag == stmtNone {
		return nil
	}
	if !d.enter() {
		return nil
	}
	defer d.leave()
	var s ir.Stmt
	switch tag {
	case stmtFor:
		f := &ir.For{Var: d.needVar("loop"), Min: d.expr("loop min"), Extent: d.expr("loop extent")}
		if f.Kind = ir.ForKind(d.byte1()); f.Kind > ir.ForThreadBinding {
			d.fail("unknown loop kind %d", f.Kind)
		}
		f.ThreadTag = d.str()
		f.Annotations = d.attrs()
		f.Body = d.body("loop")
		s = f
	case stmtStore:
		s = &ir.BufferStore{Buffer: d.needBuf("store"), Indices: d.exprs("store indices"), Value: d.expr("stored value")}
	case stmtSeq:
		n := d.count("statement count", 1)
		seq := &ir.SeqStmt{Stmts: make([]ir.Stmt, n)}
		for i := range seq.Stmts {
			seq.Stmts[i] = d.body("sequence")
		}
		s = seq
	case stmtIf:
		s = &ir.IfThenElse{Cond: d.expr("if condition"), Then: d.body("then branch"), Else: d.stmt()}
	case stmtLet:
		s = &ir.LetStmt{Var: d.needVar("let"), Value: d.expr("let value"), Body: d.body("let")}
	case stmtEvaluate:
		s = &ir.Evaluate{Value: d.expr("evaluated expression")}
	case stmtBlockRealize:
		s = &ir.BlockRealize{IterValues: d.exprs("iteration values"), Predicate: d.optExpr(), Block: d.block()}
	case stmtAttr:
		a := &ir.AttrStmt{Thread: d.varRef(), Tag: d.str(), Node: d.optExpr(), Reducer: d.reducer()}
		a.Key = d.str()
		a.Value = d.optExpr()
		a.Body = d.body("attribute statement")
		s = a
	case stmtWhile:
		s = &ir.While{Cond: d.expr("while condition"), Body: d.body("while")}
	case stmtAllocate:
		s = &ir.Allocate{Data: d.needVar("allocate"), DType: d.dtype(), Extents: d.exprs("allocate extents"),
			Scope: d.str(), Condition: d.optExpr(), Annotations: d.attrs(), Body: d.body("allocate")}
	case stmtAllocateConst:
		s = &ir.AllocateConst{Data: d.needVar("allocate_const"), DType: d.dtype(), Extents: d.exprs("allocate_const extents"),
			Values: d.exprs("allocate_const values"), Body: d.body("allocate_const")}
	case stmtDeclBuffer:
		s = &ir.DeclBuffer{Buffer: d.needBuf("decl_buffer"), Body: d.body("decl_buffer")}
	default:
		d.fail("unknown statement tag %d", tag)
	}
	if d.err != nil {
		return nil
	}
	return s
}

// body reads a required statement.
func (d *decoder) body(what string) ir.Stmt {
	s := d.stmt()
	if s == nil {
		d.fail("%s: missing statement", what)
	}
	return s
}

func (d *decoder) block() *ir.Block {
	b := &ir.Block{Name: d.str()}
	// An iteration variable takes at least four bytes.
	if n := d.count("iteration variable count", 4); n > 0 {
		b.IterVars = make([]*ir.IterVar, n)
		for i := range b.IterVars {
			iv := &ir.IterVar{Var: d.needVar("iteration variable"), Dom: d.rng("iteration domain")}
			if iv.Kind = ir.IterKind(d.byte1()); iv.Kind > ir.IterOpaque {
				d.fail("unknown iteration kind %d", iv.Kind)
			}
			b.IterVars[i] = iv
		}
	}
	b.Reads = d.regions()
	b.Writes = d.regions()
	b.Init = d.stmt()
	b.Body = d.body("block")
	if n := d.count("allocated buffer count", 1); n > 0 {
		b.AllocBuffers = make([]*ir.Buffer, n)
		for i := range b.AllocBuffers {
			b.AllocBuffers[i] = d.needBuf("alloc_buffer")
		}
	}
	if n := d.count("match buffer count", 2); n > 0 {
		b.MatchBuffers = make([]ir.MatchBufferRegion, n)
		for i := range b.MatchBuffers {
			b.MatchBuffers[i] = ir.MatchBufferRegion{Buffer: d.needBuf("match_buffer"), Source: d.region()}
		}
	}
	b.Annotations = d.attrs()
	return b
}

func (d *decoder) reducer() *ir.CommReducer {
	if !d.flag() {
		return nil
	}
	r := &ir.CommReducer{}
	for _, vs := range []*[]*ir.PrimVar{&r.Lhs, &r.Rhs} {
		if n := d.count("reducer operand count", 1); n > 0 {
			*vs = make([]*ir.PrimVar, n)
			for i := range *vs {
				(*vs)[i] = d.needVar("reducer operand")
			}
		}
	}
	r.Result = d.exprs("reducer result")
	r.Identity = d.exprs("reducer identity")
	return r
}

// attrs reads a dictionary; an empty one is nil, as nodes without
// attributes have.
func (d *decoder) attrs() ir.Attrs {
	// A key takes at least one byte and its value another.
	n := d.count("attribute count", 2)
	if n == 0 {
		return nil
	}
	a := make(ir.Attrs, n)
	prev := ""
	for i := range n {
		k := d.str()
		if d.err == nil && i > 0 && k <= prev {
			d.fail("attribute keys out of order (%q after %q)", k, prev)
		}
		prev = k
		a[k] = d.attrValue()
	}
	return a
}

func (d *decoder) attrValue() any {
	tag := d.byte1()
	if d.err != nil || !d.enter() {
		return nil
	}
	defer d.leave()
	switch tag {
	case attrNil:
		return nil
	case attrFalse, attrTrue:
		return tag == attrTrue
	case attrInt64:
		return d.sv()
	case attrInt:
		return int(d.sv())
	case attrFloat:
		return d.float()
	case attrString:
		return d.str()
	case attrDType:
		return d.dtype()
	case attrPrim:
		return d.expr("attribute")
	case attrList:
		n := d.count("list length", 1)
		l := make([]any, n)
		for i := range l {
			l[i] = d.attrValue()
		}
		return l
	case attrDict:
		return d.dictValue()
	case attrTarget:
		return &ir.Target{Config: d.dictValue()}
	case attrIndexMap:
		m := &ir.IndexMap{}
		if n := d.count("index map parameter count", 1); n > 0 {
			m.Params = make([]*ir.PrimVar, n)
			for i := range m.Params {
				m.Params[i] = d.needVar("index map parameter")
			}
		}
		m.Results = d.exprs("index map results")
		return m
	}
	d.fail("unknown attribute tag %d", tag)
	return nil
}

// dictValue reads a nested dictionary, never nil (an empty Attrs value
// differs from a nil attribute).
func (d *decoder) dictValue() ir.Attrs {
	if a := d.attrs(); a != nil {
		return a
	}
	return ir.Attrs{}
}
