package syntax

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax/printer"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The corpus lives in the repository's testdata/ (recursively; corpusFiles
// in parse_test.go skips the negative files under testdata/errors/).
const corpusRoot = "../testdata"

// minCorpusFiles guards against the corpus silently shrinking (or the walk
// silently finding nothing).
const minCorpusFiles = 40

func init() {
	// Shared by every golden test of the package; defined once.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files instead of comparing")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func parseOrFail(t *testing.T, name string, src []byte) *ir.Module {
	t.Helper()
	mod, diags := Parse(name, src)
	require.False(t, diags.HasErrors(), "parse %s:\n%s", name, FormatDiagnostics(diags, src))
	require.NotNil(t, mod, "parse %s", name)
	return mod
}

// TestRoundTrip checks, for every corpus file x, that
// parse(print(parse(x))) is structurally equal to parse(x) and that
// printing is idempotent: print(parse(print(parse(x)))) == print(parse(x)).
func TestRoundTrip(t *testing.T) {
	files := corpusFiles(t)
	assert.GreaterOrEqual(t, len(files), minCorpusFiles, "corpus files")
	for _, path := range files {
		rel, _ := filepath.Rel(corpusRoot, path)
		t.Run(rel, func(t *testing.T) {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			m1 := parseOrFail(t, path, src)
			text1 := printer.Print(m1)
			m2, diags := Parse(path+" (printed)", []byte(text1))
			if diags.HasErrors() {
				require.Failf(t, "printed text does not parse", "%s\n--- printed:\n%s", FormatDiagnostics(diags, []byte(text1)), numbered(text1))
			}
			require.NotNil(t, m2, "printed text does not parse")
			// Free variables (an ill-formed module's undefined symbolic
			// variables) have no definition to pair them: map them, as
			// TVM's tests do (assert_structural_equal(map_free_vars=True)).
			if d := ir.Diff(m1, m2, ir.EqualOptions{MapFreeVars: true}); d != nil {
				assert.Failf(t, "parse(print(m)) differs from m", "%s\n--- printed:\n%s", d, numbered(text1))
			}
			if text2 := printer.Print(m2); text2 != text1 {
				assert.Failf(t, "printing is not idempotent", "%s", firstLineDiff(text1, text2))
			}
		})
	}
}

// goldenFiles are corpus files whose canonical print is checked in
// syntax/testdata/print/<name>.golden (regenerate with -update).
var goldenFiles = []string{
	"models/mlp.tvms",
	"relax_conv_transpose.tvms",
	"relax_if_local_function.tvms",
	"relax_struct_info_forms.tvms",
	"relax_expression_dims.tvms",
	"relax_tvm_script_decorator.tvms",
	"lowered_legalized_symbolic.tvms",
	"lowered_memory_keyword_args.tvms",
	"lowered_vm_shape_lowered.tvms",
	"tir_softmax.tvms",
	"tir_regions_inferred.tvms",
}

// tvmFormsDir holds one module per TVMScript form TVM v0.23 accepts (see
// tvm-op-signatures' parser rules): each file's print is golden too.
const tvmFormsDir = "tvm_forms"

func TestPrintGolden(t *testing.T) {
	forms, err := filepath.Glob(filepath.Join(corpusRoot, tvmFormsDir, "*.tvms"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(forms), 10, "TVM form files")
	names := slices.Clone(goldenFiles)
	for _, f := range forms {
		names = append(names, filepath.Join(tvmFormsDir, filepath.Base(f)))
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(corpusRoot, name))
			require.NoError(t, err)
			got := printer.Print(parseOrFail(t, name, src))
			golden := filepath.Join("testdata", "print", strings.ReplaceAll(strings.TrimSuffix(name, ".tvms"), "/", "_")+".golden")
			if updateGolden() {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update to create it")
			if got != string(want) {
				assert.Failf(t, "differs from the golden file", "%s:\n%s", name, firstLineDiff(string(want), got))
			}
		})
	}
}

// numbered prefixes each line with its number, for failure messages.
func numbered(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		b.WriteString(strings.Repeat(" ", max(0, 3-len(strconv.Itoa(i+1)))))
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// firstLineDiff shows the first differing line of want and got.
func firstLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return "(no line differs)"
}
