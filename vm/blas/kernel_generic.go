package blas

// mr x nr is the register tile of the micro-kernel: 6 rows of 16 floats are
// 12 YMM accumulators, leaving 4 registers for the B row and A broadcasts.
const (
	mr = 6
	nr = 16
)

// microKernel computes C[i*ldc+j] += sum_{p<k} a[p*mr+i] * b[p*nr+j] for
// i < mr, j < nr, where a and b are packed micro-panels (see packA, packB).
// Preconditions (not checked by the assembly): len(a) >= mr*k,
// len(b) >= nr*k, len(c) >= (mr-1)*ldc+nr.
type microKernel func(k int, a, b, c []float32, ldc int)

type kernelChoice struct {
	name string
	fn   microKernel
}

// activeKernel is the micro-kernel Sgemm uses: the portable one unless an
// init function found a faster one for this CPU.
var activeKernel = kernelChoice{name: "go-6x16", fn: kernel6x16Go}

// KernelName reports which micro-kernel the running CPU uses ("avx2-fma-6x16"
// or "go-6x16").
func KernelName() string { return activeKernel.name }

// kernel6x16Go is the portable micro-kernel. It keeps the tile in a local
// array (the compiler holds what it can in registers) and adds it to C once.
func kernel6x16Go(k int, a, b, c []float32, ldc int) {
	var acc [mr][nr]float32
	a = a[:mr*k]
	b = b[:nr*k]
	for p := 0; p < k; p++ {
		bp := (*[nr]float32)(b[p*nr:])
		ap := (*[mr]float32)(a[p*mr:])
		for i := range mr {
			ai := ap[i]
			row := &acc[i]
			for j := range nr {
				row[j] += ai * bp[j]
			}
		}
	}
	for i := range mr {
		ci := (*[nr]float32)(c[i*ldc:])
		for j := range nr {
			ci[j] += acc[i][j]
		}
	}
}
