package syntax

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax/internal/tvmmeta"
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
			if k == tvmmeta.ConstantKey {
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
			if json.Unmarshal(k.Data, &key) == nil && key == tvmmeta.ConstantKey {
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
		return nil, fmt.Errorf("%s entry is not an array of nodes", tvmmeta.ConstantKey)
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
		arr, err := tvmmeta.DecodeTensor(blob)
		if err != nil {
			return nil, fmt.Errorf("constant %d: %w", i, err)
		}
		consts = append(consts, &ir.Constant{Data: arr})
	}
	return consts, nil
}

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
