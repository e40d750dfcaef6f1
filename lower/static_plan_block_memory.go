package lower

import (
	"fmt"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// StaticPlanBlockMemory is TVM's
// src/relax/transform/static_plan_block_memory.cc (see PlanBlockMemory).
var StaticPlanBlockMemory = passes.Define(passes.Info{
	Name:     "StaticPlanBlockMemory",
	Doc:      "plan tensor storage statically (memory.alloc_storage/alloc_tensor), reusing freed storage",
	OptLevel: 0,
	Requires: map[phase.Property]string{
		phase.Normalized:     "it plans allocations and kernel calls bound to vars, binding by binding",
		phase.NoCallTIR:      "the planner only sees outputs that are explicit allocations",
		phase.ExplicitMemory: "the planner only sees builtin.alloc_tensor",
	},
	Options: []passes.Option{{
		Name: "planner", Type: passes.String, Default: string(PlannerTVM),
		Doc: "tvm: TVM's storage-token reuse; offsets: tensors at offsets in one arena per reuse class",
	}},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	planner := Planner(env.Options().String("planner"))
	if planner != PlannerTVM && planner != PlannerOffsets {
		return nil, fmt.Errorf("StaticPlanBlockMemory: unknown planner %q (want tvm or offsets)", planner)
	}
	out, st, errs := PlanBlockMemory(mod, planner)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	env.Stat("planned_tensors", int64(st.Tensors))
	env.Stat("symbolic_tensors", int64(st.Dynamic))
	env.Stat("unplanned_allocs", int64(st.Unplanned))
	env.Stat("tvm_bytes", st.TVMBytes)
	env.Stat("offsets_bytes", st.ArenaBytes)
	env.Stat("lower_bound_bytes", st.LowerBound)
	return out, nil
}))

// Planner selects how StaticPlanBlockMemory places planned_tensors.
type Planner string

const (
	// PlannerTVM is TVM's algorithm: one storage per reused token, every
	// tensor at offset 0 of its storage.
	PlannerTVM Planner = "tvm"
	// PlannerOffsets places constant-size tensors at offsets in one arena
	// per reuse class (see plan_offsets.go).
	PlannerOffsets Planner = "offsets"
)

// PlanStats summarizes a plan. Byte counts cover constant-size planned
// tensors; symbolic ones are counted in Dynamic.
type PlanStats struct {
	Tensors    int   // allocations planned
	Dynamic    int   // of which of symbolic size
	Unplanned  int   // builtin.alloc_tensor left for LowerAllocTensor
	Storages   int   // storages of TVM's plan (constant size)
	TVMBytes   int64 // bytes TVM's plan allocates
	ArenaBytes int64 // bytes the offsets planner's arenas take
	LowerBound int64 // sum over functions and reuse classes of the peak of live bytes
}

func (s *PlanStats) add(o PlanStats) {
	s.Tensors += o.Tensors
	s.Dynamic += o.Dynamic
	s.Unplanned += o.Unplanned
	s.Storages += o.Storages
	s.TVMBytes += o.TVMBytes
	s.ArenaBytes += o.ArenaBytes
	s.LowerBound += o.LowerBound
}

// PlanBlockMemory plans the storage of every Relax function of mod
// (TVM's StaticPlanBlockMemory; the algorithm is described in
// plan_tokens.go). A planned R.builtin.alloc_tensor becomes
//
//	storage = R.memory.alloc_storage(R.shape([bytes]), R.prim_value(0), R.str("global"), R.dtype("float32"))
//	alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 4]), R.dtype("float32"), R.prim_value(0))
//
// the alloc_storage emitted where its storage is first used. Allocations
// that escape (returned, passed to Relax functions or ops, used across
// blocks) stay builtin.alloc_tensor for LowerAllocTensor; with the function
// attribute relax.memory_plan_dynamic_func_output (removed by the pass),
// those whose symbolic shape has a constant upper bound get a storage of
// the bound's size instead. Sizes use the upper bounds of the
// tir_var_upper_bound attribute. With PlannerOffsets, constant-size tensors
// are placed at offsets in one arena per reuse class, bound at the top of
// the function.
//
//	phasec opt --passes StaticPlanBlockMemory testdata/passes/StaticPlanBlockMemory/chain.tvms
//	phasec opt --passes 'StaticPlanBlockMemory{planner=offsets}' --summary testdata/passes/StaticPlanBlockMemory/chain.tvms
//
// Malformed bound attributes, negative or overflowing sizes and allocations
// whose dtype disagrees with their struct info are reported with their
// position.
func PlanBlockMemory(mod *ir.Module, planner Planner) (*ir.Module, PlanStats, diag.List) {
	var errs diag.List
	var stats PlanStats
	b := ir.NewBuilder(mod)
	out := mod.Clone()
	for _, name := range mod.Names() {
		fn := mod.Func(name)
		if fn == nil {
			continue
		}
		bounds := newUpperBounds(fn, fn.Span(), &errs)
		p := newFuncPlan(mod, fn, bounds, &errs)
		p.initFunction()
		p.allocFunction()
		arenas, st := p.summarize()
		stats.add(st)
		planDyn := false
		if v, ok := fn.Attrs[AttrPlanDynamicOutput]; ok {
			planDyn = v == true || v == int64(1)
		}
		nf := rewritePlanned(b, p, planner, arenas, planDyn)
		if _, ok := fn.Attrs[AttrPlanDynamicOutput]; ok {
			nf = withAttrs(nf, nf.Attrs.Without(AttrPlanDynamicOutput))
		}
		if nf != fn {
			out.Set(name, nf)
		}
	}
	errs = append(errs, b.Diagnostics()...)
	errs.Sort()
	return out, stats, errs
}

// summarize computes the statistics of a function's plan and, for every
// reuse class of constant-size tensors, the offsets planner's arena.
func (p *funcPlan) summarize() ([]*arena, PlanStats) {
	var st PlanStats
	planned := p.planned()
	st.Tensors = len(planned)
	seen := map[*token]bool{}
	for _, tk := range planned {
		if tk.size < 0 {
			st.Dynamic++
			continue
		}
		if s := tk.storage; !seen[s] {
			seen[s] = true
			st.Storages++
			st.TVMBytes += s.size
		}
	}
	for _, tk := range p.protos {
		if tk.discarded {
			st.Unplanned++
		}
	}
	keys, by := classTokens(planned)
	arenas := make([]*arena, 0, len(keys))
	for _, k := range keys {
		tks := by[k]
		st.LowerBound += liveLowerBound(tks)
		size := placeClass(tks)
		if tvm := storageBytes(tks); tvm < size {
			// Alignment padding (element sizes that are not powers of
			// two) can make the arena larger than TVM's storages: keep
			// those for this class.
			st.ArenaBytes += tvm
			continue
		}
		st.ArenaBytes += size
		a := &arena{key: k, size: size, dev: tks[0].dev}
		for _, tk := range tks {
			tk.arena = a
		}
		arenas = append(arenas, a)
	}
	return arenas, st
}

// storageBytes is the size of TVM's storages holding tks.
func storageBytes(tks []*token) int64 {
	seen := map[*token]bool{}
	var n int64
	for _, tk := range tks {
		if st := tk.storage; !seen[st] {
			seen[st] = true
			n += st.size
		}
	}
	return n
}

// planRewriter splices a function's plan into its blocks: planned
// alloc_tensor bindings get a new value (same var, same struct info) and,
// where a storage is first used, an alloc_storage binding before them.
// Nothing else is re-emitted.
type planRewriter struct {
	b          *ir.Builder
	p          *funcPlan
	planner    Planner
	planDyn    bool
	storageVar map[*token]*ir.Var
}

// rewritePlanned rewrites one function's planned allocations.
func rewritePlanned(b *ir.Builder, p *funcPlan, planner Planner, arenas []*arena, planDyn bool) *ir.Function {
	fn := p.fn
	seq, ok := fn.Body.(*ir.SeqExpr)
	if !ok || (len(p.protos) == 0 && !planDyn) {
		return fn
	}
	r := &planRewriter{b: b, p: p, planner: planner, planDyn: planDyn, storageVar: map[*token]*ir.Var{}}
	var head []ir.Binding
	if planner == PlannerOffsets {
		for _, a := range arenas {
			a.v = ir.NewVar("storage", ir.Object())
			head = append(head, ir.NewVarBinding(a.v, memAllocStorage(b, ir.I64(a.size), a.dev, ir.NewStringImm(a.key.scope), a.key.dtype)))
		}
	}
	sp := &splicer{binding: func(bind ir.Binding) ([]ir.Binding, bool) {
		vb, ok := bind.(*ir.VarBinding)
		if !ok {
			return nil, false
		}
		c, ok := vb.Value.(*ir.Call)
		if !ok || c.Op != op.BuiltinAllocTensor {
			return nil, false
		}
		repl := r.alloc(vb, c)
		return repl, repl != nil
	}}
	nseq := sp.seq(seq, head)
	if nseq == seq {
		return fn
	}
	return withBody(fn, nseq)
}

// alloc rewrites one builtin.alloc_tensor binding.
func (r *planRewriter) alloc(vb *ir.VarBinding, c *ir.Call) []ir.Binding {
	ti, ok := c.StructInfo().(*ir.TensorInfo)
	if !ok {
		return nil
	}
	shape, ok := ti.Shape.(*ir.ShapeExpr)
	if !ok {
		return nil
	}
	var out []ir.Binding
	newStorage := func(bytes ir.PrimExpr, scope string, dtype ir.DataType) *ir.Var {
		v := ir.NewVar("storage", ir.Object())
		nb := ir.NewVarBinding(v, memAllocStorage(r.b, bytes, c.Args[2], ir.NewStringImm(scope), dtype))
		nb.SetSpan(vb.Span())
		out = append(out, nb)
		return v
	}
	var storage *ir.Var
	var offset int64
	proto, _ := r.p.allocs.Get(c)
	switch {
	case proto != nil && !proto.discarded && proto.storage != nil:
		if r.planner == PlannerOffsets && proto.arena != nil {
			storage, offset = proto.arena.v, proto.offset
			break
		}
		st := proto.storage
		storage = r.storageVar[st]
		if storage == nil {
			storage = newStorage(st.bytes, st.scope, st.dtype)
			r.storageVar[st] = storage
		}
	case r.planDyn && !isStaticShape(shape.Values):
		var errs diag.List
		bounded := newFuncPlan(r.p.mod, r.p.fn, r.p.bounds, &errs)
		bytes, size, ok := bounded.tokenBytes(shape.Values, ti.DType, vb.Span())
		if !ok || size < 0 {
			return nil
		}
		scope := "global"
		if s, ok := c.Args[3].(*ir.StringImm); ok {
			scope = s.Value
		}
		storage = newStorage(bytes, scope, ti.DType)
	default:
		return nil
	}
	// The tensor keeps the allocation's runtime_device_index, as TVM's
	// StorageAllocationRewriter passes call->args[2] on.
	return append(out, rebind(vb, memAllocTensorOn(r.b, storage, offset, shape, ti, c.Args[2])))
}

func isStaticShape(dims []ir.PrimExpr) bool {
	for _, d := range dims {
		if _, ok := d.(*ir.IntImm); !ok {
			return false
		}
	}
	return true
}

// withAttrs returns a copy of fn with attrs.
func withAttrs(fn *ir.Function, attrs ir.Attrs) *ir.Function {
	nf := &ir.Function{Params: fn.Params, Body: fn.Body, Ret: fn.Ret, Pure: fn.Pure, Attrs: attrs}
	nf.SetSpan(fn.Span())
	nf.SetStructInfo(fn.StructInfo())
	return nf
}

// withBody returns a copy of fn with body (of the same struct info).
func withBody(fn *ir.Function, body ir.Expr) *ir.Function {
	nf := &ir.Function{Params: fn.Params, Body: body, Ret: fn.Ret, Pure: fn.Pure, Attrs: fn.Attrs}
	nf.SetSpan(fn.Span())
	nf.SetStructInfo(fn.StructInfo())
	return nf
}
