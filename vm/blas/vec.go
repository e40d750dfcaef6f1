package blas

import "fmt"

//go:generate go run gen_vec.go

// Elementwise float32 primitives for vm/kernel's elementwise and broadcast
// kernels. Each runs an AVX2 loop on amd64 CPUs that have it (8 lanes,
// unrolled 4x) and a plain Go loop elsewhere.

// ntBytes is the output size (of the whole call, for the row broadcasts)
// from which the AVX2 loops write with non-temporal stores (VMOVNTPS), as
// runtime.memmove does from 1 MiB: an output this large (three streams then
// exceed a quarter of the 32 MiB L3) would only evict the inputs, and
// skipping the read-for-ownership saves a quarter of the DRAM traffic of
// a + b.
const ntBytes = 8 << 20

// binaryLoop and scalarLoop are the per-CPU loops behind the API; stream
// asks for non-temporal stores (ignored by the Go loops).
type (
	binaryLoop func(dst, a, b []float32, stream bool)
	scalarLoop func(dst, a []float32, s float32, stream bool)
)

func streamed(n int) bool { return n*4 >= ntBytes }

//
// Contract shared by all of them:
//   - dst and every slice operand have the same length (the row variants:
//     len(dst) == len(a) is a multiple of len(row)); a mismatch is a caller
//     bug and panics with a message naming the function and the lengths;
//   - dst may be the same slice as an operand (in-place update); any other
//     overlap gives unspecified results;
//   - results are the IEEE float32 results of the single operation per
//     element, identical between the AVX2 and the Go path.

// AddF32 sets dst[i] = a[i] + b[i].
func AddF32(dst, a, b []float32) {
	checkBinary("AddF32", dst, a, b)
	addF32(dst, a, b, streamed(len(dst)))
}

// SubF32 sets dst[i] = a[i] - b[i].
func SubF32(dst, a, b []float32) {
	checkBinary("SubF32", dst, a, b)
	subF32(dst, a, b, streamed(len(dst)))
}

// MulF32 sets dst[i] = a[i] * b[i].
func MulF32(dst, a, b []float32) {
	checkBinary("MulF32", dst, a, b)
	mulF32(dst, a, b, streamed(len(dst)))
}

// DivF32 sets dst[i] = a[i] / b[i].
func DivF32(dst, a, b []float32) {
	checkBinary("DivF32", dst, a, b)
	divF32(dst, a, b, streamed(len(dst)))
}

// MaximumF32 sets dst[i] = max(a[i], b[i]) (T.max of two tensors). A NaN in
// either operand propagates, as Go's max; the sign of a zero result when
// a[i] and b[i] are both zero is unspecified.
func MaximumF32(dst, a, b []float32) {
	checkBinary("MaximumF32", dst, a, b)
	maximumF32(dst, a, b, streamed(len(dst)))
}

// MinimumF32 sets dst[i] = min(a[i], b[i]), with MaximumF32's NaN and
// zero rules.
func MinimumF32(dst, a, b []float32) {
	checkBinary("MinimumF32", dst, a, b)
	minimumF32(dst, a, b, streamed(len(dst)))
}

// AddScalarF32 sets dst[i] = a[i] + s.
func AddScalarF32(dst, a []float32, s float32) {
	checkUnary("AddScalarF32", dst, a)
	addScalarF32(dst, a, s, streamed(len(dst)))
}

// ScaleF32 sets dst[i] = a[i] * s.
func ScaleF32(dst, a []float32, s float32) {
	checkUnary("ScaleF32", dst, a)
	mulScalarF32(dst, a, s, streamed(len(dst)))
}

// MaxScalarF32 sets dst[i] = max(a[i], s); ReLU is MaxScalarF32(dst, a, 0).
// A NaN in a propagates (as Go's max does); s must not be NaN. For a[i]
// and s both zero the sign of the result is unspecified (-0 == +0).
func MaxScalarF32(dst, a []float32, s float32) {
	checkUnary("MaxScalarF32", dst, a)
	maxScalarF32(dst, a, s, streamed(len(dst)))
}

// AddRowF32 is the bias add / trailing-axis broadcast: dst and a are
// row-major matrices with len(row) columns, and dst[i*n+j] = a[i*n+j] + row[j]
// for n = len(row). It runs the vector loop once per row.
func AddRowF32(dst, a, row []float32) { rowOp("AddRowF32", addF32, dst, a, row) }

// MulRowF32 sets dst[i*n+j] = a[i*n+j] * row[j], n = len(row).
func MulRowF32(dst, a, row []float32) { rowOp("MulRowF32", mulF32, dst, a, row) }

func rowOp(name string, f binaryLoop, dst, a, row []float32) {
	n := len(row)
	if len(a) != len(dst) || (n == 0 && len(dst) != 0) || (n != 0 && len(dst)%n != 0) {
		panic(fmt.Sprintf("blas.%s: len(dst)=%d, len(a)=%d must be equal and a multiple of len(row)=%d", name, len(dst), len(a), n))
	}
	stream := streamed(len(dst))
	for i := 0; i < len(dst); i += n {
		f(dst[i:i+n], a[i:i+n], row, stream)
	}
}

func checkBinary(name string, dst, a, b []float32) {
	if len(a) != len(dst) || len(b) != len(dst) {
		panic(fmt.Sprintf("blas.%s: lengths differ: dst %d, a %d, b %d", name, len(dst), len(a), len(b)))
	}
}

func checkUnary(name string, dst, a []float32) {
	if len(a) != len(dst) {
		panic(fmt.Sprintf("blas.%s: lengths differ: dst %d, a %d", name, len(dst), len(a)))
	}
}

// The portable loops. The compiler keeps them bounds-check free because
// the reslices prove the lengths equal.

func addF32Go(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func subF32Go(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] - b[i]
	}
}

func mulF32Go(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

func divF32Go(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] / b[i]
	}
}

func maximumF32Go(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = max(a[i], b[i])
	}
}

func minimumF32Go(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = min(a[i], b[i])
	}
}

func addScalarF32Go(dst, a []float32, s float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + s
	}
}

func mulScalarF32Go(dst, a []float32, s float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * s
	}
}

func maxScalarF32Go(dst, a []float32, s float32) {
	a = a[:len(dst)]
	for i := range dst {
		dst[i] = max(a[i], s)
	}
}
