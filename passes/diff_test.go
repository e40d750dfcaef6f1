package passes

import (
	"math/rand"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	if d := UnifiedDiff("a", "b", "x\ny\n", "x\ny\n", 3); d != "" {
		t.Errorf("equal texts diff %q", d)
	}
	got := UnifiedDiff("a", "b", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\nthree\n4\n5\n6\n7\n8\n9\nten\n", 1)
	want := "--- a\n+++ b\n@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n@@ -9 +9,2 @@\n 9\n+ten\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := UnifiedDiff("a", "b", "", "x\n", 3); got != "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n" {
		t.Errorf("insert into empty: %q", got)
	}
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
			if strings.Join(a, ",") != strings.Join(b, ",") {
				t.Fatalf("nil script for different %v %v", a, b)
			}
			continue
		}
		var got []string
		i, j := 0, 0
		for _, op := range ops {
			switch op {
			case ' ':
				if a[i] != b[j] {
					t.Fatalf("kept unequal lines %v %v %s", a, b, ops)
				}
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
		if i != len(a) || strings.Join(got, ",") != strings.Join(b, ",") {
			t.Fatalf("script %s turns %v into %v, not %v", ops, a, got, b)
		}
		// Minimality against an LCS computed by dynamic programming.
		edits := strings.Count(string(ops), "-") + strings.Count(string(ops), "+")
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("%v -> %v: %d edits, minimum %d", a, b, edits, want)
		}
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
