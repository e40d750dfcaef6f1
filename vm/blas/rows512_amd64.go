//go:build !purego

package blas

// The 512-bit row loops (rows512_amd64.s), n a multiple of 16: SumF32's
// and DotF32's reductions with 64 partial sums (a different association
// than the 256-bit loops' 32, so they agree up to rounding) and NormF32's
// normalization (the same operations per element as normF32AVX2: bitwise
// the same results). The wrappers in reduce_amd64.go and norm_amd64.go run
// them over the multiples of 16 where the CPU has AVX-512.

//go:noescape
func sumF32AVX512(a *float32, n int) float32

//go:noescape
func dotF32AVX512(a, b *float32, n int) float32

//go:noescape
func normF32AVX512(dst, x, scale, shift *float32, n int, m, rs float32)

//go:noescape
func normScaleF32AVX512(dst, x, scale *float32, n int, m, rs float32)
