package passes

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// inputCollected runs, as a pipeline step with the given instruments, a
// barrier-like module pass whose first nested pass (TMark) replaces the
// module and whose second checks whether the step's input can still be
// reached. It reports whether the input had been collected by then.
func inputCollected(t *testing.T, instruments ...Instrument) (collected bool) {
	t.Helper()
	var input weak.Pointer[ir.Module]
	probe := modulePass(Info{Name: "TProbe", Doc: "collects garbage and looks for the step's input"},
		func(env *Env, mod *ir.Module) (*ir.Module, error) {
			runtime.GC()
			collected = input.Value() == nil
			return mod, nil
		})
	outer := modulePass(Info{Name: "TOuter", Doc: "runs two passes nested, like a barrier"},
		func(env *Env, mod *ir.Module) (*ir.Module, error) {
			next, err := env.Run(testPass("TMark"), mod)
			if err != nil {
				return nil, err
			}
			return env.Run(probe, next)
		})
	pc := NewPassContext()
	pc.Instruments = instruments
	run := func() {
		// Built here so that nothing outside the run refers to it.
		mod := genModule(2, 3)
		input = weak.Make(mod)
		_, err := pc.Execute(context.Background(), Sequential("pipeline", outer), mod, 0)
		require.NoError(t, err)
	}
	run()
	return collected
}

// A pipeline step that replaced its input no longer keeps it alive while
// its later nested passes run (at a million bindings the input of the lower
// barrier is hundreds of megabytes), unless an instrument reads Event.Before
// after the pass.
func TestStepInputReleased(t *testing.T) {
	assert.True(t, inputCollected(t), "no instruments: the step's input should be collectable")
	assert.True(t, inputCollected(t, &Timing{}, &PrintIR{}, &VerifyEach{Check: func(*ir.Module, phase.Phase, phase.Set) diag.List { return nil }}),
		"InputBlind instruments: the step's input should be collectable")
	assert.False(t, inputCollected(t, &Summary{}), "Summary reads Event.Before in AfterPass: the input must stay")
}
