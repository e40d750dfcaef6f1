package kernel

import (
	"fmt"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/tensor"
)

// chunkSize is the number of iterations vector mode processes per step:
// large enough to amortise the per-chunk closure calls, small enough that a
// body's scratch vectors stay in L1.
const chunkSize = 1024

// bufData is a buffer bound in a frame: the typed slice for its dtype (only
// one field is set), its runtime shape and row-major strides in elements.
type bufData struct {
	f32 []float32
	f64 []float64
	i8  []int8
	i16 []int16
	i32 []int32
	i64 []int64
	u8  []uint8 // uint8 and bool (one byte per element)
	u16 []uint16
	u32 []uint32
	u64 []uint64
	f16 []uint16 // float16 / bfloat16 bits

	shape  []int64
	stride []int64

	// The bound tensor's storage and element offset: kernels keep values
	// derived from frozen storage with it (packed weights).
	storage *tensor.Storage
	offset  int64
}

// setShape records shape and computes row-major strides.
func (b *bufData) setShape(shape []int64) {
	copy(b.shape, shape)
	s := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		b.stride[d] = s
		s *= shape[d]
	}
}

// advance drops the first off elements of b's storage, so that offset 0
// addresses element off (a buffer's element offset).
func (b *bufData) advance(off int64) {
	if off == 0 {
		return
	}
	b.f32, b.f64, b.i8, b.i16 = tail(b.f32, off), tail(b.f64, off), tail(b.i8, off), tail(b.i16, off)
	b.i32, b.i64, b.u8, b.u16 = tail(b.i32, off), tail(b.i64, off), tail(b.u8, off), tail(b.u16, off)
	b.u32, b.u64, b.f16 = tail(b.u32, off), tail(b.u64, off), tail(b.f16, off)
}

func tail[T any](s []T, off int64) []T {
	if s == nil {
		return nil
	}
	return s[off:]
}

// ensure makes b hold at least n elements of dt, reusing its storage.
func (b *bufData) ensure(dt ir.DataType, n int64) {
	switch storageOf(dt) {
	case stF32:
		b.f32 = grow(b.f32, n)
	case stF64:
		b.f64 = grow(b.f64, n)
	case stI8:
		b.i8 = grow(b.i8, n)
	case stI16:
		b.i16 = grow(b.i16, n)
	case stI32:
		b.i32 = grow(b.i32, n)
	case stI64:
		b.i64 = grow(b.i64, n)
	case stU8:
		b.u8 = grow(b.u8, n)
	case stU16:
		b.u16 = grow(b.u16, n)
	case stU32:
		b.u32 = grow(b.u32, n)
	case stU64:
		b.u64 = grow(b.u64, n)
	case stF16, stBF16:
		b.f16 = grow(b.f16, n)
	}
}

func grow[T any](s []T, n int64) []T {
	if int64(cap(s)) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// storage is how a dtype's elements are stored.
type storage uint8

const (
	stNone storage = iota
	stF32
	stF64
	stI8
	stI16
	stI32
	stI64
	stU8
	stU16
	stU32
	stU64
	stF16
	stBF16
)

func storageOf(dt ir.DataType) storage {
	if dt.Lanes > 1 {
		return stNone
	}
	switch dt.Code {
	case ir.CodeFloat:
		switch dt.Bits {
		case 16:
			return stF16
		case 32:
			return stF32
		case 64:
			return stF64
		}
	case ir.CodeBFloat:
		return stBF16
	case ir.CodeBool:
		return stU8
	case ir.CodeInt:
		switch dt.Bits {
		case 8:
			return stI8
		case 16:
			return stI16
		case 32:
			return stI32
		case 64:
			return stI64
		}
	case ir.CodeUInt:
		switch dt.Bits {
		case 8:
			return stU8
		case 16:
			return stU16
		case 32:
			return stU32
		case 64:
			return stU64
		}
	}
	return stNone
}

// frame is the mutable state of one running call: variable slots, bound
// buffers, storage for allocated buffers and vector scratch. Frames are
// pooled per kernel; a parallel loop gives each worker its own frame.
type frame struct {
	ints  []int64
	flts  []float64
	bufs  []bufData
	alloc []bufData // storage behind allocated buffers, private to the frame
	s32   [][]float32
	s64   [][]float64
	si    [][]int64
	// inParallel is set in worker frames: nested parallel loops run serially.
	inParallel bool
}

func (k *Kernel) newFrame() *frame {
	fr := &frame{
		ints:  make([]int64, k.nInts),
		flts:  make([]float64, k.nFlts),
		bufs:  make([]bufData, len(k.bufs)),
		alloc: make([]bufData, len(k.bufs)),
		s32:   make([][]float32, k.nS32),
		s64:   make([][]float64, k.nS64),
		si:    make([][]int64, k.nSI),
	}
	for i, b := range k.bufs {
		fr.bufs[i].shape = make([]int64, len(b.Shape))
		fr.bufs[i].stride = make([]int64, len(b.Shape))
	}
	for i := range fr.s32 {
		fr.s32[i] = make([]float32, chunkSize)
	}
	for i := range fr.s64 {
		fr.s64[i] = make([]float64, chunkSize)
	}
	for i := range fr.si {
		fr.si[i] = make([]int64, chunkSize)
	}
	return fr
}

// copyFrom makes fr a copy of the state of parent for a parallel worker:
// slots and buffer bindings are copied (buffers share storage, as TIR
// buffers allocated outside a parallel loop are shared by its iterations).
func (fr *frame) copyFrom(parent *frame) {
	copy(fr.ints, parent.ints)
	copy(fr.flts, parent.flts)
	for i := range fr.bufs {
		shape, stride := fr.bufs[i].shape, fr.bufs[i].stride
		fr.bufs[i] = parent.bufs[i]
		copy(shape, parent.bufs[i].shape)
		copy(stride, parent.bufs[i].stride)
		fr.bufs[i].shape, fr.bufs[i].stride = shape, stride
	}
	fr.inParallel = true
}

// runtimeError is a fault detected while a kernel runs; Call recovers it
// and returns it as an error.
type runtimeError struct{ msg string }

func (e *runtimeError) Error() string { return e.msg }

func fault(format string, args ...any) {
	panic(&runtimeError{msg: fmt.Sprintf(format, args...)})
}
