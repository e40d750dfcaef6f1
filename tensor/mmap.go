package tensor

import (
	"fmt"
	"io"
)

// MinMapBytes is the data size from which OpenNpyFile maps the file
// instead of copying it: below it the copy is cheaper than the mapping.
const MinMapBytes = 1 << 20

// MappedTensor is a tensor read by OpenNpyFile. When Mapped, its storage is
// the file's pages mapped copy-on-write (MAP_PRIVATE): loading costs no copy
// and the page cache is shared, writes stay private to this process, and
// Close unmaps them. After Close, the tensor and every slice taken from it
// are invalid (touching them faults), so the owner closes it only when
// nothing uses the tensor any more (for the VM: when the executable holding
// the parameters is dropped). The file must not be truncated while mapped
// (touching pages past its new end faults), as for any mapping. A
// MappedTensor that is not Mapped holds a copy and Close does nothing.
type MappedTensor struct {
	*Tensor
	region []byte // the whole mapping, nil when copied
}

// Mapped reports whether the tensor's bytes are a mapping of the file.
func (m *MappedTensor) Mapped() bool { return m.region != nil }

// Close unmaps the file (see MappedTensor). Closing twice is harmless.
func (m *MappedTensor) Close() error {
	if m.region == nil {
		return nil
	}
	r := m.region
	m.region = nil
	m.Tensor = nil
	return unmap(r)
}

// OpenNpyFile reads a .npy file like ReadNpyFileAs (dt Invalid: any dtype;
// shape nil: any shape) but maps it into memory instead of copying when
// that is possible and worth it: a Unix system, at least MinMapBytes of
// data, native byte order, C order, a 64-byte aligned data offset (np.save
// always aligns), and no bool elements (they may need normalizing).
// Otherwise it copies, as ReadNpyFileAs does.
func OpenNpyFile(path string, dt DType, shape []int64) (*MappedTensor, error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	wrap := func(err error) error { return fmt.Errorf("%s: %w", path, err) }
	h, err := ReadNpyHeader(f)
	if err != nil {
		return nil, wrap(err)
	}
	if dt != Invalid {
		if err := h.Check(dt, shape); err != nil {
			return nil, wrap(err)
		}
	}
	n := h.NBytes()
	avail := size - h.DataOffset
	canMap := mmapSupported && n >= MinMapBytes && avail == n && h.BigEndian == hostBigEndian &&
		(!h.Fortran || len(h.Shape) <= 1) && h.DType != Bool && h.DataOffset%Alignment == 0
	if !canMap {
		t, err := readNpyData(f, h, avail, true)
		if err != nil {
			return nil, wrap(err)
		}
		return &MappedTensor{Tensor: t}, nil
	}
	region, err := mapFile(f, size)
	if err != nil {
		return nil, wrap(err)
	}
	data := region[h.DataOffset : h.DataOffset+n : h.DataOffset+n]
	t := &Tensor{DType: h.DType, Shape: h.Shape, Storage: &Storage{data: data}}
	return &MappedTensor{Tensor: t, region: region}, nil
}

var _ io.Closer = (*MappedTensor)(nil)
