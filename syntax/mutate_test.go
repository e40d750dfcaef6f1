package syntax

import (
	"github.com/phasec/phasec/syntax/printer"
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMutatedCorpusNeverPanics: deterministic damage (deleted spans, stray
// brackets, colons, indentation, tabs, quotes, keywords) to the corpus
// files never makes Parse panic, and whatever parses also prints. It
// exercises the in-place syntax recovery of the statement reader (restarts
// at a line, restored indentation levels) the way the fuzzer does, with a
// fixed seed so a failure reproduces.
func TestMutatedCorpusNeverPanics(t *testing.T) {
	files := append(corpusFiles(t), errorFiles(t)...)
	srcs := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		srcs[i] = b
	}
	rng := rand.New(rand.NewSource(13))
	inserts := []string{"(", ")", "\n", "    ", ":", "=", ",", "@", "def ", "if ", "else:", "\t", "\"", "[", "]", "x", "R.add(", "return ", "with R.dataflow():\n", "lambda "}
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		b := append([]byte(nil), srcs[rng.Intn(len(srcs))]...)
		for k := rng.Intn(6) + 1; k > 0 && len(b) > 0; k-- {
			i := rng.Intn(len(b))
			if rng.Intn(3) == 0 {
				j := min(len(b), i+rng.Intn(20))
				b = append(b[:i:i], b[j:]...)
			} else {
				ins := inserts[rng.Intn(len(inserts))]
				b = append(b[:i:i], append([]byte(ins), b[i:]...)...)
			}
		}
		mod, diags := Parse("m.tvms", b)
		for _, d := range diags {
			require.False(t, d.Code == CodeInternal, "internal error on %q:\n%s", b, d.Msg)
		}
		if mod != nil && len(diags) == 0 {
			_ = printer.Print(mod)
		}
	}
}
