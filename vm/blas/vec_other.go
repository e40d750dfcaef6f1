//go:build !amd64 || purego

package blas

func binaryGo(f func(dst, a, b []float32)) binaryLoop {
	return func(dst, a, b []float32, _ bool) { f(dst, a, b) }
}

func scalarGo(f func(dst, a []float32, s float32)) scalarLoop {
	return func(dst, a []float32, s float32, _ bool) { f(dst, a, s) }
}

var (
	addF32       = binaryGo(addF32Go)
	subF32       = binaryGo(subF32Go)
	mulF32       = binaryGo(mulF32Go)
	divF32       = binaryGo(divF32Go)
	maximumF32   = binaryGo(maximumF32Go)
	minimumF32   = binaryGo(minimumF32Go)
	addScalarF32 = scalarGo(addScalarF32Go)
	mulScalarF32 = scalarGo(mulScalarF32Go)
	maxScalarF32 = scalarGo(maxScalarF32Go)
)
