package passes

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnifiedDiff(t *testing.T) {
	assert.Empty(t, UnifiedDiff("a", "b", "x\ny\n", "x\ny\n", 3), "equal texts diff")
	got := UnifiedDiff("a", "b", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\nthree\n4\n5\n6\n7\n8\n9\nten\n", 1)
	want := "--- a\n+++ b\n@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n@@ -9 +9,2 @@\n 9\n+ten\n"
	assert.Equal(t, want, got)
	assert.Equal(t, "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n", UnifiedDiff("a", "b", "", "x\n", 3), "insert into empty")
}

// applyDiff rebuilds b from a and the edit script: the script is correct.
func TestMyersScriptsRebuild(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	words := []string{"a", "b", "c", "d"}
	for range 500 {
		a := make([]string, r.Intn(12))
		b := make([]string, r.Intn(12))
		for i := range a {
			a[i] = words[r.Intn(4)]
		}
		for i := range b {
			b[i] = words[r.Intn(4)]
		}
		ops := myers(a, b)
		if ops == nil {
			require.Equal(t, strings.Join(a, ","), strings.Join(b, ","), "nil script for different lines")
			continue
		}
		var got []string
		i, j := 0, 0
		for _, op := range ops {
			switch op {
			case ' ':
				require.Equal(t, a[i], b[j], "kept unequal lines %v %v %s", a, b, ops)
				got = append(got, a[i])
				i++
				j++
			case '-':
				i++
			case '+':
				got = append(got, b[j])
				j++
			}
		}
		require.Equal(t, len(a), i, "script %s does not consume %v", ops, a)
		require.Equal(t, strings.Join(b, ","), strings.Join(got, ","), "script %s turns %v into %v, not %v", ops, a, got, b)
		// Minimality against an LCS computed by dynamic programming.
		edits := strings.Count(string(ops), "-") + strings.Count(string(ops), "+")
		require.Equal(t, len(a)+len(b)-2*lcs(a, b), edits, "%v -> %v: edits above the minimum", a, b)
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				dp[i][j] = dp[i-1][j-1] + 1
			} else {
				dp[i][j] = max(dp[i-1][j], dp[i][j-1])
			}
		}
	}
	return dp[len(a)][len(b)]
}
