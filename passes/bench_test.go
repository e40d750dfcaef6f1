package passes

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
	"github.com/phasec/phasec/wellformed"
)

// traverse visits every binding of f and returns how many it saw; the
// benchmark passes do this and change nothing.
func traverse(f *ir.Function) int {
	n := 0
	for _, b := range f.Body.(*ir.SeqExpr).Blocks {
		for _, bind := range b.Bindings {
			if vb, ok := bind.(*ir.VarBinding); ok && vb.Value != nil {
				n++
			}
		}
	}
	return n
}

var sink int

// benchPipeline is 20 traversing function passes. With rebuild set each
// returns a fresh copy of every function (structurally identical), so the
// framework must hash to learn nothing changed.
func benchPipeline(rebuild bool) *Pass {
	var ps []*Pass
	for i := range 20 {
		ps = append(ps, functionPass(Info{Name: fmt.Sprintf("Traverse%02d", i), Doc: "traverses"}, false,
			func(env *Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error) {
				sink += traverse(f)
				if rebuild {
					c := *f
					return &c, nil
				}
				return f, nil
			}))
	}
	return Sequential("bench", ps...)
}

func benchModule(bindings int) *ir.Module { return genModule(bindings/100, 100) }

func BenchmarkPipeline(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		mod := benchModule(n)
		b.Run(fmt.Sprintf("bindings=%d/baseline", n), func(b *testing.B) {
			for b.Loop() {
				for range 20 {
					for _, f := range mod.Functions() {
						if fn, ok := f.(*ir.Function); ok {
							sink += traverse(fn)
						}
					}
				}
			}
		})
		for _, cfg := range []struct {
			name        string
			rebuild     bool
			instruments bool
		}{
			{"off", false, false},
			{"timing+verify", false, true},
			{"rebuild/off", true, false},
			{"rebuild/timing+verify", true, true},
		} {
			b.Run(fmt.Sprintf("bindings=%d/%s", n, cfg.name), func(b *testing.B) {
				p := benchPipeline(cfg.rebuild)
				for b.Loop() {
					pc := NewPassContext()
					if cfg.instruments {
						pc.Instruments = []Instrument{&Timing{}, &VerifyEach{Check: func(m *ir.Module, _ phase.Phase, props phase.Set) diag.List {
							return wellformed.CheckProperties(m, props)
						}}}
					}
					if _, err := pc.Execute(context.Background(), p, mod, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestUnchangedDetectionCost: with print-changed on, 20 passes that rebuild
// but do not change the module cost one structural hash each (plus one for
// the input) and no printing beyond the input.
func TestUnchangedDetectionCost(t *testing.T) {
	hashes, prints := 0, 0
	old := hashModule
	hashModule = func(m *ir.Module) uint64 { hashes++; return old(m) }
	defer func() { hashModule = old }()
	pc := NewPassContext()
	v := &VerifyEach{Check: func(*ir.Module, phase.Phase, phase.Set) diag.List {
		assert.Fail(t, "verified an unchanged module")
		return nil
	}}
	pc.Instruments = []Instrument{&Timing{}, v, &PrintChanged{W: new(discard), Print: func(m *ir.Module) string { prints++; return "" }}}
	_, err := pc.Execute(context.Background(), benchPipeline(true), benchModule(1000), 0)
	require.NoError(t, err)
	assert.Equal(t, 21, hashes, "hashes for 20 unchanged passes")
	assert.Equal(t, 1, prints, "prints for 20 unchanged passes")
	// Passes returning their input are unchanged without any hashing
	// beyond the input's.
	hashes = 0
	_, err = pc.Execute(context.Background(), benchPipeline(false), benchModule(1000), 0)
	require.NoError(t, err)
	assert.Equal(t, 1, hashes, "hashes for 20 identity passes")
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }
