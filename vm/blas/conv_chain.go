package blas

import "fmt"

// ChainKind is one step of ScalarChainF32.
type ChainKind uint8

const (
	ChainAdd ChainKind = iota // x + S (AddScalarF32)
	ChainMul                  // x * S (ScaleF32)
	ChainDiv                  // x / S (DivF32 by S in every lane)
	ChainMax                  // max(x, S) (MaxScalarF32; S must not be NaN)
)

// ChainOp is a step and its scalar.
type ChainOp struct {
	Op ChainKind
	S  float32
}

// ScalarChainF32 sets dst = src, then applies every op in order to each
// element: the results of calling AddScalarF32, ScaleF32, DivF32 (by a
// splat of S) and MaxScalarF32 one after the other, bit for bit, in one
// pass that keeps each block of dst in registers (a convolution's batch
// norm epilogue: subtract the mean, divide, scale, shift). dst and src
// must have the same length and be the same slice or not overlap.
func ScalarChainF32(dst, src []float32, ops []ChainOp) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("blas: ScalarChainF32: len(dst) %d != len(src) %d", len(dst), len(src)))
	}
	for _, o := range ops {
		if o.Op > ChainMax {
			panic(fmt.Sprintf("blas: ScalarChainF32: op %d", o.Op))
		}
	}
	scalarChain(dst, src, ops)
}

// scalarChainGo is ScalarChainF32's portable form: the element functions
// one after the other.
func scalarChainGo(dst, src []float32, ops []ChainOp) {
	copy(dst, src)
	for _, o := range ops {
		switch o.Op {
		case ChainAdd:
			AddScalarF32(dst, dst, o.S)
		case ChainMul:
			ScaleF32(dst, dst, o.S)
		case ChainDiv:
			for i := range dst {
				dst[i] /= o.S
			}
		default:
			MaxScalarF32(dst, dst, o.S)
		}
	}
}
