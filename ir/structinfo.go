package ir

// StructInfo is Relax's combined type and static-value information. The six
// kinds form a lattice with ObjectInfo at the top; see lattice.go for the base
// check, LCA and erasure.
//
// StructInfo values are immutable; share them freely.
type StructInfo interface {
	structInfo()
}

// ObjectInfo is any runtime object (R.Object): the top of the lattice.
type ObjectInfo struct {
	// failed marks the R.Object a failed inference yields (see
	// failedInfo); it is not part of the value: every ObjectInfo is equal.
	// It also keeps the type from being zero-sized, whose pointers Go may
	// make all equal.
	failed bool
}

// PrimInfo is a scalar of DType, with its symbolic value when known (R.Prim).
type PrimInfo struct {
	DType DataType
	Value PrimExpr // nil when unknown
}

// ShapeInfo is a shape value (R.Shape). Values is nil when the dimensions are
// unknown; NDim is -1 when the rank is unknown. When Values is non-nil,
// NDim == len(Values).
type ShapeInfo struct {
	Values []PrimExpr
	NDim   int
}

// Known reports whether the dimension values are known.
func (s *ShapeInfo) Known() bool { return s.Values != nil }

// TensorInfo is a tensor (R.Tensor). Shape is nil (unknown), a *ShapeExpr, or
// a *Var whose struct info is a ShapeInfo. DType is Void when unknown and NDim
// is -1 when unknown; when Shape is a *ShapeExpr, NDim equals its length.
type TensorInfo struct {
	Shape Expr
	DType DataType
	NDim  int
	// VDevice is the virtual device the tensor lives on, nil if unknown.
	VDevice *VDevice
}

// Dims returns the tensor's dimension expressions when its shape is a known
// ShapeExpr (directly or through a shape var with known values).
func (t *TensorInfo) Dims() ([]PrimExpr, bool) {
	switch s := t.Shape.(type) {
	case *ShapeExpr:
		return s.Values, true
	case *Var:
		if si, ok := s.StructInfo().(*ShapeInfo); ok && si.Known() {
			return si.Values, true
		}
	}
	return nil, false
}

// TupleInfo is a tuple (R.Tuple); the empty tuple is the conventional void.
type TupleInfo struct {
	Fields []StructInfo
}

// FuncInfo is a callable (R.Callable). Opaque functions accept any arguments
// (Params is nil); their return info comes from Ret or, for extern functions,
// from Derive applied to the call.
type FuncInfo struct {
	Params []StructInfo
	Opaque bool
	Ret    StructInfo
	Pure   bool
	// Derive, when set, computes the return info of a call to an opaque
	// function (e.g. from the call's sinfo_args). It is not part of equality.
	Derive func(call *Call) (StructInfo, error)
}

func (*ObjectInfo) structInfo() {}
func (*PrimInfo) structInfo()   {}
func (*ShapeInfo) structInfo()  {}
func (*TensorInfo) structInfo() {}
func (*TupleInfo) structInfo()  {}
func (*FuncInfo) structInfo()   {}

// Constructors.

// Object returns R.Object.
func Object() *ObjectInfo { return &ObjectInfo{} }

// VoidInfo returns the empty tuple info R.Tuple().
func VoidInfo() *TupleInfo { return &TupleInfo{Fields: []StructInfo{}} }

// NewPrimInfo returns R.Prim(dtype) with an unknown value.
func NewPrimInfo(dtype DataType) *PrimInfo { return &PrimInfo{DType: dtype} }

// PrimInfoOf returns R.Prim(value=v).
func PrimInfoOf(v PrimExpr) *PrimInfo { return &PrimInfo{DType: v.DType(), Value: v} }

// ShapeInfoOf returns R.Shape(values) with known values.
func ShapeInfoOf(values ...PrimExpr) *ShapeInfo {
	if values == nil {
		values = []PrimExpr{}
	}
	return &ShapeInfo{Values: values, NDim: len(values)}
}

// ShapeInfoNDim returns R.Shape(ndim=n); n may be -1.
func ShapeInfoNDim(n int) *ShapeInfo { return &ShapeInfo{NDim: n} }

// TensorInfoOf returns R.Tensor(dims, dtype) with a known shape.
func TensorInfoOf(dtype DataType, dims ...PrimExpr) *TensorInfo {
	if dims == nil {
		dims = []PrimExpr{}
	}
	// The info, its shape and the shape's info in one allocation: every
	// annotation of a parsed module builds one.
	a := &struct {
		info  TensorInfo
		shape ShapeExpr
		sinfo ShapeInfo
	}{}
	a.sinfo = ShapeInfo{Values: dims, NDim: len(dims)}
	a.shape.Values = dims
	a.shape.SetStructInfo(&a.sinfo)
	a.info = TensorInfo{Shape: &a.shape, DType: dtype, NDim: len(dims)}
	return &a.info
}

// TensorInfoNDim returns R.Tensor(ndim=n, dtype=dtype) with an unknown shape;
// n may be -1 and dtype may be Void.
func TensorInfoNDim(dtype DataType, n int) *TensorInfo {
	return &TensorInfo{DType: dtype, NDim: n}
}

// NewTupleInfo returns R.Tuple(fields...).
func NewTupleInfo(fields ...StructInfo) *TupleInfo {
	if fields == nil {
		fields = []StructInfo{}
	}
	return &TupleInfo{Fields: fields}
}

// NewFuncInfo returns R.Callable(params, ret, pure).
func NewFuncInfo(params []StructInfo, ret StructInfo, pure bool) *FuncInfo {
	if params == nil {
		params = []StructInfo{}
	}
	return &FuncInfo{Params: params, Ret: ret, Pure: pure}
}

// OpaqueFuncInfo returns a callable accepting any arguments.
func OpaqueFuncInfo(ret StructInfo, pure bool) *FuncInfo {
	return &FuncInfo{Opaque: true, Ret: ret, Pure: pure}
}
