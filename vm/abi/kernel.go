package abi

import (
	"fmt"

	"github.com/phasec/phasec/tensor"
)

// Arg is one argument of a kernel call: T for a buffer parameter, I for an
// integer or boolean scalar, F for a float scalar. The VM passes an integer
// in both I and F, so a float parameter accepts it.
type Arg struct {
	T *tensor.Tensor
	I int64
	F float64
}

// Kernel is a compiled kernel. Call must not retain args, and must not
// allocate in steady state (the VM's zero-allocation budget includes it).
type Kernel interface {
	Call(args []Arg) error
}

// ValueKernel is a kernel that returns a scalar (a PrimFunc ending in
// T.ret). The VM calls CallValue for kernels whose executable record has a
// return type.
type ValueKernel interface {
	CallValue(args []Arg) (Arg, error)
}

// ParamKind is what a kernel parameter accepts. The values are part of the
// executable format.
type ParamKind uint8

const (
	ParamBuffer ParamKind = 0 // a tensor (Arg.T)
	ParamInt    ParamKind = 1 // an integer or boolean scalar (Arg.I)
	ParamFloat  ParamKind = 2 // a float scalar (Arg.F)
)

func (k ParamKind) String() string {
	switch k {
	case ParamBuffer:
		return "buffer"
	case ParamInt:
		return "int"
	case ParamFloat:
		return "float"
	}
	return fmt.Sprintf("ParamKind(%d)", k)
}

// Param is one parameter of a kernel signature: recorded by the compiler
// in the executable, checked against call sites when the executable is
// validated and against the compiled kernel when it is linked.
type Param struct {
	Kind  ParamKind
	DType string // element type of a buffer, type of a scalar
	NDim  int    // buffer rank; 0 for scalars
}

// CheckSignature compares the signature an executable records (want) with
// a compiled kernel's (got): kind, dtype and rank per parameter.
func CheckSignature(want, got []Param) error {
	if len(got) != len(want) {
		return fmt.Errorf("compiled kernel has %d parameters, the executable records %d", len(got), len(want))
	}
	for i, p := range want {
		if g := got[i]; g != p {
			return fmt.Errorf("parameter %d: compiled as %v %s rank %d, the executable records %v %s rank %d",
				i, g.Kind, g.DType, g.NDim, p.Kind, p.DType, p.NDim)
		}
	}
	return nil
}
