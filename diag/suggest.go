package diag

import "strings"

// Closest returns the candidate a user most plausibly meant by name, for
// "did you mean" hints: the nearest by edit distance (ignoring case, a
// swapped pair of letters counting as one edit), ties broken by the
// smaller candidate, or "" when none is near enough to be a typo.
func Closest(name string, candidates []string) string {
	lname := strings.ToLower(name)
	best, bestDist := "", -1
	for _, c := range candidates {
		if c == name {
			continue
		}
		d := editDistance(lname, strings.ToLower(c))
		if bestDist < 0 || d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > max(1, (len(name)+2)/3) {
		return ""
	}
	return best
}

// editDistance is the Damerau-Levenshtein (optimal string alignment)
// distance over bytes.
func editDistance(a, b string) int {
	n, m := len(a), len(b)
	prev2 := make([]int, m+1)
	prev := make([]int, m+1)
	cur := make([]int, m+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= n; i++ {
		cur[0] = i
		for j := 1; j <= m; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[m]
}
