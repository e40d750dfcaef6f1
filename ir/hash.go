package ir

import (
	"github.com/phasec/phasec/internal/ptrmap"
	"math"
	"math/bits"
	"sync"
)

// StructuralHash hashes an IR value consistently with StructuralEqual
// (without free-variable mapping): equal values hash equally.
//
// The hasher walks values in the same order as the comparison. Variables
// hash by the order in which they are first met (definition order), never by
// name; integer symbolic expressions hash in Simplify's canonical form, with
// the operands of commutative chains (+, *, min, max, ==, !=, and, or)
// combined order-independently so that the canonical operand order may
// depend on names without breaking alpha-equivalence. Constants hash at most
// their first 4 KiB of data (equality still compares all of it).
func StructuralHash(x any) uint64 {
	h := hashers.Get().(*hasher)
	h.top(x)
	r := fmix(h.h)
	h.release()
	return r
}

type hasher struct {
	h     uint64
	vars  ptrmap.Map[Var, uint32]
	prims ptrmap.Map[PrimVar, uint32]
	bufs  ptrmap.Map[Buffer, uint32]
	next  uint32 // ordinal of the next variable met
	// lastS, lastSH cache the sub-hash of the last definition struct info
	// that introduced no new variables: its hash cannot change later.
	lastS  StructInfo
	lastSH uint64
}

const hashSeed = 0x243f6a8885a308d3

// Node tags keep different kinds of nodes with similar contents apart.
const (
	tagNil uint64 = iota + 1
	tagModule
	tagFunction
	tagPrimFunc
	tagVarDef
	tagVarUse
	tagGlobalVar
	tagExternFunc
	tagOp
	tagConstant
	tagShapeExpr
	tagPrimValue
	tagStringImm
	tagDataTypeImm
	tagTuple
	tagTupleGetItem
	tagCall
	tagIf
	tagSeqExpr
	tagBlock
	tagVarBinding
	tagMatchCast
	tagObjectInfo
	tagPrimInfo
	tagShapeInfo
	tagTensorInfo
	tagTupleInfo
	tagFuncInfo
	tagIntImm
	tagFloatImm
	tagPrimStr
	tagPrimVar
	tagBinary
	tagNot
	tagSelect
	tagCast
	tagPrimCall
	tagBufferLoad
	tagBuffer
	tagFor
	tagBufferStore
	tagSeqStmt
	tagIfThenElse
	tagLetStmt
	tagAttrStmt
	tagEvaluate
	tagBlockRealize
	tagTIRBlock
	tagAttrs
	tagList
	tagUnknown
	tagWhile
	tagAllocate
	tagAllocateConst
	tagDeclBuffer
)

// hashers recycles hashers and their variable tables (see eqStates).
var hashers = sync.Pool{New: func() any { return newHasher() }}

func newHasher() *hasher {
	return &hasher{h: hashSeed}
}

// release empties h and returns it to the pool, keeping only its tables.
func (h *hasher) release() {
	h.vars.Recycle()
	h.prims.Recycle()
	h.bufs.Recycle()
	*h = hasher{h: hashSeed, vars: h.vars, prims: h.prims, bufs: h.bufs}
	hashers.Put(h)
}

func (h *hasher) resetVars() {
	h.vars.Reset()
	h.prims.Reset()
	h.bufs.Reset()
	h.next = 0
	h.lastS = nil
}

func (h *hasher) mix(x uint64) {
	h.h = bits.RotateLeft64((h.h^x)*0x9e3779b97f4a7c15, 31) * 0xbf58476d1ce4e5b9
}

func (h *hasher) mixBool(b bool) {
	if b {
		h.mix(1)
	} else {
		h.mix(0)
	}
}

func (h *hasher) mixString(s string) {
	x := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		x ^= uint64(s[i])
		x *= 1099511628211
	}
	h.mix(x ^ uint64(len(s)))
}

func (h *hasher) mixDType(t DataType) {
	h.mix(uint64(t.Code)<<32 | uint64(t.Bits)<<16 | uint64(t.Lanes))
}

// fmix is the murmur3 finalizer.
func fmix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// sub hashes f in a fresh accumulator and returns the result, leaving the
// running state untouched (variable ordinals are shared).
func (h *hasher) sub(f func()) uint64 {
	saved := h.h
	h.h = hashSeed
	f()
	r := fmix(h.h)
	h.h = saved
	return r
}

func (h *hasher) top(x any) {
	switch v := x.(type) {
	case nil:
		h.mix(tagNil)
	case *Module:
		h.module(v)
	case *PrimFunc:
		h.primFunc(v)
	case Expr:
		h.expr(v)
	case StructInfo:
		h.sinfo(v)
	case PrimExpr:
		h.prim(v)
	case Stmt:
		h.stmt(v)
	case Binding:
		h.binding(v)
	case *BindingBlock:
		h.block(v)
	default:
		h.mix(tagUnknown)
	}
}

func (h *hasher) module(m *Module) {
	h.mix(tagModule)
	h.attrs(m.Attrs)
	h.mix(uint64(len(m.VDevices)))
	for _, d := range m.VDevices {
		h.mixString(d.String())
	}
	h.mixString(globalInfoListsString(m.GlobalInfos))
	h.mix(uint64(m.Len()))
	for name, f := range m.Functions() {
		h.resetVars()
		h.mixString(name)
		switch f := f.(type) {
		case *Function:
			h.function(f)
		case *PrimFunc:
			h.primFunc(f)
		case *ExternFunc:
			h.mixString(f.Symbol)
		default:
			h.mix(tagUnknown)
		}
	}
}

func (h *hasher) attrs(a Attrs) {
	if len(a) == 0 {
		h.mix(tagAttrs)
		return
	}
	h.mix(tagAttrs + uint64(len(a))<<8)
	for _, k := range a.Keys() {
		h.mixString(k)
		h.attrValue(a[k])
	}
}

func (h *hasher) attrValue(v any) {
	switch x := v.(type) {
	case nil:
		h.mix(tagNil)
	case bool:
		h.mix(101)
		h.mixBool(x)
	case int64:
		h.mix(102)
		h.mix(uint64(x))
	case int:
		h.mix(103)
		h.mix(uint64(x))
	case float64:
		h.mix(104)
		if x != x {
			h.mix(0x7ff8000000000001)
		} else {
			h.mix(math.Float64bits(x))
		}
	case string:
		h.mix(105)
		h.mixString(x)
	case DataType:
		h.mix(106)
		h.mixDType(x)
	case PrimExpr:
		h.prim(x)
	case StructInfo:
		h.sinfo(x)
	case Expr:
		h.expr(x)
	case []any:
		h.mix(tagList + uint64(len(x))<<8)
		for _, e := range x {
			h.attrValue(e)
		}
	case Attrs:
		h.attrs(x)
	case *Target:
		h.mix(108)
		h.attrs(x.Config)
	case *IndexMap:
		h.mix(107 + uint64(len(x.Params))<<8)
		for _, p := range x.Params {
			h.primVarOrd(p)
		}
		for _, r := range x.Results {
			h.prim(r)
		}
	default:
		h.mix(tagUnknown)
	}
}

// Relax.

// defineVar hashes a definition. Variables are numbered in the order they
// are met, so definitions and uses need no separate treatment of the
// symbolic variables their struct info defines.
func (h *hasher) defineVar(v *Var) {
	h.mix(tagVarDef)
	if _, ok := h.vars.Get(v); !ok {
		h.vars.Set(v, h.next)
		h.next++
	}
	h.mixBool(v.Dataflow)
	s := v.StructInfo()
	if s != nil && s == h.lastS {
		h.mix(h.lastSH)
		return
	}
	before := h.next
	sh := h.sub(func() { h.sinfo(s) })
	if h.next == before {
		h.lastS, h.lastSH = s, sh
	}
	h.mix(sh)
}

func (h *hasher) useVar(v *Var) {
	h.mix(tagVarUse)
	ord, ok := h.vars.Get(v)
	if !ok {
		ord = h.next
		h.vars.Set(v, ord)
		h.next++
	}
	h.mix(uint64(ord))
}

func (h *hasher) expr(e Expr) {
	switch x := e.(type) {
	case nil:
		h.mix(tagNil)
	case *Var:
		h.useVar(x)
	case *GlobalVar:
		h.mix(tagGlobalVar)
		h.mixString(x.Name)
	case *ExternFunc:
		h.mix(tagExternFunc)
		h.mixString(x.Symbol)
	case *Op:
		h.mix(tagOp)
		h.mixString(x.Name)
	case *Constant:
		h.mix(tagConstant)
		h.ndarray(x.Data)
	case *ShapeExpr:
		h.mix(tagShapeExpr + uint64(len(x.Values))<<8)
		for _, v := range x.Values {
			h.prim(v)
		}
	case *PrimValue:
		h.mix(tagPrimValue)
		h.prim(x.Value)
	case *StringImm:
		h.mix(tagStringImm)
		h.mixString(x.Value)
	case *DataTypeImm:
		h.mix(tagDataTypeImm)
		h.mixDType(x.Value)
	case *Tuple:
		h.mix(tagTuple + uint64(len(x.Fields))<<8)
		for _, f := range x.Fields {
			h.expr(f)
		}
	case *TupleGetItem:
		h.mix(tagTupleGetItem)
		h.mix(uint64(x.Index))
		h.expr(x.Tuple)
	case *Call:
		h.mix(tagCall + uint64(len(x.Args))<<8)
		h.expr(x.Op)
		for _, a := range x.Args {
			h.expr(a)
		}
		h.attrs(x.Attrs)
		h.mix(uint64(len(x.SInfoArgs)))
		for _, s := range x.SInfoArgs {
			h.sinfo(s)
		}
	case *If:
		h.mix(tagIf)
		h.expr(x.Cond)
		h.expr(x.Then)
		h.expr(x.Else)
	case *SeqExpr:
		h.mix(tagSeqExpr + uint64(len(x.Blocks))<<8)
		for _, b := range x.Blocks {
			h.block(b)
		}
		h.expr(x.Body)
	case *Function:
		h.function(x)
	default:
		h.mix(tagUnknown)
	}
}

func (h *hasher) ndarray(a *NDArray) {
	if a == nil {
		h.mix(tagNil)
		return
	}
	h.mixDType(a.DType)
	h.mix(uint64(len(a.Shape)))
	for _, d := range a.Shape {
		h.mix(uint64(d))
	}
	data := a.Data
	h.mix(uint64(len(data)))
	if len(data) > 4096 {
		data = data[:4096]
	}
	h.mixString(string(data))
}

func (h *hasher) function(f *Function) {
	if h.vars.Len() == 0 {
		h.vars.Reserve(countDefs(f))
	}
	h.mix(tagFunction + uint64(len(f.Params))<<8)
	for _, p := range f.Params {
		h.defineVar(p)
	}
	h.sinfo(f.Ret)
	h.mixBool(f.Pure)
	h.attrs(f.Attrs)
	h.expr(f.Body)
}

func (h *hasher) block(b *BindingBlock) {
	h.mix(tagBlock + uint64(len(b.Bindings))<<8)
	h.mixBool(b.Dataflow)
	for _, bd := range b.Bindings {
		h.binding(bd)
	}
}

func (h *hasher) binding(b Binding) {
	switch x := b.(type) {
	case *VarBinding:
		h.mix(tagVarBinding)
		if bindsFunction(x) {
			// Same order as the comparison: a local function may call
			// itself, so its var is numbered before the body.
			h.defineVar(x.Var)
			h.expr(x.Value)
			return
		}
		h.expr(x.Value)
		h.defineVar(x.Var)
	case *MatchCast:
		h.mix(tagMatchCast)
		h.expr(x.Value)
		h.sinfo(x.SInfo)
		h.defineVar(x.Var)
	default:
		h.mix(tagUnknown)
	}
}

func (h *hasher) sinfo(s StructInfo) {
	switch x := s.(type) {
	case nil:
		h.mix(tagNil)
	case *ObjectInfo:
		h.mix(tagObjectInfo)
	case *PrimInfo:
		h.mix(tagPrimInfo)
		h.mixDType(x.DType)
		if x.Value == nil {
			h.mix(tagNil)
		} else {
			h.prim(x.Value)
		}
	case *ShapeInfo:
		h.mix(tagShapeInfo)
		h.mix(uint64(int64(x.NDim)))
		h.mixBool(x.Known())
		for _, v := range x.Values {
			h.prim(v)
		}
	case *TensorInfo:
		h.mix(tagTensorInfo)
		h.mixDType(x.DType)
		h.mix(uint64(int64(x.NDim)))
		if x.VDevice != nil {
			h.mixString(x.VDevice.Kind())
			h.mix(uint64(x.VDevice.ID))
		}
		switch sh := x.Shape.(type) {
		case nil:
			h.mix(tagNil)
		case *ShapeExpr:
			h.mix(tagShapeExpr + uint64(len(sh.Values))<<8)
			for _, v := range sh.Values {
				h.prim(v)
			}
		default:
			h.expr(sh)
		}
	case *TupleInfo:
		h.mix(tagTupleInfo + uint64(len(x.Fields))<<8)
		for _, f := range x.Fields {
			h.sinfo(f)
		}
	case *FuncInfo:
		h.mix(tagFuncInfo + uint64(len(x.Params))<<8)
		h.mixBool(x.Opaque)
		h.mixBool(x.Pure)
		for _, p := range x.Params {
			h.sinfo(p)
		}
		h.sinfo(x.Ret)
	default:
		h.mix(tagUnknown)
	}
}

// PrimExpr.

func (h *hasher) primVarOrd(v *PrimVar) uint32 {
	ord, ok := h.prims.Get(v)
	if !ok {
		ord = h.next
		h.prims.Set(v, ord)
		h.next++
	}
	return ord
}

func (h *hasher) prim(p PrimExpr) {
	if p == nil {
		h.mix(tagNil)
		return
	}
	// Number variables in the order the comparison meets them (as written),
	// then hash the canonical form.
	VisitPrimVars(p, func(v *PrimVar) { h.primVarOrd(v) })
	if canonicalizable(p) {
		p = Simplify(p)
	}
	h.primCanon(p)
}

func commutative(op BinaryOp) bool {
	switch op {
	case OpAdd, OpMul, OpMin, OpMax, OpEQ, OpNE, OpAnd, OpOr:
		return true
	}
	return false
}

func (h *hasher) primCanon(p PrimExpr) {
	switch x := p.(type) {
	case nil:
		h.mix(tagNil)
	case *IntImm:
		h.mix(tagIntImm)
		h.mixDType(x.Type)
		h.mix(uint64(x.Value))
	case *FloatImm:
		h.mix(tagFloatImm)
		h.mixDType(x.Type)
		h.mix(math.Float64bits(x.Value))
	case *PrimStr:
		h.mix(tagPrimStr)
		h.mixString(x.Value)
	case *PrimVar:
		h.mix(tagPrimVar)
		h.mixDType(x.Type)
		h.mix(uint64(h.primVarOrd(x)))
	case *Binary:
		h.mix(tagBinary + uint64(x.Op)<<8)
		if commutative(x.Op) {
			// Order-independent sum over the flattened chain.
			var sum uint64
			h.chain(x.Op, x, &sum)
			h.mix(sum)
			return
		}
		h.primCanon(x.A)
		h.primCanon(x.B)
	case *Not:
		h.mix(tagNot)
		h.primCanon(x.A)
	case *Select:
		h.mix(tagSelect)
		h.primCanon(x.Cond)
		h.primCanon(x.True)
		h.primCanon(x.False)
	case *Cast:
		h.mix(tagCast)
		h.mixDType(x.Type)
		h.primCanon(x.Value)
	case *PrimCall:
		h.mix(tagPrimCall + uint64(len(x.Args))<<8)
		h.mixString(x.Op)
		h.mixDType(x.Type)
		for _, a := range x.Args {
			h.primCanon(a)
		}
	case *BufferLoad:
		h.mix(tagBufferLoad + uint64(len(x.Indices))<<8)
		h.useBuffer(x.Buffer)
		for _, i := range x.Indices {
			h.primCanon(i)
		}
	default:
		h.mix(tagUnknown)
	}
}

// chain adds the hashes of the operands of a chain of op to sum.
func (h *hasher) chain(op BinaryOp, p PrimExpr, sum *uint64) {
	if b, ok := p.(*Binary); ok && b.Op == op {
		h.chain(op, b.A, sum)
		h.chain(op, b.B, sum)
		return
	}
	*sum += h.sub(func() { h.primCanon(p) })
}

// TIR.

func (h *hasher) definePrim(v *PrimVar) {
	if v == nil {
		h.mix(tagNil)
		return
	}
	h.mix(tagPrimVar)
	h.mixDType(v.Type)
	h.mix(uint64(h.primVarOrd(v)))
}

func (h *hasher) defineBuffer(b *Buffer) {
	h.mix(tagBuffer)
	if _, ok := h.bufs.Get(b); !ok {
		h.bufs.Set(b, h.next)
		h.next++
	}
	h.mixDType(b.DType)
	h.mixString(b.Scope)
	h.mix(uint64(len(b.Shape)))
	for _, d := range b.Shape {
		h.prim(d)
	}
	h.mix(uint64(len(b.Strides)))
	for _, d := range b.Strides {
		h.prim(d)
	}
	h.prim(b.ElemOffset)
	h.mix(uint64(b.AlignOrDefault())<<32 | uint64(b.OffsetFactorOrDefault()))
	if b.AutoBroadcast {
		h.mix(1)
	}
	for _, a := range b.AxisSeparators {
		h.mix(uint64(a))
	}
	h.definePrim(b.Data)
}

func (h *hasher) useBuffer(b *Buffer) {
	h.mix(tagBuffer)
	ord, ok := h.bufs.Get(b)
	if !ok {
		ord = h.next
		h.bufs.Set(b, ord)
		h.next++
	}
	h.mix(uint64(ord))
}

func (h *hasher) primFunc(f *PrimFunc) {
	h.mix(tagPrimFunc + uint64(len(f.Params))<<8)
	for _, p := range f.Params {
		h.definePrim(p)
		if b := f.BufferMap[p]; b != nil {
			h.defineBuffer(b)
		} else {
			h.mix(tagNil)
		}
	}
	h.mixDType(f.Ret)
	h.attrs(f.Attrs)
	h.stmt(f.Body)
}

func (h *hasher) stmt(s Stmt) {
	switch x := s.(type) {
	case nil:
		h.mix(tagNil)
	case *For:
		h.mix(tagFor + uint64(x.Kind)<<8)
		h.mixString(x.ThreadTag)
		h.prim(x.Min)
		h.prim(x.Extent)
		h.definePrim(x.Var)
		h.attrs(x.Annotations)
		h.stmt(x.Body)
	case *BufferStore:
		h.mix(tagBufferStore + uint64(len(x.Indices))<<8)
		h.useBuffer(x.Buffer)
		for _, i := range x.Indices {
			h.prim(i)
		}
		h.prim(x.Value)
	case *SeqStmt:
		h.mix(tagSeqStmt + uint64(len(x.Stmts))<<8)
		for _, st := range x.Stmts {
			h.stmt(st)
		}
	case *IfThenElse:
		h.mix(tagIfThenElse)
		h.prim(x.Cond)
		h.stmt(x.Then)
		h.stmt(x.Else)
	case *LetStmt:
		h.mix(tagLetStmt)
		h.prim(x.Value)
		h.definePrim(x.Var)
		h.stmt(x.Body)
	case *AttrStmt:
		h.mix(tagAttrStmt)
		h.mixString(x.Key)
		h.mixString(x.Tag)
		h.prim(x.Value)
		if x.Node != nil {
			h.prim(x.Node)
		}
		if r := x.Reducer; r != nil {
			for _, e := range r.Identity {
				h.prim(e)
			}
			for i := range r.Lhs {
				h.definePrim(r.Lhs[i])
				h.definePrim(r.Rhs[i])
			}
			for _, e := range r.Result {
				h.prim(e)
			}
		}
		if x.Thread != nil {
			h.definePrim(x.Thread)
		}
		h.stmt(x.Body)
	case *Evaluate:
		h.mix(tagEvaluate)
		h.prim(x.Value)
	case *While:
		h.mix(tagWhile)
		h.prim(x.Cond)
		h.stmt(x.Body)
	case *Allocate:
		h.mix(tagAllocate + uint64(len(x.Extents))<<8)
		h.mixDType(x.DType)
		h.mixString(ScopeString(x.Scope))
		for _, e := range x.Extents {
			h.prim(e)
		}
		h.prim(x.Condition)
		h.attrs(x.Annotations)
		h.definePrim(x.Data)
		h.stmt(x.Body)
	case *AllocateConst:
		h.mix(tagAllocateConst + uint64(len(x.Extents))<<8 + uint64(len(x.Values))<<24)
		h.mixDType(x.DType)
		for _, e := range x.Extents {
			h.prim(e)
		}
		for _, v := range x.Values {
			h.prim(v)
		}
		h.definePrim(x.Data)
		h.stmt(x.Body)
	case *DeclBuffer:
		h.mix(tagDeclBuffer)
		h.defineBuffer(x.Buffer)
		h.stmt(x.Body)
	case *BlockRealize:
		h.mix(tagBlockRealize + uint64(len(x.IterValues))<<8)
		for _, v := range x.IterValues {
			h.prim(v)
		}
		h.prim(x.Predicate)
		h.stmt(x.Block)
	case *Block:
		h.mix(tagTIRBlock + uint64(len(x.IterVars))<<8)
		for _, iv := range x.IterVars {
			h.mix(uint64(iv.Kind))
			h.prim(iv.Dom.Min)
			h.prim(iv.Dom.Extent)
			h.definePrim(iv.Var)
		}
		h.mix(uint64(len(x.AllocBuffers)))
		for _, b := range x.AllocBuffers {
			h.defineBuffer(b)
		}
		h.mix(uint64(len(x.MatchBuffers)))
		for _, mb := range x.MatchBuffers {
			h.regions([]BufferRegion{mb.Source})
			h.defineBuffer(mb.Buffer)
		}
		h.regions(x.Reads)
		h.regions(x.Writes)
		h.stmt(x.Init)
		h.stmt(x.Body)
		h.attrs(x.Annotations)
	default:
		h.mix(tagUnknown)
	}
}

func (h *hasher) regions(rs []BufferRegion) {
	h.mix(tagList + uint64(len(rs))<<8)
	for _, r := range rs {
		h.useBuffer(r.Buffer)
		h.mix(uint64(len(r.Region)))
		for _, rg := range r.Region {
			h.prim(rg.Min)
			h.prim(rg.Extent)
		}
	}
}
