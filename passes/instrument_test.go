package passes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

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
	if errs != nil {
		t.Fatal(errs)
	}
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
			if got != want {
				t.Errorf("hooks:\n got %s\nwant %s", got, want)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestPassErrorTypes(t *testing.T) {
	pc := NewPassContext()
	_, err := pc.Run(context.Background(), testPass("TPanicParallel"), genModule(3, 1))
	var pe *PassError
	if !errors.As(err, &pe) || !pe.Panic || pe.Pass != "TPanicParallel" || !strings.Contains(pe.Error(), "f001") || len(pe.Stack) == 0 {
		t.Errorf("parallel panic not reported as a PassError with the function: %#v", err)
	}
	in := &logInstrument{name: "x", log: new([]string), failOn: "After(TNoop)"}
	pc.Instruments = []Instrument{in}
	_, err = pc.Run(context.Background(), testPass("TNoop"), genModule(1, 1))
	var ie *InstrumentError
	if !errors.As(err, &ie) || ie.Instrument != "x" || ie.Hook != "AfterPass" {
		t.Errorf("instrument failure: %v", err)
	}
}

func TestCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewPassContext().Run(ctx, testPass("TMark"), genModule(2, 1))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestLeavesRecordsPhase(t *testing.T) {
	p, errs := parseAndBuild("--passes", "TLowerBarrier,TAcceptsLower")
	if errs != nil {
		t.Fatal(errs)
	}
	out, err := NewPassContext().Run(context.Background(), p, phase.Record(genModule(1, 1), phase.Optimize))
	if err != nil {
		t.Fatal(err)
	}
	if ph, _ := phase.Recorded(out); ph != phase.Lower {
		t.Errorf("phase after barrier %v, want lower", ph)
	}
}

func TestOptionsReachPass(t *testing.T) {
	p, errs := parseAndBuild("--passes", "TOpts{max_depth=3,mode=\"a b\"}")
	if errs != nil {
		t.Fatal(errs)
	}
	out, err := NewPassContext().Run(context.Background(), p, genModule(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := out.Attrs.String("opts"); got != "3,true,a b,0.5" {
		t.Errorf("options seen by the pass: %q", got)
	}
}

// A pass that may break an invariant of the recorded phase demotes the
// module to the latest phase it still satisfies, both in the static check
// and in the module it produces.
func TestInvalidatingPassDemotesPhase(t *testing.T) {
	p, errs := parseAndBuild("--passes", "TLowerBarrier,TAddsDataflow")
	if errs != nil {
		t.Fatal(errs)
	}
	out, err := NewPassContext().Run(context.Background(), p, phase.Record(genModule(1, 1), phase.Optimize))
	if err != nil {
		t.Fatal(err)
	}
	if ph, _ := phase.Recorded(out); ph != phase.Optimize {
		t.Errorf("phase after a pass invalidating NoDataflow in phase lower: %v, want optimize", ph)
	}

	p, errs = parseAndBuild("--passes", "TLowerBarrier,TAddsDataflow,TAcceptsLower")
	if errs != nil {
		t.Fatal(errs)
	}
	_, err = NewPassContext().Run(context.Background(), p, phase.Record(genModule(1, 1), phase.Optimize))
	if err == nil || !strings.Contains(err.Error(), "TAcceptsLower accepts phase lower but would get a module in phase optimize") {
		t.Errorf("static check after a demotion: %v", err)
	}
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
	if _, err := pc.Execute(context.Background(), outer, genModule(2, 3), 0); err != nil {
		t.Errorf("nested passes flagged: %v", err)
	}
}
