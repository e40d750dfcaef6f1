package passes

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/phase"
)

// renameAll is a parallel function pass that rebuilds every function: it
// renames the bound vars with the function name and a per-function
// counter. Output must not depend on scheduling.
func renameAll(parallel bool) *Pass {
	return functionPass(Info{Name: "TRename", Doc: "renames vars"}, parallel,
		func(env *Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error) {
			seq := f.Body.(*ir.SeqExpr)
			var binds []ir.Binding
			for i, b := range seq.Blocks[0].Bindings {
				vb := b.(*ir.VarBinding)
				v := *vb.Var
				v.Name = fmt.Sprintf("%s_%d", name, i)
				binds = append(binds, ir.NewVarBinding(&v, vb.Value))
			}
			s := *seq
			s.Blocks = []*ir.BindingBlock{{Bindings: binds, Dataflow: true}}
			nf := withAttr(f, "renamed", name)
			nf.Body = &s
			return nf, nil
		})
}

func TestParallelEqualsSequential(t *testing.T) {
	mod := genModule(64, 20)
	// Skip-optimize functions are left alone.
	f := mod.Func("f007")
	mod.Set("f007", withAttr(f, ir.AttrSkipOptimize, true))
	run := func(parallel bool, workers int) *ir.Module {
		pc := NewPassContext()
		pc.Parallelism = workers
		out, err := pc.Execute(context.Background(), renameAll(parallel), mod, phase.Ingest.Invariants())
		require.NoError(t, err)
		return out
	}
	seq := run(false, 1)
	assert.Same(t, mod.Func("f007"), seq.Func("f007"), "skip-optimize function was transformed")
	assert.Contains(t, testPrint(seq), "f063 renamed=f063:\n  dataflow: f063_0", "sequential run did not rename")
	for _, workers := range []int{2, 4, 16} {
		par := run(true, workers)
		assert.Equal(t, testPrint(seq), testPrint(par), "%d workers: output differs from sequential", workers)
		assert.Equal(t, ir.StructuralHash(seq), ir.StructuralHash(par), "%d workers: structural hash differs", workers)
	}
	assert.Nil(t, mod.Func("f000").Attrs["renamed"], "input module mutated")
}

// Errors from parallel functions are reported in function order, as a
// sequential run would.
func TestParallelErrorsDeterministic(t *testing.T) {
	p := functionPass(Info{Name: "TErr", Doc: "fails on odd functions"}, true,
		func(env *Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error) {
			if n := name[len(name)-1]; (n-'0')%2 == 1 {
				return nil, fmt.Errorf("odd %s", name)
			}
			return f, nil
		})
	var first string
	for i := range 10 {
		pc := NewPassContext()
		pc.Parallelism = 1 + rand.Intn(8)
		_, err := pc.Execute(context.Background(), p, genModule(10, 2), 0)
		require.Error(t, err, "no error")
		if i == 0 {
			first = err.Error()
		} else {
			require.Equal(t, first, err.Error(), "error differs between runs")
		}
	}
	assert.True(t, strings.HasPrefix(first, "pass TErr failed (module in phase none): odd f001\nodd f003"), "error %q", first)
}

func TestDataflowBlockPass(t *testing.T) {
	mod := genModule(2, 3)
	// Reversing the dataflow-var bindings keeps the interface (gv2 last).
	keep := blockPass(Info{Name: "TKeep", Doc: "keeps the interface"}, true,
		func(env *Env, mod *ir.Module, fn string, b *ir.BindingBlock) (*ir.BindingBlock, error) {
			c := *b
			c.Bindings = append([]ir.Binding{b.Bindings[1], b.Bindings[0]}, b.Bindings[2:]...)
			return &c, nil
		})
	out, err := NewPassContext().Execute(context.Background(), keep, mod, 0)
	require.NoError(t, err)
	assert.Contains(t, testPrint(out), "dataflow: lv1 lv0 gv2", "block pass not applied")
	drop := blockPass(Info{Name: "TDrop", Doc: "drops the output"}, false,
		func(env *Env, mod *ir.Module, fn string, b *ir.BindingBlock) (*ir.BindingBlock, error) {
			c := *b
			c.Bindings = b.Bindings[:2]
			return &c, nil
		})
	_, err = NewPassContext().Execute(context.Background(), drop, mod, 0)
	assert.ErrorContains(t, err, "function f000: dataflow-block pass removed output var gv2", "interface change not caught")
	resinfo := blockPass(Info{Name: "TReinfo", Doc: "changes output struct info"}, false,
		func(env *Env, mod *ir.Module, fn string, b *ir.BindingBlock) (*ir.BindingBlock, error) {
			last := b.Bindings[2].BoundVar()
			last.SetStructInfo(ir.TensorInfoNDim(ir.Float32, 3))
			return b, nil
		})
	_, err = NewPassContext().Execute(context.Background(), resinfo, genModule(1, 3), 0)
	assert.ErrorContains(t, err, "changed the struct info of output var gv2", "struct info change not caught")
}
