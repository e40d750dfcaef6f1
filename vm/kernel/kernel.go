package kernel

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// Options tune compilation; the zero value is what Compile uses.
type Options struct {
	// General disables pattern dispatch: every kernel runs its compiled
	// loop nest (tests compare both paths).
	General bool
	// NoVector disables vector mode: every loop runs one iteration per
	// closure call (tests compare both modes).
	NoVector bool
	// Serial runs T.parallel loops on the calling goroutine.
	Serial bool
	// Schedule, when set, replaces the general path's choices for the
	// PrimFunc's loop nests (schedule.go); it must fit the PrimFunc.
	Schedule *Schedule
}

// ParamInfo describes a parameter for load-time validation.
type ParamInfo struct {
	Name  string
	Kind  abi.ParamKind
	DType tensor.DType // element type of a buffer, type of a scalar; Invalid for an opaque handle
	NDim  int          // buffers only; -1 for an opaque handle (any tensor)
}

// Kernel is a compiled PrimFunc. It is immutable and safe for concurrent
// calls; per-call state lives in pooled frames.
type Kernel struct {
	name    string
	params  []param
	binds   []bindStep
	checks  []checkStep
	body    stmt
	ret     func(fr *frame) abi.Arg // nil unless the PrimFunc ends with T.ret
	pattern string
	wide    *widened // the float32 twin of a kernel over 16-bit buffers (widen.go)

	vectorLoops int
	scalarLoops []string

	bufs            []*ir.Buffer
	nInts, nFlts    int
	nS32, nS64, nSI int
	// hot keeps one frame outside the sync.Pool, which the garbage
	// collector empties: a kernel called in a loop between allocations
	// (the VM) keeps its frame, scratch and allocated buffers.
	hot    atomic.Pointer[frame]
	frames sync.Pool
}

// A compiled kernel is what the VM calls (vm/abi's kernel ABI).
var (
	_ abi.Kernel      = (*Kernel)(nil)
	_ abi.ValueKernel = (*Kernel)(nil)
)

// getFrame returns a frame for one call; putFrame gives it back.
func (k *Kernel) getFrame() *frame {
	if fr := k.hot.Swap(nil); fr != nil {
		return fr
	}
	return k.frames.Get().(*frame)
}

func (k *Kernel) putFrame(fr *frame) {
	fr.inParallel = false
	if !k.hot.CompareAndSwap(nil, fr) {
		k.frames.Put(fr)
	}
}

// fastPath runs a dispatched kernel; it reports false when the runtime
// shapes do not fit it, and the general path runs instead.
type fastPath func(fr *frame) bool

type param struct {
	info    ParamInfo
	buf     int  // buffer index for abi.ParamBuffer
	written bool // the body stores into the buffer: a frozen tensor is refused
	slot    int  // slot for scalars
	irType  ir.DataType
}

// bindStep binds a symbolic variable from a buffer's runtime shape, its
// strides or its element offset.
type bindStep struct {
	buf, dim, slot int
	what           layoutPart
}

// checkStep checks a declared dimension, stride or element offset against
// the runtime tensor's.
type checkStep struct {
	buf, dim int
	what     layoutPart
	want     iexpr
	expr     ir.PrimExpr // printed only in the error
}

// layoutPart names what a bindStep or checkStep reads of a bound buffer.
// A parameter's tensor is a compact row-major array at offset 0, so its
// strides are the compact ones and its element offset is 0: TVM binds a
// parameter buffer's stride and elem_offset variables from the DLTensor
// and asserts the others equal (ArgBinder::BindDLTensor,
// src/tir/transforms/arg_binder.cc, which for a tensor without strides
// asserts the buffer's strides are the compact ones).
type layoutPart uint8

const (
	partShape layoutPart = iota
	partStride
	partOffset
)

// value is the runtime value of the part of bd at dimension d.
func (p layoutPart) value(bd *bufData, d int) int64 {
	switch p {
	case partStride:
		return bd.stride[d]
	case partOffset:
		return 0
	}
	return bd.shape[d]
}

func (p layoutPart) describe(d int) string {
	switch p {
	case partStride:
		return "stride " + strconv.Itoa(d)
	case partOffset:
		return "element offset"
	}
	return "dimension " + strconv.Itoa(d)
}

// Name is the PrimFunc's name.
func (k *Kernel) Name() string { return k.name }

// Params describes the parameters in order.
func (k *Kernel) Params() []ParamInfo {
	out := make([]ParamInfo, len(k.params))
	for i, p := range k.params {
		out[i] = p.info
	}
	return out
}

// Signature is the kernel's signature as an executable records it: per
// parameter its kind, the dtype of a buffer's elements or of a scalar, and
// a buffer's rank (an opaque handle has rank -1 and no dtype).
func (k *Kernel) Signature() []abi.Param {
	out := make([]abi.Param, len(k.params))
	for i, p := range k.params {
		out[i] = abi.Param{Kind: p.info.Kind, DType: p.info.DType.String()}
		if p.info.Kind == abi.ParamBuffer {
			out[i].NDim = p.info.NDim
		}
	}
	return out
}

// Pattern is the dispatch taken: "matmul", "batch_matmul", "elementwise",
// "broadcast", "reduction", "general", ...
func (k *Kernel) Pattern() string { return k.pattern }

// LoopModes reports how many innermost loops run in vector mode and, for
// each loop that does not, why (a diagnostic for tuning kernels).
func (k *Kernel) LoopModes() (vector int, scalar []string) { return k.vectorLoops, k.scalarLoops }

// Compile compiles f with the default options.
func Compile(f *ir.PrimFunc, name string) (*Kernel, error) {
	return CompileWith(f, name, Options{})
}

// CompileWith compiles f; unsupported TIR is a *CompileError naming the
// PrimFunc and the source position.
func CompileWith(f *ir.PrimFunc, name string, opts Options) (k *Kernel, err error) {
	f = simplifyIndices(f)
	c := &compiler{
		f: f, name: name, opts: opts,
		ints: map[*ir.PrimVar]int{}, flts: map[*ir.PrimVar]int{}, bufIdx: map[*ir.Buffer]int{},
	}
	c.lastSpan = f.Span()
	k = &Kernel{name: name, pattern: "general"}
	c.k = k
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(*CompileError)
			if !ok {
				panic(r)
			}
			k, err = nil, ce
		}
	}()
	if opts.Schedule != nil {
		c.useSchedule(opts.Schedule)
	}
	c.params(k)
	body, ret := splitRet(f.Body)
	markWritten(k, f, body)
	if opts.General || laidOutAlloc(f) {
		k.body = c.compileStmt(body)
	} else {
		k.body, k.pattern = c.compileTop(body)
	}
	if ret != nil {
		k.ret = c.compileRet(ret)
	}
	k.bufs = c.bufs
	k.vectorLoops, k.scalarLoops = c.vectorLoops, c.scalarLoops
	k.nInts, k.nFlts = c.nInts, c.nFlts
	k.nS32, k.nS64, k.nSI = c.nS32, c.nS64, c.nSI
	k.frames.New = func() any { return k.newFrame() }
	if !opts.General && opts.Schedule == nil {
		compileWidened(k, f, name, opts)
	}
	return k, nil
}

// markWritten marks the buffer parameters the body stores into (through
// the parameter's buffer or any buffer over the same data), which bind
// refuses to point at a frozen tensor.
func markWritten(k *Kernel, f *ir.PrimFunc, body ir.Stmt) {
	stored := map[*ir.PrimVar]bool{}
	ir.WalkStmt(body, &ir.StmtVisitor{Stmt: func(s ir.Stmt) bool {
		if st, ok := s.(*ir.BufferStore); ok {
			stored[st.Buffer.Data] = true
		}
		return true
	}})
	for i := range k.params {
		p := &k.params[i]
		if p.info.Kind != abi.ParamBuffer || p.buf < 0 {
			continue
		}
		if b := f.BufferMap[f.Params[i]]; b != nil && stored[b.Data] {
			p.written = true
		}
	}
}

// params assigns parameter slots and compiles the shape binding.
func (c *compiler) params(k *Kernel) {
	var bufParams []int
	for i, p := range c.f.Params {
		if b := c.f.BufferMap[p]; b != nil {
			dt, err := runtimeDType(b.DType)
			if err != nil {
				c.fail(b, "buffer %s: unsupported dtype %s", b.Name, typeName(b.DType))
			}
			bi := c.addBuffer(b)
			k.params = append(k.params, param{info: ParamInfo{Name: b.Name, Kind: abi.ParamBuffer, DType: dt, NDim: len(b.Shape)}, buf: bi, irType: b.DType})
			bufParams = append(bufParams, i)
			continue
		}
		if p.Type.IsHandle() {
			// A handle no T.match_buffer views: an opaque pointer the body
			// cannot use (stub kernels); any tensor is accepted.
			k.params = append(k.params, param{info: ParamInfo{Name: p.Name, Kind: abi.ParamBuffer, DType: tensor.Invalid, NDim: -1}, buf: -1})
			continue
		}
		dt, err := runtimeDType(p.Type)
		if err != nil {
			c.fail(p, "scalar parameter %s has unsupported type %s", p.Name, typeName(p.Type))
		}
		c.defineVar(p)
		kind, slot := abi.ParamInt, c.ints[p]
		if isFloatType(p.Type) {
			kind, slot = abi.ParamFloat, c.flts[p]
		}
		k.params = append(k.params, param{info: ParamInfo{Name: p.Name, Kind: kind, DType: dt}, slot: slot, irType: p.Type})
	}
	// Bind every symbolic variable at its first plain occurrence in a
	// buffer shape; check every other dimension once all are bound.
	type pending struct {
		buf, dim int
		e        ir.PrimExpr
		what     layoutPart
	}
	var rest []pending
	bindOrCheck := func(bi, d int, e ir.PrimExpr, what layoutPart) {
		if v, ok := e.(*ir.PrimVar); ok && v.Type.IsInteger() {
			if _, bound := c.ints[v]; !bound {
				c.defineVar(v)
				k.binds = append(k.binds, bindStep{buf: bi, dim: d, slot: c.ints[v], what: what})
				return
			}
		}
		rest = append(rest, pending{bi, d, e, what})
	}
	for _, i := range bufParams {
		b := c.f.BufferMap[c.f.Params[i]]
		bi := c.bufIdx[b]
		for d, e := range b.Shape {
			bindOrCheck(bi, d, e, partShape)
		}
		// Strides and the element offset after every dimension: TVM's
		// ArgBinder binds the shape first.
		for d, e := range b.Strides {
			bindOrCheck(bi, d, e, partStride)
		}
		if b.ElemOffset != nil {
			bindOrCheck(bi, 0, b.ElemOffset, partOffset)
		}
	}
	for _, p := range rest {
		k.checks = append(k.checks, checkStep{buf: p.buf, dim: p.dim, what: p.what, want: c.compileI(p.e), expr: p.e})
	}
}

// exprText spells a shape expression for error messages.
func exprText(e ir.PrimExpr) string {
	return ir.FormatTIR(e, func(v *ir.PrimVar) string { return v.Name })
}

// splitRet separates a trailing T.ret(value) from the body.
func splitRet(body ir.Stmt) (ir.Stmt, *ir.Evaluate) {
	isRet := func(s ir.Stmt) (*ir.Evaluate, bool) {
		e, ok := s.(*ir.Evaluate)
		if !ok {
			return nil, false
		}
		call, ok := e.Value.(*ir.PrimCall)
		return e, ok && call.Op == "ret"
	}
	if e, ok := isRet(body); ok {
		return &ir.SeqStmt{Stmts: []ir.Stmt{}}, e
	}
	if s, ok := body.(*ir.SeqStmt); ok && len(s.Stmts) > 0 {
		if e, ok := isRet(s.Stmts[len(s.Stmts)-1]); ok {
			return &ir.SeqStmt{Stmts: s.Stmts[:len(s.Stmts)-1]}, e
		}
	}
	return body, nil
}

// compileRet compiles the value of T.ret.
func (c *compiler) compileRet(e *ir.Evaluate) func(fr *frame) abi.Arg {
	call := e.Value.(*ir.PrimCall)
	if len(call.Args) != 1 {
		c.fail(e, "T.ret takes one value")
	}
	v := call.Args[0]
	if isFloatType(v.DType()) {
		f := c.compileF(v)
		return func(fr *frame) abi.Arg { return abi.Arg{F: f(fr)} }
	}
	i := c.compileI(v)
	return func(fr *frame) abi.Arg { return abi.Arg{I: i(fr)} }
}

// Call runs the kernel on args (one per parameter, in order).
func (k *Kernel) Call(args []abi.Arg) error {
	_, err := k.call(args)
	return err
}

// CallValue runs a kernel that returns a value with T.ret and returns it
// (I for integers and booleans, F for floats).
func (k *Kernel) CallValue(args []abi.Arg) (abi.Arg, error) {
	if k.ret == nil {
		return abi.Arg{}, fmt.Errorf("PrimFunc %s returns no value", k.name)
	}
	return k.call(args)
}

func (k *Kernel) call(args []abi.Arg) (out abi.Arg, err error) {
	if k.wide != nil {
		return abi.Arg{}, k.wide.call(k, args)
	}
	fr := k.getFrame()
	defer func() {
		if r := recover(); r != nil {
			err = k.recovered(r)
		}
		k.putFrame(fr)
	}()
	if err := k.bind(fr, args); err != nil {
		return abi.Arg{}, err
	}
	k.body(fr)
	if k.ret != nil {
		out = k.ret(fr)
	}
	return out, nil
}

// recovered turns a runtime fault into an error; other panics are bugs.
func (k *Kernel) recovered(r any) error {
	switch r := r.(type) {
	case *runtimeError:
		return fmt.Errorf("PrimFunc %s: %s", k.name, r.msg)
	case runtime.Error:
		return fmt.Errorf("PrimFunc %s: %v (an index out of bounds or an integer division by zero)", k.name, r)
	case error:
		var re *runtimeError
		if errors.As(r, &re) {
			return fmt.Errorf("PrimFunc %s: %s", k.name, re.msg)
		}
	}
	panic(r)
}

// bind checks args against the parameters and binds buffers, scalars and
// symbolic shape variables into fr.
func (k *Kernel) bind(fr *frame, args []abi.Arg) error {
	if len(args) != len(k.params) {
		return fmt.Errorf("PrimFunc %s takes %d arguments, got %d", k.name, len(k.params), len(args))
	}
	for i := range k.params {
		p := &k.params[i]
		a := &args[i]
		switch p.info.Kind {
		case abi.ParamInt:
			fr.ints[p.slot] = wrapValue(p.irType, a.I)
		case abi.ParamFloat:
			fr.flts[p.slot] = roundValue(p.irType, a.F)
		case abi.ParamBuffer:
			t := a.T
			if p.buf < 0 {
				continue // an opaque handle
			}
			if t == nil {
				return fmt.Errorf("PrimFunc %s: argument %d (%s) must be a tensor", k.name, i, p.info.Name)
			}
			if t.DType != p.info.DType || len(t.Shape) != p.info.NDim {
				return fmt.Errorf("PrimFunc %s: argument %d (%s) must be a %d-d %s tensor, got %s",
					k.name, i, p.info.Name, p.info.NDim, p.info.DType, t)
			}
			if p.written && t.Storage.Frozen() {
				return fmt.Errorf("PrimFunc %s writes argument %d (%s), a frozen tensor (a constant or bound weights)", k.name, i, p.info.Name)
			}
			bd := &fr.bufs[p.buf]
			bindData(bd, t)
			bd.setShape(t.Shape)
		}
	}
	for _, b := range k.binds {
		fr.ints[b.slot] = b.what.value(&fr.bufs[b.buf], b.dim)
	}
	for _, c := range k.checks {
		if got, want := c.what.value(&fr.bufs[c.buf], c.dim), c.want(fr); got != want {
			compact := ""
			if c.what != partShape {
				compact = " (the tensor is a compact row-major array)"
			}
			return fmt.Errorf("PrimFunc %s: buffer %s %s is %d%s, expected %s = %d",
				k.name, k.bufs[c.buf].Name, c.what.describe(c.dim), got, compact, exprText(c.expr), want)
		}
	}
	return nil
}

// bindData points bd at t's elements.
func bindData(bd *bufData, t *tensor.Tensor) {
	shape, stride := bd.shape, bd.stride
	*bd = bufData{shape: shape, stride: stride, storage: t.Storage, offset: t.Offset / int64(t.DType.Size())}
	switch t.DType {
	case tensor.Float32:
		bd.f32 = tensor.Data[float32](t)
	case tensor.Float64:
		bd.f64 = tensor.Data[float64](t)
	case tensor.Int8:
		bd.i8 = tensor.Data[int8](t)
	case tensor.Int16:
		bd.i16 = tensor.Data[int16](t)
	case tensor.Int32:
		bd.i32 = tensor.Data[int32](t)
	case tensor.Int64:
		bd.i64 = tensor.Data[int64](t)
	case tensor.Uint8:
		bd.u8 = tensor.Data[uint8](t)
	case tensor.Bool:
		bd.u8 = t.Bytes() // one byte per element, 0 or 1
	case tensor.Uint16:
		bd.u16 = tensor.Data[uint16](t)
	case tensor.Uint32:
		bd.u32 = tensor.Data[uint32](t)
	case tensor.Uint64:
		bd.u64 = tensor.Data[uint64](t)
	case tensor.Float16, tensor.BFloat16:
		bd.f16 = tensor.Data[uint16](t)
	}
}

// runtimeDType is the tensor dtype of a scalar TIR type.
func runtimeDType(t ir.DataType) (tensor.DType, error) {
	if t.Lanes == 1 {
		switch storageOf(t) {
		case stF32:
			return tensor.Float32, nil
		case stF64:
			return tensor.Float64, nil
		case stI32:
			return tensor.Int32, nil
		case stI64:
			return tensor.Int64, nil
		}
	}
	return tensor.ParseDType(t.String())
}
