package blas

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPackA checks the packed layout against its definition,
// dst[r*mr*kcur + p*mr + i] = alpha*A(i0+r*mr+i, p0+p) (zero past mcur),
// for block sizes around the AVX2 transpose's 8-column blocks and mr.
func TestPackA(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	const rows, cols = 40, 300
	for _, trans := range []bool{false, true} {
		lda := cols + 3
		if trans {
			lda = rows + 5
		}
		a := make([]float32, (max(rows, cols)+1)*lda)
		for i := range a {
			a[i] = rng.Float32()
		}
		at := func(i, p int) float32 {
			if trans {
				return a[p*lda+i]
			}
			return a[i*lda+p]
		}
		for _, mcur := range []int{1, 5, 6, 7, 12, 17} {
			for _, kcur := range []int{1, 7, 8, 9, 16, 23, 256} {
				for _, alpha := range []float32{1, -0.5} {
					i0, p0 := 3, 11
					dst := make([]float32, roundUp(mcur, mr)*kcur+packSlack)
					for i := range dst {
						dst[i] = -99 // must all be overwritten
					}
					packA(dst, a, lda, trans, i0, p0, mcur, kcur, alpha)
					for r := 0; r < ceilDiv(mcur, mr); r++ {
						for p := range kcur {
							for i := range mr {
								want := float32(0)
								if row := r*mr + i; row < mcur {
									want = alpha * at(i0+row, p0+p)
								}
								got := dst[r*mr*kcur+p*mr+i]
								require.Equal(t, want, got, fmt.Sprintf("trans=%v mcur=%d kcur=%d alpha=%g r=%d p=%d i=%d", trans, mcur, kcur, alpha, r, p, i))
							}
						}
					}
				}
			}
		}
	}
}

// TestPackB checks dst[q*nr*kcur + p*nr + j] = B(pc+p, jc+q*nr+j) (zero past
// ncur) for a range of panels packed separately, as threads do.
func TestPackB(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	const rows, cols = 300, 70
	for _, trans := range []bool{false, true} {
		ldb := cols + 2
		if trans {
			ldb = rows + 1
		}
		b := make([]float32, (max(rows, cols)+1)*ldb)
		for i := range b {
			b[i] = rng.Float32()
		}
		at := func(p, j int) float32 {
			if trans {
				return b[j*ldb+p]
			}
			return b[p*ldb+j]
		}
		for _, ncur := range []int{1, 15, 16, 17, 40} {
			for _, kcur := range []int{1, 8, 9, 256} {
				pc, jc := 7, 5
				panels := ceilDiv(ncur, nr)
				dst := make([]float32, panels*nr*kcur)
				for i := range dst {
					dst[i] = -99
				}
				mid := panels / 2
				packB(dst, b, ldb, trans, pc, jc, kcur, ncur, 0, mid)
				packB(dst, b, ldb, trans, pc, jc, kcur, ncur, mid, panels)
				for q := range panels {
					for p := range kcur {
						for j := range nr {
							want := float32(0)
							if col := q*nr + j; col < ncur {
								want = at(pc+p, jc+col)
							}
							require.Equal(t, want, dst[q*nr*kcur+p*nr+j], fmt.Sprintf("trans=%v ncur=%d kcur=%d q=%d p=%d j=%d", trans, ncur, kcur, q, p, j))
						}
					}
				}
			}
		}
	}
}
