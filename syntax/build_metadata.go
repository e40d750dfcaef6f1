package syntax

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/phasec/phasec/ir"
)

// The show_meta=True metadata section. TVM's printer writes the objects it
// could not print inline (tensor constants) above the module as
//
//	metadata = tvm.ir.load_json("""{...}""")
//
// and refers to them as metadata["relax.expr.Constant"][i]; parsing the
// text evaluates that assignment first (Docsify in
// src/script/printer/utils.h). The JSON is TVM's object graph: a Map from
// type key to an Array of objects. Two layouts are read: the node-graph
// format of src/node/serialization.cc ("root", nodes with "type_key",
// "attrs", "keys", "data", tensors in "b64ndarrays") and the tvm-ffi one
// ("root_index", nodes with "type" and "data"). Only the constants are
// needed; their struct info follows from the tensors.

// metaNode is one node of either layout.
type metaNode struct {
	TypeKey string            `json:"type_key"`
	Type    string            `json:"type"`
	Attrs   map[string]string `json:"attrs"`
	Keys    []string          `json:"keys"`
	Data    json.RawMessage   `json:"data"`
}

type metaGraph struct {
	Root        *int       `json:"root"`
	RootIndex   *int       `json:"root_index"`
	Nodes       []metaNode `json:"nodes"`
	B64NDArrays []string   `json:"b64ndarrays"`
}

// loadJSONMetadata reads tvm.ir.load_json("""...""") into the module's
// metadata section.
func (bd *builder) loadJSONMetadata(call *ast) {
	if len(call.Items) != 1 || call.Keywords[0] != "" || call.Items[0].Kind != aStr {
		bd.fail(call.Span, "expected tvm.ir.load_json(\"\"\"<json>\"\"\") with the metadata JSON")
	}
	text := call.Items[0].Text
	consts, err := decodeMetadata(text)
	if err != nil {
		bd.fail(call.Items[0].Span, "bad metadata section: %v", err)
	}
	bd.mod.Meta = &ir.MetaSection{JSON: text, Constants: consts}
}

// jsonMetadataConstant resolves metadata["relax.expr.Constant"][i] against
// a load_json section. Each index names one object, as in TVM, so a
// constant referenced twice is one *ir.Constant.
func (bd *builder) jsonMetadataConstant(kind, idx *ast) ir.Expr {
	consts := bd.mod.Meta.Constants
	i, err := strconv.Atoi(idx.Text)
	if err != nil || i < 0 || i >= len(consts) {
		bd.fail(idx.Span, "metadata index %s out of range (the section has %d constants)", idx.Text, len(consts))
	}
	return consts[i]
}

// decodeMetadata returns the relax.expr.Constant entries of a metadata
// JSON graph, in order.
func decodeMetadata(text string) ([]*ir.Constant, error) {
	var g metaGraph
	if err := json.Unmarshal([]byte(text), &g); err != nil {
		return nil, err
	}
	root := -1
	switch {
	case g.Root != nil:
		root = *g.Root
	case g.RootIndex != nil:
		root = *g.RootIndex
	}
	node := func(i int) (*metaNode, error) {
		if i < 0 || i >= len(g.Nodes) {
			return nil, fmt.Errorf("node index %d out of range (%d nodes)", i, len(g.Nodes))
		}
		return &g.Nodes[i], nil
	}
	m, err := node(root)
	if err != nil {
		return nil, fmt.Errorf("root: %w", err)
	}
	arr := -1
	if len(m.Keys) > 0 { // node-graph Map with string keys: keys[i] names data[i]
		var data []int
		if err := json.Unmarshal(m.Data, &data); err != nil || len(data) != len(m.Keys) {
			return nil, fmt.Errorf("root map: keys and data disagree")
		}
		for i, k := range m.Keys {
			if k == constantKey {
				arr = data[i]
			}
		}
	} else { // key and value node indices alternate
		var data []int
		if err := json.Unmarshal(m.Data, &data); err != nil || len(data)%2 != 0 {
			return nil, fmt.Errorf("root is not a map of type keys to arrays")
		}
		for i := 0; i < len(data); i += 2 {
			k, err := node(data[i])
			if err != nil {
				return nil, err
			}
			var key string
			if json.Unmarshal(k.Data, &key) == nil && key == constantKey {
				arr = data[i+1]
			}
		}
	}
	if arr < 0 {
		return nil, nil // no constants (other kinds of metadata are not used by Relax text)
	}
	a, err := node(arr)
	if err != nil {
		return nil, err
	}
	var items []int
	if err := json.Unmarshal(a.Data, &items); err != nil {
		return nil, fmt.Errorf("%s entry is not an array of nodes", constantKey)
	}
	consts := make([]*ir.Constant, 0, len(items))
	for i, it := range items {
		c, err := node(it)
		if err != nil {
			return nil, err
		}
		blob, err := constantBlob(&g, c, node)
		if err != nil {
			return nil, fmt.Errorf("constant %d: %w", i, err)
		}
		arr, err := decodeTensorBlob(blob)
		if err != nil {
			return nil, fmt.Errorf("constant %d: %w", i, err)
		}
		consts = append(consts, &ir.Constant{Data: arr})
	}
	return consts, nil
}

const constantKey = "relax.expr.Constant"

// constantBlob returns the serialized tensor of a Constant node: an index
// into b64ndarrays (node-graph layout) or a tensor node whose data is the
// base64 blob (tvm-ffi layout).
func constantBlob(g *metaGraph, c *metaNode, node func(int) (*metaNode, error)) ([]byte, error) {
	if c.Attrs != nil {
		i, err := strconv.Atoi(c.Attrs["data"])
		if err != nil || i < 0 || i >= len(g.B64NDArrays) {
			return nil, fmt.Errorf("data %q is not an index into b64ndarrays", c.Attrs["data"])
		}
		return base64.StdEncoding.DecodeString(g.B64NDArrays[i])
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(c.Data, &fields); err != nil {
		return nil, fmt.Errorf("not an object node")
	}
	var ti int
	if err := json.Unmarshal(fields["data"], &ti); err != nil {
		return nil, fmt.Errorf("no data field")
	}
	t, err := node(ti)
	if err != nil {
		return nil, err
	}
	var b64 string
	if err := json.Unmarshal(t.Data, &b64); err != nil {
		return nil, fmt.Errorf("tensor node %d holds no base64 data", ti)
	}
	return base64.StdEncoding.DecodeString(b64)
}

// tensorMagic starts a tensor saved by TVM's SaveDLTensor
// (include/tvm/runtime/ndarray.h, kTVMNDArrayMagic).
const tensorMagic = 0xDD5E40F096B4A13F

// decodeTensorBlob reads SaveDLTensor's layout, little-endian: magic,
// reserved u64, device (i32 type, i32 id), i32 ndim, dtype (u8 code, u8
// bits, u16 lanes), ndim i64 extents, i64 byte count, the bytes.
func decodeTensorBlob(b []byte) (*ir.NDArray, error) {
	le := binary.LittleEndian
	if len(b) < 36 || le.Uint64(b) != tensorMagic {
		return nil, fmt.Errorf("not a serialized tensor (bad magic)")
	}
	ndim := int(int32(le.Uint32(b[24:])))
	code, bits, lanes := b[28], b[29], le.Uint16(b[30:])
	if ndim < 0 || ndim > 32 || len(b) < 32+8*ndim+8 {
		return nil, fmt.Errorf("bad rank %d", ndim)
	}
	dt, err := dlpackDType(code, bits, lanes)
	if err != nil {
		return nil, err
	}
	shape := make([]int64, ndim)
	off := 32
	for i := range shape {
		shape[i] = int64(le.Uint64(b[off:]))
		off += 8
	}
	n := int64(le.Uint64(b[off:]))
	off += 8
	arr, err := ir.NewNDArray(dt, shape)
	if err != nil {
		return nil, err
	}
	if n != int64(len(arr.Data)) || int64(len(b)-off) < n {
		return nil, fmt.Errorf("%d data bytes for a %s tensor of shape %v", n, dt, shape)
	}
	copy(arr.Data, b[off:off+int(n)])
	return arr, nil
}

// DLPack type codes (dlpack.h).
const (
	dlInt    = 0
	dlUInt   = 1
	dlFloat  = 2
	dlBfloat = 4
	dlBool   = 6
)

func dlpackDType(code, bits uint8, lanes uint16) (ir.DataType, error) {
	dt := ir.DataType{Bits: bits, Lanes: lanes}
	switch {
	case code == dlBool || code == dlUInt && bits == 1:
		return ir.Bool, nil
	case code == dlInt:
		dt.Code = ir.CodeInt
	case code == dlUInt:
		dt.Code = ir.CodeUInt
	case code == dlFloat:
		dt.Code = ir.CodeFloat
	case code == dlBfloat:
		dt.Code = ir.CodeBFloat
	default:
		return ir.DataType{}, fmt.Errorf("unsupported tensor type code %d", code)
	}
	valid := bits == 8 || bits == 16 || bits == 32 || bits == 64
	if dt.Code == ir.CodeBFloat {
		valid = bits == 16
	}
	if !valid || lanes != 1 {
		return ir.DataType{}, fmt.Errorf("unsupported tensor dtype (code %d, %d bits, %d lanes)", code, bits, lanes)
	}
	return dt, nil
}

// dlpackCode is the inverse of dlpackDType, for the printer.
func dlpackCode(dt ir.DataType) (code, bits uint8) {
	switch dt.Code {
	case ir.CodeInt:
		return dlInt, dt.Bits
	case ir.CodeUInt:
		return dlUInt, dt.Bits
	case ir.CodeBFloat:
		return dlBfloat, dt.Bits
	case ir.CodeBool:
		return dlUInt, 1 // TVM's bool is uint1, stored one byte per element
	}
	return dlFloat, dt.Bits
}
