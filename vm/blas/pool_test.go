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

// TestPoolRows checks PoolRowsF32 against the scalar definition (sums in
// the same order, so exactly) on row lengths around the vector width,
// windows of 1-3 rows and 1-3 taps, padded and unpadded row strides, the
// shortest allowed input (no spare capacity) and NaN and ±Inf inputs.
func TestPoolRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	nan := float32(math.NaN())
	for _, n := range []int{1, 7, 8, 9, 16, 17, 56} {
		for _, rows := range []int{1, 3} {
			for _, c := range []struct {
				kh, taps int
				isMax    bool
			}{{2, 2, true}, {2, 2, false}, {3, 3, true}, {1, 1, true}, {3, 2, false}} {
				w := 2*n + 1             // input row length
				hstride := w + (n % 3)   // padded rows when n%3 != 0
				srcStride := 2 * hstride // stride 2 along H
				dstStride := n + (n % 2) // padded output rows when n is odd
				srcLen := (rows-1)*srcStride + (c.kh-1)*hstride + 2*(n-1) + c.taps
				src := randF32(srcLen, rng)
				src[0], src[srcLen/2] = nan, float32(math.Inf(1))
				if srcLen > 20 {
					src[17] = float32(math.Inf(-1))
				}
				dst := randF32((rows-1)*dstStride+n, rng)
				want := append([]float32(nil), dst...)
				init := float32(-math.MaxFloat32)
				if !c.isMax {
					init = 0
				}
				for i := range rows {
					for j := range n {
						acc := init
						for h := range c.kh {
							for tp := range c.taps {
								v := src[i*srcStride+h*hstride+2*j+tp]
								if c.isMax {
									acc = max(acc, v)
								} else {
									acc += v
								}
							}
						}
						want[i*dstStride+j] = acc
					}
				}
				PoolRowsF32(dst, src, rows, n, dstStride, srcStride, c.kh, hstride, c.taps, init, c.isMax)
				for i := range dst {
					if math.IsNaN(float64(want[i])) {
						require.True(t, math.IsNaN(float64(dst[i])), "n=%d rows=%d %+v: dst[%d] = %v, want NaN", n, rows, c, i, dst[i])
						continue
					}
					require.Equal(t, want[i], dst[i], "n=%d rows=%d %+v: dst[%d]", n, rows, c, i)
				}
			}
		}
	}
	require.Panics(t, func() { PoolRowsF32(make([]float32, 8), make([]float32, 15), 1, 8, 8, 16, 1, 16, 2, 0, true) })
}
