package htmlview

import (
	"fmt"
	"html"
	"slices"
	"strings"

	"github.com/phasec/phasec/ir"
)

// maxGraphNodes bounds a drawing: beyond it the page says how many nodes
// the function has instead of drawing an unreadable picture.
const maxGraphNodes = 400

// graph is the dataflow of one Relax function: its parameters, one node per
// binding whose value computes something (an op or function call), and its
// result; an edge runs from the node that produced a value to each node
// that reads it (through tuples, projections and aliases).
type graph struct {
	Func  string
	nodes []node
	edges [][2]int
	// omitted is the node count when the function is too big to draw.
	omitted int
}

type nodeKind uint8

const (
	nodeParam nodeKind = iota
	nodeOp
	nodeGroup // a call to a fusion or offload group (Primitive, Composite, Codegen)
	nodeResult
)

type node struct {
	kind    nodeKind
	label   string
	members []string // a group's ops, in order
	layer   int
	slot    int
}

// graphs draws every Relax function of m, in name order.
func graphs(m *ir.Module) []graph {
	var out []graph
	for _, name := range m.Names() {
		f := m.Func(name)
		if f == nil || hasAttr(f.Attrs, "Primitive") || hasAttr(f.Attrs, "Composite") {
			continue // drawn inside the caller's group box
		}
		out = append(out, dataflow(m, name, f))
	}
	return out
}

func dataflow(m *ir.Module, name string, f *ir.Function) graph {
	g := graph{Func: name}
	producers := map[*ir.Var][]int{}
	add := func(n node, inputs []int) int {
		id := len(g.nodes)
		for _, in := range inputs {
			n.layer = max(n.layer, g.nodes[in].layer+1)
			g.edges = append(g.edges, [2]int{in, id})
		}
		g.nodes = append(g.nodes, n)
		return id
	}
	for _, p := range f.Params {
		producers[p] = []int{add(node{kind: nodeParam, label: p.Name}, nil)}
	}
	body, ok := f.Body.(*ir.SeqExpr)
	if !ok {
		return g
	}
	for _, b := range body.Blocks {
		for _, bind := range b.Bindings {
			var v *ir.Var
			var value ir.Expr
			switch bb := bind.(type) {
			case *ir.VarBinding:
				v, value = bb.Var, bb.Value
			case *ir.MatchCast:
				v, value = bb.Var, bb.Value
			default:
				continue
			}
			inputs := sources(value, producers)
			call, isCall := value.(*ir.Call)
			if !isCall {
				producers[v] = inputs // an alias, tuple or projection: pass the sources on
				continue
			}
			n := node{kind: nodeOp, label: calleeLabel(call)}
			if gv, ok := call.Op.(*ir.GlobalVar); ok {
				if callee := m.Func(gv.Name); callee != nil && isGroup(callee) {
					n.kind, n.members = nodeGroup, groupMembers(callee)
				}
			}
			producers[v] = []int{add(n, inputs)}
		}
	}
	add(node{kind: nodeResult, label: "result"}, sources(body.Body, producers))
	if len(g.nodes) > maxGraphNodes {
		g.omitted, g.nodes, g.edges = len(g.nodes), nil, nil
	}
	return g
}

func isGroup(f *ir.Function) bool {
	return hasAttr(f.Attrs, "Primitive") || hasAttr(f.Attrs, "Composite") || hasAttr(f.Attrs, "Codegen")
}

// sources returns the nodes whose values e reads, each once, in order.
func sources(e ir.Expr, producers map[*ir.Var][]int) []int {
	var out []int
	var walk func(e ir.Expr)
	walk = func(e ir.Expr) {
		switch x := e.(type) {
		case *ir.Var:
			for _, id := range producers[x] {
				if !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
		case *ir.Tuple:
			for _, f := range x.Fields {
				walk(f)
			}
		case *ir.TupleGetItem:
			walk(x.Tuple)
		case *ir.Call:
			for _, a := range x.Args {
				walk(a)
			}
		}
	}
	walk(e)
	return out
}

// calleeLabel names what a call computes: the op without its "relax."
// prefix, the PrimFunc a call_tir-family call runs, or the callee's name.
func calleeLabel(c *ir.Call) string {
	switch op := c.Op.(type) {
	case *ir.Op:
		name := strings.TrimPrefix(op.Name, "relax.")
		if strings.HasPrefix(name, "call_tir") || name == "call_dps_packed" {
			if len(c.Args) > 0 {
				switch callee := c.Args[0].(type) {
				case *ir.GlobalVar:
					return callee.Name
				case *ir.ExternFunc:
					return callee.Symbol
				}
			}
		}
		return name
	case *ir.GlobalVar:
		return op.Name
	case *ir.ExternFunc:
		return op.Symbol
	case *ir.Var:
		return op.Name
	}
	return "call"
}

// groupMembers lists the ops a fusion group's body calls, in order.
func groupMembers(f *ir.Function) []string {
	body, ok := f.Body.(*ir.SeqExpr)
	if !ok {
		return nil
	}
	var out []string
	for _, b := range body.Blocks {
		for _, bind := range b.Bindings {
			if vb, ok := bind.(*ir.VarBinding); ok {
				if c, ok := vb.Value.(*ir.Call); ok {
					out = append(out, calleeLabel(c))
				}
			}
		}
	}
	return out
}

// Drawing geometry, in SVG user units.
const (
	nodeW   = 168
	nodeH   = 24
	memberH = 15
	gapX    = 24
	gapY    = 34
	margin  = 8
)

func (n *node) height() int {
	if n.kind == nodeGroup {
		return nodeH + memberH*len(n.members) + 4
	}
	return nodeH
}

// svg lays the nodes out in layers (a node sits one layer below the lowest
// of its inputs; nodes of a layer left to right in program order) and
// draws them.
func (g *graph) svg() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, `<div class="graph"><div class="gname">%s</div>`, html.EscapeString(g.Func))
	if g.omitted > 0 {
		fmt.Fprintf(&sb, `<div class="omitted">%d nodes: too many to draw</div></div>`, g.omitted)
		return sb.String()
	}
	layers := 0
	for _, n := range g.nodes {
		layers = max(layers, n.layer+1)
	}
	width := make([]int, layers)
	rowH := make([]int, layers)
	for i := range g.nodes {
		n := &g.nodes[i]
		n.slot = width[n.layer]
		width[n.layer]++
		rowH[n.layer] = max(rowH[n.layer], n.height())
	}
	top := make([]int, layers+1)
	for l := range layers {
		top[l+1] = top[l] + rowH[l] + gapY
	}
	maxW := 0
	for _, w := range width {
		maxW = max(maxW, w)
	}
	x := func(n *node) int { return margin + n.slot*(nodeW+gapX) }
	y := func(n *node) int { return margin + top[n.layer] }
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" class="dataflow">`,
		2*margin+maxW*(nodeW+gapX)-gapX, 2*margin+top[layers]-gapY)
	for _, e := range g.edges {
		from, to := &g.nodes[e[0]], &g.nodes[e[1]]
		x1, y1 := x(from)+nodeW/2, y(from)+from.height()
		x2, y2 := x(to)+nodeW/2, y(to)
		fmt.Fprintf(&sb, `<path class="edge" d="M%d %d C%d %d %d %d %d %d" marker-end="url(#arrow)"/>`,
			x1, y1, x1, y1+gapY/2, x2, y2-gapY/2, x2, y2)
	}
	for i := range g.nodes {
		n := &g.nodes[i]
		class := [...]string{nodeParam: "param", nodeOp: "op", nodeGroup: "group", nodeResult: "result"}[n.kind]
		fmt.Fprintf(&sb, `<g class="node %s"><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="4"/>`,
			class, html.EscapeString(strings.Join(append([]string{n.label}, n.members...), "\n")),
			x(n), y(n), nodeW, n.height())
		fmt.Fprintf(&sb, `<text x="%d" y="%d">%s</text>`, x(n)+6, y(n)+16, html.EscapeString(clip(n.label)))
		for j, m := range n.members {
			fmt.Fprintf(&sb, `<text class="member" x="%d" y="%d">%s</text>`,
				x(n)+12, y(n)+nodeH+memberH*j+10, html.EscapeString(clip(m)))
		}
		sb.WriteString(`</g>`)
	}
	sb.WriteString(`</svg></div>`)
	return sb.String()
}

// clip shortens a label to what fits in a node.
func clip(s string) string {
	const most = 24
	if r := []rune(s); len(r) > most {
		return string(r[:most-1]) + "…"
	}
	return s
}

func hasAttr(a ir.Attrs, key string) bool {
	_, ok := a[key]
	return ok
}
