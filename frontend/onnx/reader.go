package onnx

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/phasec/phasec/frontend/onnx/onnxpb"
	"github.com/phasec/phasec/ir"
)

// Limits bound what the reader accepts, so that a corrupt or hostile file
// is an error rather than an out-of-memory: every size is checked against
// the bytes actually present before anything of that size is allocated.
type Limits struct {
	// MaxFileBytes bounds the model file (protobuf caps a message at 2 GiB).
	MaxFileBytes int64
	// MaxTensorBytes bounds one tensor's data, inline or external.
	MaxTensorBytes int64
	// MaxNodes bounds the number of nodes of the main graph.
	MaxNodes int
}

// DefaultLimits accepts any model protobuf can represent, with tensors up
// to 2 GiB each.
var DefaultLimits = Limits{MaxFileBytes: math.MaxInt32, MaxTensorBytes: 1 << 31, MaxNodes: 10_000_000}

// Supported IR versions and default-domain opsets.
const (
	MinIRVersion = 3
	MaxIRVersion = 10
	MinOpset     = 1
	MaxOpset     = 21
)

// Model is a read ONNX model: its protobuf and the directory its external
// data files are resolved against.
type Model struct {
	Proto *onnxpb.ModelProto
	// Path names the model in diagnostics; Dir is where external data
	// files live (the model file's directory).
	Path, Dir string
	// Opset is the version of the default ("" or "ai.onnx") domain.
	Opset  int64
	Limits Limits
}

// ReadFile reads and checks a model file. The file is read once; the
// weights inline in it are copied once, into the protobuf message, whose
// byte slices the importer hands on to constants and parameters as they
// are (ir.NDArray aliases them: no second copy).
func ReadFile(path string, lim Limits) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > lim.MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes is more than the limit of %d", path, st.Size(), lim.MaxFileBytes)
	}
	data, release, err := mapOrRead(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer release()
	return Read(data, path, filepath.Dir(path), lim)
}

// Read decodes a model from data. path names it in messages; dir resolves
// external data (empty: external data is refused).
func Read(data []byte, path, dir string, lim Limits) (*Model, error) {
	if int64(len(data)) > lim.MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes is more than the limit of %d", path, len(data), lim.MaxFileBytes)
	}
	mp := &onnxpb.ModelProto{}
	if err := (proto.UnmarshalOptions{RecursionLimit: 64}).Unmarshal(data, mp); err != nil {
		return nil, fmt.Errorf("%s: not an ONNX model (corrupt or truncated protobuf): %v", path, err)
	}
	m := &Model{Proto: mp, Path: path, Dir: dir, Limits: lim}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// check validates the header: IR version, opsets, a graph.
func (m *Model) check() error {
	mp := m.Proto
	if v := mp.GetIrVersion(); v < MinIRVersion || v > MaxIRVersion {
		return fmt.Errorf("%s: ONNX IR version %d is not supported (phasec reads %d through %d)", m.Path, v, MinIRVersion, MaxIRVersion)
	}
	if mp.GetGraph() == nil {
		return fmt.Errorf("%s: the model has no graph", m.Path)
	}
	m.Opset = -1
	for _, o := range mp.GetOpsetImport() {
		if d := o.GetDomain(); d == "" || d == "ai.onnx" {
			m.Opset = o.GetVersion()
		}
	}
	if m.Opset < 0 {
		// Only ops of other domains: the importer names them.
		for _, n := range mp.GetGraph().GetNode() {
			if d := n.GetDomain(); d == "" || d == "ai.onnx" {
				return fmt.Errorf("%s: node %q (%s) is of the default domain, but the model imports no opset of it", m.Path, n.GetName(), n.GetOpType())
			}
		}
		m.Opset = MaxOpset
	}
	if m.Opset < MinOpset || m.Opset > MaxOpset {
		return fmt.Errorf("%s: opset %d of the default domain is not supported (phasec imports %d through %d)", m.Path, m.Opset, MinOpset, MaxOpset)
	}
	if n := len(mp.GetGraph().GetNode()); n > m.Limits.MaxNodes {
		return fmt.Errorf("%s: %d nodes is more than the limit of %d", m.Path, n, m.Limits.MaxNodes)
	}
	return nil
}

// ReadTensorFile reads a serialized TensorProto (the backend tests'
// input_0.pb) into an array; external data resolves against dir.
func ReadTensorFile(path string, lim Limits) (*ir.NDArray, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	tp := &onnxpb.TensorProto{}
	if err := proto.Unmarshal(data, tp); err != nil {
		return nil, "", fmt.Errorf("%s: not an ONNX tensor: %v", path, err)
	}
	a, err := TensorData(tp, filepath.Dir(path), lim)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return a, tp.GetName(), nil
}

// DType maps an ONNX element type to phasec's; ok is false for the types
// phasec has no tensors of (string, complex, float8, 4-bit).
func DType(t int32) (ir.DataType, bool) {
	switch onnxpb.TensorProto_DataType(t) {
	case onnxpb.TensorProto_FLOAT:
		return ir.Float32, true
	case onnxpb.TensorProto_DOUBLE:
		return ir.Float64, true
	case onnxpb.TensorProto_FLOAT16:
		return ir.Float16, true
	case onnxpb.TensorProto_BFLOAT16:
		return ir.BFloat16, true
	case onnxpb.TensorProto_INT8:
		return ir.Int8, true
	case onnxpb.TensorProto_INT16:
		return ir.Int16, true
	case onnxpb.TensorProto_INT32:
		return ir.Int32, true
	case onnxpb.TensorProto_INT64:
		return ir.Int64, true
	case onnxpb.TensorProto_UINT8:
		return ir.UInt8, true
	case onnxpb.TensorProto_UINT16:
		return ir.UInt16, true
	case onnxpb.TensorProto_UINT32:
		return ir.UInt32, true
	case onnxpb.TensorProto_UINT64:
		return ir.UInt64, true
	case onnxpb.TensorProto_BOOL:
		return ir.Bool, true
	}
	return ir.DataType{}, false
}

// dtypeName spells an ONNX element type for messages ("STRING").
func dtypeName(t int32) string { return onnxpb.TensorProto_DataType(t).String() }

// TensorData returns a tensor's elements as an array. Raw data (inline or
// external) is used as it is (ONNX stores it little-endian, row-major, as
// ir.NDArray does): the array aliases the message's bytes. The typed
// fields (float_data, int32_data, ...) are converted. Every length is
// checked against the shape before anything is allocated.
func TensorData(t *onnxpb.TensorProto, dir string, lim Limits) (*ir.NDArray, error) {
	dt, ok := DType(t.GetDataType())
	if !ok {
		return nil, fmt.Errorf("tensor %q: element type %s is not supported", t.GetName(), dtypeName(t.GetDataType()))
	}
	if t.Segment != nil {
		return nil, fmt.Errorf("tensor %q: segmented tensors are not supported", t.GetName())
	}
	shape := append([]int64{}, t.GetDims()...)
	n := int64(1)
	for _, d := range shape {
		if d < 0 || (d > 0 && n > lim.MaxTensorBytes/d) {
			return nil, fmt.Errorf("tensor %q: shape %v is negative or larger than the limit of %d bytes", t.GetName(), shape, lim.MaxTensorBytes)
		}
		n *= d
	}
	size := n * int64(dt.Bytes())
	if size > lim.MaxTensorBytes {
		return nil, fmt.Errorf("tensor %q: %d bytes is more than the limit of %d", t.GetName(), size, lim.MaxTensorBytes)
	}
	a := &ir.NDArray{DType: dt, Shape: shape}
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		data, err := readExternal(t, dir, size)
		if err != nil {
			return nil, err
		}
		a.Data = data
		return a, nil
	}
	if t.RawData != nil {
		if int64(len(t.RawData)) != size {
			return nil, fmt.Errorf("tensor %q: raw_data has %d bytes, its shape %v of %s needs %d", t.GetName(), len(t.RawData), shape, dt, size)
		}
		a.Data = t.RawData
		if dt == ir.Bool {
			for i, b := range a.Data {
				if b > 1 {
					a.Data[i] = 1
				}
			}
		}
		return a, nil
	}
	count := func(have int) error {
		if int64(have) != n {
			return fmt.Errorf("tensor %q: has %d elements, its shape %v needs %d", t.GetName(), have, shape, n)
		}
		return nil
	}
	a.Data = nil
	switch dt {
	case ir.Float32:
		if err := count(len(t.FloatData)); err != nil {
			return nil, err
		}
		a.Data = make([]byte, size)
		for i, v := range t.FloatData {
			binary.LittleEndian.PutUint32(a.Data[4*i:], math.Float32bits(v))
		}
	case ir.Float64:
		if err := count(len(t.DoubleData)); err != nil {
			return nil, err
		}
		a.Data = make([]byte, size)
		for i, v := range t.DoubleData {
			binary.LittleEndian.PutUint64(a.Data[8*i:], math.Float64bits(v))
		}
	case ir.Int64:
		if err := count(len(t.Int64Data)); err != nil {
			return nil, err
		}
		a.Data = make([]byte, size)
		for i, v := range t.Int64Data {
			binary.LittleEndian.PutUint64(a.Data[8*i:], uint64(v))
		}
	case ir.UInt32, ir.UInt64:
		if err := count(len(t.Uint64Data)); err != nil {
			return nil, err
		}
		a.Data = make([]byte, size)
		for i, v := range t.Uint64Data {
			if dt == ir.UInt32 {
				binary.LittleEndian.PutUint32(a.Data[4*i:], uint32(v))
			} else {
				binary.LittleEndian.PutUint64(a.Data[8*i:], v)
			}
		}
	default: // int32_data holds every narrower type, float16 as its bits
		if err := count(len(t.Int32Data)); err != nil {
			return nil, err
		}
		a.Data = make([]byte, size)
		w := dt.Bytes()
		for i, v := range t.Int32Data {
			switch w {
			case 1:
				a.Data[i] = byte(v)
				if dt == ir.Bool && v != 0 {
					a.Data[i] = 1
				}
			case 2:
				binary.LittleEndian.PutUint16(a.Data[2*i:], uint16(v))
			default:
				binary.LittleEndian.PutUint32(a.Data[4*i:], uint32(v))
			}
		}
	}
	return a, nil
}

// readExternal reads a tensor stored beside the model (data_location
// EXTERNAL: location, offset, length) straight into its array's buffer.
// The location must be a relative path inside dir.
func readExternal(t *onnxpb.TensorProto, dir string, size int64) ([]byte, error) {
	var loc string
	offset, length := int64(0), int64(-1)
	for _, kv := range t.GetExternalData() {
		switch kv.GetKey() {
		case "location":
			loc = kv.GetValue()
		case "offset", "length":
			var v int64
			if _, err := fmt.Sscan(kv.GetValue(), &v); err != nil || v < 0 {
				return nil, fmt.Errorf("tensor %q: external data %s %q is not a non-negative integer", t.GetName(), kv.GetKey(), kv.GetValue())
			}
			if kv.GetKey() == "offset" {
				offset = v
			} else {
				length = v
			}
		}
	}
	if dir == "" {
		return nil, fmt.Errorf("tensor %q: external data, but the model was not read from a file", t.GetName())
	}
	if loc == "" || filepath.IsAbs(loc) || strings.HasPrefix(filepath.Clean(loc), "..") {
		return nil, fmt.Errorf("tensor %q: external data location %q must be a relative path inside the model's directory", t.GetName(), loc)
	}
	if length >= 0 && length != size {
		return nil, fmt.Errorf("tensor %q: external data length %d, its shape needs %d bytes", t.GetName(), length, size)
	}
	f, err := os.Open(filepath.Join(dir, loc))
	if err != nil {
		return nil, fmt.Errorf("tensor %q: external data: %v", t.GetName(), err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if offset > st.Size() || st.Size()-offset < size {
		return nil, fmt.Errorf("tensor %q: external data file %s has %d bytes, the tensor needs %d at offset %d", t.GetName(), loc, st.Size(), size, offset)
	}
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, offset); err != nil && err != io.EOF {
		return nil, fmt.Errorf("tensor %q: external data: %v", t.GetName(), err)
	}
	return buf, nil
}
