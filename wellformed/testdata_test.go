package wellformed

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Files under testdata/wellformed/: pass/ holds modules that must check
// clean (against the phase they record, or against the structural rules
// alone when they record none); fail/ holds negative modules whose expected
// diagnostics are written inline at the offending line:
//
//	lv = R.call_packed(...)  # want "WF007: impure call"
//
// Each quoted string is a regexp matched against "CODE: message" of a
// diagnostic on that line. Diagnostics without a position (module-level) are
// expected with "# want-module". Expectations are checked both ways: a missing
// diagnostic and an unexpected one both fail.

const wfTestdata = "../testdata/wellformed"

// expectation is one "# want" regexp at a line (0 for want-module).
type expectation struct {
	line int
	rx   *regexp.Regexp
	hit  bool
}

var wantRx = regexp.MustCompile(`#\s*want(-module)?((?:\s+"(?:[^"\\]|\\.)*")+)\s*$`)
var quotedRx = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// parseWants extracts the expectations of a file; a file without any is not
// a negative file.
func parseWants(src []byte) ([]*expectation, error) {
	var wants []*expectation
	sc := bufio.NewScanner(bytes.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		m := wantRx.FindStringSubmatch(sc.Text())
		if m == nil {
			if strings.Contains(sc.Text(), "# want") {
				return nil, fmt.Errorf("line %d: malformed want comment", line)
			}
			continue
		}
		at := line
		if m[1] != "" {
			at = 0
		}
		for _, q := range quotedRx.FindAllString(m[2], -1) {
			s, err := strconv.Unquote(q)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			rx, err := regexp.Compile(s)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			wants = append(wants, &expectation{line: at, rx: rx})
		}
	}
	return wants, sc.Err()
}

// matchWants checks diagnostics against expectations both ways.
func matchWants(t *testing.T, file string, l diag.List, wants []*expectation) {
	t.Helper()
	for _, d := range l {
		line := 0
		if d.Span.IsValid() {
			line = d.Span.Line
		}
		text := string(d.Code) + ": " + d.Msg
		matched := false
		for _, w := range wants {
			if w.line == line && w.rx.MatchString(text) {
				w.hit, matched = true, true
			}
		}
		assert.True(t, matched, "%s:%d: unexpected diagnostic %s", file, line, text)
	}
	for _, w := range wants {
		assert.True(t, w.hit, "%s:%d: no diagnostic matching %q", file, w.line, w.rx)
	}
}

func tvmsFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "errors" && path != root {
			return filepath.SkipDir // parse-error corpus
		}
		if !d.IsDir() && strings.HasSuffix(path, ".tvms") {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(files)
	return files
}

func TestTestdataPass(t *testing.T) {
	files := tvmsFiles(t, filepath.Join(wfTestdata, "pass"))
	require.NotEmpty(t, files, "no positive files")
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			_, mod := readModule(t, file)
			p, l := CheckRecorded(mod)
			assert.Empty(t, l, "phase %v:\n%s", p, l.Error())
			if p == phase.None {
				// A module without a phase, as TVM prints it: only the
				// structural rules (TVM's well_formed) apply.
				assert.True(t, Infer(mod).Has(phase.WellFormed), "Infer lacks WellFormed")
				return
			}
			inferred := Infer(mod)
			assert.True(t, inferred.Contains(p.Invariants()), "Infer = %v lacks %v, the invariants of its phase %v", inferred, p.Invariants().Minus(inferred), p)
		})
	}
}

func TestTestdataFail(t *testing.T) {
	files := tvmsFiles(t, filepath.Join(wfTestdata, "fail"))
	require.NotEmpty(t, files, "no negative files")
	covered := map[diag.Code]bool{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			wants, err := parseWants(src)
			require.NoError(t, err, file)
			require.NotEmpty(t, wants, "negative file without # want expectations")
			mod, perrs := syntax.Parse(file, src)
			require.False(t, perrs.HasErrors(), "parse:\n%s", perrs.Error())
			_, l := CheckRecorded(mod)
			matchWants(t, file, l, wants)
			for _, d := range l {
				covered[d.Code] = true
			}
		})
	}
	// Every phase invariant has a negative text file.
	for _, p := range phase.Properties() {
		if p == phase.WellFormed || p == phase.Normalized {
			continue // hand-built IR tests cover what text cannot express
		}
		assert.True(t, slices.ContainsFunc(RulesFor(p), func(r Rule) bool { return covered[r.Code] }), "no negative file exercises property %v", p)
	}
}

// TestTestdataCorpusPhases runs the checker over every .tvms file of the
// repository's testdata (except the parse-error corpus and negative files):
// a file tagged with a phase must pass that phase's check, and every file
// must be structurally well formed.
func TestTestdataCorpusPhases(t *testing.T) {
	for _, file := range tvmsFiles(t, "../testdata") {
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		if wants, _ := parseWants(src); len(wants) > 0 {
			continue
		}
		t.Run(strings.TrimPrefix(file, "../testdata/"), func(t *testing.T) {
			mod, perrs := syntax.Parse(file, src)
			require.False(t, perrs.HasErrors(), "parse:\n%s", perrs.Error())
			p, l := CheckRecorded(mod)
			assert.Empty(t, l, "phase %v:\n%s", p, l.Error())
		})
	}
}

// readModule reads and parses a testdata file; a parse error fails the test.
func readModule(t *testing.T, file string) ([]byte, *ir.Module) {
	t.Helper()
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	mod, perrs := syntax.Parse(file, src)
	require.False(t, perrs.HasErrors(), "parse:\n%s", perrs.Error())
	return src, mod
}
