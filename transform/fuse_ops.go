package transform

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// kMaxFusedOps is TVM's default limit on the bindings of one fused group
// (config relax.FuseOps.max_depth).
const kMaxFusedOps = 256

// ConfigFuseMaxDepth is TVM's pass config key relax.FuseOps.max_depth.
const ConfigFuseMaxDepth = "relax.FuseOps.max_depth"

func init() {
	passes.RegisterConfig(passes.ConfigKey{Name: ConfigFuseMaxDepth, Type: passes.Int, Default: kMaxFusedOps,
		Doc: "FuseOps: the most bindings one fused group may hold"})
}

// FuseOps is TVM's relax.transform.FuseOps (src/relax/transform/fuse_ops.cc
// and the partitioner of src/relax/analysis/graph_partitioner.cc): the
// call_tir bindings of each dataflow block are grouped by the op patterns
// of their PrimFuncs (AnnotateTIROpPattern) along the post-dominator tree
// of the dataflow graph, and every group of more than one binding becomes
// a private Relax function with attribute Primitive, called where the
// group was. FuseTIR then turns each such function into one PrimFunc: the
// two are the middle and last members of the fusion group, and a module
// between them is in no phase (NoPrimitiveFunctions does not hold).
//
// The grouping follows TVM's rules: an OutEWiseFusable op (matmul, conv)
// takes the elementwise ops after it when every path to its post-dominator
// is broadcast or better; ElemWise and Broadcast ops fuse into an injective
// or reducing post-dominator; Injective ops fuse in a second round, when
// every path to the post-dominator is injective; a group holds at most
// relax.FuseOps.max_depth bindings; a value used outside its dataflow
// block (a non-dataflow variable) or by an opaque call ends a group. Each
// function is named fused_<kernels joined by _>, with a number appended
// when the name is taken; structurally equal groups share one function.
var FuseOps = passes.Define(passes.Info{
	Name:        "FuseOps",
	Doc:         "group the call_tir bindings of each dataflow block into Primitive functions by op pattern (TVM's dominator-tree fusion), for FuseTIR",
	OptLevel:    0,
	Accepts:     []phase.Phase{phase.Ingest, phase.Optimize},
	Invalidates: phase.Of(phase.NoPrimitiveFunctions),
	Options: []passes.Option{
		{Name: "fuse_opt_level", Type: passes.Int, Default: int64(-1),
			Doc: "the fusion level (0 fuses nothing); -1 takes the pass context's opt level, as TVM"},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	level := int(env.Options().Int("fuse_opt_level"))
	if level < 0 {
		level = env.PassContext().OptLevel
	}
	depth := kMaxFusedOps
	if v, ok := env.Config(ConfigFuseMaxDepth).(int64); ok {
		depth = int(v)
	}
	return FuseOpsModule(mod, level, depth)
}))

// FuseOpsModule runs FuseOps on mod at fusion level optLevel with groups
// of at most maxDepth bindings; it returns mod itself when nothing fuses.
func FuseOpsModule(mod *ir.Module, optLevel, maxDepth int) (*ir.Module, error) {
	g := buildFusionGraph(mod)
	groups := partitionGraph(g, optLevel, maxDepth)
	return newOperatorFusor(mod, g, groups).transform()
}

// isGroupFunction reports whether f is already a fused group (Primitive)
// or an offloaded one (Codegen): FuseOps leaves those alone.
func isGroupFunction(f *ir.Function) bool {
	if v, ok := f.Attrs[ir.AttrPrimitive]; ok && attrNonzero(v) {
		return true
	}
	_, codegen := f.Attrs.String("Codegen")
	return codegen
}

// ---- The indexed forward graph (TVM's GraphCreator) ----

// fusionNode is a node of the dataflow graph: a parameter, a binding or a
// leaf constant, in post-DFS order (every use after its definition).
type fusionNode struct {
	key       ir.Expr // the *ir.Var of a parameter or binding, or the leaf expression
	externRef bool    // used outside the dataflow block: never fused into a group as an intermediate
	pattern   ir.OpPattern
	outputs   []fusionEdge
}

type fusionEdge struct {
	node    int
	pattern ir.OpPattern // the consumer's pattern
}

type fusionGraph struct {
	nodes []fusionNode
	index map[ir.Expr]int
}

func buildFusionGraph(mod *ir.Module) *fusionGraph {
	g := &fusionGraph{index: map[ir.Expr]int{}}
	for _, name := range mod.Names() {
		f, ok := mod.Lookup(name)
		if fn, isFn := f.(*ir.Function); ok && isFn && !isGroupFunction(fn) {
			g.function(mod, fn)
		}
	}
	return g
}

func (g *fusionGraph) add(key ir.Expr, pattern ir.OpPattern, extern bool) int {
	id := len(g.nodes)
	g.nodes = append(g.nodes, fusionNode{key: key, pattern: pattern, externRef: extern})
	g.index[key] = id
	return id
}

func (g *fusionGraph) function(mod *ir.Module, f *ir.Function) {
	for _, p := range f.Params {
		g.add(p, ir.PatternOpaque, true) // passed in from outside
	}
	// Parameters after num_input are the packed model weights: taking one
	// apart is opaque, so fusion does not reorder the function's prologue.
	weights := map[*ir.Var]bool{}
	if n, ok := f.Attrs.Int(ir.AttrNumInput); ok {
		for i := int(n); i < len(f.Params); i++ {
			weights[f.Params[i]] = true
		}
	}
	seq, ok := f.Body.(*ir.SeqExpr)
	if !ok {
		return
	}
	for _, blk := range seq.Blocks {
		for _, b := range blk.Bindings {
			g.binding(mod, b, weights)
		}
	}
}

func (g *fusionGraph) binding(mod *ir.Module, b ir.Binding, weights map[*ir.Var]bool) {
	switch b := b.(type) {
	case *ir.MatchCast:
		// Opaque, and its value is no edge (as TVM).
		g.add(b.Var, ir.PatternOpaque, false)
	case *ir.VarBinding:
		// The node's pattern is set once its leaves have their nodes, so
		// that leaves precede it in post-DFS order.
		extern := !b.Var.Dataflow
		switch v := b.Value.(type) {
		case *ir.Call:
			pattern, args := ir.PatternOpaque, v.Args
			if (v.Op == op.CallTIR || v.Op == op.CallTIRInplace) && len(v.Args) >= 2 {
				if gv, ok := v.Args[0].(*ir.GlobalVar); ok {
					if pf := mod.PrimFunc(gv.Name); pf != nil {
						pattern = OpPatternAttr(pf)
					}
				}
				args = []ir.Expr{v.Args[1]}
			}
			leaves := g.leaves(args, nil)
			id := g.add(b.Var, pattern, extern)
			g.edges(leaves, id, pattern)
		case *ir.TupleGetItem:
			pattern := ir.PatternInjective
			if tv, ok := v.Tuple.(*ir.Var); ok && weights[tv] {
				pattern = ir.PatternOpaque
			}
			leaves := g.leaves([]ir.Expr{v.Tuple}, nil)
			id := g.add(b.Var, pattern, extern)
			g.edges(leaves, id, pattern)
		default:
			// Not fusable: an opaque node fed by every variable and
			// constant the value uses, at any depth.
			var leaves []int
			ir.Inspect(b.Value, func(x ir.Expr) bool {
				switch x.(type) {
				case *ir.Var, *ir.Constant:
					leaves = g.leaves([]ir.Expr{x}, leaves)
				}
				return true
			})
			id := g.add(b.Var, ir.PatternOpaque, extern)
			g.edges(leaves, id, ir.PatternOpaque)
		}
	}
}

// leaves returns the nodes of the leaf operands among args (tuples
// flattened), creating opaque nodes for leaves met for the first time.
// Globals, extern functions and ops are no nodes.
func (g *fusionGraph) leaves(args []ir.Expr, out []int) []int {
	stack := slices.Clone(args)
	slices.Reverse(stack)
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch e := e.(type) {
		case *ir.Tuple:
			for i := len(e.Fields) - 1; i >= 0; i-- {
				stack = append(stack, e.Fields[i])
			}
			continue
		case *ir.Var, *ir.Constant, *ir.ShapeExpr, *ir.PrimValue, *ir.StringImm, *ir.DataTypeImm:
		default:
			continue
		}
		id, ok := g.index[e]
		if !ok {
			id = g.add(e, ir.PatternOpaque, false) // constants are never fused
		}
		out = append(out, id)
	}
	return out
}

func (g *fusionGraph) edges(from []int, to int, pattern ir.OpPattern) {
	for _, f := range from {
		g.nodes[f].outputs = append(g.nodes[f].outputs, fusionEdge{node: to, pattern: pattern})
	}
}

// ---- The partitioner (TVM's GraphPartitioner, FuseOps's configuration) ----

// fusionGroup is a union-find set of nodes.
type fusionGroup struct {
	parent   *fusionGroup
	pattern  ir.OpPattern
	numNodes int
	anchored bool // holds an OutEWiseFusable node (TVM's anchor_ref)
}

func (gr *fusionGroup) root() *fusionGroup {
	r := gr
	for r.parent != nil {
		r = r.parent
	}
	for p := gr; p != r; {
		next := p.parent
		p.parent = r
		p = next
	}
	return r
}

// domNode is a node of the post-dominator tree.
type domNode struct {
	parent  *domNode
	gnode   int
	depth   int
	pattern ir.OpPattern // the combined pattern of the edges to parent
}

type partitioner struct {
	g        *fusionGraph
	groups   []*fusionGroup
	maxDepth int
	// visited marks nodes of the current path walk: visited[i] == stamp.
	visited []int
	stamp   int
	stack   []int
}

func partitionGraph(g *fusionGraph, optLevel, maxDepth int) []*fusionGroup {
	p := &partitioner{g: g, maxDepth: maxDepth, visited: make([]int, len(g.nodes))}
	p.groups = make([]*fusionGroup, len(g.nodes))
	for i, n := range g.nodes {
		p.groups[i] = &fusionGroup{pattern: n.pattern, numNodes: 1, anchored: n.pattern == ir.PatternOutEWiseFusable}
	}
	if optLevel == 0 {
		return p.groups
	}
	dom := postDominators(g)
	for phase := range 3 {
		p.runFuse(dom, phase)
	}
	return p.groups
}

// postDominators builds the post-dominator tree in one reverse pass (the
// graph is a DAG in post-DFS order): a node's parent is the least common
// ancestor of its consumers.
func postDominators(g *fusionGraph) []*domNode {
	tree := make([]*domNode, len(g.nodes))
	for i := len(g.nodes) - 1; i >= 0; i-- {
		n := &g.nodes[i]
		t := &domNode{gnode: i, depth: 1, pattern: ir.PatternOpaque}
		if !n.externRef {
			pattern := ir.PatternElemWise
			var parent *domNode
			for k, e := range n.outputs {
				pattern = max(pattern, e.pattern)
				if k == 0 {
					parent = tree[e.node]
				} else {
					parent = lca(parent, tree[e.node], &pattern)
				}
			}
			t.parent, t.pattern = parent, pattern
			if parent != nil {
				t.depth = parent.depth + 1
			}
		}
		tree[i] = t
	}
	return tree
}

func lca(a, b *domNode, pattern *ir.OpPattern) *domNode {
	for a != b {
		if a == nil || b == nil {
			return nil
		}
		switch {
		case a.depth < b.depth:
			*pattern = max(*pattern, b.pattern)
			b = b.parent
		case b.depth < a.depth:
			*pattern = max(*pattern, a.pattern)
			a = a.parent
		default:
			*pattern = max(*pattern, a.pattern, b.pattern)
			a, b = a.parent, b.parent
		}
	}
	return a
}

// walk visits, once each, the nodes reachable from start (the consumers of
// src, or src itself) without passing sink, calling visit on each (sink
// included when reached); it stops early when visit returns false. It
// iterates: paths may be as long as the function.
func (p *partitioner) walk(start []int, sink int, visit func(node int) bool) bool {
	p.stamp++
	p.stack = append(p.stack[:0], start...)
	for len(p.stack) > 0 {
		n := p.stack[len(p.stack)-1]
		p.stack = p.stack[:len(p.stack)-1]
		if p.visited[n] == p.stamp {
			continue
		}
		p.visited[n] = p.stamp
		if !visit(n) {
			return false
		}
		if n == sink {
			continue
		}
		for _, e := range p.g.nodes[n].outputs {
			p.stack = append(p.stack, e.node)
		}
	}
	return true
}

func (p *partitioner) consumers(n int) []int {
	out := make([]int, len(p.g.nodes[n].outputs))
	for i, e := range p.g.nodes[n].outputs {
		out[i] = e.node
	}
	return out
}

// checkPath: every node between src and sink (its group's pattern)
// satisfies cond.
func (p *partitioner) checkPath(src, sink int, cond func(k ir.OpPattern, isSink bool) bool) bool {
	return p.walk(p.consumers(src), sink, func(n int) bool {
		return cond(p.groups[n].root().pattern, n == sink)
	})
}

// commitFuse merges src and every node between it and sink into sink's group.
func (p *partitioner) commitFuse(src, sink int) {
	target := p.groups[sink]
	p.walk([]int{src}, sink, func(n int) bool {
		if n != sink {
			p.merge(p.groups[n], target)
		}
		return true
	})
}

func (p *partitioner) merge(child, parent *fusionGroup) {
	child, parent = child.root(), parent.root()
	if child == parent {
		return
	}
	parent.numNodes += child.numNodes
	child.parent = parent
	if child.anchored {
		if parent.anchored || child.pattern > ir.PatternBroadcast && parent.pattern > ir.PatternBroadcast {
			panic("FuseOps: two complex groups merged") // the partitioning rules exclude it
		}
		parent.anchored = true
		parent.pattern = max(child.pattern, parent.pattern)
	}
}

// fusedNodesWithChild counts the nodes of sink's group once src and the
// nodes between them join it.
func (p *partitioner) fusedNodesWithChild(src, sink int) int {
	sum := p.groups[sink].root().numNodes
	p.walk([]int{src}, sink, func(n int) bool {
		if n != sink {
			sum += p.groups[n].numNodes // as TVM: the node's own group record
		}
		return true
	})
	return sum
}

func (p *partitioner) runFuse(dom []*domNode, phase int) {
	for nid := range p.g.nodes {
		group := p.groups[nid]
		dn := dom[nid]
		if group.pattern == ir.PatternOpaque || dn.parent == nil {
			continue
		}
		sink := dn.parent.gnode
		if p.fusedNodesWithChild(nid, sink) > p.maxDepth {
			continue
		}
		if phase == 2 {
			// Injective ops into intermediate tuples. Tuples are opaque
			// bindings in Relax FuseOps, so this never fires; kept as TVM.
			if group.pattern > ir.PatternInjective {
				continue
			}
			parentGroup := p.groups[sink]
			rootGroup := parentGroup.root()
			if rootGroup.pattern == ir.PatternTuple {
				continue
			}
			if parentGroup.pattern == ir.PatternTuple && rootGroup.pattern <= ir.PatternInjective {
				if p.checkPath(nid, sink, func(k ir.OpPattern, _ bool) bool { return k <= ir.PatternInjective }) {
					p.commitFuse(nid, sink)
				}
			}
			continue
		}
		if group.root() == p.groups[sink].root() {
			continue // already fused with its post-dominator
		}
		if p.groups[sink].pattern == ir.PatternTuple {
			continue
		}
		switch {
		case group.pattern == ir.PatternOutEWiseFusable:
			// matmul, conv: take the elementwise ops after it while every
			// intermediate is broadcast or better.
			if phase != 0 || dn.pattern != ir.PatternElemWise {
				continue
			}
			if p.checkPath(nid, sink, func(k ir.OpPattern, _ bool) bool { return k <= ir.PatternBroadcast }) {
				p.commitFuse(nid, sink)
			}
		case group.pattern <= ir.PatternBroadcast:
			if dn.pattern > ir.PatternInjective && dn.pattern != ir.PatternCommReduce {
				continue
			}
			cond := func(k ir.OpPattern, isSink bool) bool {
				if !isSink {
					return k <= ir.PatternInjective
				}
				return k <= ir.PatternBroadcast || k == ir.PatternCommReduce || k == ir.PatternInjective || k == ir.PatternOutEWiseFusable
			}
			if p.checkPath(nid, sink, cond) {
				p.commitFuse(nid, sink)
			}
		case group.pattern == ir.PatternInjective || group.pattern == ir.PatternTuple:
			// After the first round, so that OutEWiseFusable groups finish first.
			if phase != 1 {
				continue
			}
			if p.checkPath(nid, sink, func(k ir.OpPattern, _ bool) bool { return k <= ir.PatternInjective }) {
				p.commitFuse(nid, sink)
			}
		}
	}
}

// ---- Rewriting (TVM's OperatorFusor and FunctionCreator) ----

type operatorFusor struct {
	mod    *ir.Module
	out    *ir.Module
	g      *fusionGraph
	groups []*fusionGroup
	// deps are the groups each group reads from (TVM's group_deps_).
	deps map[*fusionGroup][]*fusionGroup
	// names is the pass's name supply: base name -> last suffix used.
	names map[string]int
	used  map[string]bool
	// dedup holds the Primitive functions of the module by hash.
	dedup map[uint64][]string
}

func newOperatorFusor(mod *ir.Module, g *fusionGraph, groups []*fusionGroup) *operatorFusor {
	return &operatorFusor{mod: mod, g: g, groups: groups, deps: map[*fusionGroup][]*fusionGroup{},
		names: map[string]int{}, used: map[string]bool{}}
}

func (o *operatorFusor) groupOf(v ir.Expr) *fusionGroup {
	if id, ok := o.g.index[v]; ok {
		return o.groups[id].root()
	}
	return nil
}

func (o *operatorFusor) transform() (*ir.Module, error) {
	fused := false
	for _, gr := range o.groups {
		if gr.root().numNodes > 1 {
			fused = true
			break
		}
	}
	if !fused {
		return o.mod, nil
	}
	o.out = o.mod.Clone()
	for _, name := range o.mod.Names() {
		f := o.mod.Func(name)
		if f == nil || isGroupFunction(f) {
			continue
		}
		nf, err := o.function(name, f)
		if err != nil {
			return nil, err
		}
		o.out.Set(name, nf)
	}
	return o.out, nil
}

// function rewrites the dataflow blocks of f, remapping later uses of the
// variables the fused calls replaced.
func (o *operatorFusor) function(name string, f *ir.Function) (*ir.Function, error) {
	seq, ok := f.Body.(*ir.SeqExpr)
	if !ok {
		return f, nil
	}
	remap := map[*ir.Var]ir.Expr{}
	changed := false
	blocks := make([]*ir.BindingBlock, len(seq.Blocks))
	for i, blk := range seq.Blocks {
		if blk.Dataflow {
			nb, ch, err := o.block(blk, remap)
			if err != nil {
				return nil, fmt.Errorf("FuseOps: function %s: %w", name, err)
			}
			blocks[i], changed = nb, changed || ch
			continue
		}
		blocks[i] = blk
		if len(remap) > 0 {
			nb := &ir.BindingBlock{Bindings: make([]ir.Binding, len(blk.Bindings))}
			for j, b := range blk.Bindings {
				nb.Bindings[j] = rebind(b, remap)
			}
			blocks[i] = nb
		}
	}
	if !changed {
		return f, nil
	}
	body := ir.Bind(seq.Body, remap)
	nf := &ir.Function{Params: f.Params, Body: &ir.SeqExpr{Blocks: blocks, Body: body}, Ret: f.Ret, Pure: f.Pure, Attrs: f.Attrs}
	nf.SetSpan(f.Span())
	out, errs := ir.NormalizeFunction(o.out, nf)
	if err := errs.Err(); err != nil {
		return nil, fmt.Errorf("FuseOps: function %s: %w", name, err)
	}
	return out, nil
}

// rebind returns b with remapped variables in its value (b itself when none).
func rebind(b ir.Binding, remap map[*ir.Var]ir.Expr) ir.Binding {
	switch b := b.(type) {
	case *ir.VarBinding:
		if v := ir.Bind(b.Value, remap); v != b.Value {
			nb := &ir.VarBinding{Var: b.Var, Value: v}
			nb.SetSpan(b.Span())
			return nb
		}
	case *ir.MatchCast:
		if v := ir.Bind(b.Value, remap); v != b.Value {
			nb := &ir.MatchCast{Var: b.Var, Value: v, SInfo: b.SInfo}
			nb.SetSpan(b.Span())
			return nb
		}
	}
	return b
}

// block rewrites one dataflow block: each group of more than one binding
// becomes a call of its function, emitted where its last binding was.
func (o *operatorFusor) block(blk *ir.BindingBlock, remap map[*ir.Var]ir.Expr) (*ir.BindingBlock, bool, error) {
	creators := map[*fusionGroup]*funcCreator{}
	var order []*fusionGroup
	for _, b := range blk.Bindings {
		gr := o.groupOf(b.BoundVar())
		if gr == nil || gr.numNodes == 1 {
			continue
		}
		c := creators[gr]
		if c == nil {
			c = newFuncCreator()
			creators[gr] = c
			order = append(order, gr)
		}
		c.append(b)
	}
	if len(order) == 0 {
		if len(remap) == 0 {
			return blk, false, nil
		}
		nb := &ir.BindingBlock{Dataflow: true, Bindings: make([]ir.Binding, len(blk.Bindings))}
		for j, b := range blk.Bindings {
			nb.Bindings[j] = rebind(b, remap)
		}
		return nb, false, nil
	}

	// A symbolic variable a match_cast defines orders the groups too: a
	// group using it (an R.prim_value(n), a shape) must come after the
	// binding that defines it, although no Relax variable connects them.
	symDef := map[*ir.PrimVar]*fusionGroup{}
	for _, b := range blk.Bindings {
		if mc, ok := b.(*ir.MatchCast); ok {
			for _, v := range ir.DefinableSymVars(mc.SInfo) {
				if _, seen := symDef[v]; !seen {
					symDef[v] = o.groupOf(mc.Var)
				}
			}
		}
	}

	// The boundary: a variable a group defines and another binding reads
	// is an output of its group.
	for _, b := range blk.Bindings {
		cur := o.groupOf(b.BoundVar())
		var value ir.Expr
		switch b := b.(type) {
		case *ir.VarBinding:
			value = b.Value
		case *ir.MatchCast:
			value = b.Value
		}
		var err error
		ir.Inspect(value, func(x ir.Expr) bool {
			v, ok := x.(*ir.Var)
			if !ok || err != nil {
				return err == nil
			}
			producer := o.groupOf(v)
			if producer == nil || producer == cur {
				return true
			}
			if slices.Contains(o.deps[producer], cur) {
				err = fmt.Errorf("a cyclic dependency between the groups of %s and %s", b.BoundVar().Name, v.Name)
				return false
			}
			if !slices.Contains(o.deps[cur], producer) {
				o.deps[cur] = append(o.deps[cur], producer)
			}
			if c := creators[producer]; c != nil {
				c.addOutput(v)
			}
			return true
		})
		if err != nil {
			return nil, false, err
		}
		for _, sv := range freeSymVars(value) {
			producer := symDef[sv]
			if producer == nil || producer == cur || slices.Contains(o.deps[cur], producer) {
				continue
			}
			if slices.Contains(o.deps[producer], cur) {
				return nil, false, fmt.Errorf("a cyclic dependency between the group of %s and the definition of %s", b.BoundVar().Name, sv.Name)
			}
			o.deps[cur] = append(o.deps[cur], producer)
		}
	}
	for _, gr := range order {
		if err := creators[gr].create(o.out); err != nil {
			return nil, false, err
		}
	}

	var out []ir.Binding
	for _, b := range o.topoSortByGroup(blk.Bindings) {
		gr := o.groupOf(b.BoundVar())
		c := creators[gr]
		if c == nil {
			out = append(out, rebind(b, remap))
			continue
		}
		if c.fn == nil || c.bindings[len(c.bindings)-1] != b {
			continue // dead group, or not its last binding
		}
		gv := o.addFunction(c.fn, c.name)
		args := make([]ir.Expr, len(c.args))
		for i, a := range c.args {
			args[i] = ir.Bind(a, remap)
		}
		last := b.BoundVar()
		call := &ir.Call{Op: &ir.GlobalVar{Name: gv}, Args: args}
		nv := &ir.Var{Name: last.Name, Dataflow: last.Dataflow}
		out = append(out, &ir.VarBinding{Var: nv, Value: call})
		if len(c.outputs) == 1 {
			remap[c.outputs[0]] = nv
			continue
		}
		// A function of several outputs returns a tuple: each output
		// variable becomes a projection, in binding order.
		for _, gb := range c.bindings {
			v := gb.BoundVar()
			if i, ok := c.outputIndex(v); ok {
				pv := &ir.Var{Name: v.Name, Dataflow: v.Dataflow}
				out = append(out, &ir.VarBinding{Var: pv, Value: &ir.TupleGetItem{Tuple: nv, Index: i}})
				remap[v] = pv
			}
		}
	}
	nb := &ir.BindingBlock{Dataflow: true, Bindings: out}
	nb.SetSpan(blk.Span())
	return nb, true, nil
}

// topoSortByGroup orders the bindings so that every group comes after the
// groups it reads, keeping the original order where it can (TVM's
// TopoSortByGroupDep, iterative).
func (o *operatorFusor) topoSortByGroup(bindings []ir.Binding) []ir.Binding {
	perGroup := map[*fusionGroup][]ir.Binding{}
	var order []*fusionGroup
	for _, b := range bindings {
		gr := o.groupOf(b.BoundVar())
		if _, ok := perGroup[gr]; !ok {
			order = append(order, gr)
		}
		perGroup[gr] = append(perGroup[gr], b)
	}
	visited := map[*fusionGroup]bool{}
	sorted := make([]ir.Binding, 0, len(bindings))
	type frame struct {
		g    *fusionGroup
		next int
	}
	for _, start := range order {
		if visited[start] {
			continue
		}
		visited[start] = true
		stack := []frame{{g: start}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if deps := o.deps[top.g]; top.next < len(deps) {
				d := deps[top.next]
				top.next++
				if !visited[d] {
					visited[d] = true
					stack = append(stack, frame{g: d})
				}
				continue
			}
			sorted = append(sorted, perGroup[top.g]...)
			stack = stack[:len(stack)-1]
		}
	}
	return sorted
}

// addFunction adds f under a fresh name derived from hint, or returns the
// name of a structurally equal Primitive function already in the module.
func (o *operatorFusor) addFunction(f *ir.Function, hint string) string {
	if o.dedup == nil {
		o.dedup = map[uint64][]string{}
		for _, name := range o.mod.Names() {
			if g := o.mod.Func(name); g != nil && isGroupFunction(g) {
				h := ir.StructuralHash(g)
				o.dedup[h] = append(o.dedup[h], name)
			}
		}
	}
	h := ir.StructuralHash(f)
	var same []string
	for _, name := range o.dedup[h] {
		if ir.StructuralEqual(o.out.Func(name), f, ir.EqualOptions{}) {
			same = append(same, name)
		}
	}
	if len(same) > 0 {
		return slices.Min(same) // the first in lexicographic order, as TVM
	}
	name := o.uniqueName(hint)
	for {
		if _, taken := o.out.Lookup(name); !taken {
			break
		}
		name = o.uniqueName(hint)
	}
	o.out.Set(name, f)
	o.dedup[h] = append(o.dedup[h], name)
	return name
}

// uniqueName is TVM's NameSupply: the name with dots made underscores,
// then with 1, 2, ... appended while taken.
func (o *operatorFusor) uniqueName(base string) string {
	base = strings.ReplaceAll(base, ".", "_")
	if !o.used[base] {
		o.used[base] = true
		return base
	}
	for {
		o.names[base]++
		cand := base + strconv.Itoa(o.names[base])
		if !o.used[cand] {
			o.used[cand] = true
			return cand
		}
	}
}

// funcCreator collects one group's bindings and builds its function.
type funcCreator struct {
	bindings []ir.Binding
	name     string
	defined  map[*ir.Var]bool
	// args are the values the call passes, params the function's
	// parameters for them.
	args   []ir.Expr
	params []*ir.Var
	argIdx map[ir.Expr]int
	// outputs are the group's variables read after it.
	outputs []*ir.Var
	// partial holds tuple arguments read only through projections, with
	// the fields read; tupleArg their positions.
	partial      map[ir.Expr][]int
	partialOrder []ir.Expr
	nConst       int
	fn           *ir.Function
}

func newFuncCreator() *funcCreator {
	return &funcCreator{name: "fused", defined: map[*ir.Var]bool{}, argIdx: map[ir.Expr]int{}, partial: map[ir.Expr][]int{}}
}

func (c *funcCreator) append(b ir.Binding) {
	if vb, ok := b.(*ir.VarBinding); ok {
		switch v := vb.Value.(type) {
		case *ir.Call:
			if (v.Op == op.CallTIR || v.Op == op.CallTIRInplace) && len(v.Args) >= 2 {
				if gv, ok := v.Args[0].(*ir.GlobalVar); ok {
					c.name += "_" + gv.Name
				}
				if t, ok := v.Args[1].(*ir.Tuple); ok {
					for _, a := range t.Fields {
						c.param(a)
					}
				} else {
					c.param(v.Args[1])
				}
			} else {
				switch callee := v.Op.(type) {
				case *ir.Op:
					c.name += "_" + callee.Name
				case *ir.GlobalVar:
					c.name += "_" + strings.TrimPrefix(callee.Name, "fused_")
				}
				for _, a := range v.Args {
					if t, ok := a.(*ir.Tuple); ok {
						for _, f := range t.Fields {
							c.param(f)
						}
					} else {
						c.param(a)
					}
					if _, isTuple := a.StructInfo().(*ir.TupleInfo); isTuple {
						c.dropPartial(a) // read whole
					}
				}
			}
		case *ir.TupleGetItem:
			c.param(v.Tuple)
			if fields, ok := c.partial[v.Tuple]; ok {
				c.partial[v.Tuple] = append(fields, v.Index)
			}
		}
		c.defined[vb.Var] = true
		if !vb.Var.Dataflow {
			c.addOutput(vb.Var)
		}
	}
	c.bindings = append(c.bindings, b)
}

func (c *funcCreator) dropPartial(e ir.Expr) {
	if _, ok := c.partial[e]; ok {
		delete(c.partial, e)
		c.partialOrder = slices.DeleteFunc(c.partialOrder, func(x ir.Expr) bool { return x == e })
	}
}

// param makes e a parameter unless the group defines it, it is one
// already, or it is a constant shape or prim value (inlined).
func (c *funcCreator) param(e ir.Expr) {
	if _, ok := c.argIdx[e]; ok {
		return
	}
	v, isVar := e.(*ir.Var)
	if isVar && c.defined[v] {
		return
	}
	name := ""
	if isVar {
		name = v.Name
	} else {
		name = "param_" + strconv.Itoa(c.nConst)
		c.nConst++
	}
	if !inlinableConstant(e) {
		c.argIdx[e] = len(c.args)
		c.args = append(c.args, e)
		c.params = append(c.params, ir.NewVar(name, e.StructInfo()))
	}
	if _, isTuple := e.StructInfo().(*ir.TupleInfo); isTuple {
		c.partial[e] = nil
		c.partialOrder = append(c.partialOrder, e)
	}
}

// inlinableConstant: a shape or prim value without symbolic variables (or
// a tuple of them), which the function keeps inline rather than as a
// parameter.
func inlinableConstant(e ir.Expr) bool {
	switch e := e.(type) {
	case *ir.Tuple:
		for _, f := range e.Fields {
			if !inlinableConstant(f) {
				return false
			}
		}
		return true
	case *ir.PrimValue:
		return !hasPrimVar(e.Value)
	case *ir.ShapeExpr:
		for _, d := range e.Values {
			if hasPrimVar(d) {
				return false
			}
		}
		return true
	}
	return false
}

func hasPrimVar(e ir.PrimExpr) bool {
	found := false
	ir.InspectPrim(e, func(x ir.PrimExpr) bool {
		if _, ok := x.(*ir.PrimVar); ok {
			found = true
		}
		return !found
	})
	return found
}

func (c *funcCreator) addOutput(v *ir.Var) int {
	if i, ok := c.outputIndex(v); ok {
		return i
	}
	c.outputs = append(c.outputs, v)
	return len(c.outputs) - 1
}

func (c *funcCreator) outputIndex(v *ir.Var) (int, bool) {
	i := slices.Index(c.outputs, v)
	return i, i >= 0
}

// create builds the group's function (nil when no output is read: the
// group is dead code).
func (c *funcCreator) create(mod *ir.Module) error {
	if len(c.outputs) == 0 {
		return nil
	}
	// A tuple read only through projections becomes one parameter per
	// field read, passed as projections.
	itemParam := map[ir.Expr]map[int]*ir.Var{}
	for _, t := range c.partialOrder {
		fields := c.partial[t]
		i, ok := c.argIdx[t]
		if !ok || len(fields) == 0 {
			continue
		}
		tinfo := t.StructInfo().(*ir.TupleInfo)
		base := c.params[i].Name
		var newArgs []ir.Expr
		var newParams []*ir.Var
		itemParam[t] = map[int]*ir.Var{}
		for _, k := range fields {
			if _, dup := itemParam[t][k]; dup {
				continue
			}
			p := ir.NewVar(base+"_"+strconv.Itoa(k), tinfo.Fields[k])
			newArgs = append(newArgs, &ir.TupleGetItem{Tuple: t, Index: k})
			newParams = append(newParams, p)
			itemParam[t][k] = p
		}
		c.args = slices.Concat(c.args[:i], newArgs, c.args[i+1:])
		c.params = slices.Concat(c.params[:i], newParams, c.params[i+1:])
		c.argIdx = map[ir.Expr]int{}
		for j, a := range c.args {
			c.argIdx[a] = j
		}
	}

	remap := map[ir.Expr]ir.Expr{}
	for i, a := range c.args {
		remap[a] = c.params[i]
	}
	mut := &ir.Mutator{PreExpr: func(e ir.Expr) ir.Expr {
		if r, ok := remap[e]; ok {
			return r
		}
		return nil
	}}
	outputs := make([]ir.Expr, len(c.outputs))
	var binds []ir.Binding
	for _, b := range c.bindings {
		v := b.BoundVar()
		if vb, ok := b.(*ir.VarBinding); ok {
			if g, ok := vb.Value.(*ir.TupleGetItem); ok {
				if p := itemParam[g.Tuple][g.Index]; p != nil {
					remap[v] = p
					if i, ok := c.outputIndex(v); ok {
						outputs[i] = p
					}
					continue
				}
			}
		}
		i, isOut := c.outputIndex(v)
		nv := &ir.Var{Name: v.Name, Dataflow: !isOut}
		switch b := b.(type) {
		case *ir.VarBinding:
			binds = append(binds, &ir.VarBinding{Var: nv, Value: mut.Expr(b.Value)})
		case *ir.MatchCast:
			binds = append(binds, &ir.MatchCast{Var: nv, Value: mut.Expr(b.Value), SInfo: b.SInfo})
		}
		remap[v] = nv
		if isOut {
			outputs[i] = nv
		}
	}
	var result ir.Expr = outputs[0]
	if len(outputs) > 1 {
		result = &ir.Tuple{Fields: outputs}
	}
	build := func(params []*ir.Var) (*ir.Function, error) {
		f := &ir.Function{Params: params, Pure: true, Attrs: ir.Attrs{ir.AttrPrimitive: true},
			Body: &ir.SeqExpr{Blocks: []*ir.BindingBlock{{Dataflow: true, Bindings: binds}}, Body: result}}
		nf, errs := ir.NormalizeFunction(mod, f)
		return nf, errs.Err()
	}
	f, err := build(c.params)
	if err != nil {
		return err
	}
	// Symbolic variables the body uses that no parameter defines are
	// passed as one shape, tir_vars.
	if free := freeSymVars(f); len(free) > 0 {
		dims := make([]ir.PrimExpr, len(free))
		for i, v := range free {
			dims[i] = v
		}
		c.params = append(c.params, ir.NewVar("tir_vars", &ir.ShapeInfo{Values: dims, NDim: len(dims)}))
		c.args = append(c.args, ir.NewShapeExpr(dims...))
		if f, err = build(c.params); err != nil {
			return err
		}
	}
	// The function defines its own symbolic variables (TVM's
	// SymbolicVarRenewMutator): none is shared with the caller.
	renew := map[*ir.PrimVar]ir.PrimExpr{}
	for _, p := range f.Params {
		for _, v := range ir.DefinableSymVars(p.StructInfo()) {
			if _, ok := renew[v]; !ok {
				renew[v] = ir.NewPrimVar(v.Name, v.Type)
			}
		}
	}
	if len(renew) > 0 {
		rf := ir.SubstituteSymVarsInExpr(f, renew).(*ir.Function)
		nf, errs := ir.NormalizeFunction(mod, rf)
		if err := errs.Err(); err != nil {
			return err
		}
		f = nf
	}
	c.fn = f
	return nil
}
