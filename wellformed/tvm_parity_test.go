package wellformed

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/phasec/phasec/syntax/printer"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tvm_*.tvms files under testdata/wellformed/ are modules as TVM v0.23
// prints them (mod.script()), one per check of TVM's
// relax.analysis.well_formed (src/relax/analysis/well_formed.cc) and
// tir.analysis.verify_well_formed (src/tir/analysis/verify_well_formed.cc):
// fail/tvm_* violate the checks (read with check_well_formed=False), pass/tvm_*
// are the matching well-formed modules. TestTestdataPass and
// TestTestdataFail check phasec's verdict on them; this test checks that each
// reprints byte for byte, so the modules are in TVM's printed form and the
// checker sees what TVM's parser would build.

// wantComment is a "# want" expectation at the end of a line.
var wantComment = regexp.MustCompile(`\s+# want(-module)?\s.*$`)

// printedForm returns src without what TVM's printer would not print: the
// "# want" expectations and the explanatory comment lines (the header's
// import comments stay).
func printedForm(src []byte) []byte {
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(src), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") && !strings.HasPrefix(trimmed, "# from tvm.script import") &&
			!strings.HasPrefix(trimmed, "# with T.block(") {
			continue
		}
		nl := strings.HasSuffix(line, "\n")
		line = wantComment.ReplaceAllString(strings.TrimSuffix(line, "\n"), "")
		out.WriteString(line)
		if nl {
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

func TestTVMParityRoundTrip(t *testing.T) {
	var files []string
	for _, dir := range []string{"pass", "fail"} {
		m, err := filepath.Glob(filepath.Join(wfTestdata, dir, "tvm_*.tvms"))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.NotEmpty(t, files, "no tvm_*.tvms files")
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			src, mod := readModule(t, file)
			want := printedForm(src)
			assert.Equal(t, string(want), printer.Print(mod), "does not reprint byte for byte")
		})
	}
}
