package syntax

import (
	"github.com/phasec/phasec/syntax/printer"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzParse: Parse must never panic (an internal-error diagnostic is how a
// recovered panic shows up) and never hang, whatever the input. When it
// succeeds, printing the module must not panic either.
//
//	go test ./syntax -run='^$' -fuzz=FuzzParse -fuzztime=20s
func FuzzParse(f *testing.F) {
	addCorpusSeeds(f)
	f.Add([]byte("@I.ir_module\nclass M:\n    @R.function\n    def f(x: R.Tensor((\"n\",), \"float32\")):\n        return x\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		done := make(chan struct{})
		var diagsMsg string
		go func() {
			defer close(done)
			mod, diags := Parse("fuzz.tvms", src)
			for _, d := range diags {
				if d.Code == CodeInternal {
					diagsMsg = d.Msg
				}
			}
			if mod != nil && len(diags) == 0 {
				_ = printer.Print(mod)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			require.Failf(t, "Parse did not finish in 10s", "on %q", truncate(string(src)))
		}
		require.Empty(t, diagsMsg, "internal error on %q", truncate(string(src)))
	})
}

// addCorpusSeeds seeds a fuzzer with every corpus and error-corpus file.
func addCorpusSeeds(f *testing.F) {
	for _, path := range append(corpusFiles(f), errorFiles(f)...) {
		src, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(src)
	}
}

func errorFiles(t testing.TB) []string {
	var out []string
	entries, _ := os.ReadDir("../testdata/errors")
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tvms") {
			out = append(out, "../testdata/errors/"+e.Name())
		}
	}
	return out
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
