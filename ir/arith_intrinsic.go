package ir

import (
	"fmt"
	"sort"
)

// Intrinsic describes a TIR intrinsic called as T.name(...) and represented
// by PrimCall{Op: name}. T.max, T.min, T.floordiv, T.floormod, T.truncdiv
// and T.truncmod are not intrinsics: they build Binary nodes.
type Intrinsic struct {
	Name string
	// MinArgs and MaxArgs bound the argument count (MaxArgs -1: variadic).
	MinArgs, MaxArgs int
	// Result says how the call's dtype is determined.
	Result IntrinsicResult
	// ResultArg is the argument whose dtype the result takes
	// (ResultSameAsArg), or whose string value names it (ResultFromDTypeArg).
	ResultArg int
	// Fixed is the result type for ResultFixed.
	Fixed DataType
	// FloatArgs requires floating-point arguments (T.exp of an int is an
	// error TVM reports too).
	FloatArgs bool
	Doc       string
}

// IntrinsicResult enumerates the result dtype rules.
type IntrinsicResult uint8

const (
	ResultSameAsArg    IntrinsicResult = iota // dtype of Args[ResultArg]
	ResultFixed                               // always Fixed
	ResultFromDTypeArg                        // Args[ResultArg] is a PrimStr naming the dtype
)

var intrinsics = map[string]*Intrinsic{}

func registerIntrinsic(in *Intrinsic) { intrinsics[in.Name] = in }

func init() {
	unary := func(name, doc string) {
		registerIntrinsic(&Intrinsic{Name: name, MinArgs: 1, MaxArgs: 1, FloatArgs: true, Doc: doc})
	}
	unary("exp", "e raised to x")
	unary("exp2", "2 raised to x")
	unary("log", "natural logarithm")
	unary("log2", "base-2 logarithm")
	unary("sqrt", "square root")
	unary("rsqrt", "reciprocal square root")
	unary("tanh", "hyperbolic tangent")
	unary("sigmoid", "logistic function 1/(1+exp(-x))")
	unary("erf", "error function")
	unary("floor", "round toward negative infinity")
	unary("ceil", "round toward positive infinity")
	unary("round", "round to nearest, ties to even")
	unary("trunc", "round toward zero")
	registerIntrinsic(&Intrinsic{Name: "fabs", MinArgs: 1, MaxArgs: 1, Doc: "absolute value"})
	registerIntrinsic(&Intrinsic{Name: "pow", MinArgs: 2, MaxArgs: 2, FloatArgs: true, Doc: "x raised to y"})
	registerIntrinsic(&Intrinsic{Name: "if_then_else", MinArgs: 3, MaxArgs: 3, ResultArg: 1,
		Doc: "if_then_else(cond, a, b): evaluates only the chosen arm"})
	registerIntrinsic(&Intrinsic{Name: "isnan", MinArgs: 1, MaxArgs: 1, Result: ResultFixed, Fixed: Bool,
		FloatArgs: true, Doc: "whether x is NaN"})
	registerIntrinsic(&Intrinsic{Name: "max_value", MinArgs: 1, MaxArgs: 1, Result: ResultFromDTypeArg,
		Doc: `max_value("dtype"): the largest finite value of dtype`})
	registerIntrinsic(&Intrinsic{Name: "min_value", MinArgs: 1, MaxArgs: 1, Result: ResultFromDTypeArg,
		Doc: `min_value("dtype"): the smallest finite value of dtype`})
	registerIntrinsic(&Intrinsic{Name: "ret", MinArgs: 1, MaxArgs: 1,
		Doc: "return a value from a PrimFunc"})
}

// LookupIntrinsic returns the intrinsic called T.name.
func LookupIntrinsic(name string) (*Intrinsic, bool) {
	in, ok := intrinsics[name]
	return in, ok
}

// Intrinsics returns every registered intrinsic sorted by name.
func Intrinsics() []*Intrinsic {
	out := make([]*Intrinsic, 0, len(intrinsics))
	for _, in := range intrinsics {
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ResultType checks the arguments of a call and returns its dtype.
func (in *Intrinsic) ResultType(args []PrimExpr) (DataType, error) {
	if len(args) < in.MinArgs || (in.MaxArgs >= 0 && len(args) > in.MaxArgs) {
		want := fmt.Sprint(in.MinArgs)
		switch {
		case in.MaxArgs < 0:
			want = fmt.Sprintf("at least %d", in.MinArgs)
		case in.MaxArgs != in.MinArgs:
			want = fmt.Sprintf("%d to %d", in.MinArgs, in.MaxArgs)
		}
		return Void, fmt.Errorf("T.%s takes %s argument(s), got %d", in.Name, want, len(args))
	}
	if in.FloatArgs {
		for i, a := range args {
			if !a.DType().IsFloat() {
				return Void, fmt.Errorf("T.%s: argument %d has type %s, want a float type", in.Name, i+1, a.DType())
			}
		}
	}
	switch in.Result {
	case ResultFixed:
		return in.Fixed, nil
	case ResultFromDTypeArg:
		s, ok := args[in.ResultArg].(*PrimStr)
		if !ok {
			return Void, fmt.Errorf("T.%s: argument %d must be a dtype string", in.Name, in.ResultArg+1)
		}
		t, err := ParseDataType(s.Value)
		if err != nil {
			return Void, fmt.Errorf("T.%s: %v", in.Name, err)
		}
		return t, nil
	}
	if in.Name == "if_then_else" {
		if !args[0].DType().IsBool() {
			return Void, fmt.Errorf("T.if_then_else: condition has type %s, want bool", args[0].DType())
		}
		if args[1].DType() != args[2].DType() {
			return Void, fmt.Errorf("T.if_then_else: arms have types %s and %s", args[1].DType(), args[2].DType())
		}
	}
	return args[in.ResultArg].DType(), nil
}

// NewIntrinsicCall builds T.name(args...) with its inferred dtype.
func NewIntrinsicCall(name string, args ...PrimExpr) (*PrimCall, error) {
	in, ok := LookupIntrinsic(name)
	if !ok {
		return nil, fmt.Errorf("unknown intrinsic T.%s", name)
	}
	t, err := in.ResultType(args)
	if err != nil {
		return nil, err
	}
	return &PrimCall{Op: name, Args: args, Type: t}, nil
}
