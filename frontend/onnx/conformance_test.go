package onnx_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/codegen"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/frontend/onnx"
	"github.com/phasec/phasec/frontend/onnx/onnxpb"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/tensor"
	"github.com/phasec/phasec/vm"
	"github.com/phasec/phasec/vm/loader"
)

// The conformance suite runs ONNX's own backend tests (Debian's
// libonnx-testdata: node tests, PyTorch-converted and PyTorch-operator
// models, each a model.onnx with test_data_set_*/input_*.pb and
// output_*.pb) through import, the canonicalize, optimize, lower and build
// barriers, VM code generation and the VM, and compares every output
// with ONNX's backend tolerances (rtol 1e-3, atol 1e-7). Every case is
// listed in the report: passed, failed (with the first differing
// element, or the stage that failed), unsupported (op and opset) or
// excluded (training ops, sequence/optional types, strings), never
// skipped silently. A test that feeds a shape, axes or pads as a graph
// input (which phasec needs at import) is run with that input bound to
// the data set's value (onnx.Options.Bind) and counted apart, as
// passed-bound.
//
// The committed report (testdata/conformance.txt, rewritten with
// -update) is the baseline: a case it lists as passed must still pass.

var (
	testdataDir = flag.String("onnx.testdata", "/usr/share/libonnx-testdata/data", "ONNX backend test data (Debian libonnx-testdata)")
	reportPath  = flag.String("onnx.report", "", "also write the conformance report to this file")
	update      = flag.Bool("update", false, "rewrite testdata/conformance.txt")
	caseFilter  = flag.String("onnx.cases", "", "run only the cases whose suite/name matches this regexp (no baseline check)")
)

const (
	rtol = 1e-3
	atol = 1e-7
)

type outcome string

const (
	passed      outcome = "passed"
	passedBound outcome = "passed-bound" // with shape-giving inputs bound at import
	failed      outcome = "failed"
	unsupported outcome = "unsupported"
	excluded    outcome = "excluded"
)

type caseResult struct {
	suite, name string
	outcome     outcome
	opTypes     []string
	detail      string
}

func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the ONNX conformance suite is not short")
	}
	suites := []string{"node", "pytorch-converted", "pytorch-operator", "simple"}
	if _, err := os.Stat(filepath.Join(*testdataDir, "node")); err != nil {
		t.Skipf("no ONNX backend test data at %s (make onnx-testdata installs it)", *testdataDir)
	}
	var only *regexp.Regexp
	if *caseFilter != "" {
		only = regexp.MustCompile(*caseFilter)
	}
	start := time.Now()
	var results []caseResult
	for _, s := range suites {
		dirs, _ := filepath.Glob(filepath.Join(*testdataDir, s, "*"))
		sort.Strings(dirs)
		for _, d := range dirs {
			if only != nil && !only.MatchString(s+"/"+filepath.Base(d)) {
				continue
			}
			results = append(results, runCase(s, d))
		}
	}
	if only != nil {
		for _, r := range results {
			t.Logf("%s/%s %s %s", r.suite, r.name, r.outcome, r.detail)
		}
		return
	}
	report := formatReport(results)
	t.Logf("ONNX conformance in %s:\n%s", time.Since(start).Round(time.Second), summary(results))
	if *reportPath != "" {
		require.NoError(t, os.WriteFile(*reportPath, []byte(report), 0o644))
	}
	golden := filepath.Join("testdata", "conformance.txt")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(report), 0o644))
		return
	}
	base, err := os.ReadFile(golden)
	require.NoError(t, err, "no baseline report: run go test ./frontend/onnx -run Conformance -update")
	wasPassing := map[string]bool{}
	for _, l := range strings.Split(string(base), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && (f[1] == string(passed) || f[1] == string(passedBound)) {
			wasPassing[f[0]] = true
		}
	}
	for _, r := range results {
		if wasPassing[r.suite+"/"+r.name] && r.outcome != passed && r.outcome != passedBound {
			t.Errorf("%s/%s passed in testdata/conformance.txt, now %s: %s", r.suite, r.name, r.outcome, r.detail)
		}
	}
}

// excludedOps are the training ops (domain ai.onnx.preview.training) and
// the ops of sequence, optional and string types the goals leave out.
var excludedOps = map[string]string{
	"Adagrad": "training", "Adam": "training", "Momentum": "training", "Gradient": "training",
	"SequenceAt": "sequence", "SequenceConstruct": "sequence", "SequenceEmpty": "sequence", "SequenceErase": "sequence",
	"SequenceInsert": "sequence", "SequenceLength": "sequence", "SplitToSequence": "sequence", "ConcatFromSequence": "sequence",
	"SequenceMap": "sequence", "Optional": "optional", "OptionalGetElement": "optional", "OptionalHasElement": "optional",
	"StringNormalizer": "string", "RegexFullMatch": "string", "StringConcat": "string", "StringSplit": "string",
}

// runCase runs one test directory; a panic anywhere is a failure.
func runCase(suite, dir string) (res caseResult) {
	res = caseResult{suite: suite, name: filepath.Base(dir)}
	defer func() {
		if p := recover(); p != nil {
			res.outcome, res.detail = failed, fmt.Sprintf("panic: %v", p)
		}
	}()
	model, err := onnx.ReadFile(filepath.Join(dir, "model.onnx"), onnx.DefaultLimits)
	if err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "model.onnx")); statErr != nil {
			res.outcome, res.detail = excluded, "no model.onnx (the package lists the model by URL only)"
			return
		}
		res.outcome, res.detail = unsupported, firstLine(err.Error())
		return
	}
	g := model.Proto.GetGraph()
	if strings.Contains(res.name, "training") {
		res.outcome, res.detail = excluded, "training mode"
		return
	}
	seen := map[string]bool{}
	for _, n := range g.GetNode() {
		if !seen[n.GetOpType()] {
			seen[n.GetOpType()] = true
			res.opTypes = append(res.opTypes, n.GetOpType())
		}
		if why, ok := excludedOps[n.GetOpType()]; ok {
			res.outcome, res.detail = excluded, why+" op "+n.GetOpType()
			return
		}
	}
	for _, vi := range append(slices.Clone(g.GetInput()), g.GetOutput()...) {
		ty := vi.GetType()
		switch {
		case ty.GetSequenceType() != nil:
			res.outcome, res.detail = excluded, "sequence type"
			return
		case ty.GetOptionalType() != nil:
			res.outcome, res.detail = excluded, "optional type"
			return
		case ty.GetTensorType() != nil && ty.GetTensorType().GetElemType() == 8:
			res.outcome, res.detail = excluded, "string type"
			return
		}
	}
	// The data sets' inputs, by ONNX name: input_I.pb is the I-th graph
	// input that is not an initializer.
	inits := map[string]bool{}
	for _, t := range g.GetInitializer() {
		inits[t.GetName()] = true
	}
	index := map[string]int{}
	for _, in := range g.GetInput() {
		if !inits[in.GetName()] {
			index[in.GetName()] = len(index)
		}
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	if len(sets) == 0 {
		res.outcome, res.detail = excluded, "no test data sets"
		return
	}
	var bound []string
	for _, set := range sets {
		imported, err := importBinding(model, index, set, &bound)
		if err != nil {
			if l, ok := err.(diag.List); ok && len(l) > 0 && l[0].Code == onnx.DiagUnsupported {
				res.outcome, res.detail = unsupported, firstLine(l[0].Msg)
				return
			}
			res.outcome, res.detail = failed, "import: "+firstLine(err.Error())
			return
		}
		machine, err := build(imported.Module)
		if err != nil {
			res.outcome, res.detail = failed, "build: "+firstLine(err.Error())
			return
		}
		if detail := runSet(machine, imported, index, bf16Tensors(g), set); detail != "" {
			res.outcome, res.detail = failed, filepath.Base(set)+": "+detail
			return
		}
	}
	res.outcome = passed
	if len(bound) > 0 {
		res.outcome, res.detail = passedBound, "bound at import: "+strings.Join(bound, ", ")
	}
	return
}

// importBinding imports the model; when the import needs the value of
// a graph input (a shape, axes or pads the test feeds as an input), it
// binds that input to the data set's value (Options.Bind) and retries.
// bound collects the names bound.
func importBinding(model *onnx.Model, index map[string]int, set string, bound *[]string) (*onnx.Result, error) {
	binds := map[string]*ir.NDArray{}
	for {
		res, err := onnx.Import(model, onnx.Options{KeepParamsInModule: true, Bind: binds})
		name, needs := onnx.NeedsValue(err)
		if err == nil || !needs || binds[name] != nil {
			return res, err
		}
		names := []string{name}
		if _, isInput := index[name]; !isInput {
			// A value computed from inputs: bind the integer scalars and
			// short vectors among them (sizes, axes, counts).
			names = names[:0]
			for n, i := range index {
				a, _, rerr := onnx.ReadTensorFile(filepath.Join(set, fmt.Sprintf("input_%d.pb", i)), onnx.DefaultLimits)
				if rerr == nil && binds[n] == nil && !a.DType.IsFloat() && a.NumElements() <= 8 {
					names = append(names, n)
				}
			}
			if len(names) == 0 {
				return res, err
			}
		}
		for _, n := range names {
			a, _, rerr := onnx.ReadTensorFile(filepath.Join(set, fmt.Sprintf("input_%d.pb", index[n])), onnx.DefaultLimits)
			if rerr != nil {
				return nil, err
			}
			binds[n] = a
			if !slices.Contains(*bound, n) {
				*bound = append(*bound, n)
			}
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

var pipeline = func() *passes.Pass {
	p, errs := barrier.Registry.ParseAndBuild("--passes", "canonicalize,optimize,lower,build")
	if errs != nil {
		panic(errs)
	}
	return p
}()

func build(mod *ir.Module) (*vm.VM, error) {
	out, err := passes.NewPassContext().Run(context.Background(), pipeline, mod)
	if err != nil {
		return nil, err
	}
	exe, errs := codegen.Build(out)
	if errs != nil {
		return nil, errs
	}
	return loader.Link(exe, vm.Options{})
}

// runSet runs one data set: "" when every output matches.
func runSet(machine *vm.VM, imp *onnx.Result, index map[string]int, bf16 map[string]bool, set string) string {
	var args []vm.Value
	for _, name := range imp.Inputs {
		a, _, err := onnx.ReadTensorFile(filepath.Join(set, fmt.Sprintf("input_%d.pb", index[name])), onnx.DefaultLimits)
		if err != nil {
			return "input: " + err.Error()
		}
		a = asBF16(a, bf16[name])
		t, err := toTensor(a)
		if err != nil {
			return "input: " + err.Error()
		}
		args = append(args, vm.TensorValue(t))
	}
	out, _, err := machine.Call(context.Background(), "main", args)
	if err != nil {
		return "run: " + firstLine(err.Error())
	}
	outs := []vm.Value{out}
	if len(imp.Outputs) > 1 {
		tu, ok := out.Tuple()
		if !ok || len(tu.Fields) != len(imp.Outputs) {
			return "the result is not a tuple of the outputs"
		}
		outs = tu.Fields
	}
	for i, name := range imp.Outputs {
		want, _, err := onnx.ReadTensorFile(filepath.Join(set, fmt.Sprintf("output_%d.pb", i)), onnx.DefaultLimits)
		if err != nil {
			return "expected output: " + err.Error()
		}
		want = asBF16(want, bf16[name])
		got, ok := outs[i].Tensor()
		if !ok {
			return fmt.Sprintf("output %q is not a tensor", name)
		}
		if d := compare(got, want); d != "" {
			return fmt.Sprintf("output %q: %s", name, d)
		}
	}
	return ""
}

// bf16Tensors are the graph inputs and outputs declared bfloat16.
func bf16Tensors(g *onnxpb.GraphProto) map[string]bool {
	out := map[string]bool{}
	for _, vi := range append(slices.Clone(g.GetInput()), g.GetOutput()...) {
		if vi.GetType().GetTensorType().GetElemType() == int32(onnxpb.TensorProto_BFLOAT16) {
			out[vi.GetName()] = true
		}
	}
	return out
}

// asBF16 reads the uint16 data of a tensor declared bfloat16 as the
// bfloat16 bit patterns they are: NumPy has no bfloat16, so ONNX's test
// generator stores the bits as uint16 (onnx/backend/test/case/node/cast.py).
func asBF16(a *ir.NDArray, declared bool) *ir.NDArray {
	if !declared || a.DType != ir.UInt16 {
		return a
	}
	b := *a
	b.DType = ir.BFloat16
	return &b
}

func toTensor(a *ir.NDArray) (*tensor.Tensor, error) {
	dt, err := op.TensorDType(a.DType)
	if err != nil {
		return nil, err
	}
	t, err := tensor.NewChecked(dt, a.Shape)
	if err != nil {
		return nil, err
	}
	copy(t.Bytes(), a.Data)
	return t, nil
}

// compare checks got against want with ONNX's tolerances: |g - w| <=
// atol + rtol * |w|, NaN matching NaN; integers and bools exactly.
func compare(got *tensor.Tensor, want *ir.NDArray) string {
	if op.IRDType(got.DType) != want.DType {
		return fmt.Sprintf("dtype %s, want %s", op.IRDType(got.DType), want.DType)
	}
	if !slices.Equal(got.Shape, want.Shape) && !(got.NumElements() == 1 && want.NumElements() == 1 && len(got.Shape)+len(want.Shape) <= 1) {
		return fmt.Sprintf("shape %v, want %v", got.Shape, want.Shape)
	}
	for i := range int(want.NumElements()) {
		if want.DType.IsFloat() {
			g, w := got.Float64At(i), want.Float(i)
			if math.IsNaN(w) && math.IsNaN(g) || g == w {
				continue
			}
			if math.Abs(g-w) > atol+rtol*math.Abs(w) || math.IsNaN(g) != math.IsNaN(w) {
				return fmt.Sprintf("element %d is %g, want %g", i, g, w)
			}
			continue
		}
		if g, w := int64(got.Float64At(i)), want.Int(i); g != w {
			return fmt.Sprintf("element %d is %d, want %d", i, g, w)
		}
	}
	return ""
}

// formatReport lists every case, then totals by suite and by op type.
func formatReport(rs []caseResult) string {
	var b strings.Builder
	b.WriteString("# ONNX backend conformance (go test ./frontend/onnx -run Conformance -update)\n")
	b.WriteString("# case outcome [ops] detail; tolerances rtol 1e-3 atol 1e-7; pipeline canonicalize,optimize,lower,build + VM\n\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "%s/%s %s [%s] %s\n", r.suite, r.name, r.outcome, strings.Join(r.opTypes, ","), r.detail)
	}
	b.WriteString("\n")
	b.WriteString(summary(rs))
	return b.String()
}

func summary(rs []caseResult) string {
	var b strings.Builder
	type tally map[outcome]int
	bySuite := map[string]tally{}
	byOp := map[string]tally{}
	for _, r := range rs {
		if bySuite[r.suite] == nil {
			bySuite[r.suite] = tally{}
		}
		bySuite[r.suite][r.outcome]++
		if r.suite != "node" {
			continue
		}
		key := "(none)"
		if len(r.opTypes) > 0 {
			key = r.opTypes[len(r.opTypes)-1]
			for _, o := range r.opTypes {
				if o != "Constant" {
					key = o
					break
				}
			}
		}
		if byOp[key] == nil {
			byOp[key] = tally{}
		}
		byOp[key][r.outcome]++
	}
	line := func(name string, t tally) {
		in := t[passed] + t[passedBound] + t[failed] + t[unsupported]
		pct, pctBound := 0.0, 0.0
		if in > 0 {
			pct = 100 * float64(t[passed]) / float64(in)
			pctBound = 100 * float64(t[passed]+t[passedBound]) / float64(in)
		}
		fmt.Fprintf(&b, "%-26s passed %4d  passed-bound %3d  failed %3d  unsupported %3d  excluded %3d  (of %d in scope: %.1f%% passed, %.1f%% with bound)\n",
			name, t[passed], t[passedBound], t[failed], t[unsupported], t[excluded], in, pct, pctBound)
	}
	b.WriteString("totals by suite:\n")
	for _, s := range []string{"node", "pytorch-converted", "pytorch-operator", "simple"} {
		if t, ok := bySuite[s]; ok {
			line(s, t)
		}
	}
	b.WriteString("\nnode tests by op type:\n")
	ops := make([]string, 0, len(byOp))
	for o := range byOp {
		ops = append(ops, o)
	}
	sort.Strings(ops)
	for _, o := range ops {
		line(o, byOp[o])
	}
	return b.String()
}
