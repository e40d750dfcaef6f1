package passes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phasec/phasec/phase"
)

// Unchanged is the Leaves value of a pass that does not move the module to
// another phase (the zero value).
const Unchanged = phase.None

// Info declares a pass. It is data: tools list it, the static check reads
// it, PHASES.md is generated from it, and Define validates it.
type Info struct {
	// Name is an identifier-like unique name ("FoldConstant").
	Name string
	// Doc is a one-line description.
	Doc string
	// OptLevel is the minimum PassContext opt level at which the pass runs
	// unless it is required.
	OptLevel int
	// AlwaysRun marks passes that must never be skipped (barriers, lowering
	// steps): gating treats them as required, they cannot be disabled, and
	// bisect does not count them.
	AlwaysRun bool
	// Prerequisites are passes expected to have run before this one (a
	// missing one is a static error unless the context runs prerequisites).
	Prerequisites []*Pass
	// Options declares the pass's typed options, written Pass{name=value}
	// in textual pipelines and read by the implementation with
	// Env.Options.
	Options []Option

	// Accepts lists the phases the pass accepts; empty means any.
	Accepts []phase.Phase
	// Leaves is the phase the module is in after the pass, or Unchanged.
	Leaves phase.Phase
	// Requires are the properties that must hold before the pass, each
	// with the reason the pass needs it (one line, shown in PHASES.md as
	// the reason for the ordering it implies). A requirement without a
	// reason is rejected by Define.
	Requires map[phase.Property]string
	// Precedes are properties that must not hold yet when the pass runs,
	// each with the reason: the pass works on what the passes establishing
	// them remove (ConvertLayout rewrites high-level ops, which LegalizeOps
	// turns into call_tir, so it precedes Legalized). On a module where one
	// holds the pass would find nothing to do; the static check rejects
	// such a pipeline and names the step that established the property.
	Precedes map[phase.Property]string
	// Establishes are properties that hold after the pass.
	Establishes phase.Set
	// EstablishesAt are properties the pass establishes only at the given
	// opt level and above (a barrier running a gated group: the optimize
	// barrier legalizes at opt level 2). The static check applies them
	// under the context's opt level, so a pass that Precedes one is
	// rejected after such a step.
	EstablishesAt map[int]phase.Set
	// Invalidates are properties within the pass's horizon that it may
	// break. Naming a property here never extends the horizon.
	Invalidates phase.Set
	// Preserves are properties beyond the pass's horizon that it keeps
	// (rarely needed: a pass between two steps of a later phase, such as
	// ComputePrimValue between LowerRuntimeBuiltin and VMShapeLower). The
	// contract audit holds the pass to them like to any other claim.
	Preserves phase.Set
}

// Horizon is the latest phase the pass's contract names: the latest of the
// phases it accepts, the phase it leaves the module in, and the phases that
// introduce the properties it requires or establishes. A pass answers for
// the properties of phases up to its horizon and for nothing later: it has
// never heard of them, so it cannot claim to keep them (see Apply).
func (in *Info) Horizon() phase.Phase {
	h := in.Leaves
	for _, p := range in.Accepts {
		h = max(h, p)
	}
	for _, p := range in.RequiredProps().Union(in.Establishes).List() {
		h = max(h, p.Introduced())
	}
	return max(h, phase.Ingest)
}

// Keeps is the set of properties the pass keeps when they hold of its
// input: those of phases up to its horizon and those it declares
// preserved, minus those it invalidates.
func (in *Info) Keeps() phase.Set {
	return phase.Upto(in.Horizon()).Union(in.Preserves).Minus(in.Invalidates)
}

// RequiredProps is the set of properties the pass Requires.
func (in *Info) RequiredProps() phase.Set {
	var s phase.Set
	for p := range in.Requires {
		s = s.With(p)
	}
	return s
}

// PrecededProps is the set of properties the pass Precedes.
func (in *Info) PrecededProps() phase.Set {
	var s phase.Set
	for p := range in.Precedes {
		s = s.With(p)
	}
	return s
}

// Needs is everything the pass needs to hold of its input: the properties
// it Requires plus the invariants common to every phase it accepts.
func (in *Info) Needs() phase.Set {
	// Every pass assumes the structural rules (TVM's passes assume what
	// src/relax/analysis/well_formed.cc checks); no pass repairs them.
	needs := in.RequiredProps().With(phase.WellFormed)
	if len(in.Accepts) > 0 {
		common := in.Accepts[0].Invariants()
		for _, p := range in.Accepts[1:] {
			common = common.Intersect(p.Invariants())
		}
		needs = needs.Union(common)
	}
	return needs
}

// AcceptsPhase reports whether the pass accepts a module in phase p. A module
// without a recorded phase (phase.None) is judged by properties alone.
func (in *Info) AcceptsPhase(p phase.Phase) bool {
	return len(in.Accepts) == 0 || p == phase.None || slices.Contains(in.Accepts, p)
}

// Apply returns the phase and properties after the pass, given those
// before. This is the rule that keeps a contract from claiming too much
// (PHASES.md, "Adding a pass"):
//
//	after = (before ∩ Keeps) ∪ Establishes ∪ Leaves.Invariants()
//
// A property of a phase beyond the pass's horizon is dropped even when it
// held: it may have held vacuously (no ShapeExpr values, no functions
// without global_symbol) and the pass may add the first counterexample.
// The phase after is Leaves, or else the latest phase no later than the
// recorded one whose invariants all still hold (the pass demotes the
// module's claim to what its contract vouches for).
func (in *Info) Apply(p phase.Phase, props phase.Set) (phase.Phase, phase.Set) {
	props = props.Intersect(in.Keeps()).Union(in.Establishes)
	if in.Leaves != Unchanged {
		p = in.Leaves
		props = props.Union(p.Invariants())
	} else {
		p = phase.Supported(p, props)
	}
	return p, props
}

// Contract formats the phase contract on one line:
// "accepts optimize|lower; requires {..}; establishes {..}; invalidates {..};
// preserves {..}; leaves lower; horizon lower".
func (in *Info) Contract() string {
	var parts []string
	if len(in.Accepts) == 0 {
		parts = append(parts, "accepts any")
	} else {
		names := make([]string, len(in.Accepts))
		for i, p := range in.Accepts {
			names[i] = p.String()
		}
		parts = append(parts, "accepts "+strings.Join(names, "|"))
	}
	if req := in.RequiredProps(); !req.IsEmpty() {
		parts = append(parts, "requires "+req.String())
	}
	if pre := in.PrecededProps(); !pre.IsEmpty() {
		parts = append(parts, "precedes "+pre.String())
	}
	if !in.Establishes.IsEmpty() {
		parts = append(parts, "establishes "+in.Establishes.String())
	}
	if !in.Invalidates.IsEmpty() {
		parts = append(parts, "invalidates "+in.Invalidates.String())
	}
	if !in.Preserves.IsEmpty() {
		parts = append(parts, "preserves "+in.Preserves.String())
	}
	if in.Leaves != Unchanged {
		parts = append(parts, "leaves "+in.Leaves.String())
	}
	parts = append(parts, "horizon "+in.Horizon().String())
	return strings.Join(parts, "; ")
}

// Validate checks the declaration: an identifier-like name, a one-line Doc,
// a reason for every required property, well-formed options and claims
// that do not contradict each other.
func (in *Info) Validate() error {
	if !isIdent(in.Name) {
		return fmt.Errorf("pass name %q is not identifier-like", in.Name)
	}
	if strings.TrimSpace(in.Doc) == "" || strings.Contains(in.Doc, "\n") {
		return fmt.Errorf("pass %s: Doc must be one non-empty line", in.Name)
	}
	if in.OptLevel < 0 || in.OptLevel > 3 {
		return fmt.Errorf("pass %s: opt level %d outside 0..3", in.Name, in.OptLevel)
	}
	for _, p := range in.RequiredProps().List() {
		if why := in.Requires[p]; strings.TrimSpace(why) == "" || strings.Contains(why, "\n") {
			return fmt.Errorf("pass %s: requirement %v needs a one-line reason (why the pass needs it)", in.Name, p)
		}
	}
	for _, p := range in.PrecededProps().List() {
		if why := in.Precedes[p]; strings.TrimSpace(why) == "" || strings.Contains(why, "\n") {
			return fmt.Errorf("pass %s: precedence over %v needs a one-line reason (why the pass must run first)", in.Name, p)
		}
		if in.RequiredProps().Has(p) {
			return fmt.Errorf("pass %s: both requires and precedes %v", in.Name, p)
		}
	}
	for i, q := range in.Prerequisites {
		if q == nil {
			return fmt.Errorf("pass %s: prerequisite %d is nil", in.Name, i)
		}
	}
	seen := map[string]bool{}
	for _, o := range in.Options {
		if !isIdent(o.Name) || seen[o.Name] {
			return fmt.Errorf("pass %s: bad or duplicate option %q", in.Name, o.Name)
		}
		seen[o.Name] = true
		v, ok := o.Type.check(o.Default)
		if !ok {
			return fmt.Errorf("pass %s: default of option %s is not a %v", in.Name, o.Name, o.Type)
		}
		if o.Check != nil {
			if err := o.Check(v); err != nil {
				return fmt.Errorf("pass %s: default of option %s: %v", in.Name, o.Name, err)
			}
		}
		if strings.TrimSpace(o.Doc) == "" {
			return fmt.Errorf("pass %s: option %s has no doc", in.Name, o.Name)
		}
	}
	for _, p := range in.Accepts {
		if p == phase.None || p > phase.Build {
			return fmt.Errorf("pass %s: Accepts holds invalid phase %v", in.Name, p)
		}
	}
	if in.Leaves > phase.Build {
		return fmt.Errorf("pass %s: Leaves holds invalid phase %v", in.Name, in.Leaves)
	}
	if !in.Establishes.Intersect(in.Invalidates).IsEmpty() {
		return fmt.Errorf("pass %s: establishes and invalidates %v", in.Name, in.Establishes.Intersect(in.Invalidates))
	}
	if both := in.Preserves.Intersect(in.Invalidates); !both.IsEmpty() {
		return fmt.Errorf("pass %s: preserves and invalidates %v", in.Name, both)
	}
	if within := in.Preserves.Intersect(phase.Upto(in.Horizon())); !within.IsEmpty() {
		return fmt.Errorf("pass %s: Preserves lists %v, within its horizon (phase %v), which it keeps anyway", in.Name, within, in.Horizon())
	}
	return nil
}

func (in *Info) option(name string) *Option {
	for i := range in.Options {
		if in.Options[i].Name == name {
			return &in.Options[i]
		}
	}
	return nil
}

func (in *Info) optionNames() []string {
	names := make([]string, len(in.Options))
	for i, o := range in.Options {
		names[i] = o.Name
	}
	return names
}

// PrerequisiteNames returns the names of the pass's prerequisites.
func (in *Info) PrerequisiteNames() []string {
	names := make([]string, len(in.Prerequisites))
	for i, q := range in.Prerequisites {
		names[i] = q.info.Name
	}
	return names
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
