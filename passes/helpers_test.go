package passes

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/phase"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create it")
	if got != string(want) {
		assert.Failf(t, name+" differs from golden", "%s", UnifiedDiff("want", "got", string(want), got, 2))
	}
}

// fakeClock advances one millisecond per reading, so durations are
// deterministic: a pass body with no nested hooks takes exactly 1ms.
func fakeClock() func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

// genModule builds nFuncs Relax functions f000.. each with one dataflow
// block of n bindings chaining calls to an extern, plus one PrimFunc.
func genModule(nFuncs, n int) *ir.Module {
	m := ir.NewModule()
	ext := ir.NewExternFunc("ext")
	t1 := ir.TensorInfoNDim(ir.Float32, 1)
	for i := range nFuncs {
		x := ir.NewVar("x", t1)
		var binds []ir.Binding
		var prev ir.Expr = x
		for j := range n {
			var v *ir.Var
			if j == n-1 {
				v = ir.NewVar(fmt.Sprintf("gv%d", j), nil)
			} else {
				v = ir.NewDataflowVar(fmt.Sprintf("lv%d", j), nil)
			}
			call := ir.NewCall(op.CallPurePacked, ext, prev)
			call.SInfoArgs = []ir.StructInfo{t1}
			binds = append(binds, ir.NewVarBinding(v, call))
			prev = v
		}
		body := &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Bindings: binds, Dataflow: true}}, Body: prev}
		f := &ir.Function{Params: []*ir.Var{x}, Body: body, Ret: t1, Pure: true, Attrs: ir.Attrs{}}
		m.Set(fmt.Sprintf("f%03d", i), f)
	}
	m.Set("kernel", &ir.PrimFunc{Body: &ir.SeqStmt{Stmts: []ir.Stmt{&ir.Evaluate{Value: ir.I64(0)}}}, Attrs: ir.Attrs{}})
	// A recorded phase is verified when a run starts: the generated module
	// is well-formed and normalized, so it may claim ingest or optimize.
	out, errs := ir.NormalizeModule(m)
	if len(errs) > 0 {
		panic(errs.Error())
	}
	return out
}

// testPrint is a compact, printer-independent rendering for instrument
// goldens: functions, their attributes and their bindings.
func testPrint(m *ir.Module) string {
	var b strings.Builder
	if ph, _ := phase.Recorded(m); ph != phase.None {
		fmt.Fprintf(&b, "phase %v\n", ph)
	}
	for name, f := range m.Functions() {
		fmt.Fprintf(&b, "%s", name)
		for _, k := range f.FuncAttrs().Keys() {
			fmt.Fprintf(&b, " %s=%v", k, f.FuncAttrs()[k])
		}
		b.WriteString(":\n")
		fn, ok := f.(*ir.Function)
		if !ok {
			continue
		}
		for _, blk := range fn.Body.(*ir.SeqExpr).Blocks {
			kind := "block"
			if blk.Dataflow {
				kind = "dataflow"
			}
			fmt.Fprintf(&b, "  %s:", kind)
			for _, bind := range blk.Bindings {
				fmt.Fprintf(&b, " %s", bind.BoundVar().Name)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// withAttr returns f with attribute key=value (a changed function).
func withAttr(f *ir.Function, key string, value any) *ir.Function {
	c := *f
	c.Attrs = f.Attrs.With(key, value)
	return &c
}

// Test passes with real contracts, and the registry this package's tests
// resolve pipeline text against (with Normalize and LambdaLift, so hints
// name what they would name in phasec).
var (
	tNoop = Define(Info{Name: "TNoop", Doc: "does nothing", OptLevel: 0}, Module(noop))
	tMark = Define(Info{Name: "TMark", Doc: "marks every function with attribute marked", OptLevel: 0},
		Functions(func(env *Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error) {
			return withAttr(f, "marked", true), nil
		}).InParallel())
	tToNonDataflow = Define(Info{Name: "TToNonDataflow", Doc: "turns dataflow blocks into plain blocks",
		Establishes: phase.Of(phase.NoDataflow)},
		Functions(func(env *Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error) {
			seq := f.Body.(*ir.SeqExpr)
			c := *seq
			c.Blocks = nil
			for _, b := range seq.Blocks {
				nb := *b
				nb.Dataflow = false
				c.Blocks = append(c.Blocks, &nb)
			}
			nf := *f
			nf.Body = &c
			return &nf, nil
		}))
	needsNoDataflow = map[phase.Property]string{phase.NoDataflow: "a test requirement"}

	testRegistry = NewRegistry(Normalize, LambdaLift, tNoop, tMark, tToNonDataflow,
		Define(Info{Name: "TO1", Doc: "opt level 1 no-op", OptLevel: 1}, Module(noop)),
		Define(Info{Name: "TO3", Doc: "opt level 3 no-op", OptLevel: 3}, Module(noop)),
		Define(Info{Name: "TO3ToNonDataflow", Doc: "opt-level-3 pass establishing NoDataflow",
			OptLevel: 3, Establishes: phase.Of(phase.NoDataflow)}, Module(noop)),
		Define(Info{Name: "TNeedsNoDataflow", Doc: "needs NoDataflow", Requires: needsNoDataflow}, Module(noop)),
		Define(Info{Name: "TPrecedesNoDataflow", Doc: "works on dataflow blocks",
			Precedes: map[phase.Property]string{phase.NoDataflow: "it rewrites dataflow blocks"}}, Module(noop)),
		Define(Info{Name: "TAddsDataflow", Doc: "invalidates NoDataflow",
			Invalidates: phase.Of(phase.NoDataflow)}, Module(noop)),
		Define(Info{Name: "TChainStep", Doc: "needs NoDataflow, establishes BuiltinsLowered",
			Requires: needsNoDataflow, Establishes: phase.Of(phase.BuiltinsLowered)}, Module(noop)),
		Define(Info{Name: "TNeedsBuiltins", Doc: "needs BuiltinsLowered",
			Requires: map[phase.Property]string{phase.BuiltinsLowered: "a test requirement"}}, Module(noop)),
		Define(Info{Name: "TLowerBarrier", Doc: "moves the module to phase lower", AlwaysRun: true,
			Leaves: phase.Lower}, Module(noop)),
		Define(Info{Name: "TAcceptsLower", Doc: "accepts only phase lower",
			Accepts: []phase.Phase{phase.Lower}}, Module(noop)),
		Define(Info{Name: "TPrereq", Doc: "requires TMark to have run", Prerequisites: []*Pass{tMark}}, Module(noop)),
		Define(Info{Name: "TStats", Doc: "reports two statistics"}, Module(func(env *Env, mod *ir.Module) (*ir.Module, error) {
			env.Stat("planned", 3)
			env.Stat("bytes", 4096)
			return mod, nil
		})),
		Define(Info{Name: "TFail", Doc: "always fails"},
			Module(func(env *Env, mod *ir.Module) (*ir.Module, error) { return nil, errors.New("boom") })),
		Define(Info{Name: "TPanic", Doc: "always panics"},
			Module(func(env *Env, mod *ir.Module) (*ir.Module, error) { panic("kaboom") })),
		Define(Info{Name: "TPanicParallel", Doc: "panics in one function, in parallel"},
			Functions(func(env *Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error) {
				if name == "f001" {
					panic("kaboom in " + name)
				}
				return f, nil
			}).InParallel()),
		Define(Info{Name: "TMutate", Doc: "illegally edits its input"},
			Module(func(env *Env, mod *ir.Module) (*ir.Module, error) {
				mod.Remove("kernel")
				return mod, nil
			})),
		Define(Info{Name: "TOpts", Doc: "a pass with options", Options: []Option{
			{Name: "max_depth", Type: Int, Default: 8, Doc: "maximum depth"},
			{Name: "emit_err_ctx", Type: Bool, Default: true, Doc: "emit error context"},
			{Name: "mode", Type: String, Default: "fast", Doc: "mode"},
			{Name: "ratio", Type: Float, Default: 0.5, Doc: "ratio"},
		}}, Module(func(env *Env, mod *ir.Module) (*ir.Module, error) {
			o := env.Options()
			c := mod.Clone()
			c.Attrs = c.Attrs.With("opts", fmt.Sprintf("%d,%v,%s,%g", o.Int("max_depth"), o.Bool("emit_err_ctx"), o.String("mode"), o.Float("ratio")))
			return c, nil
		})),
		Define(Info{Name: "TReadConfig", Doc: "records config test.depth in an attribute"},
			Module(func(env *Env, mod *ir.Module) (*ir.Module, error) {
				c := mod.Clone()
				c.Attrs = c.Attrs.With("depth", env.Config("test.depth"))
				return c, nil
			})),
	)
)

func noop(env *Env, mod *ir.Module) (*ir.Module, error) { return mod, nil }

func init() {
	RegisterConfig(ConfigKey{Name: "test.depth", Type: Int, Default: 3, Doc: "a test config key"})
}

// parseAndBuild builds pipeline text against testRegistry.
func parseAndBuild(file, text string) (*Pass, diag.List) {
	return testRegistry.ParseAndBuild(file, text)
}

// testPass returns the test pass named name.
func testPass(name string) *Pass {
	p, ok := testRegistry.Lookup(name)
	if !ok {
		panic("no test pass " + name)
	}
	return p
}

// modulePass defines a module pass inline, for tests that build passes
// around a closure.
func modulePass(info Info, fn ModuleFunc) *Pass { return Define(info, Module(fn)) }

// functionPass defines a per-function pass inline.
func functionPass(info Info, parallel bool, fn FunctionFunc) *Pass {
	impl := Functions(fn)
	if parallel {
		impl = impl.InParallel()
	}
	return Define(info, impl)
}

// blockPass defines a dataflow-block pass inline.
func blockPass(info Info, parallel bool, fn BlockFunc) *Pass {
	impl := DataflowBlocks(fn)
	if parallel {
		impl = impl.InParallel()
	}
	return Define(info, impl)
}

// because requires props, each for a placeholder reason.
func because(props ...phase.Property) map[phase.Property]string {
	m := map[phase.Property]string{}
	for _, p := range props {
		m[p] = "a test requirement"
	}
	return m
}
