package syntax

import "slices"

// Names a neutralized statement would have bound. The statement did not
// parse, so they are read off its tokens by shape: assignment targets
// ("a, b: ann = ..."), "def f", "class C", "for i, j in", "with ... as x",
// the names of R.output(...), and the first name of a line that looks like
// an assignment missing its "=" ("lv0 R.add(x, y)").

// lineTokens splits source text into identifiers, operators (the scanner's
// two-character ones kept whole) and placeholders for literals ("0" for a
// number, `"` for a string). It accepts any text.
func lineTokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\n' || c == '\\':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			j := i + 1
			if i+2 < len(s) && s[i+1] == c && s[i+2] == c {
				j = i + 3
				for j < len(s) && !(j+2 < len(s) && s[j] == c && s[j+1] == c && s[j+2] == c) {
					j++
				}
				j += 3
			} else {
				for j < len(s) && s[j] != c && s[j] != '\n' {
					if s[j] == '\\' {
						j++
					}
					j++
				}
				j++
			}
			out = append(out, `"`)
			i = min(j, len(s))
		case isDigit(c):
			for i < len(s) && (isLetter(s[i]) || isDigit(s[i]) || s[i] == '.') {
				i++
			}
			out = append(out, "0")
		case isLetter(c):
			j := i + 1
			for j < len(s) && (isLetter(s[j]) || isDigit(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			j := i + 1
			if j < len(s) {
				switch s[i : i+2] {
				case "**", "//", "->", "==", "!=", "<=", ">=", "<<", ">>":
					j = i + 2
				}
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out
}

func isBindable(t string) bool { return t != "" && isLetter(t[0]) && !isKeyword(t) }

// boundNames returns the names the statement with tokens toks binds.
func boundNames(toks []string) []string {
	if len(toks) == 0 {
		return nil
	}
	at := func(i int) string {
		if i < len(toks) {
			return toks[i]
		}
		return ""
	}
	switch toks[0] {
	case "def", "class":
		if isBindable(at(1)) {
			return []string{toks[1]}
		}
		return nil
	case "for":
		end := slices.Index(toks, "in")
		if end < 0 {
			end = len(toks)
		}
		return plainNames(toks, 1, end)
	case "with":
		if as := slices.Index(toks, "as"); as >= 0 {
			return plainNames(toks, as+1, len(toks))
		}
		return nil
	}
	if toks[0] == "R" && at(1) == "." && at(2) == "output" && at(3) == "(" {
		return plainNames(toks, 4, len(toks))
	}
	// Targets end at the first top-level "=" or ":" (an annotation).
	depth := 0
	for i, t := range toks {
		switch t {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "=", ":":
			if depth == 0 {
				return plainNames(toks, 0, i)
			}
		}
	}
	if isBindable(toks[0]) && isBindable(at(1)) {
		return toks[:1] // "lv0 R.add(x)": a binding missing its "="
	}
	return nil
}

// plainNames returns the identifiers of toks[from:to] that stand alone:
// outside brackets, not part of a dotted path, a call or a subscript
// (A[i] = v binds nothing).
func plainNames(toks []string, from, to int) []string {
	var out []string
	depth := 0
	for i := from; i < to && i < len(toks); i++ {
		switch toks[i] {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		}
		if depth != 0 || !isBindable(toks[i]) || (i > 0 && toks[i-1] == ".") {
			continue
		}
		if i+1 < len(toks) {
			if n := toks[i+1]; n == "." || n == "(" || n == "[" {
				continue
			}
		}
		out = append(out, toks[i])
	}
	return out
}
