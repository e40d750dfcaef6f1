package blas

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPoolStride2 checks PoolStride2F32 against the scalar definition
// (sums exactly: the same order) on lengths around the vector width, 1-4
// taps, with the shortest allowed input, NaN in either operand and ±Inf.
func TestPoolStride2(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	nan := float32(math.NaN())
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 56, 113} {
		for _, c := range []struct {
			taps  int
			isMax bool
		}{{1, true}, {1, false}, {2, true}, {2, false}, {3, true}, {3, false}, {4, true}} {
			taps, isMax := c.taps, c.isMax
			src := randF32(2*(n-1)+taps, rng)
			dst := randF32(n, rng)
			src[0], dst[min(3, n-1)] = nan, nan
			if n > 8 {
				src[2*8], src[2*5] = float32(math.Inf(1)), float32(math.Inf(-1))
			}
			want := append([]float32(nil), dst...)
			for j := range want {
				for t := range taps {
					if isMax {
						want[j] = max(want[j], src[2*j+t])
					} else {
						want[j] += src[2*j+t]
					}
				}
			}
			// With one element of spare capacity (a row inside a tensor)
			// and without (the tensor's last row).
			if n%2 == 0 {
				src = append(src, float32(math.NaN()))[:len(src)]
			}
			PoolStride2F32(dst, src, taps, isMax)
			for j := range dst {
				if math.IsNaN(float64(want[j])) {
					require.True(t, math.IsNaN(float64(dst[j])), "n=%d taps=%d max=%v: dst[%d] = %v, want NaN", n, taps, isMax, j, dst[j])
					continue
				}
				require.Equal(t, want[j], dst[j], "n=%d taps=%d max=%v: dst[%d]", n, taps, isMax, j)
			}
		}
	}
	require.Panics(t, func() { PoolStride2F32(make([]float32, 4), make([]float32, 7), 2, true) })
}
