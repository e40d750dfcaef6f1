// Package onnxtest builds small ONNX models in Go for tests, fuzz seeds
// and the importer's scaling measurement: a graph is declared input by
// input, node by node, and serialized with protobuf.
package onnxtest

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/phasec/phasec/frontend/onnx/onnxpb"
)

// Element types (onnx.TensorProto.DataType).
const (
	Float = int32(onnxpb.TensorProto_FLOAT)
	Int64 = int32(onnxpb.TensorProto_INT64)
)

// Graph is a graph under construction.
type Graph struct {
	G     *onnxpb.GraphProto
	Opset int64
}

// New returns an empty graph of the default domain at opset.
func New(opset int64) *Graph {
	return &Graph{G: &onnxpb.GraphProto{Name: proto.String("g")}, Opset: opset}
}

// Dim is a dimension: an int64 value or a string dim_param.
type Dim any

func valueInfo(name string, dt int32, dims []Dim) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		switch d := d.(type) {
		case string:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d}})
		case int:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
		case int64:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
		}
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(dt), Shape: shape}}}}
}

// Input declares a graph input.
func (g *Graph) Input(name string, dt int32, dims ...Dim) *Graph {
	g.G.Input = append(g.G.Input, valueInfo(name, dt, dims))
	return g
}

// Output declares a graph output.
func (g *Graph) Output(name string, dt int32, dims ...Dim) *Graph {
	g.G.Output = append(g.G.Output, valueInfo(name, dt, dims))
	return g
}

// FloatTensor is a float32 tensor with raw data.
func FloatTensor(name string, dims []int64, data []float32) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(Float), RawData: raw}
}

// Int64Tensor is an int64 tensor in int64_data.
func Int64Tensor(name string, dims []int64, data []int64) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(Int64), Int64Data: data}
}

// Init adds an initializer.
func (g *Graph) Init(t *onnxpb.TensorProto) *Graph {
	g.G.Initializer = append(g.G.Initializer, t)
	return g
}

// Attr is a node attribute: Int, Ints, Float or String.
type Attr = *onnxpb.AttributeProto

func Int(name string, v int64) Attr {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func Ints(name string, v ...int64) Attr {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

func Float32(name string, v float32) Attr {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

func String(name, v string) Attr {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

// Node appends a node.
func (g *Graph) Node(name, opType string, inputs, outputs []string, attrs ...Attr) *Graph {
	g.G.Node = append(g.G.Node, &onnxpb.NodeProto{Name: proto.String(name), OpType: proto.String(opType),
		Input: inputs, Output: outputs, Attribute: attrs})
	return g
}

// Model wraps the graph in a model of IR version 8.
func (g *Graph) Model() *onnxpb.ModelProto {
	return &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g.G,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(g.Opset)}}}
}

// Bytes serializes the model.
func (g *Graph) Bytes() []byte {
	b, err := proto.Marshal(g.Model())
	if err != nil {
		panic(err)
	}
	return b
}

// MLP is a two-layer perceptron x (batch "N", in) -> Gemm -> Relu ->
// MatMul + Add -> Softmax, with deterministic weights: w1[i][j] =
// (i - j) / 16, b1[j] = j / 8, w2[j][k] = (j + k) % 3 - 1, b2 = 0.
func MLP(in, hidden, out int) *Graph {
	g := New(13).Input("x", Float, "N", in)
	w1 := make([]float32, hidden*in) // Gemm with transB: (hidden, in)
	for j := range hidden {
		for i := range in {
			w1[j*in+i] = float32(i-j) / 16
		}
	}
	b1 := make([]float32, hidden)
	for j := range b1 {
		b1[j] = float32(j) / 8
	}
	w2 := make([]float32, hidden*out)
	for j := range hidden {
		for k := range out {
			w2[j*out+k] = float32((j+k)%3 - 1)
		}
	}
	g.Init(FloatTensor("w1", []int64{int64(hidden), int64(in)}, w1)).
		Init(FloatTensor("b1", []int64{int64(hidden)}, b1)).
		Init(FloatTensor("w2", []int64{int64(hidden), int64(out)}, w2)).
		Init(FloatTensor("b2", []int64{int64(out)}, make([]float32, out)))
	g.Node("fc1", "Gemm", []string{"x", "w1", "b1"}, []string{"h"}, Int("transB", 1)).
		Node("act", "Relu", []string{"h"}, []string{"r"}).
		Node("fc2", "MatMul", []string{"r", "w2"}, []string{"m"}).
		Node("bias", "Add", []string{"m", "b2"}, []string{"logits"}).
		Node("prob", "Softmax", []string{"logits"}, []string{"y"}, Int("axis", -1))
	return g.Output("y", Float, "N", out)
}

// Chain is a graph of n elementwise nodes over a (4, 16) input,
// alternating Relu, Add of the input, Mul by a shared initializer and
// Tanh: the importer's scaling input.
func Chain(n int) *Graph {
	g := New(13).Input("x", Float, 4, 16)
	g.Init(FloatTensor("k", []int64{16}, make([]float32, 16)))
	cur := "x"
	for i := range n {
		out := "t" + itoa(i)
		switch i % 4 {
		case 0:
			g.Node("", "Relu", []string{cur}, []string{out})
		case 1:
			g.Node("", "Add", []string{cur, "x"}, []string{out})
		case 2:
			g.Node("", "Mul", []string{cur, "k"}, []string{out})
		default:
			g.Node("", "Tanh", []string{cur}, []string{out})
		}
		cur = out
	}
	g.Node("", "Identity", []string{cur}, []string{"y"})
	return g.Output("y", Float, 4, 16)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
