package ir

// StructInfoLCA is the least upper bound of a and b: the most specific info
// describing every value either describes (TVM's StructInfoLCA). It returns a
// itself whenever a already is the answer, so callers can test for change by
// identity.
//
//   - different kinds join to Object;
//   - prims keep the dtype (Object if dtypes differ) and the value only when
//     provably equal;
//   - shapes and tensors keep the rank when it agrees and the dimensions only
//     when provably equal; differing dtypes give a void dtype;
//   - tuples join elementwise when they have the same length (else Object);
//   - functions: equal signatures stay, otherwise parameters and result join
//     elementwise (opaque when arities differ); the join is pure only if
//     both are.
func StructInfoLCA(a, b StructInfo) StructInfo {
	if a == nil || b == nil {
		return Object()
	}
	if a == b {
		return a
	}
	switch x := a.(type) {
	case *ObjectInfo:
		return x
	case *PrimInfo:
		y, ok := b.(*PrimInfo)
		if !ok || x.DType != y.DType {
			return Object()
		}
		if x.Value == nil || (y.Value != nil && CanProveEqual(x.Value, y.Value)) {
			return x
		}
		return NewPrimInfo(x.DType)
	case *ShapeInfo:
		y, ok := b.(*ShapeInfo)
		if !ok {
			return Object()
		}
		ndim := x.NDim
		if x.NDim != y.NDim {
			ndim = -1
		}
		if x.NDim != y.NDim || !x.Known() || !y.Known() || !dimsProvablyEqual(x.Values, y.Values) {
			if !x.Known() && x.NDim == ndim {
				return x
			}
			return ShapeInfoNDim(ndim)
		}
		return x
	case *TensorInfo:
		y, ok := b.(*TensorInfo)
		if !ok {
			return Object()
		}
		dtype := x.DType
		if x.DType != y.DType {
			dtype = Void
		}
		ndim := x.NDim
		if x.NDim != y.NDim {
			ndim = -1
		}
		// The join keeps a virtual device both sides agree on.
		vdev := x.VDevice
		if !sameVDevice(x.VDevice, y.VDevice) {
			vdev = nil
		}
		if x.NDim != y.NDim || x.Shape == nil || y.Shape == nil || !shapesProvablyEqual(x.Shape, y.Shape) {
			if x.Shape == nil && x.DType == dtype && x.NDim == ndim && x.VDevice == vdev {
				return x
			}
			return &TensorInfo{DType: dtype, NDim: ndim, VDevice: vdev}
		}
		if x.DType != dtype || x.VDevice != vdev {
			return &TensorInfo{Shape: x.Shape, DType: dtype, NDim: x.NDim, VDevice: vdev}
		}
		return x
	case *TupleInfo:
		y, ok := b.(*TupleInfo)
		if !ok {
			return Object()
		}
		fields, same, ok := lcaList(x.Fields, y.Fields)
		if !ok {
			return Object()
		}
		if same {
			return x
		}
		return NewTupleInfo(fields...)
	case *FuncInfo:
		y, ok := b.(*FuncInfo)
		if !ok {
			return Object()
		}
		pure := x.Pure && y.Pure
		if x.Opaque {
			if x.Derive != nil {
				if sameFunc(x.Derive, y.Derive) && pure == x.Pure {
					return x
				}
				return OpaqueFuncInfo(Object(), pure)
			}
			ret := StructInfoLCA(x.Ret, y.Ret)
			if ret == x.Ret && pure == x.Pure {
				return x
			}
			return OpaqueFuncInfo(ret, pure)
		}
		if y.Opaque {
			return OpaqueFuncInfo(StructInfoLCA(x.Ret, y.Ret), pure)
		}
		if pure == x.Pure && StructuralEqual(x, y, EqualOptions{}) {
			return x
		}
		ret := StructInfoLCA(x.Ret, y.Ret)
		params, same, ok := lcaList(x.Params, y.Params)
		if !ok {
			return OpaqueFuncInfo(ret, pure)
		}
		if same && ret == x.Ret && pure == x.Pure {
			return x
		}
		return NewFuncInfo(params, ret, pure)
	}
	return Object()
}

// lcaList joins two lists elementwise; ok is false when the lengths differ,
// same is true when every join returned the left element.
func lcaList(a, b []StructInfo) (out []StructInfo, same, ok bool) {
	if len(a) != len(b) {
		return nil, false, false
	}
	same = true
	out = make([]StructInfo, len(a))
	for i := range a {
		out[i] = StructInfoLCA(a[i], b[i])
		if out[i] != a[i] {
			same = false
		}
	}
	return out, same, true
}
