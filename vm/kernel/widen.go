package kernel

import (
	"slices"
	"sync"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm/abi"
)

// Kernels over float16 and bfloat16 buffers (ToMixedPrecision's output)
// run through a float32 twin when the twin takes a fast path.
//
// float16 and bfloat16 are storage formats here: every value is computed
// in float32 and rounded when stored. The fast paths (vm/blas's GEMM, the
// convolution and row kernels) read and write float32 only, so a PrimFunc
// with 16-bit buffers would run on the general closures, two orders of
// magnitude slower for a convolution. Its twin is the same PrimFunc with
// every 16-bit buffer, constant and cast retyped to float32 (a cast that
// becomes float32 to float32 disappears, so a conv reading
// T.Cast("float32", A[...]) of a float16 A matches as a float32 conv). A
// call converts the 16-bit arguments the PrimFunc reads into float32
// scratch tensors, runs the twin, and rounds the scratch of each argument
// it writes back into the 16-bit tensor.
//
// The twin computes exactly what the PrimFunc computes. Where the
// PrimFunc rounds to 16 bits (a cast, a 16-bit +, -, * or /), the twin
// makes a round trip through 16 bits: a 16-bit operation is its float32
// operation rounded, exactly (float32 carries more than 2p+2 bits of a
// p-bit format, so the double rounding is innocuous). A round trip into a
// parameter the PrimFunc only writes is left to the copy back. A PrimFunc
// is not widened when it accumulates into a 16-bit element with rounding
// arithmetic (each step rounds, which no fast path does; a running max
// does not round) or computes a 16-bit math function
// (exp in float32 rounded to float16 is not always exp rounded to
// float16).
//
// Invariants: the twin's pattern is not "general" (else the conversions
// would cost without gain); the PrimFunc has no T.ret, no 16-bit variable
// and no Allocate of 16-bit memory; scratch tensors are pooled per kernel
// and reallocated only when a shape changes, so steady-state calls do not
// allocate.

// widened is the float32 twin of a kernel and how to call it.
type widened struct {
	twin *Kernel
	half []halfParam // the parameters with 16-bit buffers
	pool sync.Pool   // *wideScratch
}

// halfParam is a parameter whose buffer has 16-bit elements.
type halfParam struct {
	index       int
	dtype       ir.DataType // Float16 or BFloat16
	read, write bool
}

// wideScratch is the float32 tensors and argument list of one call.
type wideScratch struct {
	args    []abi.Arg
	scratch []*tensor.Tensor // by halfParam
}

// exactIn reports whether v is a value of the 16-bit dtype t.
func exactIn(t ir.DataType, v float64) bool {
	f := float32(v)
	if float64(f) != v {
		return false
	}
	if t.Element() == ir.BFloat16 {
		return tensor.BF16FromFloat32(f).Float32() == f
	}
	return tensor.F16FromFloat32(f).Float32() == f
}

func isHalf(t ir.DataType) bool {
	return t.Element() == ir.Float16 || t.Element() == ir.BFloat16
}

// widen returns the float32 twin of f, and the parameters it converts, or
// nil when f is not a candidate.
func widen(f *ir.PrimFunc) (*ir.PrimFunc, []halfParam) {
	if _, ret := splitRet(f.Body); ret != nil {
		return nil, nil
	}
	var half []halfParam
	byBuf := map[*ir.Buffer]int{}
	for i, p := range f.Params {
		if b := f.BufferMap[p]; b != nil && isHalf(b.DType) {
			byBuf[b] = len(half)
			half = append(half, halfParam{index: i, dtype: b.DType.Element()})
		}
	}
	if len(half) == 0 {
		return nil, nil
	}
	// The twin must compute what f computes: f may round to 16 bits only
	// when it stores (a cast as the whole stored value), never in
	// arithmetic (a 16-bit operation rounds its result) or by
	// accumulating into a 16-bit element (each step rounds).
	ok := true
	loaded := map[*ir.Buffer]bool{}
	var stores []*ir.BufferStore
	ir.WalkStmt(f.Body, &ir.StmtVisitor{
		Stmt: func(s ir.Stmt) bool {
			switch s := s.(type) {
			case *ir.Allocate:
				ok = ok && !isHalf(s.DType)
			case *ir.AllocateConst:
				ok = ok && !isHalf(s.DType)
			case *ir.BufferStore:
				if isHalf(s.Buffer.DType) {
					stores = append(stores, s)
				}
				if i, isParam := byBuf[s.Buffer]; isParam {
					half[i].write = true
				}
			case *ir.Block:
				// A view of a parameter may read or write it.
				for _, mb := range s.MatchBuffers {
					if i, isParam := byBuf[mb.Source.Buffer]; isParam {
						half[i].read, half[i].write = true, true
					}
					loaded[mb.Source.Buffer] = true
				}
			}
			return ok
		},
		Prim: func(e ir.PrimExpr) bool {
			switch e := e.(type) {
			case *ir.PrimVar:
				ok = ok && !isHalf(e.Type)
			case *ir.BufferLoad:
				loaded[e.Buffer] = true
				if i, isParam := byBuf[e.Buffer]; isParam {
					half[i].read = true
				}
			case *ir.Binary:
				// max and min pick an operand; +, -, *, / round, which the
				// twin does with a 16-bit round trip (below).
				ok = ok && (!isHalf(e.DType()) || e.Op <= ir.OpDiv || e.Op == ir.OpMax || e.Op == ir.OpMin)
			case *ir.PrimCall:
				// if_then_else picks an operand (padding); a math call rounds.
				ok = ok && (!isHalf(e.Type) || e.Op == "if_then_else")
			case *ir.FloatImm:
				ok = ok && (!isHalf(e.Type) || exactIn(e.Type, e.Value))
			}
			return ok
		},
	})
	// An accumulation into a 16-bit element rounds at each step unless it
	// only picks values (max pooling): refuse the rounding ones.
	for _, st := range stores {
		accumulates, rounds := false, false
		ir.InspectPrim(st.Value, func(e ir.PrimExpr) bool {
			switch e := e.(type) {
			case *ir.BufferLoad:
				accumulates = accumulates || e.Buffer == st.Buffer
			case *ir.Binary:
				rounds = rounds || isHalf(e.DType()) && e.Op <= ir.OpDiv
			case *ir.Cast:
				rounds = rounds || isHalf(e.Type) && !isHalf(e.Value.DType())
			}
			return true
		})
		ok = ok && !(accumulates && rounds)
	}
	if !ok {
		return nil, nil
	}
	// An output's elements the PrimFunc does not write keep their values:
	// its scratch starts as a copy.
	for i := range half {
		half[i].read = half[i].read || half[i].write
	}
	// A 16-bit +, -, *, / is the float32 operation rounded to 16 bits:
	// float32 has more than twice the precision plus two bits of float16
	// and bfloat16, so rounding its correctly rounded result again gives
	// the correctly rounded 16-bit result (double rounding is innocuous,
	// Figueroa 1995).
	arith := &ir.TIRMutator{PostPrim: func(e ir.PrimExpr) ir.PrimExpr {
		b, isBin := e.(*ir.Binary)
		if !isBin || !isHalf(b.DType()) || b.Op > ir.OpDiv {
			return e
		}
		f32 := ir.Float32.WithLanes(int(b.DType().Lanes))
		wide := ir.NewBinary(b.Op, &ir.Cast{Type: f32, Value: b.A}, &ir.Cast{Type: f32, Value: b.B})
		return &ir.Cast{Type: b.DType(), Value: wide}
	}}
	f = arith.PrimFunc(f)
	// Every cast to 16 bits becomes a round trip through 16 bits in the
	// twin. A store's round trip stays where a later load could see the
	// unrounded value: in an intermediate buffer, or a parameter the
	// PrimFunc also reads. A parameter it only writes is rounded once,
	// when its scratch is copied back.
	wide := map[*ir.Buffer]*ir.Buffer{}
	keepRounding := map[*ir.Buffer]bool{} // by twin buffer
	m := &ir.TIRMutator{
		Buffer: func(b *ir.Buffer) *ir.Buffer {
			if !isHalf(b.DType) {
				return b
			}
			if w, ok := wide[b]; ok {
				return w
			}
			w := *b
			w.DType = ir.Float32.WithLanes(int(b.DType.Lanes))
			wide[b] = &w
			_, isParam := byBuf[b]
			keepRounding[&w] = !isParam || loaded[b]
			return &w
		},
		PostPrim: func(e ir.PrimExpr) ir.PrimExpr {
			switch e := e.(type) {
			case *ir.Cast:
				// A cast of a (now float32) 16-bit value is exact: drop it.
				if e.Value.DType() == e.Type {
					return e.Value
				}
				if isHalf(e.Type) {
					return &ir.Cast{Type: ir.Float32.WithLanes(int(e.Type.Lanes)), Value: e}
				}
			case *ir.FloatImm:
				if isHalf(e.Type) {
					return &ir.FloatImm{Type: ir.Float32.WithLanes(int(e.Type.Lanes)), Value: e.Value}
				}
			case *ir.PrimCall:
				if isHalf(e.Type) {
					return &ir.PrimCall{Op: e.Op, Args: e.Args, Type: ir.Float32.WithLanes(int(e.Type.Lanes))}
				}
			}
			return e
		},
		PostStmt: func(s ir.Stmt) ir.Stmt {
			st, isStore := s.(*ir.BufferStore)
			if !isStore {
				return s
			}
			outer, isCast := st.Value.(*ir.Cast)
			if !isCast || keepRounding[st.Buffer] {
				return s
			}
			// Only a float32 value rounds to 16 bits as the copy back
			// rounds it: a float64 (or integer) value stored unrounded
			// would give the float32 buffer a value of another type, and
			// rounding it through float32 first is a double rounding.
			inner, isCast := outer.Value.(*ir.Cast)
			if !isCast || !isHalf(inner.Type) || inner.Value.DType() != outer.Type {
				return s
			}
			n := &ir.BufferStore{Buffer: st.Buffer, Value: inner.Value, Indices: st.Indices}
			n.SetSpan(st.Span())
			return n
		},
	}
	return m.PrimFunc(f), half
}

// compileWidened attaches to k the float32 twin of f when f has 16-bit
// buffers and the twin takes a fast path.
func compileWidened(k *Kernel, f *ir.PrimFunc, name string, opts Options) {
	twinFunc, half := widen(f)
	if twinFunc == nil {
		return
	}
	twin, err := CompileWith(twinFunc, name, opts)
	if err != nil || twin.pattern == "general" {
		return
	}
	k.wide = &widened{twin: twin, half: half}
	k.pattern = twin.pattern + " (float32 twin)"
}

// call runs the twin on args: the 16-bit arguments converted to float32
// scratch, the written ones rounded back. k checks args first, so a call
// fails as the PrimFunc's own would.
func (w *widened) call(k *Kernel, args []abi.Arg) error {
	fr := k.getFrame()
	err := k.bind(fr, args)
	k.putFrame(fr)
	if err != nil {
		return err
	}
	s, _ := w.pool.Get().(*wideScratch)
	if s == nil {
		s = &wideScratch{scratch: make([]*tensor.Tensor, len(w.half))}
	}
	defer w.pool.Put(s)
	s.args = append(s.args[:0], args...)
	for i, h := range w.half {
		t := args[h.index].T
		f := s.scratch[i]
		if f == nil || !slices.Equal(f.Shape, t.Shape) {
			f = tensor.New(tensor.Float32, t.Shape...)
			s.scratch[i] = f
		}
		if h.read {
			toFloat32(tensor.Data[float32](f), t, h.dtype)
		}
		s.args[h.index] = abi.Arg{T: f}
	}
	if err := w.twin.Call(s.args); err != nil {
		return err
	}
	for i, h := range w.half {
		if h.write {
			fromFloat32(args[h.index].T, tensor.Data[float32](s.scratch[i]), h.dtype)
		}
	}
	clear(s.args) // do not keep the caller's tensors alive
	return nil
}

func toFloat32(dst []float32, src *tensor.Tensor, dt ir.DataType) {
	if dt == ir.BFloat16 {
		tensor.BF16ToFloat32s(dst, tensor.Data[tensor.BF16](src))
		return
	}
	tensor.F16ToFloat32s(dst, tensor.Data[tensor.F16](src))
}

func fromFloat32(dst *tensor.Tensor, src []float32, dt ir.DataType) {
	if dt == ir.BFloat16 {
		tensor.Float32sToBF16(tensor.Data[tensor.BF16](dst), src)
		return
	}
	tensor.Float32sToF16(tensor.Data[tensor.F16](dst), src)
}
