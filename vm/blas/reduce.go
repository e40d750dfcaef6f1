package blas

import "fmt"

// Dot products, AXPY and sums: the building blocks of GEMV-shaped matmuls
// (a batch-1 dense layer) and of row reductions (softmax, layer norm).
// Like the elementwise primitives they run AVX2 loops on amd64 and Go loops
// elsewhere, and a length mismatch panics naming the function. Unlike them
// the reductions do not promise a summation order: the AVX2 loops keep 32
// partial sums, so results differ from a sequential float32 loop by
// rounding (within the usual n*eps*sum|terms| bound).

// DotF32 returns sum_i a[i]*b[i].
func DotF32(a, b []float32) float32 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("blas.DotF32: lengths differ: a %d, b %d", len(a), len(b)))
	}
	return dotF32(a, b)
}

// AxpyF32 sets y[i] += alpha*x[i] (with one rounding per element where the
// CPU has FMA).
func AxpyF32(alpha float32, x, y []float32) {
	if len(x) != len(y) {
		panic(fmt.Sprintf("blas.AxpyF32: lengths differ: x %d, y %d", len(x), len(y)))
	}
	axpyF32(alpha, x, y)
}

// SumF32 returns sum_i a[i].
func SumF32(a []float32) float32 { return sumF32(a) }

// MaxF32 returns the largest element of a non-empty a (the row max of a
// softmax); NaN if any element is NaN, as Go's max. Which zero it returns
// when the maximum is ±0 is unspecified. An empty a panics.
func MaxF32(a []float32) float32 {
	if len(a) == 0 {
		panic("blas.MaxF32: empty slice")
	}
	return maxF32(a)
}

func dotF32Go(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func axpyF32Go(alpha float32, x, y []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += alpha * x[i]
	}
}

func sumF32Go(a []float32) float32 {
	var s float32
	for _, v := range a {
		s += v
	}
	return s
}

func maxF32Go(a []float32) float32 {
	m := a[0]
	for _, v := range a[1:] {
		m = max(m, v)
	}
	return m
}
