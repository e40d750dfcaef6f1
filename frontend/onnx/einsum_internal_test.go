package onnx

import (
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
