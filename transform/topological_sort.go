package transform

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// codeSortCycle reports bindings a topological sort cannot place.
var codeSortCycle = optCodes.Define("OPT041", "TopologicalSort: a binding's requirements form a cycle (a recursive local function)")

// TopologicalSort is TVM's src/relax/transform/topological_sort.cc: the
// bindings of every dataflow block are reordered as a depth-first or
// breadth-first search over the function's use-def graph finds them,
// starting from the function's inputs or from its outputs.
//
// The graph is TVM's: a binding var requires the vars its value uses (a
// use inside a nested scope is charged to the innermost enclosing binding;
// a use outside any binding, a result, to the output node); parameters and
// bindings that use no var hang from the input node, bindings nothing uses
// from the output node. A node is emitted once all of its requirements (from
// the inputs; its users, from the outputs) have been visited; ties follow
// the existing order (a depth-first search visits users in reverse, so the
// first is on top of the stack). From the outputs, the visit order is
// reversed at the end.
//
// TVM runs one search over the whole function for each dataflow block and
// keeps the block's bindings; the search does not depend on the block, so
// this pass runs it once per function and orders each block by it. A local
// function is sorted with its own graph, as TVM's sorter does.
var TopologicalSort = passes.Define(passes.Info{
	Name:     "TopologicalSort",
	Doc:      "reorder the bindings of dataflow blocks by a depth- or breadth-first search from the inputs or the outputs",
	OptLevel: 0,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it orders bindings by the vars their values use, which needs A-normal form",
	},
	Options: []passes.Option{
		{Name: "order", Type: passes.String, Default: "depth-first", Doc: `"depth-first" or "breadth-first"`,
			Check: oneOf("depth-first", "breadth-first")},
		{Name: "direction", Type: passes.String, Default: "from-inputs", Doc: `"from-inputs" or "from-outputs"`,
			Check: oneOf("from-inputs", "from-outputs")},
	},
}, passes.Functions(func(env *passes.Env, mod *ir.Module, name string, f *ir.Function) (*ir.Function, error) {
	o := env.Options()
	nf, err := SortTopologically(f, o.String("order") == "breadth-first", o.String("direction") == "from-outputs")
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", name, err)
	}
	return nf, nil
}).InParallel())

// oneOf is an Option.Check accepting the given words.
func oneOf(words ...string) func(any) error {
	return func(v any) error {
		if slices.Contains(words, v.(string)) {
			return nil
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = strconv.Quote(w)
		}
		return fmt.Errorf("want %s, got %q", strings.Join(quoted, " or "), v)
	}
}

// SortTopologically is the work of TopologicalSort on one function: f with
// its dataflow blocks reordered, or f itself when every block is in order.
func SortTopologically(f *ir.Function, breadthFirst, fromOutputs bool) (*ir.Function, error) {
	g := newDepGraph()
	g.function(f)
	pos, err := g.search(breadthFirst, fromOutputs)
	if err != nil {
		return nil, err
	}
	var nestedErr error
	m := &ir.Mutator{KeepStructInfo: true}
	m.PreExpr = func(e ir.Expr) ir.Expr {
		if nested, ok := e.(*ir.Function); ok {
			nf, err := SortTopologically(nested, breadthFirst, fromOutputs)
			if err != nil {
				nestedErr = err
				return nested
			}
			return nf
		}
		return nil
	}
	m.PostExpr = func(e ir.Expr) ir.Expr {
		s, ok := e.(*ir.SeqExpr)
		if !ok {
			return e
		}
		return sortBlocks(s, g, pos, fromOutputs)
	}
	nf := m.Function(f)
	if nestedErr != nil {
		return nil, nestedErr
	}
	return nf, nil
}

// The nodes of a depGraph: the input and output nodes, then vars.
const (
	inputNode  = 0
	outputNode = 1
)

// depGraph is TVM's Dependencies for one function: users (downstream) and
// requirements (upstream) of every node, as lists with repetitions (a var
// used twice by one binding is listed twice), in the order of the uses.
// The walk records edges; finish lays the lists out in two flat arrays.
type depGraph struct {
	id       map[*ir.Var]int32
	vars     []*ir.Var // node -> var (nil for input and output)
	edges    []depEdge // in walk order
	users    [][]int32
	reqs     [][]int32
	bound    []int32 // binding vars in definition order
	dataflow []int32 // those bound in dataflow blocks
}

// depEdge is a use: down requires up.
type depEdge struct{ up, down int32 }

func newDepGraph() *depGraph {
	return &depGraph{id: map[*ir.Var]int32{}, vars: make([]*ir.Var, 2)}
}

func (g *depGraph) node(v *ir.Var) int32 {
	if n, ok := g.id[v]; ok {
		return n
	}
	n := int32(len(g.vars))
	g.id[v] = n
	g.vars = append(g.vars, v)
	return n
}

func (g *depGraph) edge(up, down int32) { g.edges = append(g.edges, depEdge{up, down}) }

// function builds the graph of f (TVM's BindingOrderCollector): the uses,
// then the bindings that use no var hung from the input node (after its
// parameters) and those nothing uses from the output node (before its
// other requirements, in binding order, as TVM prepends them).
func (g *depGraph) function(f *ir.Function) {
	g.expr(f, outputNode)
	n := len(g.vars)
	hasReq, hasUser := make([]bool, n), make([]bool, n)
	for _, e := range g.edges {
		hasUser[e.up], hasReq[e.down] = true, true
	}
	var zero, unused []depEdge
	for _, b := range g.bound {
		if !hasReq[b] {
			zero = append(zero, depEdge{inputNode, b})
		}
		if !hasUser[b] {
			unused = append(unused, depEdge{b, outputNode})
		}
	}
	g.users = group(n, false, g.edges, zero, unused)
	g.reqs = group(n, true, unused, g.edges, zero)
}

// group lays out the edges of seqs, in order, as per-node lists: by up
// (the users of each node) or, byDown, by down (the requirements).
func group(n int, byDown bool, seqs ...[]depEdge) [][]int32 {
	kv := func(e depEdge) (int32, int32) {
		if byDown {
			return e.down, e.up
		}
		return e.up, e.down
	}
	offset := make([]int32, n+1)
	for _, s := range seqs {
		for _, e := range s {
			k, _ := kv(e)
			offset[k+1]++
		}
	}
	for i := 1; i <= n; i++ {
		offset[i] += offset[i-1]
	}
	flat := make([]int32, offset[n])
	cursor := slices.Clone(offset[:n])
	for _, s := range seqs {
		for _, e := range s {
			k, v := kv(e)
			flat[cursor[k]] = v
			cursor[k]++
		}
	}
	out := make([][]int32, n)
	for i := range out {
		out[i] = flat[offset[i]:offset[i+1]:offset[i+1]]
	}
	return out
}

// expr records the uses in e, charged to user.
func (g *depGraph) expr(e ir.Expr, user int32) {
	switch e := e.(type) {
	case *ir.Var:
		g.edge(g.node(e), user)
	case *ir.Tuple:
		for _, f := range e.Fields {
			g.expr(f, user)
		}
	case *ir.TupleGetItem:
		g.expr(e.Tuple, user)
	case *ir.Call:
		g.expr(e.Op, user)
		for _, a := range e.Args {
			g.expr(a, user)
		}
	case *ir.If:
		g.expr(e.Cond, user)
		g.expr(e.Then, user)
		g.expr(e.Else, user)
	case *ir.SeqExpr:
		for _, blk := range e.Blocks {
			for _, b := range blk.Bindings {
				var v *ir.Var
				var value ir.Expr
				switch b := b.(type) {
				case *ir.VarBinding:
					v, value = b.Var, b.Value
				case *ir.MatchCast:
					v, value = b.Var, b.Value
				}
				n := g.node(v)
				g.expr(value, n)
				g.bound = append(g.bound, n)
				if blk.Dataflow {
					g.dataflow = append(g.dataflow, n)
				}
			}
		}
		g.expr(e.Body, user)
	case *ir.Function:
		for _, p := range e.Params {
			g.edge(inputNode, g.node(p))
		}
		g.expr(e.Body, user)
	}
}

// search runs the traversal (TVM's TopologicalSorter block loop) and
// returns the position at which each node was first visited (-1: never).
// Legality (every requirement visited) is kept as a count of unvisited
// requirement entries, so the search is linear in the graph.
func (g *depGraph) search(breadthFirst, fromOutputs bool) ([]int32, error) {
	forward, backward, start := g.users, g.reqs, int32(inputNode)
	if fromOutputs {
		forward, backward, start = g.reqs, g.users, outputNode
	}
	if !breadthFirst {
		// TVM reverses the user lists (whichever direction is forward),
		// so the first user ends on top of the stack.
		for _, l := range g.users {
			slices.Reverse(l)
		}
	}
	n := len(g.vars)
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = -1
	}
	remaining := make([]int32, n)
	for i := range n {
		remaining[i] = int32(len(backward[i]))
	}
	queue := []int32{start}
	head := 0
	next := int32(0)
	for head < len(queue) {
		var visiting int32
		if breadthFirst {
			visiting = queue[head]
			head++
		} else {
			visiting = queue[len(queue)-1]
			queue = queue[:len(queue)-1]
		}
		if pos[visiting] < 0 {
			pos[visiting] = next
			next++
			for _, adj := range forward[visiting] {
				remaining[adj]--
			}
		}
		for _, adj := range forward[visiting] {
			if pos[adj] < 0 && remaining[adj] == 0 {
				queue = append(queue, adj)
			}
		}
	}
	var stuck []string
	var at diag.Span
	for _, b := range g.dataflow {
		if pos[b] < 0 {
			if stuck == nil {
				at = g.vars[b].Span()
			}
			stuck = append(stuck, g.vars[b].Name)
		}
	}
	if len(stuck) > 0 {
		d := &diag.Diagnostic{Span: at, Severity: diag.Error, Code: codeSortCycle,
			Msg: fmt.Sprintf("TopologicalSort: bindings %s cannot be ordered: their requirements form a cycle", strings.Join(stuck, ", "))}
		return nil, d
	}
	return pos, nil
}

// sortBlocks returns s with each dataflow block's bindings in search order
// (reversed from the outputs), or s itself when all are in order already.
func sortBlocks(s *ir.SeqExpr, g *depGraph, pos []int32, fromOutputs bool) *ir.SeqExpr {
	var blocks []*ir.BindingBlock
	for i, blk := range s.Blocks {
		nb := blk
		if blk.Dataflow {
			nb = sortBlock(blk, g, pos, fromOutputs)
		}
		if nb != blk && blocks == nil {
			blocks = slices.Clone(s.Blocks[:i:i])
		}
		if blocks != nil {
			blocks = append(blocks, nb)
		}
	}
	if blocks == nil {
		return s
	}
	out := &ir.SeqExpr{Blocks: blocks, Body: s.Body}
	out.SetSpan(s.Span())
	out.SetStructInfo(s.StructInfo())
	return out
}

func sortBlock(blk *ir.BindingBlock, g *depGraph, pos []int32, fromOutputs bool) *ir.BindingBlock {
	key := func(b ir.Binding) int32 {
		p := pos[g.id[b.BoundVar()]]
		if fromOutputs {
			return -p
		}
		return p
	}
	sorted := slices.IsSortedFunc(blk.Bindings, func(a, b ir.Binding) int { return int(key(a) - key(b)) })
	if sorted {
		return blk
	}
	binds := slices.Clone(blk.Bindings)
	slices.SortFunc(binds, func(a, b ir.Binding) int { return int(key(a) - key(b)) })
	nb := &ir.BindingBlock{Bindings: binds, Dataflow: true}
	nb.SetSpan(blk.Span())
	return nb
}
