// Package onnx imports ONNX models into phasec: an ONNX graph becomes a
// Relax module at phase Ingest (one public function "main"), which the
// canonicalize barrier accepts like any parsed module.
//
// It follows TVM v0.23's ONNX frontend
// (python/tvm/relax/frontend/onnx/onnx_frontend.py) converter by
// converter: the same Relax op for each ONNX op, the same attribute
// defaults per opset version, broadcasting, auto_pad, ceil_mode,
// count_include_pad, negative axes and optional inputs. The facts were
// ported, not the code.
//
// Layout: onnxpb holds the Go types generated from ONNX's onnx.proto (IR
// version 10); reader.go reads a model (size limits, external data);
// import.go walks the graph; convert_*.go are the converters, one table
// entry per ONNX op type.
//
// Invariants:
//   - A model imports completely or not at all: any unsupported op,
//     attribute or type, any malformed graph (a node using a tensor no
//     earlier node, input or initializer defines, which covers cycles and
//     unsorted graphs; an initializer contradicting its declared type) is a
//     diagnostic naming the node (index, name, op type, opset) and the
//     tensor, and Import returns no module.
//   - Import is linear in the number of nodes and never recurses on the
//     graph: nodes are visited in order, tensors looked up in one map.
//   - Shape computations are folded at import where ONNX shapes are
//     static (Shape, Gather, Concat, Unsqueeze and the like over constants
//     become constants), as TVM folds them through relax.const: an op
//     whose inputs are all known constants of at most foldLimit elements
//     is evaluated by its op.Def's Eval.
//   - Shape values computed from symbolic dimensions (Shape of an input
//     with a dim_param, then Gather, Concat, Unsqueeze, Squeeze, Cast and
//     integer arithmetic) are tracked as dimension expressions, so that a
//     Reshape target, an Expand shape or a ConstantOfShape built from them
//     is a symbolic shape (TVM's frontend passes relax.ShapeExpr values
//     along for the same purpose).
//   - A shape, axes, pads, sizes, scales, k or depth known only at run
//     time (a graph input, or computed from one) is computed in the graph
//     and becomes a shape through R.tensor_to_shape and an R.match_cast to
//     fresh symbolic dimensions, as TVM does (dynamic.go); one executable
//     then serves every value. Only a value whose own length is unknown
//     (so that the output's rank is) is an ONNX001 diagnostic naming the
//     tensor; Options.Bind fixes such an input.
//   - Resize follows ONNX's definition from the given scales (resize.go);
//     RNN/GRU/LSTM are unrolled over the static sequence (ops_rnn.go).
//   - Initializers of a floating-point type become parameters of main
//     after the graph's inputs (num_input says where they start) with
//     their values returned for a .npz, or constants in the module
//     (Options.KeepParamsInModule); integer and bool initializers, which
//     are shape data, stay constants so their values fold. Weight bytes
//     are never copied twice: the arrays alias the decoded protobuf.
//   - ONNX names become the names of parameters; a name that is not an
//     identifier is rewritten (a leading digit gets a _ before it, every
//     other byte that is not a letter, digit or _ becomes _), with a numeric
//     suffix if two collide. Inputs keep their ONNX names in Result.Inputs.
package onnx
