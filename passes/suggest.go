package passes

import "fmt"

// unknownName builds the "unknown X "name" (did you mean "Y"?)" error.
func unknownName(what, name string, known []string) error {
	if s := closest(name, known); s != "" {
		return fmt.Errorf("unknown %s %q (did you mean %q?)", what, name, s)
	}
	return fmt.Errorf("unknown %s %q", what, name)
}

// closest returns the known name nearest to name by edit distance
// (case-insensitive), or "" when none is plausibly meant.
func closest(name string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := editDistance(lower(name), lower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD > max(2, len(name)/3) {
		return ""
	}
	return best
}

func lower(s string) []rune {
	r := []rune(s)
	for i, c := range r {
		if c >= 'A' && c <= 'Z' {
			r[i] = c + 'a' - 'A'
		}
	}
	return r
}

// editDistance is the Levenshtein distance with two rows.
func editDistance(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// UnknownPass returns nil when name is a registered pass, else the
// "unknown pass" error with the closest registered name.
func UnknownPass(name string) error {
	if _, ok := Lookup(name); ok {
		return nil
	}
	return unknownName("pass", name, PassNames())
}
