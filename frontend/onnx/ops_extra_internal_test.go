package onnx

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExpandEllipsis(t *testing.T) {
	for _, tc := range []struct {
		eq    string
		ranks []int
		want  string
	}{
		{"...ii->...i", []int{4}, "ABii->ABi"},
		{"bij,bjk->bik", []int{3, 3}, "bij,bjk->bik"},
		// Broadcast ellipses align right; the shorter operand gets the
		// trailing letters.
		{"...ij,...jk", []int{4, 3}, "ABij,Bjk->ABik"},
		{"i...->...", []int{3}, "iAB->AB"},
	} {
		got, err := expandEllipsis(tc.eq, tc.ranks)
		require.NoError(t, err, tc.eq)
		assert.Equal(t, tc.want, got, tc.eq)
	}
	_, err := expandEllipsis("...ij", []int{1})
	assert.Error(t, err, "rank below the letters")
}

// TestPermutationSigns checks every permutation's sign against the
// parity of its inversions, counted here.
func TestPermutationSigns(t *testing.T) {
	for n := 1; n <= 4; n++ {
		ps := permutations(n)
		want := 1
		for k := 2; k <= n; k++ {
			want *= k
		}
		require.Len(t, ps, want, "n = %d", n)
		seen := map[string]bool{}
		for _, p := range ps {
			inv := 0
			for i := range p.perm {
				for j := i + 1; j < len(p.perm); j++ {
					if p.perm[i] > p.perm[j] {
						inv++
					}
				}
			}
			assert.Equal(t, 1-2*(inv%2), p.sign, "%v", p.perm)
			key := fmt.Sprint(p.perm)
			assert.False(t, seen[key], "%v twice", p.perm)
			seen[key] = true
		}
	}
}
