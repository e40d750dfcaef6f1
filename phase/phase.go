// Package phase defines the phases a module passes through (Ingest,
// Optimize, Lower, Build) and the properties (invariants) each phase bundles.
//
// This package is data only: it names properties and phases and stores a
// module's phase in its attributes. Package wellformed decides whether a
// module's content has a property; package passes uses properties in pass
// contracts; the barriers that move a module between phases sit above the
// passes they run.
//
// A recorded phase is a claim: the checker verifies it, it never replaces
// checking.
package phase

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/phasec/phasec/ir"
)

// Property is one invariant a module may satisfy.
type Property uint8

// The properties, in the order the pipeline establishes them.
const (
	// WellFormed: the structural rules hold (scoping, SSA, dataflow and
	// purity rules, struct info consistency, global references).
	WellFormed Property = iota
	// Normalized: A-normal form, SeqExpr scopes, struct info everywhere.
	Normalized
	// NoNestedFunctions: no local functions or closures inside bodies.
	NoNestedFunctions
	// PrimFuncsViaCallTIR: PrimFuncs are reached only through call_tir-family calls.
	PrimFuncsViaCallTIR
	// Legalized: no high-level tensor ops remain (LegalizeOps ran).
	Legalized
	// NoDataflow: no dataflow blocks or dataflow vars.
	NoDataflow
	// PurityRelaxed: purity checking removed (force_pure set, no
	// call_pure_packed or invoke_pure_closure).
	PurityRelaxed
	// NoCallTIR: no call_tir / call_tir_inplace / call_dps_packed; outputs
	// are allocated explicitly and kernels called in DPS.
	NoCallTIR
	// ExplicitMemory: every tensor a kernel writes is allocated explicitly.
	ExplicitMemory
	// BuiltinsLowered: only VM-codegen-legal ops remain (relax.vm.*,
	// call_builtin_with_ctx, null_value, direct calls).
	BuiltinsLowered
	// ShapesLowered: shape computation lowered to VM builtins; shapes and
	// prim values in values are constant.
	ShapesLowered
	// GlobalSymbols: every public function has global_symbol.
	GlobalSymbols
	// NoPrimitiveFunctions: no Relax function is a fusion group awaiting
	// its kernel (a nonzero Primitive attribute: FuseOps' groups and
	// FuseOpsByPattern's pattern groups). FuseOps and FuseOpsByPattern
	// break it; FuseTIR and RunCodegen restore it.
	NoPrimitiveFunctions
	// NoOffloadGroups: no Relax function is an offload group awaiting its
	// external kernel (a Codegen attribute, or a Composite function outside
	// one). FuseOpsByPattern and MergeCompositeFunctions break it;
	// RunCodegen restores it.
	NoOffloadGroups
	numProperties
)

var propertyNames = [...]string{
	WellFormed:           "WellFormed",
	Normalized:           "Normalized",
	NoNestedFunctions:    "NoNestedFunctions",
	PrimFuncsViaCallTIR:  "PrimFuncsViaCallTIR",
	Legalized:            "Legalized",
	NoDataflow:           "NoDataflow",
	PurityRelaxed:        "PurityRelaxed",
	NoCallTIR:            "NoCallTIR",
	ExplicitMemory:       "ExplicitMemory",
	BuiltinsLowered:      "BuiltinsLowered",
	ShapesLowered:        "ShapesLowered",
	GlobalSymbols:        "GlobalSymbols",
	NoPrimitiveFunctions: "NoPrimitiveFunctions",
	NoOffloadGroups:      "NoOffloadGroups",
}

func (p Property) String() string {
	if p < numProperties {
		return propertyNames[p]
	}
	return fmt.Sprintf("Property(%d)", p)
}

// Properties returns every property in order.
func Properties() []Property {
	ps := make([]Property, numProperties)
	for i := range ps {
		ps[i] = Property(i)
	}
	return ps
}

// ParseProperty returns the property with the given name.
func ParseProperty(name string) (Property, bool) {
	for i, n := range propertyNames {
		if n == name {
			return Property(i), true
		}
	}
	return 0, false
}

// Set is a set of properties.
type Set uint64

// Of returns the set holding ps.
func Of(ps ...Property) Set {
	var s Set
	for _, p := range ps {
		s |= 1 << p
	}
	return s
}

func (s Set) Has(p Property) bool { return s&(1<<p) != 0 }
func (s Set) Contains(t Set) bool { return s&t == t }
func (s Set) Union(t Set) Set     { return s | t }
func (s Set) Minus(t Set) Set     { return s &^ t }
func (s Set) Intersect(t Set) Set { return s & t }
func (s Set) With(p Property) Set { return s | 1<<p }
func (s Set) Len() int            { return bits.OnesCount64(uint64(s)) }
func (s Set) IsEmpty() bool       { return s == 0 }

// List returns the properties in s in order.
func (s Set) List() []Property {
	var ps []Property
	for p := range numProperties {
		if s.Has(p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// String lists the properties: "{Normalized, NoDataflow}".
func (s Set) String() string {
	names := make([]string, 0, s.Len())
	for _, p := range s.List() {
		names = append(names, p.String())
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// Phase is a stage of compilation. Phases are ordered; None means the module
// carries no phase attribute.
type Phase uint8

const (
	None Phase = iota
	Ingest
	Optimize
	Lower
	Build
)

var phaseNames = [...]string{None: "none", Ingest: "ingest", Optimize: "optimize", Lower: "lower", Build: "build"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", p)
}

// Phases returns the four real phases in order.
func Phases() []Phase { return []Phase{Ingest, Optimize, Lower, Build} }

// Parse returns the phase named s ("ingest", "optimize", "lower", "build").
func Parse(s string) (Phase, error) {
	for i, n := range phaseNames {
		if n == s && Phase(i) != None {
			return Phase(i), nil
		}
	}
	return None, fmt.Errorf("unknown phase %q (want ingest, optimize, lower or build)", s)
}

// Invariants is the property bundle a module in phase p satisfies.
//
// NoPrimitiveFunctions is an Ingest invariant, hence one of every phase: a
// module inside the fusion group (after FuseOps, before FuseTIR) or the
// offload group (after FuseOpsByPattern, before RunCodegen) is in a declared
// sub-phase that records no phase, and the barriers never see one.
func (p Phase) Invariants() Set {
	ingest := Of(WellFormed, Normalized, NoNestedFunctions, PrimFuncsViaCallTIR, NoPrimitiveFunctions, NoOffloadGroups)
	switch p {
	case Ingest, Optimize:
		return ingest
	case Lower:
		return ingest.Union(Of(Legalized, NoDataflow, PurityRelaxed, NoCallTIR, ExplicitMemory))
	case Build:
		return ingest.Union(Of(Legalized, NoDataflow, PurityRelaxed, NoCallTIR, ExplicitMemory,
			BuiltinsLowered, ShapesLowered, GlobalSymbols))
	}
	return 0
}

// Recorded returns the phase recorded in the module's attributes, or None.
// An unknown phase name is an error the caller reports with the module's span.
func Recorded(m *ir.Module) (Phase, error) {
	s, ok := m.Attrs.String(ir.AttrPhase)
	if !ok {
		if _, present := m.Attrs[ir.AttrPhase]; present {
			return None, fmt.Errorf("module attribute %q must be a string", ir.AttrPhase)
		}
		return None, nil
	}
	return Parse(s)
}

// Record returns a copy of m whose phase attribute is p (removed for None).
func Record(m *ir.Module, p Phase) *ir.Module {
	c := m.Clone()
	if p == None {
		c.Attrs = c.Attrs.Without(ir.AttrPhase)
	} else {
		c.Attrs = c.Attrs.With(ir.AttrPhase, p.String())
	}
	return c
}

// Introduced returns the phase whose invariants first include p: the phase
// a pass must know about to answer for p (see passes.Info.Horizon).
func (p Property) Introduced() Phase {
	for _, q := range Phases() {
		if q.Invariants().Has(p) {
			return q
		}
	}
	return None
}

// Upto returns the properties introduced by phases up to and including p:
// everything a pass whose horizon is p knows about.
func Upto(p Phase) Set {
	var s Set
	for _, q := range Properties() {
		if q.Introduced() <= p {
			s = s.With(q)
		}
	}
	return s
}

// Supported returns the latest phase no later than p whose invariants are
// all in props, or None: the phase a module may record when props is what
// is known of it.
func Supported(p Phase, props Set) Phase {
	for q := p; q > None; q-- {
		if props.Contains(q.Invariants()) {
			return q
		}
	}
	return None
}
