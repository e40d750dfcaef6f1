package passes

import (
	"fmt"
	"time"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// Instrument observes and steers a run. See the package doc for the order
// of the hooks and what happens when a pass or a hook fails. Embed
// BaseInstrument to implement only the hooks you need.
type Instrument interface {
	// Name identifies the instrument in error messages.
	Name() string
	// EnterContext is called once when a Run starts, before any pass.
	EnterContext(pc *PassContext) error
	// ExitContext is called once when a Run ends, also after a failure,
	// for every instrument whose EnterContext succeeded.
	ExitContext(pc *PassContext) error
	// ShouldRun may veto an optional pass (not required, not AlwaysRun,
	// not a prerequisite). The first false wins.
	ShouldRun(ev *Event) (bool, error)
	// PassSkipped reports a pass that gating or ShouldRun skipped.
	PassSkipped(ev *Event) error
	// BeforePass is called just before a pass runs (ev.Before is set).
	BeforePass(ev *Event) error
	// AfterPass is called after a pass succeeded (ev.After, ev.Changed,
	// ev.Duration are set).
	AfterPass(ev *Event) error
	// AfterPassFailed is called after a pass returned an error or panicked
	// (ev.Err is set).
	AfterPassFailed(ev *Event) error
}

// ChangeBlind is implemented by instruments that never read Event.Changed
// or the hashes. When every installed instrument is ChangeBlind the runner
// skips structural hashing altogether (Changed is then true whenever a pass
// returned a new module pointer).
type ChangeBlind interface{ ChangeBlind() }

// InputBlind is implemented by instruments that read Event.Before only
// before the pass runs (ShouldRun, PassSkipped, BeforePass), never in
// AfterPass or AfterPassFailed. When every installed instrument is
// InputBlind the runner lets go of each pass's input once BeforePass hooks
// have run (Event.Before is then nil afterwards), so that a module version
// no later pass reads can be collected while the pass runs: at a million
// bindings each version is hundreds of megabytes, and a pipeline step (a
// barrier) would otherwise keep its input alive through all its passes.
type InputBlind interface{ InputBlind() }

// BaseInstrument implements every hook as a no-op.
type BaseInstrument struct{}

func (BaseInstrument) EnterContext(*PassContext) error { return nil }
func (BaseInstrument) ExitContext(*PassContext) error  { return nil }
func (BaseInstrument) ShouldRun(*Event) (bool, error)  { return true, nil }
func (BaseInstrument) PassSkipped(*Event) error        { return nil }
func (BaseInstrument) BeforePass(*Event) error         { return nil }
func (BaseInstrument) AfterPass(*Event) error          { return nil }
func (BaseInstrument) AfterPassFailed(*Event) error    { return nil }

// Event describes one pass execution (or skip) to instruments.
type Event struct {
	Pass *Pass
	Info *Info
	// Seq numbers executed non-sequential passes from 1 in run order; 0
	// for Sequentials and skipped passes.
	Seq int
	// Depth is the Sequential nesting depth (0 at the top of the pipeline).
	Depth int
	// Why the pass ran or was skipped.
	Why Reason
	// Before is the module the pass receives; After what it returned.
	// Before is nil in AfterPass and AfterPassFailed when every instrument
	// is InputBlind.
	Before, After *ir.Module
	// PhaseBefore/PhaseAfter are the recorded phases of Before and After.
	PhaseBefore, PhaseAfter phase.Phase
	// PropsBefore/PropsAfter are the properties the contracts claim hold
	// (the verify-each instrument checks PropsAfter).
	PropsBefore, PropsAfter phase.Set
	// Changed: After differs structurally from Before.
	Changed bool
	// HashBefore/HashAfter are structural hashes, set when Hashed.
	HashBefore, HashAfter uint64
	Hashed                bool
	// Duration is the time the pass itself took (clock around its body;
	// for a Sequential, around its children including their hooks).
	Duration time.Duration
	// Err is the pass's failure, for AfterPassFailed.
	Err error
	// Stats are the statistics the pass reported (Env.Stat), in order.
	Stats []Stat
}

// Name is the pass name.
func (ev *Event) Name() string { return ev.Info.Name }

// PassError is a pass that failed or panicked.
type PassError struct {
	Pass  string
	Phase phase.Phase // recorded phase of the module the pass received
	Err   error
	// Panic is true when the pass panicked; Stack is the goroutine stack.
	Panic bool
	Stack []byte
}

func (e *PassError) Error() string {
	verb := "failed"
	if e.Panic {
		verb = "panicked"
	}
	return fmt.Sprintf("pass %s %s (module in phase %v): %v", e.Pass, verb, e.Phase, e.Err)
}

func (e *PassError) Unwrap() error { return e.Err }

// InstrumentError is an instrument hook that failed; it aborts the run.
type InstrumentError struct {
	Instrument string
	Hook       string
	Pass       string // empty for EnterContext/ExitContext
	Err        error
}

func (e *InstrumentError) Error() string {
	if e.Pass != "" {
		return fmt.Sprintf("instrument %s: %s(%s): %v", e.Instrument, e.Hook, e.Pass, e.Err)
	}
	return fmt.Sprintf("instrument %s: %s: %v", e.Instrument, e.Hook, e.Err)
}

func (e *InstrumentError) Unwrap() error { return e.Err }

// callHook runs one hook, turning a panic into an error.
func callHook(in Instrument, hook, pass string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &InstrumentError{Instrument: in.Name(), Hook: hook, Pass: pass, Err: fmt.Errorf("panic: %v", r)}
		}
	}()
	if e := f(); e != nil {
		return &InstrumentError{Instrument: in.Name(), Hook: hook, Pass: pass, Err: e}
	}
	return nil
}
