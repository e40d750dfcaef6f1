package ir

import "github.com/phasec/phasec/diag"

// Buffer is a dense, row-major multi-dimensional array seen by TIR code.
// Identity is the pointer; Name is a hint.
type Buffer struct {
	Name  string
	Data  *PrimVar // the handle variable holding the buffer's address
	Shape []PrimExpr
	DType DataType
	Scope string // storage scope; "" means "global"
	// The layout beyond a compact row-major array (TVM's BufferNode,
	// include/tvm/kernel/buffer.h); the zero values are TVM's defaults.
	// Variables first met in Strides or ElemOffset are defined by the
	// buffer (TVMScript's strides=("s0", 1), or the elem_offset variable
	// offset_factor= creates).
	Strides        []PrimExpr // nil: compact
	ElemOffset     PrimExpr   // nil: 0
	Align          int        // data_alignment; 0: the default, 64
	OffsetFactor   int        // 0: the default, 1
	AutoBroadcast  bool       // buffer_type="auto"
	AxisSeparators []int
	span           diag.Span
}

// DefaultAlign is TVM's runtime::kAllocAlignment, a buffer's default
// data_alignment.
const DefaultAlign = 64

// AlignOrDefault and OffsetFactorOrDefault are the values TVM's Buffer
// constructor normalizes the zero values to.
func (b *Buffer) AlignOrDefault() int        { return cmpOr(b.Align, DefaultAlign) }
func (b *Buffer) OffsetFactorOrDefault() int { return cmpOr(b.OffsetFactor, 1) }

func cmpOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// CompactLayout reports whether b is addressed as a compact row-major
// array from its handle: no strides and a zero element offset (alignment
// and offset factor only constrain where it may live).
func (b *Buffer) CompactLayout() bool {
	if len(b.Strides) > 0 {
		return false
	}
	v, ok := IntValue(b.ElemOffset)
	return b.ElemOffset == nil || ok && v == 0
}

func (b *Buffer) Span() diag.Span     { return b.span }
func (b *Buffer) SetSpan(s diag.Span) { b.span = s }

// NewBuffer returns a fresh global-scope buffer with its own data handle.
func NewBuffer(name string, shape []PrimExpr, dtype DataType) *Buffer {
	return &Buffer{Name: name, Data: NewPrimVar(name, Handle), Shape: shape, DType: dtype}
}

// Range is the half-open interval [Min, Min+Extent).
type Range struct {
	Min, Extent PrimExpr
}

// BufferRegion is the part of a buffer a block reads or writes.
type BufferRegion struct {
	Buffer *Buffer
	Region []Range
}

// Stmt is a TIR statement.
type Stmt interface {
	Span() diag.Span
	stmt()
}

type stmtBase struct{ span diag.Span }

func (b *stmtBase) Span() diag.Span     { return b.span }
func (b *stmtBase) SetSpan(s diag.Span) { b.span = s }
func (*stmtBase) stmt()                 {}

// ForKind is how a loop's iterations may be executed.
type ForKind uint8

const (
	ForSerial ForKind = iota
	ForParallel
	ForVectorized
	ForUnrolled
	ForThreadBinding
)

var forKindNames = [...]string{"serial", "parallel", "vectorized", "unroll", "thread_binding"}

// String is the TVMScript loop constructor name (T.serial, T.parallel, ...).
func (k ForKind) String() string { return forKindNames[k] }

// For runs Body for Var in [Min, Min+Extent).
type For struct {
	stmtBase
	Var         *PrimVar
	Min, Extent PrimExpr
	Kind        ForKind
	ThreadTag   string // for ForThreadBinding, e.g. "threadIdx.x"
	Body        Stmt
	Annotations Attrs
}

// BufferStore writes Value to Buffer[Indices].
type BufferStore struct {
	stmtBase
	Buffer  *Buffer
	Indices []PrimExpr
	Value   PrimExpr
}

// SeqStmt runs statements in order.
type SeqStmt struct {
	stmtBase
	Stmts []Stmt
}

// IfThenElse is a conditional statement; Else may be nil.
type IfThenElse struct {
	stmtBase
	Cond PrimExpr
	Then Stmt
	Else Stmt
}

// LetStmt binds Var to Value in Body.
type LetStmt struct {
	stmtBase
	Var   *PrimVar
	Value PrimExpr
	Body  Stmt
}

// Evaluate evaluates an expression for its effect (T.evaluate, T.ret).
type Evaluate struct {
	stmtBase
	Value PrimExpr
}

// IterKind says how a block iteration variable is used.
type IterKind uint8

const (
	IterSpatial IterKind = iota // "S": data parallel
	IterReduce                  // "R": reduction
	IterScan                    // T.axis.scan: ordered (TVM's kOrdered)
	IterOpaque                  // T.axis.opaque: no assumption (kOpaque)
)

// AxisName is the T.axis constructor of the kind.
func (k IterKind) AxisName() string {
	return [...]string{"spatial", "reduce", "scan", "opaque"}[k]
}

// String is the letter T.axis.remap uses.
func (k IterKind) String() string {
	if k == IterReduce {
		return "R"
	}
	return "S"
}

// IterVar is a block iteration variable with its domain.
type IterVar struct {
	Var  *PrimVar
	Dom  Range
	Kind IterKind
}

// Block is a unit of computation with declared iteration variables, read and
// write regions, an optional reduction Init, and buffers it allocates.
type Block struct {
	stmtBase
	Name         string
	IterVars     []*IterVar
	Reads        []BufferRegion
	Writes       []BufferRegion
	Init         Stmt // nil when the block is not a reduction
	Body         Stmt
	AllocBuffers []*Buffer
	// MatchBuffers bind buffers to regions of others (T.match_buffer in a
	// block, as tensorized TIR has): each Buffer is defined here.
	MatchBuffers []MatchBufferRegion
	Annotations  Attrs
}

// MatchBufferRegion views Source, a region of another buffer, as Buffer
// (TVM's MatchBufferRegion).
type MatchBufferRegion struct {
	Buffer *Buffer
	Source BufferRegion
}

// BlockRealize instantiates a block: IterValues bind its IterVars.
// Predicate is nil when it is the constant true.
type BlockRealize struct {
	stmtBase
	IterValues []PrimExpr
	Predicate  PrimExpr
	Block      *Block
}

// PrimFunc is a TIR function. Params are handle or scalar variables;
// BufferMap gives the buffer a handle parameter is viewed as. A PrimFunc
// returns nothing (Ret is Void) unless it ends with T.ret.
type PrimFunc struct {
	Params    []*PrimVar
	BufferMap map[*PrimVar]*Buffer
	Body      Stmt
	Ret       DataType
	Attrs     Attrs
	span      diag.Span
}

func (f *PrimFunc) Span() diag.Span     { return f.span }
func (f *PrimFunc) SetSpan(s diag.Span) { f.span = s }
func (f *PrimFunc) FuncAttrs() Attrs    { return f.Attrs }
func (*PrimFunc) baseFunc()             {}

// ParamBuffer returns the buffer bound to parameter i, or nil for a scalar.
func (f *PrimFunc) ParamBuffer(i int) *Buffer { return f.BufferMap[f.Params[i]] }

// AttrStmt annotates Body with Key = Value on a node, as lowered TIR does.
// A thread launch (Key "thread_extent" or "virtual_thread") has Thread set:
// the thread index variable, defined here and scoped over Body, bound to
// the hardware thread Tag ("blockIdx.x") with extent Value (TVMScript
// T.launch_thread). Otherwise Node is the annotated expression (T.attr),
// or Reducer when the node is a commutative reducer (lowered allreduce's
// "reduce_scope" attribute); Node is nil then.
type AttrStmt struct {
	stmtBase
	Thread  *PrimVar
	Tag     string
	Node    PrimExpr
	Reducer *CommReducer
	Key     string
	Value   PrimExpr
	Body    Stmt
}

// CommReducer is a commutative reduction (TVM's tir::CommReducer, TVMScript
// T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)])): Result combines
// the left operands Lhs with the right ones Rhs, one value per element of
// Identity, each of its identity element's type. Lhs and Rhs are bound in
// Result only; the reducer is a closed term, so traversals visit Identity
// alone and mutators keep it as it is.
type CommReducer struct {
	Lhs, Rhs []*PrimVar
	Result   []PrimExpr
	Identity []PrimExpr
}

// While runs Body as long as Cond holds (TVM's tir::While: TVMScript
// `while cond:` or `with T.While(cond):`).
type While struct {
	stmtBase
	Cond PrimExpr
	Body Stmt
}

// Allocate reserves memory for Body, as lowered TIR does (T.allocate):
// Data is the handle variable it defines, scoped over Body, pointing to
// the product of Extents elements of DType in storage Scope ("global",
// "shared", "local", ...). Condition is nil when it is the constant true.
// Buffers view the memory through a DeclBuffer whose Buffer.Data is Data.
type Allocate struct {
	stmtBase
	Data        *PrimVar
	DType       DataType
	Extents     []PrimExpr
	Scope       string
	Condition   PrimExpr
	Annotations Attrs
	Body        Stmt
}

// AllocateConst is an Allocate whose memory holds constant data
// (T.allocate_const): Values are the elements in row-major order, integer
// or float constants of DType.
type AllocateConst struct {
	stmtBase
	Data    *PrimVar
	DType   DataType
	Extents []PrimExpr
	Values  []PrimExpr
	Body    Stmt
}

// DeclBuffer declares Buffer over the memory its Data handle points to, for
// Body (T.decl_buffer). The handle is defined elsewhere (an Allocate, a
// parameter buffer's data): a DeclBuffer defines the buffer, not memory.
type DeclBuffer struct {
	stmtBase
	Buffer *Buffer
	Body   Stmt
}

// ScopeString is s as TVM names a storage scope: "global" for "".
func ScopeString(s string) string {
	if s == "" {
		return "global"
	}
	return s
}

// ScopeBody returns the body of a statement that wraps exactly one body
// (For, LetStmt, AttrStmt, While, Allocate, AllocateConst, DeclBuffer), so
// analyses that only follow bodies need not list every kind.
func ScopeBody(s Stmt) (Stmt, bool) {
	switch s := s.(type) {
	case *For:
		return s.Body, true
	case *LetStmt:
		return s.Body, true
	case *AttrStmt:
		return s.Body, true
	case *While:
		return s.Body, true
	case *Allocate:
		return s.Body, true
	case *AllocateConst:
		return s.Body, true
	case *DeclBuffer:
		return s.Body, true
	}
	return nil, false
}

// AllocatedDeclBuffer returns the DeclBuffer an Allocate's body is when it
// declares a buffer over exactly the allocated memory (same handle, dtype
// and shape, no condition or annotations): TVMScript's
// "A = T.decl_buffer(shape, dtype, scope=...)" without data= is this pair,
// and TVM's printer writes the pair that way (IsAllocateDeclBufferPattern,
// src/script/printer/tir/stmt.cc).
func AllocatedDeclBuffer(a *Allocate) (*DeclBuffer, bool) {
	d, ok := a.Body.(*DeclBuffer)
	if !ok || d.Buffer.Data != a.Data || d.Buffer.DType != a.DType || a.Condition != nil ||
		len(a.Annotations) > 0 || len(a.Extents) != len(d.Buffer.Shape) {
		return nil, false
	}
	for i, e := range a.Extents {
		if !StructuralEqual(e, d.Buffer.Shape[i], EqualOptions{}) {
			return nil, false
		}
	}
	return d, true
}
