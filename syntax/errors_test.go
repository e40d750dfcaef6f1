package syntax

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
)

// expectation is one inline `# error: "regexp"` annotation.
type expectation struct {
	line    int
	re      *regexp.Regexp
	matched bool
}

var errorAnnotation = regexp.MustCompile(`error: "((?:[^"\\]|\\.)*)"`)

// parseExpectations collects the `# error: "rx"` annotations of src by line
// (several may share a line).
func parseExpectations(t *testing.T, src string) []*expectation {
	t.Helper()
	var out []*expectation
	for i, line := range strings.Split(src, "\n") {
		hash := strings.Index(line, "# error:")
		if hash < 0 {
			continue
		}
		for _, m := range errorAnnotation.FindAllStringSubmatch(line[hash:], -1) {
			rx := strings.ReplaceAll(m[1], `\"`, `"`)
			re, err := regexp.Compile(rx)
			require.NoError(t, err, "line %d: bad expectation regexp %q", i+1, rx)
			out = append(out, &expectation{line: i + 1, re: re})
		}
	}
	return out
}

// TestErrorCorpus checks the negative corpus both ways: every diagnostic
// must match an expectation on its line, and every expectation must be met.
func TestErrorCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "errors", "*.tvms"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 10, "negative corpus files")
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			want := parseExpectations(t, string(src))
			require.NotEmpty(t, want, "no # error: annotations")
			_, diags := Parse(path, src)
			for _, d := range diags {
				if !assert.False(t, d.Code == CodeInternal, "internal error: %s", d.Msg) {
					continue
				}
				found := false
				for _, w := range want {
					if w.line == d.Span.Line && w.re.MatchString(d.Msg) {
						w.matched, found = true, true
					}
				}
				assert.True(t, found, "%s:%d: unexpected diagnostic: %s", filepath.Base(path), d.Span.Line, d.Msg)
			}
			for _, w := range want {
				assert.True(t, w.matched, "%s:%d: missing diagnostic matching %q", filepath.Base(path), w.line, w.re)
			}
		})
	}
}

func TestFormatDiagnostics(t *testing.T) {
	src := "a = 1\nb = R.nn.rleu(x)\n"
	list := diag.List{{Span: diag.Span{File: "f.tvms", Line: 2, Col: 5, EndLine: 2, EndCol: 14}, Msg: "unknown operator R.nn.rleu"}}
	got := FormatDiagnostics(list, []byte(src))
	want := "f.tvms:2:5: error: unknown operator R.nn.rleu\n" +
		"    b = R.nn.rleu(x)\n" +
		"        ^^^^^^^^^\n"
	assert.Equal(t, want, got)
	// Positions past the end of the line, and unknown positions, do not panic.
	list = diag.List{{Span: diag.Span{Line: 1, Col: 99}, Msg: "m"}, {Msg: "no position"}, {Span: diag.Span{Line: 50, Col: 1}, Msg: "late"}}
	got = FormatDiagnostics(list, []byte(src))
	assert.Contains(t, got, "    a = 1\n         ^\n")
	assert.Contains(t, got, "no position")
}

// TestManyErrorsBounded: independent errors are all reported (sorted), up to
// maxErrors plus one "too many errors" note.
func TestManyErrorsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(header + "@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((4,), \"float32\")) -> R.Tensor((4,), \"float32\"):\n")
	const n = 30
	for i := range n {
		fmt.Fprintf(&b, "        y%d = R.add(x, undefined%d)\n", i, i)
	}
	b.WriteString("        return x\n")
	_, diags := Parse("many.tvms", []byte(b.String()))
	require.Len(t, diags, maxErrors+1)
	for i := 1; i < maxErrors; i++ {
		assert.Less(t, diags[i-1].Span.Line, diags[i].Span.Line, "diagnostics not sorted: %v then %v", diags[i-1].Span, diags[i].Span)
	}
	last := diags[maxErrors]
	assert.Equal(t, diag.Note, last.Severity, "last diagnostic %s", last)
	assert.Contains(t, last.Msg, fmt.Sprintf("%d more", n-maxErrors), "last diagnostic %s", last)
}

// TestTupleIndexCount: a tuple subscript with several indices names their
// count ("2 indices").
func TestTupleIndexCount(t *testing.T) {
	src := header + `@R.function
def f(x: R.Tuple(R.Tensor((2,), "float32"), R.Tensor((2,), "float32"))):
    y = x[0, 1]
    return x
`
	_, diags := Parse("t.tvms", []byte(src))
	require.Len(t, diags, 1)
	assert.True(t, strings.HasSuffix(diags[0].Msg, "found 2 indices"), "got %v, want one diagnostic ending in \"found 2 indices\"", diags)
}
