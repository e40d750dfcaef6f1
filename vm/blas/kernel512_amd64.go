//go:build !purego

package blas

import "golang.org/x/sys/cpu"

// kernel6x32AVX512 is the 6x16 micro-kernel's contract on two adjacent
// packed B micro-panels (b[:16k] and b[16k:32k]) and 32 columns of C
// (kernel512_amd64.s). Each element of C is summed in the same order as
// by the 6x16 kernels, so results are bitwise equal to theirs.
//
//go:noescape
func kernel6x32AVX512(k int, a, b, c []float32, ldc int)

// kernel6x32PackAVX512 is kernel6x32AVX512 reading op(B) = B as stored
// (row p of the 32 columns at b[p*ldb:]) and packing it into bp (two
// micro-panels) on the way; same summation order, so bitwise the same
// results.
//
//go:noescape
func kernel6x32PackAVX512(k int, a, b, c []float32, ldc, ldb int, bp []float32)

// hasAVX512 reports whether the 512-bit kernel may run: AVX-512F in the
// CPU and ZMM state enabled by the OS (x/sys/cpu checks both).
//
// Whether it pays depends on the core: Zen 5 (the project's machines since
// the Turin hosts; measured 215 against 108 GFLOP/s per core for 512- and
// 256-bit FMA loops) executes 512-bit FMAs at full width, Zen 4 splits them
// in two 256-bit halves (no gain, but no loss either: the tile is twice as
// wide and the loop as long per FLOP).
var hasAVX512 = hasAVX2FMA && cpu.X86.HasAVX512F

// withAVX512 adds the 512-bit kernel to the AVX2 choice where it runs.
func withAVX512(k kernelChoice) kernelChoice {
	if hasAVX512 {
		k.name = "avx512-6x32+" + k.name
		k.wide = kernel6x32AVX512
		k.direct = kernel6x32PackAVX512
	}
	return k
}
