// Package passtest runs passes and pipelines on testdata modules for pass
// authors, in the style of golang.org/x/tools/go/analysis/analysistest.
//
// A test directory holds input modules (*.tvms) and, next to each input
// NAME.tvms whose pipeline succeeds, the expected output NAME.out.tvms:
//
//	testdata/passes/CallTIRRewrite/
//	    inplace.tvms        input
//	    inplace.out.tvms    expected output (go test -update rewrites it)
//
// A successful run's output must be well-formed (the structural rules of
// package wellformed) and have every property the pipeline's contracts
// establish (Claimed). The output is compared twice: structurally (ir.StructuralEqual against
// the parsed golden module, reporting the first differing path) and as
// printed text (a unified diff), so both a semantic change and a change in
// how the module prints fail the test.
//
// Expected diagnostics are written in the input as comments:
//
//	y = R.call_tir(cls.f, (x,), out_sinfo=R.Tensor(("n",), "float32"))  # want "without a known shape"
//	# want "CallTIRRewrite needs .* missing \{NoDataflow"
//
// A `# want "regexp"` after code expects a diagnostic at that line; on a
// line of its own it expects a diagnostic with no position in the file
// (pipeline, static-check and module-level diagnostics). Several quoted
// regexps may follow one want. Matching goes both ways: every diagnostic
// must match a want (else "unexpected diagnostic") and every want must be
// matched (else "missing diagnostic"). A file with wants must not have a
// golden output: its pipeline is expected to fail or warn, not to be
// compared.
//
// passtest declares the -update flag unless an earlier-initialized package
// did; a test package that imports passtest must not declare it again.
package passtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/syntax/printer"
	"github.com/phasec/phasec/wellformed"
)

// The -update flag rewrites golden outputs instead of comparing them. It is
// declared here unless a package initialized earlier (such as the internal
// tests of the package under test) declared it already; either way
// `go test -update` sets it.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden outputs instead of comparing them")
	}
}

// Updating reports whether the test binary runs with -update.
func Updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// GoldenSuffix is the suffix of expected outputs: NAME.tvms -> NAME.out.tvms.
const GoldenSuffix = ".out.tvms"

// Result is what one run produced, for further assertions.
type Result struct {
	Input  *ir.Module
	Output *ir.Module // nil when the pipeline failed
	Err    error      // the run's error, nil on success
	Diags  diag.List  // every diagnostic: errors, warnings, and Err flattened
	// Claimed are the properties the pipeline's contracts say hold after
	// it (what its passes establish and keep, and the invariants of the
	// phase a barrier leaves), whatever held before.
	Claimed phase.Set
}

// Options tune a run; the zero value runs at passes.DefaultOptLevel.
type Options struct {
	// OptLevel of the pass context; 0 means passes.DefaultOptLevel (use
	// Configure for an explicit 0).
	OptLevel int
	// Configure, when set, adjusts the pass context before the run.
	Configure func(pc *passes.PassContext)
}

// Run runs pipeline (a pass name or a textual pipeline, resolved against
// reg) on every input module of dir, each as a subtest named after the
// file. It fails the test when dir holds no input.
func Run(t *testing.T, reg *passes.Registry, dir, pipeline string) {
	t.Helper()
	RunWith(t, reg, dir, pipeline, Options{})
}

// RunWith is Run with options.
func RunWith(t *testing.T, reg *passes.Registry, dir, pipeline string, opts Options) {
	t.Helper()
	inputs, err := Inputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatalf("passtest: no *.tvms input in %s", dir)
	}
	for _, path := range inputs {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".tvms"), func(t *testing.T) {
			RunFile(t, reg, path, pipeline, opts)
		})
	}
}

// Inputs lists the input modules of dir (*.tvms except golden outputs).
func Inputs(dir string) ([]string, error) {
	all, err := filepath.Glob(filepath.Join(dir, "*.tvms"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range all {
		if !strings.HasSuffix(p, GoldenSuffix) {
			out = append(out, p)
		}
	}
	return out, nil
}

// RunFile runs pipeline on the module in path and checks its diagnostics
// against the file's wants and, when it has none, its output against
// the golden file.
func RunFile(t *testing.T, reg *passes.Registry, path, pipeline string, opts Options) *Result {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res := Execute(reg, path, src, pipeline, opts)
	wants, werrs := ParseWants(path, src)
	for _, e := range werrs {
		t.Error(e)
	}
	if res.Input == nil {
		t.Fatalf("%s does not parse:\n%s", path, res.Diags)
	}
	CheckWants(t, res.Diags, wants)
	golden := strings.TrimSuffix(path, ".tvms") + GoldenSuffix
	if len(wants) > 0 || res.Output == nil {
		if _, err := os.Stat(golden); err == nil {
			if Updating() {
				os.Remove(golden)
			} else {
				t.Errorf("%s has a golden output but its run is expected to fail (it has wants, or failed): remove the golden file", path)
			}
		}
		return res
	}
	if errs := wellformed.CheckProperties(res.Output, res.Claimed); errs.HasErrors() {
		t.Errorf("the output of %s on %s is not well-formed or lacks a property the pipeline establishes %v:\n%s",
			pipeline, path, res.Claimed, errs)
	}
	CheckGolden(t, golden, res.Output)
	return res
}

// Execute parses src and runs pipeline on it without a testing.T: the
// building block of RunFile, usable from other harnesses.
func Execute(reg *passes.Registry, path string, src []byte, pipeline string, opts Options) *Result {
	res := &Result{}
	mod, perrs := syntax.Parse(path, src)
	if perrs.HasErrors() || mod == nil {
		res.Diags = perrs
		res.Err = perrs.Err()
		return res
	}
	res.Input = mod
	p, errs := reg.ParseAndBuild("pipeline", pipeline)
	if errs != nil {
		res.Diags, res.Err = errs, errs
		return res
	}
	pc := passes.NewPassContext()
	if opts.OptLevel != 0 {
		pc.OptLevel = opts.OptLevel
	}
	pc.Warn = func(d *diag.Diagnostic) { res.Diags = append(res.Diags, d) }
	if opts.Configure != nil {
		opts.Configure(pc)
	}
	res.Claimed = Claimed(p)
	out, err := pc.Run(context.Background(), p, mod)
	res.Output, res.Err = out, err
	if err != nil {
		res.Diags = append(res.Diags, Flatten(err)...)
	}
	return res
}

// Claimed returns the properties p's contracts guarantee after it runs,
// starting from nothing.
func Claimed(p *passes.Pass) phase.Set {
	var props phase.Set
	var walk func(p *passes.Pass)
	walk = func(p *passes.Pass) {
		if p.Kind() == passes.KindSequential {
			for _, c := range p.Children() {
				walk(c)
			}
			return
		}
		_, props = p.Info().Apply(phase.None, props)
	}
	walk(p)
	return props
}

// Flatten turns a run error into diagnostics: diag.Lists (also wrapped in a
// PassError or joined) are kept with their positions, any other error
// becomes one diagnostic without a position.
func Flatten(err error) diag.List {
	if err == nil {
		return nil
	}
	var out diag.List
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, Flatten(e)...)
		}
		return out
	}
	var l diag.List
	if errors.As(err, &l) {
		prefix := ""
		var pe *passes.PassError
		if errors.As(err, &pe) {
			prefix = "pass " + pe.Pass + ": "
		}
		for _, d := range l {
			c := *d
			c.Msg = prefix + c.Msg
			out = append(out, &c)
		}
		return out
	}
	var d *diag.Diagnostic
	if errors.As(err, &d) {
		return diag.List{d}
	}
	return diag.List{{Severity: diag.Error, Msg: err.Error()}}
}

// Want is one expected diagnostic.
type Want struct {
	File string
	Line int // 0: a diagnostic without a position in the file
	Re   *regexp.Regexp
	at   int // the line of the comment, for messages
}

var wantComment = regexp.MustCompile(`#\s*want\b(.*)$`)

// ParseWants extracts the `# want "re"...` comments of src.
func ParseWants(path string, src []byte) ([]*Want, []error) {
	var wants []*Want
	var errs []error
	for i, line := range strings.Split(string(src), "\n") {
		m := wantComment.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		code := strings.TrimSpace(line[:m[0]])
		lineNo := 0
		if code != "" {
			lineNo = i + 1
		}
		rest := strings.TrimSpace(line[m[2]:m[3]])
		n := 0
		for rest != "" {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: bad want: expected a quoted regexp at %q", path, i+1, rest))
				break
			}
			s, _ := strconv.Unquote(q)
			re, err := regexp.Compile(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: bad want regexp %s: %v", path, i+1, q, err))
			} else {
				wants = append(wants, &Want{File: path, Line: lineNo, Re: re, at: i + 1})
			}
			n++
			rest = strings.TrimSpace(rest[len(q):])
		}
		if n == 0 && rest == "" {
			errs = append(errs, fmt.Errorf("%s:%d: want without a regexp", path, i+1))
		}
	}
	return wants, errs
}

// CheckWants matches diagnostics against wants both ways. A diagnostic
// matches a want when the want's regexp matches its formatted text
// (severity, code, message and hint) and, for a positioned want, it sits
// on the want's line of the want's file.
func CheckWants(t testing.TB, diags diag.List, wants []*Want) {
	t.Helper()
	used := make([]bool, len(wants))
	for _, d := range diags {
		text := d.String()
		found := false
		for i, w := range wants {
			if used[i] || !w.Re.MatchString(text) {
				continue
			}
			if w.Line != 0 && !(d.Span.Line == w.Line && sameFile(d.Span.File, w.File)) {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			t.Errorf("unexpected diagnostic: %s", text)
		}
	}
	for i, w := range wants {
		if !used[i] {
			where := "without a position"
			if w.Line != 0 {
				where = fmt.Sprintf("at line %d", w.Line)
			}
			t.Errorf("%s:%d: missing diagnostic %s matching %q", w.File, w.at, where, w.Re)
		}
	}
}

func sameFile(a, b string) bool {
	return a == b || filepath.Clean(a) == filepath.Clean(b) || filepath.Base(a) == filepath.Base(b)
}

// CheckGolden compares got with the module in golden, structurally and as
// printed text; with -update it writes the printed text instead.
func CheckGolden(t *testing.T, golden string, got *ir.Module) {
	t.Helper()
	text := printer.Print(got)
	if Updating() {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	wmod, perrs := syntax.Parse(golden, want)
	if perrs.HasErrors() {
		t.Fatalf("golden %s does not parse:\n%s", golden, perrs)
	}
	if m := ir.Diff(got, wmod, ir.EqualOptions{}); m != nil {
		t.Errorf("output differs structurally from %s at %s", golden, m)
	}
	if text != string(want) {
		t.Errorf("printed output differs from %s (-want +got):\n%s", golden,
			passes.UnifiedDiff(golden, "got", string(want), text, 3))
	}
}
