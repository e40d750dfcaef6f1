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

// kernel12x32AVX512 (kernel_avx512_amd64.s) is kernelChoice.wide on CPUs
// with AVX-512: a 12x32 block in 24 ZMM accumulators. It and the 32-column
// kernels below are wideKernels: they add their block into C or, with
// overwrite, store it.
//
//go:noescape
func kernel12x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)

// kernel6x32AVX512 is kernelChoice.wideLast: the 6x32 block of one A
// panel under a pair of B panels.
//
//go:noescape
func kernel6x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)

// kernel12x16AVX512 is kernelChoice.wideOne: the 12x16 block of two A
// panels over one B panel.
//
//go:noescape
func kernel12x16AVX512(k int, a, b, c []float32, ldc int)

// The partial-row kernels of kernelChoice.wideRows
// (kernel_rows512_amd64.s): the first 1..5 rows of kernel6x32AVX512's
// block, len(c) >= (rows-1)*ldc+32.
//
//go:noescape
func kernel1x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)

//go:noescape
func kernel2x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)

//go:noescape
func kernel3x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)

//go:noescape
func kernel4x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)

//go:noescape
func kernel5x32AVX512(k int, a, b, c []float32, ldc int, overwrite bool)

// fmaPeakAVX512 runs n iterations of 12 independent 16-wide FMAs (384 FLOP).
//
//go:noescape
func fmaPeakAVX512(n int)

// hasAVX2FMA reports whether the assembly paths may run: AVX2 and FMA in the
// CPU and YMM state enabled by the OS (x/sys/cpu checks OSXSAVE for both).
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// hasAVX512 reports whether the 512-bit kernel may run: AVX-512F in the CPU
// and ZMM state enabled by the OS (x/sys/cpu checks both). On CPUs with
// 512-bit FMA units (Zen 5) it doubles the FLOP per cycle of the AVX2
// kernel; where 512-bit operations are split in two (Zen 4) it runs at the
// AVX2 kernel's rate.
var hasAVX512 = hasAVX2FMA && cpu.X86.HasAVX512F

func init() {
	if hasAVX2FMA {
		activeKernel = kernelChoice{name: "avx2-fma-6x16", fn: kernel6x16AVX2,
			rows: [mr]microKernel{nil, kernel1x16AVX2, kernel2x16AVX2, kernel3x16AVX2, kernel4x16AVX2, kernel5x16AVX2}}
		if hasAVX512 {
			activeKernel.name = "avx512-12x32+avx2-fma-6x16"
			activeKernel.wide, activeKernel.wideLast, activeKernel.wideOne = kernel12x32AVX512, kernel6x32AVX512, kernel12x16AVX512
			activeKernel.wideRows = [mr]wideKernel{nil, kernel1x32AVX512, kernel2x32AVX512, kernel3x32AVX512, kernel4x32AVX512, kernel5x32AVX512}
			activeKernel.storeFirst = true
		}
	}
}

// fmaPeak runs the FMA peak loop at the widest vector width the CPU has
// (about n*192 FLOP) and returns the FLOP it performed, or 0 when the CPU
// has no AVX2/FMA.
func fmaPeak(n int) int64 {
	if !hasAVX2FMA {
		return 0
	}
	if hasAVX512 {
		// Half the iterations of twice the width: the same FLOP count, so
		// callers that time n*192 FLOP stay right.
		fmaPeakAVX512(n / 2)
		return int64(n/2) * 12 * 16 * 2
	}
	fmaPeakAVX2(n)
	return int64(n) * 12 * 8 * 2
}
