package syntax

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHandParserMatchesParticiple: participle's parser, built from the
// grammar structs, is the grammar of record; the hand-written statement
// reader Parse uses must build the same tree on every file participle
// accepts, and reject the files it rejects.
func TestHandParserMatchesParticiple(t *testing.T) {
	errs, err := filepath.Glob(filepath.Join("..", "testdata", "errors", "*.tvms"))
	require.NoError(t, err)
	files := append(append(corpusFiles(t), errs...), "") // "" is the benchmark module
	require.Greater(t, len(files), 60)
	for _, path := range files {
		src := []byte(genModule(300))
		if path != "" {
			var err error
			src, err = os.ReadFile(path)
			require.NoError(t, err)
		}
		want, perr := parseTree(path, src)
		got, rec := readFile(path, src)
		if perr != nil {
			readerAccepts := got != nil && rec == nil
			assert.False(t, readerAccepts, "%s: participle rejects it (%v), the reader accepts it", path, perr)
			continue
		}
		if rec != nil {
			assert.Failf(t, "participle accepts it, the reader rejects it", "%s: the reader reports %v", path, rec.diags)
			continue
		}
		assert.Empty(t, cmp.Diff(want, got, cmp.AllowUnexported(exprNode{}, exprProblem{}, ast{}, stmtNode{})), "%s: trees differ (-participle +reader)", path)
	}
}
