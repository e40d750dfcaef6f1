package passes

import (
	"fmt"
	"slices"
	"time"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// DefaultOptLevel is the opt level of NewPassContext, as in TVM.
const DefaultOptLevel = 2

// PassContext configures a run: gating, config, instruments and tracing.
// Build one with NewPassContext (the zero value has opt level 0).
type PassContext struct {
	// OptLevel gates optional passes: a pass runs when OptLevel >= its
	// Info.OptLevel, unless disabled or required.
	OptLevel int
	// Required passes always run (unless also disabled); Disabled passes
	// never run. Names unknown to the registry are rejected.
	Required []string
	Disabled []string
	// Registry resolves the names in Required and Disabled, and holds the
	// passes the static check's hints may name. When nil, Run uses the
	// registry the pipeline was built from (Registry.Build), or else the
	// passes the pipeline contains.
	Registry *Registry
	// Config holds values of registered config keys (RegisterConfig).
	Config map[string]any
	// Instruments observe and steer the run, in this order.
	Instruments []Instrument
	// Trace, when set, is called before and after every pass execution.
	Trace TraceFunc
	// RunPrerequisites runs a pass's Prerequisites that have not yet run in this
	// Run just before it (TVM's behaviour). When false, a missing
	// prerequisite is a static error.
	RunPrerequisites bool
	// Parallelism caps the goroutines of parallel function passes; 0 means
	// GOMAXPROCS, 1 forces sequential runs.
	Parallelism int
	// Clock reads the time for durations; nil means time.Now. Tests inject
	// a deterministic clock.
	Clock func() time.Time
	// Warn receives warnings: of the static check (configurations at other
	// opt levels that would break the pipeline) and of the run (a
	// fixpoint(...) that reached its iteration cap); nil drops them.
	Warn func(*diag.Diagnostic)
}

// FixpointMaxIterations is the config key capping the rounds of a
// fixpoint(...) (Fixpoint). Ten rounds is far more than the optimization
// sequences need (they converge in two or three: one that changes, one
// that confirms), and few enough that a pair of passes undoing each other
// is reported quickly.
const FixpointMaxIterations = "passes.fixpoint.max_iterations"

func init() {
	RegisterConfig(ConfigKey{Name: FixpointMaxIterations, Type: Int, Default: 10,
		Doc: "the most rounds a fixpoint(...) runs; reaching it without converging is warning PIPE004"})
}

// TraceFunc observes a module before (before=true) or after a pass.
type TraceFunc func(mod *ir.Module, info *Info, before bool)

// NewPassContext returns a context with the default opt level.
func NewPassContext() *PassContext { return &PassContext{OptLevel: DefaultOptLevel} }

// Validate rejects pass names in Required and Disabled that pc.Registry
// does not know (suggesting the closest name; without a Registry the names
// are not checked), disabling an AlwaysRun pass, unknown or ill-typed
// config keys and an opt level outside 0..3.
func (pc *PassContext) Validate() diag.List {
	return pc.validate(pc.Registry)
}

// registryFor is the registry a run of pipeline p resolves names against.
func (pc *PassContext) registryFor(p *Pass) *Registry {
	switch {
	case pc.Registry != nil:
		return pc.Registry
	case p.reg != nil:
		return p.reg
	}
	return registryOf(p)
}

func (pc *PassContext) validate(reg *Registry) diag.List {
	var errs diag.List
	at := diag.Span{File: "<pass context>"}
	if pc.OptLevel < 0 || pc.OptLevel > 3 {
		errs.Add(at, codeOptLevel, "opt level %d outside 0..3", pc.OptLevel)
	}
	for _, list := range []struct {
		what  string
		names []string
	}{{"required", pc.Required}, {"disabled", pc.Disabled}} {
		for _, n := range list.names {
			if reg == nil {
				break
			}
			r, ok := reg.Lookup(n)
			if !ok {
				errs.Add(at, codeCtxUnknownPass, "%s: %v", list.what, unknownName("pass", n, reg.Names()))
				continue
			}
			if list.what == "disabled" && r.info.AlwaysRun {
				errs.Add(at, codeAlwaysRuns, "pass %s cannot be disabled: it always runs", n)
			}
		}
	}
	for _, key := range sortedKeys(pc.Config) {
		k, ok := lookupConfig(key)
		if !ok {
			errs.Add(at, codeUnknownConfig, "%v", unknownName("config key", key, configNames()))
			continue
		}
		v, ok := k.Type.check(pc.Config[key])
		if !ok {
			errs.Add(at, codeConfigValueType, "config %s wants a %v, got %v", key, k.Type, pc.Config[key])
			continue
		}
		if key == FixpointMaxIterations && v.(int64) < 1 {
			errs.Add(at, codeConfigValueType, "config %s wants at least 1 round, got %v", key, v)
			continue
		}
		pc.Config[key] = v
	}
	return errs
}

// ReasonKind says why a pass ran or was skipped.
type ReasonKind uint8

const (
	// Ran:
	InPipeline   ReasonKind = iota // listed in the pipeline, enabled by opt level
	Required                       // in PassContext.Required
	AlwaysRuns                     // Info.AlwaysRun
	Prerequisite                   // a prerequisite of another pass (Reason.Of)
	PartOf                         // run by another pass through Env.Run (Reason.Of names it)
	// Skipped:
	Disabled      // in PassContext.Disabled
	BelowOptLevel // Info.OptLevel > PassContext.OptLevel
	ByInstrument  // an instrument's ShouldRun said no (Reason.Of names it)
)

// Reason is why a pass ran or was skipped.
type Reason struct {
	Kind ReasonKind
	// Of is the pass a prerequisite is for, or the instrument that vetoed.
	Of string
	// Level is the pass's opt level, for BelowOptLevel.
	Level, CtxLevel int
}

// Ran reports whether the reason is one for running.
func (r Reason) Ran() bool { return r.Kind <= PartOf }

func (r Reason) String() string {
	switch r.Kind {
	case InPipeline:
		return "in pipeline"
	case Required:
		return "required"
	case AlwaysRuns:
		return "always runs"
	case Prerequisite:
		return "prerequisite of " + r.Of
	case PartOf:
		return "part of " + r.Of
	case Disabled:
		return "disabled"
	case BelowOptLevel:
		return fmt.Sprintf("opt level %d > %d", r.Level, r.CtxLevel)
	case ByInstrument:
		return "skipped by " + r.Of
	}
	return "?"
}

// Gate decides whether a pass listed in a pipeline runs: disabled beats
// required (and AlwaysRun), which beats the opt level.
func (pc *PassContext) Gate(info *Info) Reason {
	switch {
	case slices.Contains(pc.Disabled, info.Name):
		return Reason{Kind: Disabled}
	case slices.Contains(pc.Required, info.Name):
		return Reason{Kind: Required}
	case info.AlwaysRun:
		return Reason{Kind: AlwaysRuns}
	case pc.OptLevel >= info.OptLevel:
		return Reason{Kind: InPipeline}
	}
	return Reason{Kind: BelowOptLevel, Level: info.OptLevel, CtxLevel: pc.OptLevel}
}

func (pc *PassContext) now() time.Time {
	if pc.Clock != nil {
		return pc.Clock()
	}
	return time.Now()
}
