package htmlview

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/syntax"
)

// mlpPage runs the bundled MLP through the whole pipeline with a Recorder
// and returns the page.
func mlpPage(t *testing.T) (string, *Recorder) {
	t.Helper()
	src, err := os.ReadFile("../testdata/models/mlp.tvms")
	require.NoError(t, err)
	mod, diags := syntax.Parse("mlp.tvms", src)
	require.Empty(t, diags)
	pipeline, errs := barrier.Registry.ParseAndBuild("--passes", "canonicalize,optimize,lower,build")
	require.Empty(t, errs)
	rec := &Recorder{Title: "mlp.tvms"}
	pc := passes.NewPassContext()
	pc.Registry = barrier.Registry
	pc.Instruments = append(pc.Instruments, rec)
	_, err = pc.Run(context.Background(), pipeline, mod)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, rec.WriteHTML(&buf))
	return buf.String(), rec
}

func TestPageShowsEveryPassGroupedByStep(t *testing.T) {
	page, rec := mlpPage(t)
	require.NotEmpty(t, rec.columns)
	// One column per executed pass plus the input.
	assert.Equal(t, len(rec.columns)+1, strings.Count(page, `data-pass="`))
	for _, step := range []string{"canonicalize", "optimize", "lower", "build"} {
		assert.Contains(t, page, `data-step="`+step+`"`)
	}
	for _, pass := range []string{"LegalizeOps", "ToNonDataflow", "VMShapeLower"} {
		assert.Contains(t, page, `data-pass="`+pass+`"`)
	}
	// The steps appear in pipeline order, each once.
	order := regexp.MustCompile(`data-step="([a-z]+)"`).FindAllStringSubmatch(page, -1)
	var steps []string
	for _, m := range order {
		steps = append(steps, m[1])
	}
	assert.Equal(t, []string{"input", "canonicalize", "optimize", "lower", "build"}, steps)
	// LegalizeOps writes kernels: its column has highlighted lines and
	// says which property it established.
	legal := columnHTML(t, page, "LegalizeOps")
	assert.Contains(t, legal, `<span class="chg">`)
	assert.Contains(t, legal, "Legalized")
	assert.NotContains(t, legal, "collapsed")
}

func TestUnchangedPassesAreFoldedAndHighlightNothing(t *testing.T) {
	_, rec := mlpPage(t)
	var unchanged int
	for _, c := range rec.columns {
		if c.Changed || c.Err != "" {
			continue
		}
		unchanged++
		v := c.view()
		assert.Zero(t, v.ChangedN, "%s changed nothing but highlights lines", c.Pass)
	}
	require.NotZero(t, unchanged, "the MLP pipeline has passes that change nothing (RemovePurityChecking on a module without checks, ...)")
	page, _ := mlpPage(t)
	assert.Equal(t, unchanged, strings.Count(page, `collapsed"`)+strings.Count(page, `collapsed failed"`))
}

func TestDiffMarksOnlyWrittenLines(t *testing.T) {
	prev := plainLines("a\nb\nc")
	got := diffLines(prev, "a\nB\nc\nd")
	want := []line{{"a", false}, {"B", true}, {"c", false}, {"d", true}}
	assert.Equal(t, want, got)
}

func TestDataflowGraphOfTheMLP(t *testing.T) {
	page, rec := mlpPage(t)
	require.NotNil(t, rec.input)
	require.Len(t, rec.input.graphs, 1)
	g := rec.input.graphs[0]
	var labels []string
	for _, n := range g.nodes {
		labels = append(labels, n.label)
	}
	// x, w0, b0, w1, b1 -> matmul -> add -> relu -> matmul -> add -> softmax -> result.
	assert.Equal(t, []string{"x", "w0", "b0", "w1", "b1", "matmul", "add", "nn.relu", "matmul", "add", "nn.softmax", "result"}, labels)
	assert.Contains(t, g.edges, [2]int{0, 5}, "x feeds the first matmul")
	assert.Contains(t, g.edges, [2]int{10, 11}, "softmax is the result")
	assert.Contains(t, page, `<svg xmlns="http://www.w3.org/2000/svg"`)
	assert.Equal(t, 12, strings.Count(columnHTML(t, page, "input"), `<g class="node`))
}

func TestFusionGroupsAreBoxes(t *testing.T) {
	src := `# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function(private=True)
    def fused_add_relu(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        R.func_attr({"Primitive": True})
        with R.dataflow():
            a = R.add(x, y)
            b = R.nn.relu(a)
            R.output(b)
        return b

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        with R.dataflow():
            c = Module.fused_add_relu(x, x)
            R.output(c)
        return c
`
	mod, diags := syntax.Parse("fused.tvms", []byte(src))
	require.Empty(t, diags)
	gs := graphs(mod)
	require.Len(t, gs, 1, "the group is drawn inside main, not on its own")
	g := gs[0]
	require.Len(t, g.nodes, 3)
	assert.Equal(t, nodeGroup, g.nodes[1].kind)
	assert.Equal(t, []string{"add", "nn.relu"}, g.nodes[1].members)
	assert.Contains(t, g.svg(), `class="node group"`)
}

func TestTooBigGraphsAreNamedNotDrawn(t *testing.T) {
	g := graph{Func: "big", omitted: 5000}
	assert.Contains(t, g.svg(), "5000 nodes")
	assert.NotContains(t, g.svg(), "<svg")
}

func TestModuleTextIsEscaped(t *testing.T) {
	rec := &Recorder{Title: "<x>"}
	rec.input = &column{Pass: "input", Step: "input", lines: plainLines(`x = "<script>alert(1)</script>"`)}
	var buf bytes.Buffer
	require.NoError(t, rec.WriteHTML(&buf))
	assert.NotContains(t, buf.String(), "<script>alert")
	assert.Contains(t, buf.String(), "&lt;script&gt;")
}

// columnHTML is the markup of the named pass's column.
func columnHTML(t *testing.T, page, pass string) string {
	t.Helper()
	i := strings.Index(page, `data-pass="`+pass+`"`)
	require.GreaterOrEqual(t, i, 0, "no column %s", pass)
	rest := page[i:]
	if j := strings.Index(rest, "\n<div class=\"col"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// chromium finds a headless Chromium. CI installs Debian's (make
// browser-deps); PHASEC_BROWSER_TESTS=1 (set by .ci/run) makes its absence a
// failure instead of a skip.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("PHASEC_BROWSER_TESTS") == "1" {
		require.FailNow(t, "no headless Chromium on PATH (make browser-deps installs Debian's)")
	}
	t.Skip("SKIP (not silent): no Chromium on PATH; `make browser-deps` installs it and CI requires it")
	return ""
}

func browserArgs(dir string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile")}
}

// TestPageInChromium loads the MLP's page in headless Chromium and checks
// what it renders: the DOM after the page's script ran, and a screenshot in
// which the highlight of written lines and the graph's boxes are visible.
func TestPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP (not silent): browser test in -short mode")
	}
	bin := chromium(t)
	page, rec := mlpPage(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "mlp.html")
	require.NoError(t, os.WriteFile(file, []byte(page), 0o644))

	dom, err := exec.Command(bin, append(browserArgs(dir), "--dump-dom", "file://"+file)...).Output()
	require.NoError(t, err, "chromium --dump-dom")
	rendered := string(dom)
	assert.Equal(t, len(rec.columns)+1, strings.Count(rendered, `data-pass="`), "columns in the rendered DOM")
	assert.Contains(t, rendered, `<span class="chg">`)
	assert.Contains(t, rendered, `<g class="node op">`)
	assert.Contains(t, rendered, "LegalizeOps")

	shot := filepath.Join(dir, "shot.png")
	cmd := exec.Command(bin, append(browserArgs(dir), "--screenshot="+shot, "--window-size=2400,1400", "--hide-scrollbars", "file://"+file)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "chromium --screenshot: %s", out)
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	// Count pixels of the column header grey (#f4f4f4), the parameter
	// green (#e6f2e6) of the input's graph, which is open at load, and the
	// yellow of lines a pass wrote (#fff3b0: canonicalize writes the phase
	// attribute, in the first columns).
	var header, param, written int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			switch [3]uint32{r >> 8, g >> 8, bl >> 8} {
			case [3]uint32{0xf4, 0xf4, 0xf4}:
				header++
			case [3]uint32{0xe6, 0xf2, 0xe6}:
				param++
			case [3]uint32{0xff, 0xf3, 0xb0}:
				written++
			}
		}
	}
	assert.Greater(t, header, 1000, "column headers are drawn")
	assert.Greater(t, param, 500, "the input's dataflow graph is drawn with its parameter nodes")
	assert.Greater(t, written, 500, "written lines are highlighted")
}
