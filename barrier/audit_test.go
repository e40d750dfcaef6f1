package barrier_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/syntax"
	"github.com/phasec/phasec/wellformed"
)

// corpusModule is one module of the contract audit's corpus.
type corpusModule struct {
	name string
	mod  *ir.Module
}

// auditCorpus returns every module of testdata/ that parses (inputs,
// golden outputs and negative files alike: a pass that accepts a module
// must keep its contract on it) plus small ir/irgen modules. Files that do
// not parse are counted, not audited.
func auditCorpus(t testing.TB) (mods []corpusModule, unparsed int) {
	t.Helper()
	err := filepath.WalkDir("../testdata", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".tvms") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		mod, errs := syntax.Parse(path, src)
		if errs.HasErrors() || mod == nil {
			unparsed++
			return nil
		}
		mods = append(mods, corpusModule{strings.TrimPrefix(filepath.ToSlash(path), "../"), mod})
		return nil
	})
	require.NoError(t, err)
	// The generators leave struct info to the normalizer, which fills in
	// variables in place (ir's design: a Var is its identity); the audit
	// takes them normalized so that ImmutableInput judges passes alone.
	gen := []corpusModule{
		{"irgen.Chain(8)", irgen.Chain(8)},
		{"irgen.MultiFunc(3,4)", irgen.MultiFunc(3, 4)},
		{"irgen.ResNet(1,1)", irgen.ResNet(1, 1, irgen.DNNOptions{Batch: 2})},
		{"irgen.ResNet(1,1,symbolic)", irgen.ResNet(1, 1, irgen.DNNOptions{Batch: 4, Symbolic: true})},
		{"irgen.Transformer(1,symbolic)", irgen.Transformer(1, irgen.DNNOptions{Batch: 4, Symbolic: true})},
		{"irgen.LegalizedChain(4)", irgen.LegalizedChain(4, irgen.DNNOptions{Batch: 2})},
		{"irgen.LegalizedChain(4,symbolic)", irgen.LegalizedChain(4, irgen.DNNOptions{Batch: 8, Symbolic: true})},
		{"irgen.RandomDAG(1,12)", irgen.RandomDAG(1, 12, irgen.DNNOptions{Batch: 2})},
	}
	for i := range gen {
		gen[i].mod = irgen.MustNormalize(gen[i].mod)
	}
	return append(mods, gen...), unparsed
}

// contractViolation is one claimed property the checker refutes.
type contractViolation struct {
	pass, module string
	property     phase.Property
	first        *diag.Diagnostic
	// established: the pass claims to establish the property (the pass is
	// wrong); otherwise the property held before and the contract keeps
	// claiming it (the contract should invalidate it, or the pass breaks it).
	established bool
}

func (v contractViolation) String() string {
	verdict := "the contract keeps a property the pass breaks: invalidate it in the contract, or fix the pass"
	if v.established {
		verdict = "the pass claims to establish it but does not: the pass is wrong"
	}
	return fmt.Sprintf("pass %s on %s: claimed %v does not hold: %v\n\t%s", v.pass, v.module, v.property, v.first, verdict)
}

// auditInstrument checks, after every (nested) pass, every property the
// contracts claim for the pass's output, whether or not it changed the
// module.
type auditInstrument struct {
	passes.BaseInstrument
	module     string
	violations []contractViolation
	checked    int
}

func (*auditInstrument) Name() string { return "contract-audit" }

func (a *auditInstrument) AfterPass(ev *passes.Event) error {
	if ev.Pass.Kind() == passes.KindSequential {
		return nil
	}
	a.checked++
	errs := wellformed.CheckProperties(ev.After, ev.PropsAfter)
	reported := phase.Set(0)
	for _, d := range errs {
		r, ok := wellformed.LookupRule(d.Code)
		if !ok || d.Severity != diag.Error || reported.Has(r.Property) {
			continue
		}
		reported = reported.With(r.Property)
		a.violations = append(a.violations, contractViolation{
			pass: ev.Info.Name, module: a.module, property: r.Property, first: d,
			established: ev.Info.Establishes.Has(r.Property) || ev.Info.Leaves != passes.Unchanged && ev.Info.Leaves.Invariants().Has(r.Property),
		})
	}
	return nil
}

// auditPipelines are the multi-step pipelines the audit runs besides every
// registered pass alone: the barrier chains a user runs (the audit
// instrument checks every pass nested in them).
var auditPipelines = []string{"canonicalize,lower", "canonicalize,lower,build", "lower,build",
	"canonicalize,optimize", "canonicalize,optimize,lower,build", "optimize,lower,build"}

// withLowered adds to the corpus what the barrier chains make of each
// module (the phases reached), so passes of later phases are audited on
// realistic inputs too. Structurally equal modules are audited once.
func withLowered(t testing.TB, corpus []corpusModule) []corpusModule {
	seen := map[uint64]bool{}
	var out []corpusModule
	add := func(cm corpusModule) {
		if h := ir.StructuralHash(cm.mod); !seen[h] {
			seen[h] = true
			out = append(out, cm)
		}
	}
	for _, cm := range corpus {
		add(cm)
		mod := cm.mod
		for _, b := range barrier.Barriers() {
			next, err := b.Run(context.Background(), mod)
			if err != nil {
				break
			}
			mod = next
			add(corpusModule{cm.name + " after " + b.Name, mod})
		}
	}
	return out
}

// auditResult counts what an audit did.
type auditResult struct {
	runs, accepted, failed, refusedClaims, checks int
	// failedBy counts the failing runs per pipeline: inputs a contract
	// accepts but the pass rejects (an ordering no property expresses, or
	// input the pass reports as unsupported).
	failedBy   map[string]int
	violations []contractViolation
	// mutations are runs in which a pass edited its input (ImmutableInput).
	mutations []string
	// panics are runs in which a pass panicked on a module its contract
	// accepts.
	panics []string
}

// audit runs every pipeline on every corpus module whose start state it
// accepts (the static check), with the audit instrument.
func audit(corpus []corpusModule, pipelines []*passes.Pass) auditResult {
	var res auditResult
	for _, cm := range corpus {
		ph, props, err := passes.StartState(cm.mod)
		if err != nil {
			res.refusedClaims++
			continue
		}
		for _, p := range pipelines {
			res.runs++
			pc := &passes.PassContext{OptLevel: 3}
			if passes.Check(p, pc, ph, props).HasErrors() {
				continue
			}
			res.accepted++
			in := &auditInstrument{module: cm.name}
			pc.Instruments = []passes.Instrument{in, &passes.ImmutableInput{}}
			if _, err := pc.Execute(context.Background(), p, cm.mod, props); err != nil {
				res.failed++
				if res.failedBy == nil {
					res.failedBy = map[string]int{}
				}
				res.failedBy[p.String()]++
				var pe *passes.PassError
				if errors.As(err, &pe) && pe.Panic {
					res.panics = append(res.panics, fmt.Sprintf("%s on %s: %v", p, cm.name, err))
				}
				if strings.Contains(err.Error(), "mutated its input module") {
					res.mutations = append(res.mutations, fmt.Sprintf("%s on %s: %v", p, cm.name, err))
				}
			}
			res.checks += in.checked
			res.violations = append(res.violations, in.violations...)
		}
	}
	return res
}

// TestContractAudit runs every registered pass (barriers included), and
// the barrier chains, on every corpus module they accept and checks with
// the well-formedness checker, after every pass that runs (nested ones
// included, changed or not), that every property the contracts claim
// holds. A new pass is audited by being in barrier.Registry.
func TestContractAudit(t *testing.T) {
	start := time.Now()
	files, unparsed := auditCorpus(t)
	corpus := withLowered(t, files)
	var pipelines []*passes.Pass
	pipelines = append(pipelines, barrier.Registry.Passes()...)
	for _, text := range auditPipelines {
		p, errs := barrier.Registry.ParseAndBuild("pipeline", text)
		require.Nil(t, errs)
		pipelines = append(pipelines, p)
	}
	res := audit(corpus, pipelines)
	for _, v := range res.violations {
		assert.Fail(t, v.String())
	}
	for _, m := range append(res.mutations, res.panics...) {
		assert.Fail(t, m)
	}
	t.Logf("contract audit: %d corpus modules (%d parsed files and irgen modules, the rest barrier outputs; %d files do not parse, %d refused for a false phase claim), "+
		"%d pipelines (%d registered passes + %v), %d pipeline/module pairs, %d accepted, %d failing (a pass error, not a contract question), "+
		"%d property checks, %d violations, %v",
		len(corpus), len(files), unparsed, res.refusedClaims, len(pipelines), len(pipelines)-len(auditPipelines), auditPipelines,
		res.runs, res.accepted, res.failed, res.checks, len(res.violations), time.Since(start).Round(time.Millisecond))
	var by []string
	for _, name := range slices.Sorted(maps.Keys(res.failedBy)) {
		by = append(by, fmt.Sprintf("%s %d", name, res.failedBy[name]))
	}
	t.Logf("failing runs by pipeline: %s", strings.Join(by, ", "))
}

// stripSymbols returns a module pass that removes global_symbol from every
// function, breaking GlobalSymbols (and nothing structural), under the
// given contract.
func stripSymbols(info passes.Info) *passes.Pass {
	return passes.Define(info, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
		out := mod.Clone()
		for name, f := range mod.Functions() {
			switch fn := f.(type) {
			case *ir.Function:
				c := *fn
				c.Attrs = fn.Attrs.Without(ir.AttrGlobalSymbol)
				out.Set(name, &c)
			case *ir.PrimFunc:
				c := *fn
				c.Attrs = fn.Attrs.Without(ir.AttrGlobalSymbol)
				out.Set(name, &c)
			}
		}
		return out, nil
	}))
}

// TestAuditCatchesFalseContracts: the audit flags a pass whose contract
// keeps (or preserves) a property the pass breaks, and one that claims to
// establish a property it does not, naming pass, module, property and
// verdict; an honest contract and a pass whose horizon does not reach the
// property it breaks (it claims nothing about it, Info.Apply) are not
// flagged.
func TestAuditCatchesFalseContracts(t *testing.T) {
	path := "../testdata/models/mlp_legalized.tvms"
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	mod, errs := syntax.Parse(path, src)
	require.False(t, errs.HasErrors(), "%v", errs)
	lowered, err := barrier.Lower(mustCanonicalize(t, mod))
	require.NoError(t, err)
	pc := &passes.PassContext{}
	withSymbols, err := pc.Run(context.Background(), lower.AttachGlobalSymbol, lowered)
	require.NoError(t, err)
	corpus := []corpusModule{{"mlp with symbols", withSymbols}}

	gs := phase.Of(phase.GlobalSymbols)
	needsSymbols := map[phase.Property]string{phase.GlobalSymbols: "a test requirement"}
	pipelines := []*passes.Pass{
		// Horizon build (it requires GlobalSymbols), which it keeps.
		stripSymbols(passes.Info{Name: "TStripKeeps", Doc: "keeps GlobalSymbols", Requires: needsSymbols}),
		stripSymbols(passes.Info{Name: "TStripEstablishes", Doc: "establishes GlobalSymbols", Establishes: gs}),
		stripSymbols(passes.Info{Name: "TStripPreserves", Doc: "preserves GlobalSymbols", Preserves: gs}),
		stripSymbols(passes.Info{Name: "TStripHonest", Doc: "invalidates GlobalSymbols", Requires: needsSymbols, Invalidates: gs}),
		// Horizon ingest: it never heard of GlobalSymbols.
		stripSymbols(passes.Info{Name: "TStripUnaware", Doc: "names nothing of phase build"}),
		// Last: it edits the (shared) corpus module.
		passes.Define(passes.Info{Name: "TMutates", Doc: "edits its input"}, passes.Module(func(_ *passes.Env, mod *ir.Module) (*ir.Module, error) {
			mod.Attrs["edited"] = true
			return mod.Clone(), nil
		})),
	}
	res := audit(corpus, pipelines)
	require.Equal(t, len(pipelines), res.accepted, "accepted")
	require.Equal(t, 1, res.failed, "failed")
	if assert.Len(t, res.mutations, 1, "mutations") {
		assert.Contains(t, res.mutations[0], "pass TMutates mutated its input module", "mutations")
	}
	var got []string
	for _, v := range res.violations {
		got = append(got, v.String())
	}
	verdicts := []struct{ pass, verdict string }{
		{"TStripKeeps", "invalidate it in the contract, or fix the pass"},
		{"TStripEstablishes", "the pass is wrong"},
		{"TStripPreserves", "invalidate it in the contract, or fix the pass"},
	}
	require.Len(t, got, len(verdicts), "violations:\n%s", strings.Join(got, "\n"))
	for i, w := range verdicts {
		prefix := "pass " + w.pass + " on mlp with symbols: claimed GlobalSymbols does not hold: "
		assert.True(t, strings.HasPrefix(got[i], prefix), "violation %d: %s\nwant prefix %q", i, got[i], prefix)
		assert.Contains(t, got[i], "WF038", "violation %d", i)
		assert.Contains(t, got[i], w.verdict, "violation %d", i)
	}
}

func mustCanonicalize(t *testing.T, mod *ir.Module) *ir.Module {
	t.Helper()
	out, err := barrier.Canonicalize(mod)
	require.NoError(t, err)
	return out
}

// TestContractAuditPairs runs every ordered pair of registered passes on
// the parsed corpus: in a pipeline the second pass starts from what the
// first one's contract claims, not from what the checker infers, so the
// pairs check that claims compose.
func TestContractAuditPairs(t *testing.T) {
	start := time.Now()
	files, _ := auditCorpus(t)
	res := auditPairs(files, barrier.Registry)
	for _, v := range res.violations {
		assert.Fail(t, v.String())
	}
	for _, m := range append(res.mutations, res.panics...) {
		assert.Fail(t, m)
	}
	t.Logf("contract audit of pass pairs: %d modules, %d pairs, %d runs, %d accepted, %d failing, %d property checks, %d violations, %v",
		len(files), len(barrier.Registry.Names())*len(barrier.Registry.Names()), res.runs, res.accepted, res.failed, res.checks, len(res.violations), time.Since(start).Round(time.Millisecond))
}

// auditPairs audits every ordered pair of registered passes (a, b) on
// every corpus module, as the pipeline "a,b" would run: the static check
// of the pair from the module's start state decides whether it runs, and
// the audit instrument checks the claims after each pass. It runs a once
// per module and b on a's output from the properties a's run leaves,
// instead of running a again for every b (the pairs grow with the square
// of the registry), and audits the modules concurrently.
func auditPairs(corpus []corpusModule, reg *passes.Registry) auditResult {
	names := reg.Names()
	build := func(text string) *passes.Pass {
		p, errs := reg.ParseAndBuild("pipeline", text)
		if errs != nil {
			panic(fmt.Sprintf("audit pipeline %q: %v", text, errs))
		}
		return p
	}
	single := make([]*passes.Pass, len(names))
	pairs := make([][]*passes.Pass, len(names))
	for i, a := range names {
		single[i] = build(a)
		pairs[i] = make([]*passes.Pass, len(names))
		for j, b := range names {
			pairs[i][j] = build(a + "," + b)
		}
	}
	results := make([]auditResult, len(corpus))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for k, cm := range corpus {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[k] = auditPairsOn(cm, single, pairs)
		}()
	}
	wg.Wait()
	var res auditResult
	for _, r := range results {
		res.runs += r.runs
		res.accepted += r.accepted
		res.failed += r.failed
		res.refusedClaims += r.refusedClaims
		res.checks += r.checks
		res.violations = append(res.violations, r.violations...)
		res.mutations = append(res.mutations, r.mutations...)
		res.panics = append(res.panics, r.panics...)
	}
	return res
}

// lastEvent keeps the last AfterPass event of a run: the outermost pass,
// with the module and properties the run leaves.
type lastEvent struct {
	passes.BaseInstrument
	ev passes.Event
}

func (*lastEvent) Name() string { return "last-event" }

func (l *lastEvent) AfterPass(ev *passes.Event) error {
	l.ev = *ev
	return nil
}

func auditPairsOn(cm corpusModule, single []*passes.Pass, pairs [][]*passes.Pass) auditResult {
	var res auditResult
	ph, props, err := passes.StartState(cm.mod)
	if err != nil {
		res.refusedClaims++
		return res
	}
	// run executes p with the audit instruments and reports whether it ran.
	run := func(p *passes.Pass, mod *ir.Module, props phase.Set, last *lastEvent) bool {
		in := &auditInstrument{module: cm.name}
		pc := &passes.PassContext{OptLevel: 3, Instruments: []passes.Instrument{in, &passes.ImmutableInput{}}}
		if last != nil {
			pc.Instruments = append(pc.Instruments, last)
		}
		_, err := pc.Execute(context.Background(), p, mod, props)
		res.checks += in.checked
		res.violations = append(res.violations, in.violations...)
		if err == nil {
			return true
		}
		var pe *passes.PassError
		if errors.As(err, &pe) && pe.Panic {
			res.panics = append(res.panics, fmt.Sprintf("%s on %s: %v", p, cm.name, err))
		}
		if strings.Contains(err.Error(), "mutated its input module") {
			res.mutations = append(res.mutations, fmt.Sprintf("%s on %s: %v", p, cm.name, err))
		}
		return false
	}
	for i, a := range single {
		res.runs += len(pairs[i])
		check := &passes.PassContext{OptLevel: 3}
		if passes.Check(a, check, ph, props).HasErrors() {
			continue // every pair starting with a is refused too
		}
		last := &lastEvent{}
		aRan := run(a, cm.mod, props, last)
		for j, pair := range pairs[i] {
			if passes.Check(pair, check, ph, props).HasErrors() {
				continue
			}
			res.accepted++
			if !aRan {
				res.failed++
				continue
			}
			if !run(single[j], last.ev.After, last.ev.PropsAfter, nil) {
				res.failed++
			}
		}
	}
	return res
}
