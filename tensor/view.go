package tensor

import "fmt"

// CreateView is TVM's NDArray::CreateView (src/runtime/ndarray.cc), the
// runtime.TVMArrayCreateView that R.memory.view lowers to: x's bytes from
// offset bytes in, as a tensor of shape and dt sharing x's storage. The
// view must lie within x (not merely within its storage), and, as every
// phasec tensor, start at a multiple of dt's element size.
func CreateView(x *Tensor, shape []int64, dt DType, offset int64) (*Tensor, error) {
	v := new(Tensor)
	if err := CreateViewInto(v, x, shape, dt, offset); err != nil {
		return nil, err
	}
	return v, nil
}

// CreateViewInto is CreateView filling v in place (see ViewInto).
func CreateViewInto(v, x *Tensor, shape []int64, dt DType, offset int64) error {
	size, err := byteSize(dt, shape)
	if err != nil {
		return fmt.Errorf("view: %w", err)
	}
	have := x.NBytes()
	if offset < 0 || offset > have || size > have-offset {
		return fmt.Errorf("view with shape %s and datatype %s would occupy bytes %d <= i_byte < %d, but the tensor being viewed only contains %d bytes (shape %s, dtype %s)",
			FormatShape(shape), dt, offset, offset+size, have, FormatShape(x.Shape), x.DType)
	}
	return ViewInto(v, x.Storage, x.Offset+offset, dt, shape)
}
