package syntax

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/syntax/printer"
)

// relaxSpans lists every Relax expression, binding and variable of mod in
// walk order with its span (and a variable's dataflow flag), which the
// printed text does not show.
func relaxSpans(mod *ir.Module) []string {
	var out []string
	ir.WalkModule(mod, &ir.Visitor{
		Expr: func(e ir.Expr) bool {
			out = append(out, fmt.Sprintf("%T %v", e, e.Span()))
			return true
		},
		Binding: func(b ir.Binding) bool {
			out = append(out, fmt.Sprintf("binding %v", b.Span()))
			return true
		},
		DefVar: func(v *ir.Var) {
			out = append(out, fmt.Sprintf("var %s %v dataflow=%v", v.Name, v.Span(), v.Dataflow))
		},
	})
	return out
}

// deferredCases are modules that exercise the re-reading of deferred
// statements: lines with non-ASCII text, calls spanning lines, backslash
// continuations, comments and blank lines between statements, statements
// in if branches and local functions; and invalid ones (R.output in
// unusual places, syntax and lexical errors in and after deferred
// statements).
var deferredCases = map[string]string{
	"layout": `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        R.func_attr({"note": "ünïcödé"})
        a = R.add(x, x)  # a comment with ünïcödé

        # a comment line
        b = R.multiply(
            a,
            x,
        )
        c = \
            R.nn.relu(b)
        with R.dataflow():
            d: R.Tensor((2, 3), dtype="float32") = R.add(c, c)
            e = R.add(d, x)
            R.output(e)
        return e
`,
	"strings and comments": `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        R.func_attr({"a": "(#]", 'b': 'x\'y)', "c": """tri(ple""", "d": "ü)"})  # ) ] }
        a = R.add(x, x)  # (
        b = R.add(  # ü [
            a,  # )
            a)
        return b
`,
	"branches": `@I.ir_module
class Module:
    @R.function
    def main(c: R.Tensor((), dtype="bool"), x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        @R.function
        def inner(y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
            z = R.add(y, y)
            return z
        if c:
            t = R.add(x, x)
            r = inner(t)
        else:
            t = R.multiply(x, x)
            r = R.nn.relu(t)
        return r
`,
	"invalid: outputs": `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a = R.add(x, x)
            R.output(a)
            b = R.add(a, a)
            R.output(b)
        return a
`,
	"invalid: syntax error in a deferred statement": `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a = R.add(x,, x)
            b = R.add(a, a)
            R.output(b)
        return b
`,
	"invalid: lexical error in a deferred statement": `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        a = R.add(x, x) $
        return a
`,
	"invalid: bad indentation after a deferred statement": `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        a = R.add(x, x)
      b = R.add(a, a)
        return b
`,
	"invalid: unterminated string": `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        a = R.add(x, x)
        R.func_attr({"a": "b})
        return a
`,
}

// TestDeferredParse: Parse's two-pass reading (deferred.go) builds the same
// module, spans included, and reports the same diagnostics as reading the
// whole tree first, on the corpus, the error corpus, the benchmark module
// and the cases above; valid modules take the deferred path.
func TestDeferredParse(t *testing.T) {
	errs, err := filepath.Glob(filepath.Join("..", "testdata", "errors", "*.tvms"))
	require.NoError(t, err)
	type input struct {
		name, src string
		valid     bool
	}
	var inputs []input
	for _, path := range corpusFiles(t) {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		inputs = append(inputs, input{path, string(src), true})
	}
	for _, path := range errs {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		inputs = append(inputs, input{path, string(src), false})
	}
	inputs = append(inputs, input{"bench", genModule(300), true})
	for name, src := range deferredCases {
		inputs = append(inputs, input{name, src, !strings.HasPrefix(name, "invalid: ")})
	}
	deferredUsed := 0
	for _, in := range inputs {
		wantMod, wantDiags := parseEager(in.name, in.src)
		gotMod, gotDiags, ok := parseDeferred(in.name, in.src)
		if !ok {
			require.False(t, in.valid, "%s: a valid module fell back to the eager reader", in.name)
			// Parse then gives the eager result.
			gotMod, gotDiags = Parse(in.name, []byte(in.src))
		} else {
			deferredUsed++
		}
		require.Equal(t, FormatDiagnostics(wantDiags, []byte(in.src)), FormatDiagnostics(gotDiags, []byte(in.src)), in.name)
		if in.valid {
			require.Empty(t, gotDiags, in.name)
		}
		if wantMod == nil {
			require.Nil(t, gotMod, in.name)
			continue
		}
		require.Equal(t, printer.Print(wantMod), printer.Print(gotMod), in.name)
		assert.Empty(t, cmp.Diff(relaxSpans(wantMod), relaxSpans(gotMod)), "%s: spans differ (-eager +deferred)", in.name)
	}
	require.Greater(t, deferredUsed, 60)
}

// TestDeferredSkim: the first pass of the benchmark module leaves the
// bindings of its dataflow block as stubs (so their syntax trees are never
// all alive at once) but reads R.output and return.
func TestDeferredSkim(t *testing.T) {
	r := newStmtReader("bench", genModule(300))
	r.skim = true
	tree, rec := r.file()
	require.NotNil(t, tree)
	require.Nil(t, rec)
	body := suiteStmts(suiteStmts(tree.Stmts[0].Decorated.Class.Body)[0].Decorated.Def.Body)
	require.Len(t, body, 3) // n = T.int64(), the with block, return
	require.NotNil(t, body[0].deferred)
	require.NotNil(t, body[2].Simple.Return)
	block := suiteStmts(body[1].With.Body)
	require.Len(t, block, 302)
	for _, st := range block[:301] {
		require.NotNil(t, st.deferred)
		require.Nil(t, st.Simple)
	}
	require.Nil(t, block[301].deferred, "R.output is read in the first pass")
}

// addDeferredSeeds seeds a fuzzer with the corpus and the deferred-parse
// cases.
func addDeferredSeeds(f *testing.F) {
	addCorpusSeeds(f)
	for _, src := range deferredCases {
		f.Add([]byte(src))
	}
}

// FuzzDeferredParse: whenever the deferred parse accepts an input, it gives
// what the eager one gives (diagnostics, printed module, spans).
//
//	go test ./syntax -run='^$' -fuzz=FuzzDeferredParse -fuzztime=20s
func FuzzDeferredParse(f *testing.F) {
	addDeferredSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		gotMod, gotDiags, ok := parseDeferred("fuzz.tvms", string(src))
		if !ok {
			return
		}
		wantMod, wantDiags := parseEager("fuzz.tvms", string(src))
		require.Equal(t, FormatDiagnostics(wantDiags, src), FormatDiagnostics(gotDiags, src))
		require.Equal(t, wantMod == nil, gotMod == nil)
		if wantMod != nil {
			require.Equal(t, printer.Print(wantMod), printer.Print(gotMod))
			require.Empty(t, cmp.Diff(relaxSpans(wantMod), relaxSpans(gotMod)))
		}
	})
}
