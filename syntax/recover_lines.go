package syntax

// Logical lines for syntax error recovery.
//
// Recovery neutralizes whole statements, so it needs to know which physical
// lines form one logical line (a statement whose brackets span several
// lines, a triple-quoted string, a backslash continuation). The scanner
// knows this too, but it stops at the first lexical error, and recovery
// must work on exactly the inputs the scanner rejects (an unterminated
// string, a stray character, a tab in the indentation). So this is a
// separate, tolerant pass over the text with the scanner's rules for
// strings, comments and brackets. It runs only after a syntax error.

// logicalLine is one statement's physical line range.
type logicalLine struct {
	start, end int    // 1-based physical lines, inclusive
	indent     int    // leading spaces of the first line
	tabIndent  bool   // the leading blanks contain a tab or form feed
	first      string // the first token: a keyword, a name, "@", ...
	// unclosed is set when the line was cut with brackets still open: the
	// next physical line was not indented deeper and did not start with a
	// closing bracket, so it is taken as a new statement. An unclosed
	// bracket is the usual cause of a syntax error on the line after it.
	unclosed bool
}

// isHeader reports whether the line starts a block (its body is the
// following more-indented lines) or belongs to a decorated definition.
func (l *logicalLine) isHeader() bool {
	switch l.first {
	case "@", "def", "class", "if", "elif", "else", "for", "while", "with":
		return true
	}
	return false
}

// logicalLines splits src into logical lines; blank and comment-only lines
// belong to none.
func logicalLines(src string) []logicalLine {
	var out []logicalLine
	var cur *logicalLine
	depth := 0
	quote, triple := byte(0), false // an open string literal
	line := 1
	atLineStart := true // no significant byte seen on this physical line
	indent, tabIndent := 0, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if quote != 0 {
			switch {
			case c == '\\' && i+1 < len(src) && src[i+1] != '\n':
				i++
			case c == '\n' && !triple: // unterminated: the string ends here
				quote = 0
				i--
			case c == '\n':
				line++
			case c == quote && (!triple || (i+2 < len(src) && src[i+1] == quote && src[i+2] == quote)):
				if triple {
					i += 2
				}
				quote = 0
			}
			continue
		}
		switch c {
		case '\n':
			if cur != nil {
				cur.end = line
			}
			if depth == 0 && cur != nil && !continued(src, i) {
				cur = nil
			}
			line++
			atLineStart, indent, tabIndent = true, 0, false
			continue
		case ' ', '\t', '\f', '\r':
			if atLineStart {
				indent++
				tabIndent = tabIndent || c == '\t' || c == '\f'
			}
			continue
		case '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
			continue
		case '\\':
			if i+1 < len(src) && src[i+1] == '\n' {
				continue // the newline is a continuation; see continued
			}
		}
		if atLineStart && cur != nil && depth > 0 && indent <= cur.indent && !isCloser(c) {
			// Recovery heuristic: brackets left open, and this line looks
			// like the next statement rather than a continuation.
			cur.unclosed = true
			cur, depth = nil, 0
		}
		if cur == nil {
			out = append(out, logicalLine{start: line, end: line, indent: indent, tabIndent: tabIndent, first: firstWord(src[i:])})
			cur = &out[len(out)-1]
		}
		atLineStart = false
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case '"', '\'':
			quote, triple = c, i+2 < len(src) && src[i+1] == c && src[i+2] == c
			if triple {
				i += 2
			}
		}
	}
	if cur != nil {
		cur.end = line
		if depth > 0 {
			cur.unclosed = true
		}
	}
	return out
}

// continued reports whether the newline at src[i] follows a backslash
// continuation.
func continued(src string, i int) bool {
	if i > 0 && src[i-1] == '\r' {
		i--
	}
	return i > 0 && src[i-1] == '\\'
}

func isCloser(c byte) bool { return c == ')' || c == ']' || c == '}' }

// firstWord returns the identifier s starts with, or its first byte.
func firstWord(s string) string {
	j := 0
	for j < len(s) && (isLetter(s[j]) || (j > 0 && isDigit(s[j]))) {
		j++
	}
	if j == 0 {
		return s[:1]
	}
	return s[:j]
}

// lineIndex returns the index of the logical line containing physical line
// n, or of the last one before it when n is on none (-1 if there is none).
func lineIndex(lines []logicalLine, n int) int {
	lo, hi := 0, len(lines) // first line starting after n
	for lo < hi {
		m := (lo + hi) / 2
		if lines[m].start <= n {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}
