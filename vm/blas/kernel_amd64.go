//go:build !purego

package blas

import "golang.org/x/sys/cpu"

// kernel6x16AVX2 is the assembly micro-kernel (kernel_amd64.s); see
// microKernel for the contract.
//
//go:noescape
func kernel6x16AVX2(k int, a, b, c []float32, ldc int)

// fmaPeakAVX2 runs n iterations of 12 independent 8-wide FMAs (192 FLOP).
//
// The partial-row kernels (kernel_rows_amd64.s): like kernel6x16AVX2 on
// the same packed panels, but they update only the first 1..5 rows of C,
// so len(c) >= (rows-1)*ldc+16 suffices.
//
//go:noescape
func kernel1x16AVX2(k int, a, b, c []float32, ldc int)

//go:noescape
func kernel2x16AVX2(k int, a, b, c []float32, ldc int)

//go:noescape
func kernel3x16AVX2(k int, a, b, c []float32, ldc int)

//go:noescape
func kernel4x16AVX2(k int, a, b, c []float32, ldc int)

//go:noescape
func kernel5x16AVX2(k int, a, b, c []float32, ldc int)

//go:noescape
func fmaPeakAVX2(n int)

// hasAVX2FMA reports whether the assembly paths may run: AVX2 and FMA in the
// CPU and YMM state enabled by the OS (x/sys/cpu checks OSXSAVE for both).
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func init() {
	if hasAVX2FMA {
		activeKernel = kernelChoice{name: "avx2-fma-6x16", fn: kernel6x16AVX2,
			rows: [mr]microKernel{nil, kernel1x16AVX2, kernel2x16AVX2, kernel3x16AVX2, kernel4x16AVX2, kernel5x16AVX2}}
		activeKernel = withAVX512(activeKernel)
	}
}

// fmaPeak runs the FMA peak loop and returns the FLOP it performed, or 0 when
// the CPU has no AVX2/FMA.
func fmaPeak(n int) int64 {
	if !hasAVX2FMA {
		return 0
	}
	fmaPeakAVX2(n)
	return int64(n) * 12 * 8 * 2
}
