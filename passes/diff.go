package passes

import (
	"fmt"
	"strings"
)

// UnifiedDiff returns a unified diff of two texts by lines, with context
// lines of context, or "" when they are equal. It uses the O(ND) Myers
// algorithm on line IDs, so cost grows with the size of the change.
func UnifiedDiff(aName, bName, a, b string, context int) string {
	al, bl := splitLines(a), splitLines(b)
	ops := myers(al, bl)
	if ops == nil {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	// Group edits into hunks with context.
	type line struct {
		kind byte // ' ', '-', '+'
		text string
		ai   int // line index in a (for ' ' and '-') or next a line
		bi   int
	}
	var lines []line
	ai, bi := 0, 0
	for _, op := range ops {
		switch op {
		case ' ':
			lines = append(lines, line{' ', al[ai], ai, bi})
			ai++
			bi++
		case '-':
			lines = append(lines, line{'-', al[ai], ai, bi})
			ai++
		case '+':
			lines = append(lines, line{'+', bl[bi], ai, bi})
			bi++
		}
	}
	for i := 0; i < len(lines); {
		if lines[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-context)
		end := i
		for end < len(lines) {
			if lines[end].kind != ' ' {
				end++
				continue
			}
			// Extend over a run of context shorter than 2*context+1.
			k := end
			for k < len(lines) && lines[k].kind == ' ' {
				k++
			}
			if k == len(lines) || k-end > 2*context {
				end = min(len(lines), end+context)
				break
			}
			end = k
		}
		aStart, bStart, aCount, bCount := lines[start].ai, lines[start].bi, 0, 0
		for _, l := range lines[start:end] {
			if l.kind != '+' {
				aCount++
			}
			if l.kind != '-' {
				bCount++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
		for _, l := range lines[start:end] {
			out.WriteByte(l.kind)
			out.WriteString(l.text)
			out.WriteByte('\n')
		}
		i = end
	}
	return out.String()
}

func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// maxDiffEdits bounds the edit distance myers searches, so the trace it
// keeps (O(D^2)) stays small.
const maxDiffEdits = 2000

// myers returns the edit script (' ' keep, '-' delete, '+' insert) turning
// a into b, or nil when they are equal.
func myers(a, b []string) []byte {
	// Intern lines so comparisons are integer compares.
	ids := map[string]int{}
	intern := func(ls []string) []int {
		out := make([]int, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	n, m := len(x), len(y)
	maxD := n + m
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		if d > maxDiffEdits {
			// Too different to be worth a minimal diff: replace everything.
			ops := make([]byte, 0, n+m)
			ops = append(ops, strings.Repeat("-", n)...)
			return append(ops, strings.Repeat("+", m)...)
		}
		// Only diagonals -d..d matter in round d: keep that window.
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				i = v[off+k+1]
			} else {
				i = v[off+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i++
				j++
			}
			v[off+k] = i
			if i >= n && j >= m {
				found = d
				break
			}
		}
	}
	if found == 0 {
		return nil
	}
	// Backtrack from (n, m): trace[d] is v as it was after round d-1.
	var ops []byte
	i, j := n, m
	for d := found; d > 0; d-- {
		at := func(k int) int { return trace[d][k+d+1] }
		k := i - j
		insert := k == -d || k != d && at(k-1) < at(k+1)
		pk := k - 1
		if insert {
			pk = k + 1
		}
		pi := at(pk)
		pj := pi - pk
		// The move lands at (si, sj); the snake runs from there to (i, j).
		si := pi + 1
		if insert {
			si = pi
		}
		for i > si {
			ops = append(ops, ' ')
			i--
			j--
		}
		if insert {
			ops = append(ops, '+')
		} else {
			ops = append(ops, '-')
		}
		i, j = pi, pj
	}
	for i > 0 && j > 0 {
		ops = append(ops, ' ')
		i--
		j--
	}
	for l, r := 0, len(ops)-1; l < r; l, r = l+1, r-1 {
		ops[l], ops[r] = ops[r], ops[l]
	}
	return ops
}

// LineEdits is the edit script turning lines a into lines b: one byte per
// step, ' ' keeps a line of both, '-' deletes a line of a, '+' inserts a
// line of b (nil when they are equal). Like UnifiedDiff it is minimal up to
// a bounded edit distance and replaces everything beyond it.
func LineEdits(a, b []string) []byte { return myers(a, b) }
