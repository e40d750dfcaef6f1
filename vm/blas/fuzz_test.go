package blas

import (
	"math/rand/v2"
	"testing"
)

// FuzzSgemm checks random shapes, transposes, paddings, alpha/beta and
// thread counts against the float64 triple loop (tolerance as in
// TestSgemmMatchesNaive).
//
//	go test ./vm/blas -run '^$' -fuzz FuzzSgemm -fuzztime 10s
func FuzzSgemm(f *testing.F) {
	f.Add(uint16(7), uint16(17), uint16(9), uint8(0), uint8(1), uint64(1))
	f.Add(uint16(1), uint16(300), uint16(40), uint8(3), uint8(2), uint64(2))
	f.Add(uint16(150), uint16(20), uint16(260), uint8(1), uint8(3), uint64(3))
	forceThreads(f)
	f.Fuzz(func(t *testing.T, m16, n16, k16 uint16, flags, threads uint8, seed uint64) {
		// Bound the sizes so one case stays fast; the bounds still cross
		// mc=144 and kc=256 and the tile widths.
		tc := gemmCase{
			m: int(m16 % 160), n: int(n16 % 320), k: int(k16 % 300),
			transA: flags&1 != 0, transB: flags&2 != 0, pad: int(flags>>2) % 5,
		}
		scalars := [][2]float32{{1, 0}, {1, 1}, {0.5, -2}, {-1.5, 0}, {0, 0.5}, {2, 1}}
		ab := scalars[seed%uint64(len(scalars))]
		tc.alpha, tc.beta = ab[0], ab[1]
		rng := rand.New(rand.NewPCG(seed, 99))
		d := newGemmData(tc, rng)
		want, mag := refSgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc)
		SgemmThreads(int(threads%4)+1, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, d.a, d.lda, d.b, d.ldb, tc.beta, d.c, d.ldc)
		requireClose(t, tc.String(), tc.k, d.c, want, mag)
	})
}
