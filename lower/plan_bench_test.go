package lower_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/phasec/phasec/barrier"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/ir/irgen"
	"github.com/phasec/phasec/lower"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// planModel is one generated network for the planning measurements.
type planModel struct {
	name  string
	chain bool // a pure chain: the offsets planner must reach the lower bound (within 2%)
	mod   func() *ir.Module
}

func planModels() []planModel {
	var out []planModel
	for _, sym := range []bool{false, true} {
		opts := irgen.DNNOptions{Batch: 8, Symbolic: sym}
		suffix := "static"
		if sym {
			suffix = "symbolic"
		}
		out = append(out,
			planModel{"chain/" + suffix, true, func() *ir.Module { return irgen.LegalizedChain(64, opts) }},
			planModel{"resnet/" + suffix, false, func() *ir.Module { return irgen.ResNet(4, 2, opts) }},
			planModel{"transformer/" + suffix, false, func() *ir.Module { return irgen.Transformer(2, opts) }},
			planModel{"randomdag/" + suffix, false, func() *ir.Module { return irgen.RandomDAG(7, 200, opts) }},
		)
	}
	return out
}

// lowered runs the canonicalize and lower barriers: the input memory
// planning sees in the build barrier.
func lowered(tb testing.TB, mod *ir.Module) *ir.Module {
	tb.Helper()
	mod, err := barrier.Canonicalize(mod)
	require.NoError(tb, err)
	mod, err = barrier.Lower(mod)
	require.NoError(tb, err)
	return mod
}

// TestPlanQuality checks both planners on the generated networks: every
// plan is valid (checkPlan, independent of the planner), the offsets
// planner never takes more bytes than TVM's and is within 2% of the lower
// bound on chains.
func TestPlanQuality(t *testing.T) {
	for _, m := range planModels() {
		t.Run(m.name, func(t *testing.T) {
			in := lowered(t, m.mod())
			tvm, st, errs := lower.PlanBlockMemory(in, lower.PlannerTVM)
			require.Empty(t, errs)
			offs, st2, errs := lower.PlanBlockMemory(in, lower.PlannerOffsets)
			require.Empty(t, errs)
			require.Equal(t, st, st2, "the statistics do not depend on the planner")
			require.Positive(t, st.Tensors)
			require.Zero(t, st.Dynamic, "batch is bounded: every size is constant")
			checkPlan(t, tvm.Func("main"))
			checkPlan(t, offs.Func("main"))
			require.LessOrEqual(t, st.LowerBound, st.ArenaBytes)
			require.LessOrEqual(t, st.ArenaBytes, st.TVMBytes)
			if m.chain {
				require.LessOrEqual(t, float64(st.ArenaBytes), 1.02*float64(st.LowerBound))
			}
			t.Logf("tvm %d, offsets %d, lower bound %d bytes", st.TVMBytes, st.ArenaBytes, st.LowerBound)
		})
	}
}

// region is the bytes one planned tensor occupies and when it is live.
type region struct {
	storage     *ir.Var
	lo, hi      int64 // byte range [lo, hi)
	first, last int   // binding indices of definition and last use
}

// checkPlan verifies a planned function from its IR alone: two tensors
// carved from the same storage with overlapping byte ranges must not be
// live at the same time (live from the alloc_tensor to the last binding
// using the tensor or a reshape/alias of it), and each fits its storage.
func checkPlan(t *testing.T, fn *ir.Function) {
	t.Helper()
	size := map[*ir.Var]int64{}
	owner := map[*ir.Var]*region{}
	var regions []*region
	idx := 0
	for _, blk := range fn.Body.(*ir.SeqExpr).Blocks {
		for _, bind := range blk.Bindings {
			idx++
			vb, ok := bind.(*ir.VarBinding)
			if !ok {
				continue
			}
			if c, ok := vb.Value.(*ir.Call); ok {
				switch c.Op {
				case op.MemAllocStorage:
					n, _ := ir.IntValue(c.Args[0].(*ir.ShapeExpr).Values[0])
					size[vb.Var] = n
					continue
				case op.MemAllocTensor:
					ti := vb.Var.StructInfo().(*ir.TensorInfo)
					dims, _ := ti.Dims()
					n := int64(ti.DType.Bytes())
					for _, d := range dims {
						v, ok := ir.IntValue(d)
						if !ok {
							v = 8 // the bound of the symbolic batch
						}
						n *= v
					}
					off, _ := ir.IntValue(c.Args[1].(*ir.PrimValue).Value)
					st := c.Args[0].(*ir.Var)
					require.LessOrEqual(t, off+n, size[st], "%s does not fit its storage", vb.Var.Name)
					r := &region{storage: st, lo: off, hi: off + n, first: idx, last: idx}
					regions = append(regions, r)
					owner[vb.Var] = r
					continue
				}
			}
			ir.Inspect(vb.Value, func(e ir.Expr) bool {
				if v, ok := e.(*ir.Var); ok {
					if r := owner[v]; r != nil {
						r.last = idx
						if _, isVar := vb.Value.(*ir.Var); isVar || isReshape(vb.Value) {
							owner[vb.Var] = r // an alias keeps the bytes live
						}
					}
				}
				return true
			})
		}
	}
	if v, ok := fn.Body.(*ir.SeqExpr).Body.(*ir.Var); ok && owner[v] != nil {
		owner[v].last = idx + 1
	}
	for i, a := range regions {
		for _, b := range regions[i+1:] {
			if a.storage == b.storage && a.lo < b.hi && b.lo < a.hi {
				require.False(t, a.first <= b.last && b.first <= a.last,
					"tensors at bindings %d and %d share bytes of %s while both live", a.first, b.first, a.storage.Name)
			}
		}
	}
}

func isReshape(e ir.Expr) bool {
	c, ok := e.(*ir.Call)
	return ok && c.Op == op.Reshape
}

// BenchmarkMemoryPlan reports, per generated network, the bytes of TVM's
// plan, of the offsets planner and the lower bound (the peak of live
// bytes), and times the planning pass in each mode.
func BenchmarkMemoryPlan(b *testing.B) {
	for _, m := range planModels() {
		in := lowered(b, m.mod())
		for _, planner := range []lower.Planner{lower.PlannerTVM, lower.PlannerOffsets} {
			b.Run(fmt.Sprintf("%s/%s", m.name, planner), func(b *testing.B) {
				var st lower.PlanStats
				for b.Loop() {
					_, st, _ = lower.PlanBlockMemory(in, planner)
				}
				b.ReportMetric(float64(st.TVMBytes), "tvm-bytes")
				b.ReportMetric(float64(st.ArenaBytes), "offsets-bytes")
				b.ReportMetric(float64(st.LowerBound), "lb-bytes")
				b.ReportMetric(float64(st.ArenaBytes)/float64(st.LowerBound), "offsets/lb")
				b.ReportMetric(float64(st.TVMBytes)/float64(st.LowerBound), "tvm/lb")
			})
		}
	}
}

// BenchmarkCompileScaling runs the pipeline `phasec opt --passes
// canonicalize,lower,build` runs (one pipeline: the input's state is
// inferred once; then each barrier's passes, memory planning, kills, VM
// builtins, VMShapeLower and global symbols included, and each barrier's
// invariant check) on generated call_tir chains of 10k and 100k bindings,
// with a static batch and with a symbolic (upper-bounded) one, where
// VMShapeLower builds every allocation's shape from the heap. Compare the
// two ns/op of a kind (the target: ratio ≤ 11, linear). cpu-ns/op
// is the process CPU time per run (GC included), which a loaded machine
// inflates far less than wall time.
func BenchmarkCompileScaling(b *testing.B) {
	pipeline, errs := barrier.Registry.ParseAndBuild("--passes", "canonicalize,lower,build")
	require.Nil(b, errs)
	for _, sym := range []bool{false, true} {
		for _, n := range []int{10_000, 100_000} {
			mod := irgen.LegalizedChain(n, irgen.DNNOptions{Batch: 8, Symbolic: sym})
			kind := "static"
			if sym {
				kind = "symbolic"
			}
			b.Run(fmt.Sprintf("%s/bindings=%d", kind, n), func(b *testing.B) {
				cpu0 := cpuTime()
				defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
				for b.Loop() {
					out, err := passes.NewPassContext().Run(context.Background(), pipeline, mod)
					if err != nil {
						b.Fatal(err)
					}
					if p, _ := phase.Recorded(out); p != phase.Build {
						b.Fatalf("ended in phase %v", p)
					}
				}
			})
		}
	}
}

// TestPlanRandomDAGs checks both planners on pseudo-random DAGs: the
// plans are valid (checkPlan), the offsets planner is never worse than
// TVM's plan nor better than the lower bound.
func TestPlanRandomDAGs(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		opts := irgen.DNNOptions{Batch: 8, Symbolic: seed%2 == 0}
		in := lowered(t, irgen.RandomDAG(seed, 60, opts))
		tvm, st, errs := lower.PlanBlockMemory(in, lower.PlannerTVM)
		require.Empty(t, errs)
		offs, _, errs := lower.PlanBlockMemory(in, lower.PlannerOffsets)
		require.Empty(t, errs)
		checkPlan(t, tvm.Func("main"))
		checkPlan(t, offs.Func("main"))
		require.LessOrEqual(t, st.LowerBound, st.ArenaBytes, "seed %d", seed)
		require.LessOrEqual(t, st.ArenaBytes, st.TVMBytes, "seed %d", seed)
	}
}
