package op

import "github.com/phasec/phasec/ir"

// MixedPrecisionKind is how ToMixedPrecision treats a call of an op (TVM's
// MixedPrecisionPolicyKind, src/relax/transform/infer_amp_utils.h).
type MixedPrecisionKind uint8

const (
	// MixedNever: the op computes in its original dtype; arguments a
	// rewrite stored in the low-precision dtype are cast back (softmax,
	// reductions, norms TVM does not list: everything not listed, as in
	// TVM, where an op without the attribute is kNever).
	MixedNever MixedPrecisionKind = iota
	// MixedFollow: the op computes in the low-precision dtype when every
	// tensor argument already is in it (or is a constant that fits), in
	// float32 otherwise (elementwise, manipulation, pooling ops).
	MixedFollow
	// MixedAlways: the arguments are always cast to the low-precision
	// dtype and the result stored in it; the op accumulates in the pass's
	// out_dtype (matmul, conv, attention: the ops that dominate the cost).
	MixedAlways
)

// MixedPrecisionPolicy is an op's rule for ToMixedPrecision: TVM's
// TMixedPrecisionPolicy attribute (Kind) and, for MixedAlways ops, its
// FInferMixedPrecision (Accumulate). The zero value is TVM's default for
// an op without the attribute, MixedNever.
type MixedPrecisionPolicy struct {
	Kind MixedPrecisionKind
	// Accumulate returns the call rewritten to accumulate in dtype out
	// (matmul and conv set out_dtype); nil leaves the call as it is, its
	// result in its operands' dtype (attention, outer).
	Accumulate func(call *ir.Call, out ir.DataType) *ir.Call
}

// The policies the op files use.
var (
	// mixedFollow: computes in whatever dtype its arguments arrive in.
	mixedFollow = MixedPrecisionPolicy{Kind: MixedFollow}
	// mixedAlways: casts its arguments; the result takes their dtype.
	mixedAlways = MixedPrecisionPolicy{Kind: MixedAlways}
	// mixedAlwaysOutDType: casts its arguments and accumulates in the
	// out_dtype attribute (TVM's InferMixedPrecisionMatmul and
	// InferMixedPrecisionConv*: the call rebuilt with out_dtype=out).
	mixedAlwaysOutDType = MixedPrecisionPolicy{Kind: MixedAlways, Accumulate: withOutDType}
)

// withOutDType is call with its out_dtype attribute set to out; the
// builder infers the new result when the call is emitted.
func withOutDType(call *ir.Call, out ir.DataType) *ir.Call {
	if dt, ok := call.Attrs["out_dtype"].(ir.DataType); ok && dt == out {
		return call
	}
	n := &ir.Call{Op: call.Op, Args: call.Args, Attrs: call.Attrs.With("out_dtype", out), SInfoArgs: call.SInfoArgs}
	n.SetSpan(call.Span())
	return n
}

// String names the kind as TVM does.
func (k MixedPrecisionKind) String() string {
	switch k {
	case MixedFollow:
		return "follow"
	case MixedAlways:
		return "always"
	}
	return "never"
}
