package barrier

import (
	"fmt"
	"strings"

	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/wellformed"
)

// phaseReasons records why each phase holds what it holds (refining the
// proposal of issue 5 and TVM's phase-ordering tracking issue #15009).
var phaseReasons = []string{
	"**Ingest** is what every later pass may assume of any module: normal form with struct info everywhere (every TVM pass re-emits through the normalizer and relies on it), no local functions (item P2 of TVM's phase-ordering tracking issue, https://github.com/apache/tvm/issues/15009: lift at the end of parsing, so passes never meet closures; VMShapeLower and VM codegen abort on them) and PrimFuncs reached only through `call_tir`-family calls or as direct DPS callees (a PrimFunc used as a value has no meaning no pass can lower); and no Relax function is a fusion or offload group awaiting its kernel (NoPrimitiveFunctions, NoOffloadGroups): such functions exist only inside the declared groups of passes that make and consume them (see [Groups](#groups)), so no other pass ever meets one.",
	"**Optimize** has exactly Ingest's invariants: optimization passes are optional (opt level above 0) and must keep them. Dataflow blocks stay allowed because FuseOps, FoldConstant, RewriteDataflowReshape and CSE need them (each works inside dataflow blocks: `src/relax/transform/fuse_ops.cc`, `fold_constant.cc`, `rewrite_dataflow_reshape.cc`, `eliminate_common_subexpr.cc`).",
	"**Lower** adds what the lowering sequence establishes: no high-level tensor ops (Legalized; LegalizeOps before CallTIRRewrite), no dataflow blocks, purity checking removed (item P3.4 of apache/tvm#15009: `relax.force_pure`, no pure overrides), no `call_tir`-family calls and explicit output allocation. The dataflow and purity invariants are separate properties so that RemovePurityChecking can require NoDataflow: the ordering is checked, not remembered.",
	"**Build** is the contract TVM's VM codegen enforces (`src/relax/backend/vm/codegen_vm.cc`): only VM-legal ops, constant shapes and prim values in values, and `global_symbol` on every function. Memory planning and kill insertion are not invariants (a module without them is correct, only slower), so they are steps of the build barrier, not properties.",
	"**The offload sub-phase** (FuseOpsByPattern → MergeCompositeFunctions → RunCodegen, TVM's BYOC group with soft dependencies) answers the question of the nested functions TVM's offload passes make: they keep TVM's forms, module-level `Composite`/`Primitive` functions (FuseOpsByPattern) and `Codegen` functions holding nested composite functions (annotate_codegen, MergeCompositeFunctions), in a declared sub-phase outside the phases rather than module-level-only variants. " +
		"FuseOpsByPattern invalidates NoPrimitiveFunctions, NoOffloadGroups and NoNestedFunctions (its worst case, annotate_codegen: a contract cannot depend on options), MergeCompositeFunctions accepts any phase and keeps them broken, and RunCodegen establishes all three again, compiling the Codegen functions with their registered external codegen and replacing their calls by `call_dps_packed`; a module inside the sub-phase is in no phase, so no barrier takes it and the static check names RunCodegen as the missing step. " +
		"Lifting the nested composites to module level instead was rejected: the external codegens receive TVM's form (a Codegen function whose body calls its composites), which TVM's backends and tests are written against, and the sub-phase never reaches a pass that cannot take nested functions.",
	"**How a module enters optimize**: the `optimize` barrier records it, as every phase is recorded: it runs the optimization sequence and then checks the optimize invariants before it records the phase, so a recorded phase is always a checked claim. " +
		"The alternative, the first optimization pass recording it, was rejected: the phase would depend on which pass happens to run first and on gating (at opt level 0, or with FoldConstant disabled, another pass or none would record it), and every optimization pass would need a phase-changing contract, " +
		"whereas with the barrier they keep `Leaves` unchanged and accept `ingest|optimize`, so any of them runs alone, before or after the barrier, in any order the contracts allow (pass shuffling relies on that). " +
		"The barrier is TVM's named pipeline too (`relax.get_pipeline`): one place holds the sequence, runs it to a fixpoint and is gated as a whole (opt level 1: `-O0` skips it, and the lower barrier accepts ingest), each of its passes gated by its own opt level; pipelines read as the phases, `canonicalize,optimize,lower,build`. " +
		"Like the other barriers it is idempotent: a module already in phase optimize passes through.",
	"A recorded phase is a claim: the checker verifies it when a pipeline starts (one walk, `wellformed.Infer`; a false claim is refused with `CHK004` and the violations, never passed on), at every barrier and in `phasec check`. A module without a phase attribute is judged by the properties its content has, so hand-written or TVM-printed modules in any lowered form are accepted by the passes whose requirements they meet.",
}

// ruleReasons explains the rule by which a pass's output state is computed
// (passes.Info.Apply), for the "Adding a pass" guide.
var ruleReasons = []string{
	"The previous rule, `after = before − Invalidates ∪ Establishes`, made every pass answer for every property, including those of phases it has never heard of. " +
		"Properties of later phases often hold vacuously early on (ShapesLowered on a module without shape values, GlobalSymbols when every function happens to carry one), " +
		"and a pass adds the first counterexample without knowing: CallTIRRewrite emits `R.shape([batch, ...])`, LambdaLift adds functions without `global_symbol`. " +
		"Under `--verify-each`, 72 of 1060 successful pass runs over the corpus failed that way (issue 15).",
	"LLVM's MachineFunctionProperties (`llvm/include/llvm/CodeGen/MachineFunction.h`, and getRequiredProperties, getSetProperties, getClearedProperties in `llvm/include/llvm/CodeGen/MachineFunctionPass.h`) keep every property a pass does not clear: " +
		"the rule above. It works there because the properties are few, fixed, and cleared by name by the few passes that break them; here every new phase property would oblige every existing pass to be re-audited.",
	"Keeping only what a pass declares (like LLVM IR's PreservedAnalyses) is correct but makes every contract list a dozen properties, and adding a property means editing every pass. " +
		"The horizon keeps contracts as short as before (only a pass used across phases needs `Preserves`: Normalize, which may re-normalize a lowered module, and ComputePrimValue, which sits between LowerRuntimeBuiltin and VMShapeLower) and is correct by construction for the properties a pass has not heard of: " +
		"a property added to phase build later can never make an ingest or lower pass's contract false.",
	"Within its horizon a pass answers for what it keeps, and the contract audit checks that: what a pass knows it can be held to. " +
		"The cost is that a pass run on a module beyond its horizon demotes the module (a lower module after an ingest-horizon pass records optimize); rerun the barrier.",
}

// PhasesDoc renders PHASES.md from the phase definitions, the wellformed
// rule catalogue, the barriers and the pass registry.
func PhasesDoc() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Phases\n\n")
	w("<!-- Generated by `go run ./cmd/phasec doc phases`; do not edit. -->\n\n")
	w("A module carries a phase in its attributes (`I.module_attrs({\"phase\": \"lower\"})`). ")
	w("Each phase is a bundle of properties; each property is decided by rules of the well-formedness checker, ")
	w("whose codes appear in diagnostics. Barriers move a module to the next phase and record it only when every invariant holds.\n\n")

	w("## Phases and their invariants\n\n")
	var prev phase.Set
	for _, p := range phase.Phases() {
		inv := p.Invariants()
		w("### %s\n\n", p)
		if added := inv.Minus(prev); added != inv {
			if added.IsEmpty() {
				w("The invariants of the previous phase, nothing more.\n\n")
			} else {
				w("The invariants of the previous phase, plus:\n\n")
			}
		}
		for _, prop := range inv.Minus(prev).List() {
			w("- **%s**\n", prop)
			for _, r := range wellformed.RulesFor(prop) {
				w("  - `%s` %s\n", r.Code, r.Title)
			}
		}
		w("\n")
		prev = inv
	}
	w("Structural rules (property WellFormed) hold in every phase: ")
	var codes []string
	for _, r := range wellformed.RulesFor(phase.WellFormed) {
		codes = append(codes, "`"+string(r.Code)+"`")
	}
	w("%s (see `wellformed.Rules`).\n\n", strings.Join(codes, ", "))

	w("## Why the phases hold what they hold\n\n")
	for _, r := range phaseReasons {
		w("- %s\n", r)
	}
	w("\n")

	w("## Barriers\n\n")
	w("A barrier is a Go function (`barrier.Canonicalize`, `barrier.Optimize`, `barrier.Lower`, `barrier.Build`) and a pipeline step ")
	w("(`phasec opt --passes canonicalize,optimize,lower,build`). It runs its passes in order, then checks the target phase; ")
	w("on failure it names the last pass that ran and, for each missing property, the pass that would establish it. ")
	w("The lowering barriers always run, and run every step; the optimize barrier is gated by the opt level as a whole and runs its steps ")
	w("as `fixpoint(...)`, in rounds until a round changes nothing (at most `%s` rounds), each step gated by its own opt level.\n\n", passes.FixpointMaxIterations)
	for _, br := range Barriers() {
		from := "any well-formed module"
		if len(br.From) > 0 {
			var names []string
			for _, p := range br.From {
				names = append(names, p.String())
			}
			from = strings.Join(names, ", ")
		}
		w("### `%s`: %s → %s\n\n", br.Name, from, br.To)
		if br.OptLevel > 0 {
			w("Opt level %d: skipped below it.", br.OptLevel)
			if br.Fixpoint {
				w(" Its steps run to a fixpoint, each gated by its opt level.")
			}
			w("\n\n")
		}
		if len(br.Steps) == 0 {
			w("No steps yet: the barrier checks the invariants and records the phase.\n")
		}
		for i, s := range br.Steps {
			w("%d. `%s`: %s\n", i+1, s.Name(), s.Info().Doc)
		}
		if g := br.Then; g != nil {
			w("\nThen, at opt level %d and above, the `%s` group as one step (see [Groups](#groups)):\n\n", g.OptLevel, g.Name)
			for i, s := range g.Steps {
				w("%d. `%s`: %s\n", i+1, s.Name(), s.Info().Doc)
			}
		}
		w("\n")
	}

	w("## Groups\n\n")
	w("A group is a declared unit of passes: its members only make sense together, and between them the module is in a sub-phase ")
	w("that records no phase (an invariant of every phase does not hold there), which no barrier accepts. ")
	w("The checker names the missing member when a module inside a group reaches a pass that cannot take it.\n\n")
	for _, g := range Groups() {
		kind := "soft dependencies (each member may also run alone)"
		if g.Hard {
			kind = "hard dependencies (each member's output is only consumable by the next)"
		}
		w("### `%s`: %s\n\n", g.Name, strings.Join(g.Members, " → "))
		w("%s; %s.", upperFirst(g.Doc), kind)
		if len(g.Steps) > 0 {
			var names []string
			for _, s := range g.Steps {
				names = append(names, "`"+s.Name()+"`")
			}
			w(" The optimize barrier runs it at opt level %d and above as %s.", g.OptLevel, strings.Join(names, ", "))
		} else {
			w(" No barrier runs it.")
		}
		w("\n\n")
		for _, r := range g.Why {
			w("- %s\n", r)
		}
		w("\n")
	}

	optimizePhaseSection(w)

	w("## Passes\n\n")
	w("Every pass also needs WellFormed. *Horizon* is the latest phase the contract names; the pass keeps the properties of phases up to it ")
	w("(plus those it preserves, minus those it invalidates) and drops the rest (see [Adding a pass](#adding-a-pass)).\n\n")
	w("| pass | opt level | accepts | needs | establishes | invalidates | horizon | leaves |\n")
	w("|---|---|---|---|---|---|---|---|\n")
	for _, p := range Registry.Passes() {
		in := p.Info()
		horizon := in.Horizon().String()
		if keeps := phase.Upto(in.Horizon()).Union(in.Preserves); keeps == phase.Upto(phase.Build) && in.Horizon() != phase.Build {
			horizon += " (preserves every later property)"
		} else if !in.Preserves.IsEmpty() {
			horizon += " + " + set(in.Preserves)
		}
		needs := set(in.Needs().Minus(phase.Of(phase.WellFormed)))
		if pre := in.PrecededProps(); !pre.IsEmpty() {
			needs += "; not yet " + set(pre)
		}
		w("| `%s` | %d | %s | %s | %s | %s | %s | %s |\n", in.Name, in.OptLevel, accepts(in.Accepts), needs,
			set(in.Establishes), set(in.Invalidates), horizon, leaves(in.Leaves))
	}
	w("\n")

	w("## Ordering constraints\n\n")
	w("Derived from the contracts (the static pipeline check enforces them before any IR is touched):\n\n")
	for _, c := range Constraints() {
		if c.Derived {
			w("- `%s` before `%s`: %s requires %s, which %s establishes; %s.\n", c.Before.Name(), c.After.Name(), c.After.Name(), c.Property, c.Before.Name(), c.Why)
		}
	}
	w("\nPasses that must run before a property holds (`Precedes`; the check rejects them later, CHK005):\n\n")
	for _, p := range Registry.Passes() {
		in := p.Info()
		for _, prop := range in.PrecededProps().List() {
			w("- `%s` before %s: %s.\n", in.Name, prop, in.Precedes[prop])
		}
	}
	w("\nNot expressible as properties (TVM's default pipeline, `python/tvm/relax/pipeline.py`, relies on them and nothing checks them), and how phasec enforces them:\n\n")
	for _, c := range Constraints() {
		if !c.Derived {
			w("- `%s` before `%s`: %s. Enforced: %s.\n", c.Before.Name(), c.After.Name(), c.Why, c.Enforced)
		}
	}
	w("\n")

	w("## Adding a pass\n\n")
	w("### How a pass's output state is computed\n\n")
	w("A contract says what a pass needs (`Requires`, WellFormed, and the invariants common to the phases it `Accepts`), ")
	w("what it `Establishes` and what it `Invalidates`. What the pipeline believes after the pass (what `--verify-each` checks and the next pass relies on) is\n\n")
	w("    after  = (before ∩ keeps) ∪ Establishes ∪ invariants(Leaves)\n")
	w("    keeps  = properties of the phases up to the pass's horizon ∪ Preserves − Invalidates\n")
	w("    horizon = the latest of: the phases in Accepts, Leaves, and the phases that introduce the properties in Requires and Establishes\n\n")
	w("and a pass that leaves the phase unchanged records the latest phase, no later than its input's, whose invariants `after` still contains ")
	w("(`passes.Info.Apply`; `phase.Supported`).\n\n")
	w("Why this rule:\n\n")
	for _, r := range ruleReasons {
		w("- %s\n", r)
	}
	w("\nWhat it asks of a pass author: list in `Invalidates` every property within your horizon that your pass may break ")
	w("(naming a property there never extends the horizon); list in `Preserves` a property beyond your horizon only when your pass ")
	w("must keep it because it runs between two steps of a later phase (a pass between LowerRuntimeBuiltin and VMShapeLower keeps ")
	w("BuiltinsLowered); never list properties you have not checked. The contract audit holds every claim to account. ")
	w("A pass that works on what a later step removes declares `Precedes` (each property that must not hold yet, with the reason: ")
	w("ConvertLayout rewrites high-level ops, so it precedes Legalized); the static check then rejects it after that step (CHK005) ")
	w("and names the step.\n\n")
	w("### Steps\n\n")
	w("1. Define the pass as a package-level value: `var MyPass = passes.Define(passes.Info{...}, passes.Module(run))` ")
	w("(or `passes.Functions(fn)`, `passes.PrimFuncs(fn)`, `passes.DataflowBlocks(fn)`, with `.InParallel()` when the functions may be transformed concurrently). ")
	w("The `passes.Info` is the contract: `Name`, a one-line `Doc`, `OptLevel` (0 for lowering steps), ")
	w("`Accepts` (phases, empty for any), `Requires` (each required property with the reason the pass needs it: ")
	w("`Requires: map[phase.Property]string{phase.Normalized: \"it rewrites bindings and assumes A-normal form\"}`), ")
	w("`Establishes`, `Invalidates`, `Preserves` (rare), `Leaves`, `Prerequisites` (pass values that must run first) and `Options` ")
	w("(typed, written `MyPass{name=value}` in pipelines and read with `env.Options()`). ")
	w("`Define` rejects a requirement without a reason; the reasons are the ordering reasons listed above. ")
	w("Give the function that does the work another name than the pass (`lower.LegalizeModule` for `lower.LegalizeOps`).\n")
	w("2. List the value where it runs: in a barrier's steps (`barrier/steps.go`, Go values, so a missing pass does not compile; ")
	w("an optimization in `optimizeSteps`, `barrier/optimize.go`, which the optimize barrier runs to a fixpoint) ")
	w("and, for a pass no barrier runs, in `barrier.Registry`, which resolves the names of textual pipelines (`--passes`) ")
	w("and lists the passes (`phasec passes`, this file).\n")
	w("3. Write golden tests with `passes/passtest`: inputs in `testdata/passes/<Pass>/*.tvms`, expected outputs `*.out.tvms` ")
	w("(`go test -update` writes them), refused or failing inputs marked with `# want \"regexp\"` comments; ")
	w("`passtest.Run(t, barrier.Registry, dir, \"MyPass\")`.\n")
	w("4. Run the contract audit, `go test ./barrier -run TestContractAudit`: it runs every pass of `barrier.Registry` on every corpus module it accepts ")
	w("(all of `testdata/`, your new inputs included, and `ir/irgen` modules) and checks every property the contract claims for the output; ")
	w("a failure names the pass, the module, the property, the first violation, and whether the contract should invalidate the property or the pass is wrong.\n")
	w("5. Regenerate this file: `go run ./cmd/phasec doc phases`; update `testdata/passes/barriers/corpus.golden` with `go test ./barrier -update` when the corpus gets further.\n")
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func set(s phase.Set) string {
	if s.IsEmpty() {
		return "—"
	}
	return strings.Trim(s.String(), "{}")
}

func accepts(ps []phase.Phase) string {
	if len(ps) == 0 {
		return "any"
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}

func leaves(p phase.Phase) string {
	if p == passes.Unchanged {
		return "—"
	}
	return p.String()
}

// parameterTransformations and kernelTransformations are the model
// transformations whose contracts do not place them (they take any
// module), named for the Optimize-phase section of PHASES.md.
var (
	parameterTransformations = map[string]bool{"LiftTransformParams": true, "LazyTransformParams": true, "LazyGetInput": true,
		"LazySetOutput": true, "UpdateParamStructInfo": true, "SpecializePrimFuncBasedOnCallSite": true}
	kernelTransformations = map[string]bool{"AlterOpImpl": true, "SplitCallTIRByPattern": true}
)

// optimizePhaseSection writes the Optimize phase's passes as four
// families, derived from the registry, in the order a pipeline runs them,
// with the reasons for that order.
func optimizePhaseSection(w func(format string, args ...any)) {
	inGroup := map[string]bool{}
	for _, g := range Groups() {
		for _, m := range g.Members {
			inGroup[m] = true
		}
	}
	inBarrier := map[string]bool{}
	for _, b := range Barriers() {
		inBarrier[b.Name] = true
		for _, st := range b.Steps {
			inBarrier[st.Name()] = true
		}
	}
	var model, anyForm, afterLegal, general []string
	for _, p := range Registry.Passes() {
		in := p.Info()
		switch {
		case inGroup[p.Name()] || in.AlwaysRun || in.Leaves != passes.Unchanged:
		case !in.PrecededProps().IsEmpty():
			model = append(model, "`"+p.Name()+"`")
		case parameterTransformations[p.Name()]:
			anyForm = append(anyForm, "`"+p.Name()+"`")
		case in.RequiredProps().Has(phase.NoPrimitiveFunctions) && kernelTransformations[p.Name()]:
			afterLegal = append(afterLegal, "`"+p.Name()+"`")
		case in.Horizon() <= phase.Optimize && (in.AcceptsPhase(phase.Optimize) || in.AcceptsPhase(phase.Ingest)) && !inBarrier[p.Name()]:
			general = append(general, "`"+p.Name()+"`")
		}
	}
	var fixpoint []string
	for _, st := range optimizeSteps {
		fixpoint = append(fixpoint, "`"+st.Name()+"`")
	}
	w("## The Optimize phase's passes\n\n")
	w("The Optimize phase's passes fall into four families, which a pipeline runs in this order (`canonicalize`, model transformations, offload, `optimize`, `lower`, `build`):\n\n")
	w("1. **Model transformations** (%s): they rewrite high-level ops (layouts, dtypes, weights, matmul and convolution forms, gradients), ", strings.Join(model, ", "))
	w("so each declares `Precedes` Legalized (see the pass table's *not yet* column) and runs before `optimize`: at opt level 2 and above the optimize barrier legalizes and fuses, ")
	w("and the static check rejects a model transformation after it (CHK005) naming the step that legalized. Among themselves they commute as far as the contracts know; ")
	w("the useful order is the one TVM's users follow: parameter lifting and layout conversion first, then folding (FoldBatchnormToConv2D needs the conv and batch norm in one layout), then mixed precision, then Gradient on the final forward function. ")
	w("The transformations of parameters and signatures (%s) take high-level and legalized modules alike and run anywhere before `lower`; ", strings.Join(anyForm, ", "))
	w("those of kernels (%s) need the `call_tir` PrimFuncs that LegalizeOps makes, so they run after `optimize` (or LegalizeOps) and before `lower`.\n", strings.Join(afterLegal, ", "))
	w("2. **Offload** (the `offload` group, below): FuseOpsByPattern's patterns match high-level ops, so it runs before legalization too; RunCodegen closes the group, and the kernels it leaves are external, untouched by fusion.\n")
	w("3. **General optimizations**: the optimize barrier runs %s to a fixpoint; %s run on demand. They keep every Ingest invariant and may run anywhere in Ingest and Optimize.\n", strings.Join(fixpoint, ", "), strings.Join(general, ", "))
	w("4. **Fusion** (the `fusion` group, below): the optimize barrier runs it last at opt level 2 and above, after LegalizeOps, because FuseOps groups `call_tir` kernels by the op patterns of their PrimFuncs. ")
	w("It leaves a legalized module, so after it only the kernel transformations and the lower barrier follow.\n\n")
}
