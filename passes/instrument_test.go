package passes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// logInstrument records every hook call as "name:Hook(pass)".
type logInstrument struct {
	name string
	log  *[]string
	// failOn makes the hook "Hook(pass)" return an error.
	failOn string
	// veto makes ShouldRun refuse this pass.
	veto string
}

func (l *logInstrument) Name() string { return l.name }

func (l *logInstrument) add(hook, pass string) error {
	entry := fmt.Sprintf("%s(%s)", hook, pass)
	*l.log = append(*l.log, l.name+":"+entry)
	if entry == l.failOn {
		return errors.New("instrument failure")
	}
	return nil
}

func (l *logInstrument) EnterContext(*PassContext) error { return l.add("Enter", "") }
func (l *logInstrument) ExitContext(*PassContext) error  { return l.add("Exit", "") }
func (l *logInstrument) ShouldRun(ev *Event) (bool, error) {
	return ev.Info.Name != l.veto, l.add("ShouldRun", ev.Info.Name)
}
func (l *logInstrument) PassSkipped(ev *Event) error {
	return l.add("Skipped", ev.Info.Name+" "+ev.Why.String())
}
func (l *logInstrument) BeforePass(ev *Event) error { return l.add("Before", ev.Info.Name) }
func (l *logInstrument) AfterPass(ev *Event) error  { return l.add("After", ev.Info.Name) }
func (l *logInstrument) AfterPassFailed(ev *Event) error {
	return l.add("Failed", ev.Info.Name)
}

func runLogged(t *testing.T, pipeline string, a, b *logInstrument, pc *PassContext) ([]string, error) {
	t.Helper()
	var log []string
	a.log, b.log = &log, &log
	p, errs := parseAndBuild("--passes", pipeline)
	require.Nil(t, errs)
	pc.Instruments = []Instrument{a, b}
	_, err := pc.Run(context.Background(), p, genModule(2, 2))
	return log, err
}

func TestInstrumentOrder(t *testing.T) {
	tests := []struct {
		name     string
		pipeline string
		a, b     logInstrument
		pc       PassContext
		want     string
		wantErr  string
	}{{
		name:     "success with a skipped pass and a sequential",
		pipeline: "TNoop,TO3,seq(TMark)",
		pc:       PassContext{OptLevel: 2},
		want: `a:Enter() b:Enter()
a:ShouldRun(TNoop) b:ShouldRun(TNoop) a:Before(TNoop) b:Before(TNoop) a:After(TNoop) b:After(TNoop)
a:Skipped(TO3 opt level 3 > 2) b:Skipped(TO3 opt level 3 > 2)
a:Before(seq) b:Before(seq)
a:ShouldRun(TMark) b:ShouldRun(TMark) a:Before(TMark) b:Before(TMark) a:After(TMark) b:After(TMark)
a:After(seq) b:After(seq)
a:Exit() b:Exit()`,
	}, {
		name:     "failing pass: AfterPassFailed, later passes not run, exit hooks run",
		pipeline: "seq(TFail),TNoop",
		pc:       PassContext{OptLevel: 2},
		want: `a:Enter() b:Enter()
a:Before(seq) b:Before(seq)
a:ShouldRun(TFail) b:ShouldRun(TFail) a:Before(TFail) b:Before(TFail) a:Failed(TFail) b:Failed(TFail)
a:Failed(seq) b:Failed(seq)
a:Exit() b:Exit()`,
		wantErr: "pass TFail failed (module in phase none): boom",
	}, {
		name:     "panicking pass is recovered",
		pipeline: "TPanic",
		pc:       PassContext{OptLevel: 2},
		want: `a:Enter() b:Enter()
a:ShouldRun(TPanic) b:ShouldRun(TPanic) a:Before(TPanic) b:Before(TPanic) a:Failed(TPanic) b:Failed(TPanic)
a:Exit() b:Exit()`,
		wantErr: "pass TPanic panicked (module in phase none): kaboom",
	}, {
		name:     "failing instrument aborts with its name; exit hooks still run",
		pipeline: "TNoop,TMark",
		a:        logInstrument{failOn: "Before(TMark)"},
		pc:       PassContext{OptLevel: 2},
		want: `a:Enter() b:Enter()
a:ShouldRun(TNoop) b:ShouldRun(TNoop) a:Before(TNoop) b:Before(TNoop) a:After(TNoop) b:After(TNoop)
a:ShouldRun(TMark) b:ShouldRun(TMark) a:Before(TMark)
a:Exit() b:Exit()`,
		wantErr: "instrument a: BeforePass(TMark): instrument failure",
	}, {
		name:     "failing EnterContext: only entered instruments exit",
		pipeline: "TNoop",
		b:        logInstrument{failOn: "Enter()"},
		pc:       PassContext{OptLevel: 2},
		want: `a:Enter() b:Enter()
a:Exit()`,
		wantErr: "instrument b: EnterContext: instrument failure",
	}, {
		name:     "ShouldRun veto skips; required passes are not asked",
		pipeline: "TNoop,TMark",
		b:        logInstrument{veto: "TNoop"},
		pc:       PassContext{OptLevel: 2, Required: []string{"TMark"}},
		want: `a:Enter() b:Enter()
a:ShouldRun(TNoop) b:ShouldRun(TNoop) a:Skipped(TNoop skipped by b) b:Skipped(TNoop skipped by b)
a:Before(TMark) b:Before(TMark) a:After(TMark) b:After(TMark)
a:Exit() b:Exit()`,
	}, {
		name:     "prerequisites run first and say why",
		pipeline: "TPrereq",
		pc:       PassContext{OptLevel: 2, RunPrerequisites: true},
		want: `a:Enter() b:Enter()
a:ShouldRun(TPrereq) b:ShouldRun(TPrereq) a:Before(TMark) b:Before(TMark) a:After(TMark) b:After(TMark)
a:Before(TPrereq) b:Before(TPrereq) a:After(TPrereq) b:After(TPrereq)
a:Exit() b:Exit()`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.a.name, tt.b.name = "a", "b"
			log, err := runLogged(t, tt.pipeline, &tt.a, &tt.b, &tt.pc)
			got := strings.Join(log, " ")
			want := strings.Join(strings.Fields(tt.want), " ")
			assert.Equal(t, want, got, "hooks")
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestPassErrorTypes(t *testing.T) {
	pc := NewPassContext()
	_, err := pc.Run(context.Background(), testPass("TPanicParallel"), genModule(3, 1))
	var pe *PassError
	if assert.ErrorAs(t, err, &pe, "parallel panic not reported as a PassError") {
		assert.True(t, pe.Panic, "parallel panic: Panic")
		assert.Equal(t, "TPanicParallel", pe.Pass, "parallel panic: Pass")
		assert.Contains(t, pe.Error(), "f001", "parallel panic does not name the function")
		assert.NotEmpty(t, pe.Stack, "parallel panic: Stack")
	}
	in := &logInstrument{name: "x", log: new([]string), failOn: "After(TNoop)"}
	pc.Instruments = []Instrument{in}
	_, err = pc.Run(context.Background(), testPass("TNoop"), genModule(1, 1))
	var ie *InstrumentError
	if assert.ErrorAs(t, err, &ie, "instrument failure") {
		assert.Equal(t, "x", ie.Instrument, "instrument failure: %v", err)
		assert.Equal(t, "AfterPass", ie.Hook, "instrument failure: %v", err)
	}
}

func TestCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewPassContext().Run(ctx, testPass("TMark"), genModule(2, 1))
	assert.ErrorIs(t, err, context.Canceled)
}

func TestLeavesRecordsPhase(t *testing.T) {
	p, errs := parseAndBuild("--passes", "TLowerBarrier,TAcceptsLower")
	require.Nil(t, errs)
	out, err := NewPassContext().Run(context.Background(), p, phase.Record(genModule(1, 1), phase.Optimize))
	require.NoError(t, err)
	ph, _ := phase.Recorded(out)
	assert.Equal(t, phase.Lower, ph, "phase after barrier")
}

func TestOptionsReachPass(t *testing.T) {
	p, errs := parseAndBuild("--passes", "TOpts{max_depth=3,mode=\"a b\"}")
	require.Nil(t, errs)
	out, err := NewPassContext().Run(context.Background(), p, genModule(1, 1))
	require.NoError(t, err)
	got, _ := out.Attrs.String("opts")
	assert.Equal(t, "3,true,a b,0.5", got, "options seen by the pass")
}

// A pass that may break an invariant of the recorded phase demotes the
// module to the latest phase it still satisfies, both in the static check
// and in the module it produces.
func TestInvalidatingPassDemotesPhase(t *testing.T) {
	p, errs := parseAndBuild("--passes", "TLowerBarrier,TAddsDataflow")
	require.Nil(t, errs)
	out, err := NewPassContext().Run(context.Background(), p, phase.Record(genModule(1, 1), phase.Optimize))
	require.NoError(t, err)
	ph, _ := phase.Recorded(out)
	assert.Equal(t, phase.Optimize, ph, "phase after a pass invalidating NoDataflow in phase lower")

	p, errs = parseAndBuild("--passes", "TLowerBarrier,TAddsDataflow,TAcceptsLower")
	require.Nil(t, errs)
	_, err = NewPassContext().Run(context.Background(), p, phase.Record(genModule(1, 1), phase.Optimize))
	assert.ErrorContains(t, err, "TAcceptsLower accepts phase lower but would get a module in phase optimize", "static check after a demotion")
}

// ImmutableInput checks a pass that runs nested passes (a barrier) against
// its own input, not against the input of the last nested pass.
func TestImmutableInputNested(t *testing.T) {
	outer := modulePass(Info{Name: "TOuter", Doc: "runs two passes nested"}, func(env *Env, mod *ir.Module) (*ir.Module, error) {
		mod, err := env.Run(testPass("TMark"), mod)
		if err != nil {
			return nil, err
		}
		return env.Run(testPass("TToNonDataflow"), mod)
	})
	pc := NewPassContext()
	pc.Instruments = []Instrument{&ImmutableInput{}}
	_, err := pc.Execute(context.Background(), outer, genModule(2, 3), 0)
	assert.NoError(t, err, "nested passes flagged")
}
