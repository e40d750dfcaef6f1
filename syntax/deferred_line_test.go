package syntax

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
)

// deferredStubs returns the stubs of the first pass over src, skipping
// runs of lines over bytes or not (skipRun), in source order; ok is false
// when that pass fails.
func deferredStubs(name, src string, run bool) (stubs []*stmtNode, ok bool) {
	r := newStmtReader(name, src)
	r.skim, r.skimRun = true, run
	tree, rec := r.file()
	if tree == nil || rec != nil {
		return nil, false
	}
	var suites []*suiteNode
	var walk func(stmts []*stmtNode)
	walk = func(stmts []*stmtNode) {
		for _, st := range stmts {
			switch {
			case st.deferred != nil:
				stubs = append(stubs, st)
			case st.Decorated != nil && st.Decorated.Class != nil:
				suites = append(suites, st.Decorated.Class.Body)
			case st.Decorated != nil && st.Decorated.Def != nil:
				suites = append(suites, st.Decorated.Def.Body)
			case st.Class != nil:
				suites = append(suites, st.Class.Body)
			case st.Def != nil:
				suites = append(suites, st.Def.Body)
			case st.With != nil:
				suites = append(suites, st.With.Body)
			case st.For != nil:
				suites = append(suites, st.For.Body)
			case st.If != nil:
				suites = append(suites, st.If.Then, st.If.Else)
				for _, e := range st.If.Elifs {
					suites = append(suites, e.Body)
				}
			}
		}
	}
	walk(tree.Stmts)
	for len(suites) > 0 { // a work list: nesting costs no recursion
		s := suites[len(suites)-1]
		suites = suites[:len(suites)-1]
		if s != nil {
			walk(s.Stmts)
		}
	}
	return stubs, true
}

// compareLineReader reads every stub of src with the line reader and with
// the statement reader and requires the same syntax (or the line reader to
// give up where the statement reader fails). It returns how many
// statements the line reader read and how many it left.
func compareLineReader(t testing.TB, name, src string) (fast, slow int) {
	fastLz, tokLz := newLazyReader(name, src), newLazyReader(name, src)
	stubs, _ := deferredStubs(name, src, true)
	for _, st := range stubs {
		got := fastLz.line.read(st)
		want := tokLz.readTokens(st)
		if got == nil {
			slow++
			continue
		}
		fast++
		line := src[st.Pos.Offset:]
		line = line[:strings.IndexByte(line, '\n')]
		require.NotNil(t, want, "%s:%d: the line reader read %q, the statement reader fails", name, st.Pos.Line, line)
		require.Empty(t, cmp.Diff(want, got, cmp.AllowUnexported(exprNode{}), cmpopts.IgnoreUnexported(stmtNode{})),
			"%s:%d: %q read differently (-statement reader +line reader)", name, st.Pos.Line, line)
	}
	return fast, slow
}

// TestLineReader: the line reader builds what the statement reader builds
// for every deferred statement of the corpus and the benchmark module, and
// reads the common forms itself.
func TestLineReader(t *testing.T) {
	fast, slow := compareLineReader(t, "bench", genModule(300))
	require.Equal(t, 302, fast, "n = T.int64() and every binding of the benchmark module")
	require.Zero(t, slow)
	fast, slow = 0, 0
	for _, path := range corpusFiles(t) {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		f, s := compareLineReader(t, path, string(src))
		fast, slow = fast+f, slow+s
	}
	for name, src := range deferredCases {
		f, s := compareLineReader(t, name, src)
		fast, slow = fast+f, slow+s
	}
	t.Logf("corpus: %d statements read by the line reader, %d by the statement reader", fast, slow)
	require.Greater(t, fast, slow)
}

// TestLineReaderForms: lines the line reader reads (fast) and lines it
// leaves to the statement reader, each compared as in TestLineReader.
func TestLineReaderForms(t *testing.T) {
	for _, c := range []struct {
		line string
		fast bool
	}{
		{`a = R.add(x, x)`, true},
		{`a: R.Tensor((2, 3), dtype="float32") = R.multiply(x, x)`, true},
		{`a = R.add(x, x)  # a comment`, true},
		{`a = R . add ( x , x )	`, true},
		{`a = R.f(x, axes=[1, 2], keep=(1,), t=(), u=(x), s='it', c=15, n=None, b=True, f=False,)`, true},
		{`a = R.f(x).y.z`, true},
		{`a = T.int64()`, true},
		{`a: R.Tensor`, true},
		{`R.f(x)`, true},
		{`a = [x, (y, x)]`, true},
		{`a = Truex`, true},
		{`a = R.add(x, x)  # ünïcödé`, false},
		{`a = R.add(x, x) == x`, false},
		{`a = R.add(x, x) + x`, false},
		{`a = R.const(1.5)`, false},
		{`a = R.const(1e5)`, false},
		{`a = R.const(0x1F)`, false},
		{`a = R.const(1_0)`, false},
		{`a = R.f(x, axis=-1)`, false},
		{`a = R.f("s" "t")`, false},
		{`a = R.f("")`, false},
		{`a = R.f("a\"b")`, false},
		{`a = R.f("ü")`, false},
		{`a, b = R.split(x)`, false},
		{`a = b = x`, false},
		{`a = R.f(True=x)`, false},
		{`a = R.f(x)[0]`, false},
		{`a = R.f(*x)`, false},
		{`a = x.5`, false},
		{`a = x ;`, false},
		{`a = {"k": x}`, false},
		{`a = lambda i: i`, false},
		{`a = R.f(x,  # (` + "\n            x)", false},
		{"a = R.f(x) \\\n            ", false},
		{`a = R.f(` + strings.Repeat("(", 40) + "x" + strings.Repeat(")", 40) + ")", false},
		{`a = x` + strings.Repeat(".y", 40), false},
		{`a = x` + strings.Repeat(".y", 20), true},
	} {
		src := `@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            ` + c.line + `
            b = R.add(x, x)
            R.output(b)
        return b
`
		stubs, _ := deferredStubs("line", src, true)
		require.Len(t, stubs, 2, c.line)
		fast, _ := compareLineReader(t, "line", src)
		require.Equal(t, c.fast, fast == 2, "%q read by the line reader", c.line)
	}
}

// compareSkipRun requires the first pass to give the same stubs (position,
// end, indentation levels) with and without skipRun, and returns how many.
func compareSkipRun(t testing.TB, name, src string) int {
	want, wantOK := deferredStubs(name, src, false)
	got, gotOK := deferredStubs(name, src, true)
	require.Equal(t, wantOK, gotOK, "%s: the first pass fails only one way", name)
	require.Len(t, got, len(want), name)
	for i, w := range want {
		g := got[i]
		require.Equal(t, w.Pos, g.Pos, "%s: stub %d", name, i)
		require.Equal(t, w.EndPos, g.EndPos, "%s: end of the stub at line %d", name, w.Pos.Line)
		require.Equal(t, w.deferred.levels, g.deferred.levels, "%s: levels of the stub at line %d", name, w.Pos.Line)
	}
	return len(got)
}

// TestSkipRun: skipping runs of lines over bytes changes no stub, on the
// corpus, the error corpus, the benchmark module and layout edge cases.
func TestSkipRun(t *testing.T) {
	require.Equal(t, 302, compareSkipRun(t, "bench", genModule(300)))
	for _, path := range append(corpusFiles(t), errorFiles(t)...) {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		compareSkipRun(t, path, string(src))
	}
	for name, src := range deferredCases {
		compareSkipRun(t, name, src)
	}
	const head = "@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((2,), dtype=\"float32\")):\n        with R.dataflow():\n"
	const a = "            a = R.add(x, x)\n"
	const tail = "            R.output(b)\n        return b\n"
	for _, body := range []string{
		a + "            b = R.add(a, a)\n" + tail,
		a + "\n            b = R.add(a, a)\n            # c\n" + tail,
		a + "            b = R.add(a,\n                a)\n            c = R.add(b, \"s\")  # ü\n" + tail,
		a + "            b = \\\n                a\n            pass\n" + tail,
		a + "            \tb = R.add(a, a)\n" + tail,
		a + "              b = R.add(a, a)\n" + tail,
		a + "            b = R.add(a, a) $\n" + tail,
		a + "            b = R.add(a, a)",
		a + "            b = R.add(a, a)\n            ü = a\n" + tail,
		a + "            bü = a\n" + tail,
		a + "            b = R.add(a, a)\r\n" + tail,
		a + "            b = R.f('''x''')\n" + tail,
		a + "            b = R.f(a, \"\"\"x\n\"\"\")\n" + tail,
		a + "            R2 = a\n            b = R . add(a, a)\n" + tail,
	} {
		compareSkipRun(t, body, head+body)
	}
}

// FuzzDeferredReaders: on any input, skipping runs of lines changes no
// stub, and the line reader reads every stub it takes as the statement
// reader does.
//
//	go test ./syntax -run='^$' -fuzz=FuzzDeferredReaders -fuzztime=20s
func FuzzDeferredReaders(f *testing.F) {
	addDeferredSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		compareSkipRun(t, "fuzz", string(src))
		compareLineReader(t, "fuzz", string(src))
	})
}
