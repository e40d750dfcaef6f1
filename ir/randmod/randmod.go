// Package randmod generates random, well-typed Relax modules as TVMScript
// text, for differential testing of the whole pipeline (package semcheck:
// the VM after canonicalize,optimize,lower,build against the reference
// evaluator at Ingest).
//
// A module's main takes float32 (or, one in four, int32 with IntOps only,
// or, one in eight, float16)
// tensors of shape (n, c) with a symbolic or static n, a broadcastable (c,)
// vector and, when a matmul is drawn, a (c, d) weight; its body is a chain
// of bindings over the op families of Ops (unary, binary with
// broadcasting, matmul, keepdims reductions, shape-changing ops:
// permute_dims, concat, expand_dims/squeeze and reshape round trips, and
// astype through a wider dtype and back), with
// tuples built and projected and match_casts to a value's own shape, in a
// dataflow or a plain block, optionally behind an If on a bool parameter
// (whose then branch may hold a second If on another one) or calling a
// local function that captures a parameter (a closure), and returns one
// value or a tuple of two. Main's bindings also carry what the Optimize
// phase's passes feed on (Cleanup, cleanup.go): calls of constants only,
// the same call bound twice, dead bindings, trivial rebindings and
// match_casts, and calls of private module functions (some with a
// parameter they ignore, some returning a tuple main uses one element
// of); one module in four has a private function nothing calls.
// Generate draws from a seed, GenerateFrom from bytes (the fuzz target's).
// Not generated yet: bfloat16 and other integer dtypes, astype to a narrower dtype, shapes of rank other than 1 and 2.
//
// Invariants: the same seed gives the same text; every generated call is
// well-typed by construction (shapes are tracked symbolically as text),
// and the unary ops are bounded or sign-preserving so that values stay
// finite (no exp chains overflowing to inf, no log of negatives), which
// keeps mismatches meaningful.
package randmod

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Family is a kind of op the generator draws from.
type Family int

const (
	Unary Family = iota
	Binary
	Matmul
	Reduce
	TupleOp
	// ShapeOp changes a value's shape: permute_dims to (c, n) (a value
	// only unary ops, same-shape binaries and a permute back use), concat
	// along the columns, and the round trips expand_dims/squeeze and
	// reshape to (n*c,) and back.
	ShapeOp
)

// Op is one op the generator uses, by its TVMScript spelling.
type Op struct {
	Name   string // e.g. "R.add", "R.nn.relu"
	Family Family
}

// IntOps are the ops of Ops generated for int32 modules: exact integer
// arithmetic (wrapping on overflow) that evaluator and VM must agree on
// bit for bit.
var IntOps = map[string]bool{"R.add": true, "R.subtract": true, "R.multiply": true, "R.maximum": true,
	"R.minimum": true, "R.negative": true, "R.abs": true, "R.matmul": true, "R.sum": true, "R.max": true, "R.min": true,
	"R.permute_dims": true, "R.concat": true, "R.expand_dims": true, "R.squeeze": true, "R.reshape": true,
	"R.flip": true, "R.cumsum": true, "R.astype": true}

// Ops lists every op the generator may emit. The differential test checks
// each is a registered Relax op with an evaluator and a legalization.
var Ops = []Op{
	{"R.tanh", Unary}, {"R.sigmoid", Unary}, {"R.negative", Unary}, {"R.abs", Unary},
	{"R.sin", Unary}, {"R.cos", Unary}, {"R.nn.relu", Unary}, {"R.nn.silu", Unary}, {"R.square", Unary},
	{"R.nn.softmax", Unary}, {"R.nn.gelu", Unary}, {"R.erf", Unary}, {"R.flip", Unary}, {"R.cumsum", Unary},
	{"R.add", Binary}, {"R.subtract", Binary}, {"R.multiply", Binary}, {"R.maximum", Binary}, {"R.minimum", Binary},
	{"R.matmul", Matmul},
	{"R.sum", Reduce}, {"R.mean", Reduce}, {"R.max", Reduce}, {"R.min", Reduce},
	{"R.permute_dims", ShapeOp}, {"R.concat", ShapeOp}, {"R.expand_dims", ShapeOp}, {"R.squeeze", ShapeOp}, {"R.reshape", ShapeOp},
	{"R.astype", ShapeOp},
}

// unaryAttrs are the attributes a unary op is called with (axis 0 exists
// in every rank generated).
var unaryAttrs = map[string]string{"R.flip": ", axis=0", "R.cumsum": ", axis=0"}

// wider is the dtype an astype round trip goes through: exact both ways.
var wider = map[string]string{"float32": "float64", "float16": "float32", "int32": "int64"}

// Module is a generated module with what it uses.
type Module struct {
	Text                      string
	Ops                       map[string]int // op spelling -> calls emitted
	If                        bool           // main has an If
	Tuple, Dataflow, Symbolic bool           // a tuple result; a dataflow block; a symbolic n
	// TupleValues counts tuples built and projected inside the body;
	// Closure: main defines a local function capturing a parameter and
	// calls it (static shapes, plain blocks only).
	TupleValues int
	Closure     bool
	DType       string // of every tensor: "float32", "float16" or "int32"
	// MatchCasts counts R.match_cast bindings (to the value's own shape,
	// or, with a symbolic n, to (m, c) defining a new symbolic m and back); NestedIf: the If's then branch holds
	// another If.
	MatchCasts int
	NestedIf   bool
	// Cleanup counts the patterns the optimization passes remove.
	Cleanup Cleanup
	// Funcs counts the private module functions besides main.
	Funcs int
}

type value struct {
	name  string
	shape string // "(n, 3)", "(n, 1)", "(3,)"
	rows  bool   // shape is (n, c) or (n, 1): first dimension n
	cols  int    // -1 for a transposed (c, n) value
}

type gen struct {
	rng      *rand.Rand
	n        string // "n" or a static size
	c        int
	lines    []string
	vals     []value
	next     int
	ops      map[string]int
	params   []string
	hasW     bool
	d        int
	dataflow bool
	tuples   int
	casts    int
	usesM    bool // a match_cast defines the symbolic m
	// ifDepth > 0 inside If branches. m may be defined there too: the
	// else branch may repeat the then branch's bindings, so m is then
	// defined in both (VMShapeLower once checked the else branch's
	// definition against the then branch's unfilled slot; see
	// testdata/semcheck/regress/match_cast_both_branches.tvms).
	ifDepth int
	nested  bool     // an If inside the then branch of main's If (on cond2)
	dtype   string   // "float32", "float16" or "int32"
	ops_    []Op     // the ops allowed for dtype
	funcs   []string // private module functions, as text
	cl      Cleanup
}

func (g *gen) fresh() string { g.next++; return fmt.Sprintf("v%d", g.next) }

func (g *gen) pick() value {
	// Prefer recent values so chains get deep.
	k := len(g.vals)
	i := k - 1 - g.rng.IntN(min(k, 3))
	return g.vals[i]
}

func (g *gen) pickRows(cols int) (value, bool) {
	var cands []value
	for _, v := range g.vals {
		if v.rows && (cols < 0 || v.cols == cols) {
			cands = append(cands, v)
		}
	}
	if len(cands) == 0 {
		return value{}, false
	}
	return cands[len(cands)-1-g.rng.IntN(min(len(cands), 3))], true
}

func (g *gen) emit(indent, name, expr string, v value) {
	g.lines = append(g.lines, indent+name+" = "+expr)
	v.name = name
	g.vals = append(g.vals, v)
}

func (g *gen) rowShape(cols int) string { return fmt.Sprintf("(%s, %d)", g.n, cols) }

// step emits one binding.
func (g *gen) step(indent string) {
	if g.rng.IntN(5) == 0 && g.cleanupStep(indent) {
		return
	}
	if g.rng.IntN(8) == 0 && len(g.vals) > 1 {
		// A tuple value and a projection of one of its fields.
		a, b := g.pick(), g.vals[g.rng.IntN(len(g.vals))]
		t := g.fresh()
		g.lines = append(g.lines, fmt.Sprintf("%s%s = (%s, %s)", indent, t, a.name, b.name))
		field := []value{a, b}[g.rng.IntN(2)]
		k := 0
		if field.name == b.name && a.name != b.name {
			k = 1
		}
		g.emit(indent, g.fresh(), fmt.Sprintf("%s[%d]", t, k), field)
		g.tuples++
		return
	}
	op := g.ops_[g.rng.IntN(len(g.ops_))]
	name := g.fresh()
	switch op.Family {
	case Unary:
		x := g.pick()
		g.emit(indent, name, fmt.Sprintf("%s(%s%s)", op.Name, x.name, unaryAttrs[op.Name]), x)
	case Binary:
		a := g.pick()
		// The other operand: same shape, a (c,) vector or a keepdims column.
		var b value
		found := false
		for _, v := range g.vals {
			if v.shape == a.shape && v.name != a.name && g.rng.IntN(2) == 0 {
				b, found = v, true
			}
		}
		if !found {
			b = a
		}
		if a.rows && g.rng.IntN(3) == 0 {
			for _, v := range g.vals {
				if !v.rows && v.cols == a.cols {
					b = v // broadcast the vector over rows
				}
			}
		}
		g.emit(indent, name, fmt.Sprintf("%s(%s, %s)", op.Name, a.name, b.name), a)
	case Matmul:
		a, ok := g.pickRows(g.c)
		if !ok {
			g.next--
			return
		}
		if !g.hasW {
			g.hasW = true
			g.params = append(g.params, fmt.Sprintf(`w: R.Tensor((%d, %d), dtype="%s")`, g.c, g.d, g.dtype))
		}
		g.emit(indent, name, fmt.Sprintf("R.matmul(%s, w)", a.name), value{shape: g.rowShape(g.d), rows: true, cols: g.d})
	case Reduce:
		a, ok := g.pickRows(-1)
		if !ok {
			g.next--
			return
		}
		g.emit(indent, name, fmt.Sprintf("%s(%s, axis=[1], keepdims=True)", op.Name, a.name), value{shape: g.rowShape(1), rows: true, cols: 1})
	case ShapeOp:
		if !g.shapeStep(indent, op.Name, name) {
			g.next--
			return
		}
	default:
		return
	}
	g.ops[op.Name]++
	if g.rng.IntN(10) == 0 {
		// Refine the new value by a match_cast to its own shape.
		v := g.vals[len(g.vals)-1]
		if g.n == "n" && v.rows && g.rng.IntN(2) == 0 {
			// Through a new symbolic variable m (defined by the cast, then
			// checked equal to n by the cast back).
			g.usesM = true
			w := g.fresh()
			g.lines = append(g.lines, fmt.Sprintf(`%s%s = R.match_cast(%s, R.Tensor((m, %d), dtype="%s"))`, indent, w, v.name, v.cols, g.dtype))
			g.emit(indent, g.fresh(), fmt.Sprintf(`R.match_cast(%s, R.Tensor(%s, dtype="%s"))`, w, v.shape, g.dtype), v)
			g.casts += 2
			return
		}
		g.emit(indent, g.fresh(), fmt.Sprintf(`R.match_cast(%s, R.Tensor(%s, dtype="%s"))`, v.name, v.shape, g.dtype), v)
		g.casts++
		g.cl.TrivialCasts++
	}
}

// ifBlock returns the lines of an If on cond at indent whose branches bind
// res: the then branch runs steps bindings (and, when mayNest, one time in
// two, an inner If on cond2), the else branch negates a value of the same
// shape from before the If, or recomputes the then branch and negates its
// result. res is appended to the values.
func (g *gen) ifBlock(indent, cond string, steps int, res string, mayNest bool) []string {
	inner := indent + "    "
	g.ifDepth++
	defer func() { g.ifDepth-- }()
	saved := g.lines
	g.lines = nil
	start := len(g.vals)
	for range steps {
		g.step(inner)
	}
	if mayNest && g.rng.IntN(2) == 0 {
		g.nested = true
		lines := g.lines
		g.lines = nil
		lines = append(lines, g.ifBlock(inner, "cond2", 1+steps/2, g.fresh(), false)...)
		g.lines = lines
	}
	thenLines, thenVal := g.lines, g.vals[len(g.vals)-1]
	g.vals = g.vals[:start]
	src := value{}
	for _, v := range g.vals {
		if v.shape == thenVal.shape {
			src = v
		}
	}
	var elseLines []string
	if src.name == "" {
		// No value of that shape before the If: recompute, negated.
		elseLines = append(append(elseLines, thenLines...), inner+res+" = R.negative("+thenVal.name+")")
	} else {
		elseLines = []string{inner + res + " = R.negative(" + src.name + ")"}
	}
	g.ops["R.negative"]++
	lines := append([]string{indent + "if " + cond + ":"}, thenLines...)
	lines = append(lines, inner+res+" = "+thenVal.name, indent+"else:")
	lines = append(lines, elseLines...)
	g.lines = saved
	thenVal.name = res
	g.vals = append(g.vals, thenVal)
	return lines
}

// shapeStep emits the bindings of a shape-changing op; false when no value
// fits it.
func (g *gen) shapeStep(indent, op, name string) bool {
	switch op {
	case "R.permute_dims":
		// Permute a transposed value back, or transpose an (n, c) one.
		for i := len(g.vals) - 1; i >= max(0, len(g.vals)-3); i-- {
			if v := g.vals[i]; v.cols < 0 {
				g.emit(indent, name, fmt.Sprintf("R.permute_dims(%s, axes=[1, 0])", v.name),
					value{shape: g.rowShape(-v.cols), rows: true, cols: -v.cols})
				return true
			}
		}
		a, ok := g.pickRows(-1)
		if !ok {
			return false
		}
		g.emit(indent, name, fmt.Sprintf("R.permute_dims(%s, axes=[1, 0])", a.name),
			value{shape: fmt.Sprintf("(%d, %s)", a.cols, g.n), cols: -a.cols})
	case "R.concat":
		a, ok := g.pickRows(-1)
		if !ok {
			return false
		}
		b, _ := g.pickRows(-1)
		if a.cols+b.cols > 8 {
			return false // keep the tensors small
		}
		g.emit(indent, name, fmt.Sprintf("R.concat((%s, %s), axis=1)", a.name, b.name),
			value{shape: g.rowShape(a.cols + b.cols), rows: true, cols: a.cols + b.cols})
	case "R.expand_dims", "R.squeeze":
		a, ok := g.pickRows(-1)
		if !ok {
			return false
		}
		g.lines = append(g.lines, fmt.Sprintf("%s%s = R.expand_dims(%s, axis=[1])", indent, name, a.name))
		g.emit(indent, g.fresh(), fmt.Sprintf("R.squeeze(%s, axis=[1])", name), a)
		g.ops["R.expand_dims"]++
		g.ops["R.squeeze"]++
		g.ops[op]-- // counted once below
	case "R.astype":
		a := g.pick()
		g.lines = append(g.lines, fmt.Sprintf(`%s%s = R.astype(%s, dtype="%s")`, indent, name, a.name, wider[g.dtype]))
		g.emit(indent, g.fresh(), fmt.Sprintf(`R.astype(%s, dtype="%s")`, name, g.dtype), a)
		g.ops["R.astype"]++
	case "R.reshape":
		a, ok := g.pickRows(-1)
		if !ok {
			return false
		}
		g.lines = append(g.lines, fmt.Sprintf("%s%s = R.reshape(%s, R.shape([%s * %d]))", indent, name, a.name, g.n, a.cols))
		g.emit(indent, g.fresh(), fmt.Sprintf("R.reshape(%s, R.shape([%s, %d]))", name, g.n, a.cols), a)
		g.ops["R.reshape"]++
	}
	return true
}

// Generate returns the module of seed, with every dtype (Default).
func Generate(seed uint64) *Module { return Default.Generate(seed) }

// Default is the Config of Generate and GenerateFrom.
var Default = Config{Float16: true}

// Config widens what the generator draws beyond the default.
type Config struct {
	// Float16: one float module in six is float16 (storage only: the
	// evaluator and the VM compute in wider floats and round).
	Float16 bool
}

// Generate returns the module of seed under c; with Default, the module
// of Generate(seed).
func (c Config) Generate(seed uint64) *Module {
	return c.generate(rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+1)), fmt.Sprintf("seed %d", seed))
}

// GenerateFrom returns a module whose every random choice is read from data
// (8 bytes a draw; once data is used up, from a generator seeded by its
// length), so a fuzzer's mutations of data change the module locally: the
// fuzz target's entry point.
func GenerateFrom(data []byte) *Module {
	n := uint64(len(data))
	return Default.generate(rand.New(&byteSource{data: data, rest: rand.NewPCG(n, n^0x9e3779b97f4a7c15)}), fmt.Sprintf("%d fuzz bytes", len(data)))
}

type byteSource struct {
	data []byte
	rest *rand.PCG
}

func (s *byteSource) Uint64() uint64 {
	if len(s.data) == 0 {
		return s.rest.Uint64()
	}
	var b [8]byte
	k := copy(b[:], s.data)
	s.data = s.data[k:]
	return binary.LittleEndian.Uint64(b[:])
}

func (c Config) generate(rng *rand.Rand, label string) *Module {
	g := &gen{rng: rng, ops: map[string]int{}}
	m := &Module{Ops: g.ops}
	g.dtype, g.ops_ = "float32", Ops
	if g.rng.IntN(4) == 0 {
		g.dtype, g.ops_ = "int32", nil
		for _, o := range Ops {
			if IntOps[o.Name] {
				g.ops_ = append(g.ops_, o)
			}
		}
	} else if c.Float16 && g.rng.IntN(6) == 0 {
		g.dtype = "float16" // storage only: both sides compute in wider floats and round
	}
	m.DType = g.dtype
	g.c = 1 + g.rng.IntN(5)
	g.d = 1 + g.rng.IntN(5)
	if g.rng.IntN(2) == 0 {
		g.n, m.Symbolic = "n", true
	} else {
		g.n = fmt.Sprint(1 + g.rng.IntN(4))
	}
	dims := func(s string) string { return strings.ReplaceAll(s, "(n,", `("n",`) }
	g.params = []string{
		fmt.Sprintf(`x: R.Tensor(%s, dtype="%s")`, dims(g.rowShape(g.c)), g.dtype),
		fmt.Sprintf(`b: R.Tensor((%d,), dtype="%s")`, g.c, g.dtype),
	}
	g.vals = []value{{name: "x", shape: g.rowShape(g.c), rows: true, cols: g.c}, {name: "b", shape: fmt.Sprintf("(%d,)", g.c), cols: g.c}}
	if g.rng.IntN(2) == 0 {
		g.params = append(g.params, fmt.Sprintf(`y: R.Tensor(%s, dtype="%s")`, dims(g.rowShape(g.c)), g.dtype))
		g.vals = append(g.vals, value{name: "y", shape: g.rowShape(g.c), rows: true, cols: g.c})
	}
	nsteps := 2 + g.rng.IntN(8)
	var body []string
	m.Dataflow = g.rng.IntN(2) == 0
	m.If = !m.Dataflow && g.rng.IntN(3) == 0
	switch {
	case m.If:
		g.params = append([]string{`cond: R.Tensor((), dtype="bool")`}, g.params...)
		for range nsteps / 2 {
			g.step("        ")
		}
		body = append(body, g.lines...)
		g.lines = nil
		body = append(body, g.ifBlock("        ", "cond", 1+nsteps/2, "r", true)...)
		body = append(body, "        return r")
		if g.nested {
			m.NestedIf = true
			g.params = append([]string{`cond2: R.Tensor((), dtype="bool")`}, g.params...)
		}
	default:
		indent := "        "
		if m.Dataflow {
			indent = "            "
		}
		for range nsteps {
			g.step(indent)
		}
		if !m.Dataflow && !m.Symbolic && g.rng.IntN(3) == 0 {
			// A local function capturing b, called on the last (n, c) value.
			m.Closure = true
			shape := fmt.Sprintf(`R.Tensor(%s, dtype="%s")`, g.rowShape(g.c), g.dtype)
			body = append(body,
				fmt.Sprintf("        @R.function\n        def lf(p: %s) -> %s:", shape, shape),
				"            q = R.add(p, b)",
				"            r = "+map[string]string{"float32": "R.tanh(q)", "float16": "R.tanh(q)", "int32": "R.negative(q)"}[g.dtype],
				"            return r",
				"")
			a, _ := g.pickRows(g.c)
			g.emit(indent, g.fresh(), "lf("+a.name+")", a)
			g.ops["R.add"]++
			g.ops[map[string]string{"float32": "R.tanh", "float16": "R.tanh", "int32": "R.negative"}[g.dtype]]++
		}
		out := g.vals[len(g.vals)-1]
		ret := out.name
		if g.rng.IntN(3) == 0 && len(g.vals) > 1 {
			m.Tuple = true
			other := g.vals[len(g.vals)-2]
			ret = fmt.Sprintf("(%s, %s)", out.name, other.name)
		}
		if m.Dataflow {
			body = append(body, "        with R.dataflow():")
			body = append(body, g.lines...)
			names := strings.Trim(ret, "()")
			body = append(body, "            R.output("+names+")")
		} else {
			body = append(body, g.lines...)
		}
		body = append(body, "        return "+ret)
	}
	var b strings.Builder
	b.WriteString("# from tvm.script import ir as I\n# from tvm.script import tir as T\n# from tvm.script import relax as R\n\n")
	fmt.Fprintf(&b, "# randmod %s\n@I.ir_module\nclass Module:\n    @R.function\n    def main(%s):\n", label, strings.Join(g.params, ", "))
	if m.Symbolic {
		b.WriteString("        n = T.int64()\n")
	}
	if g.usesM {
		b.WriteString("        m = T.int64()\n")
	}
	for _, l := range body {
		b.WriteString(l + "\n")
	}
	if g.rng.IntN(4) == 0 {
		g.deadFunc()
	}
	for _, f := range g.funcs {
		b.WriteString("\n" + f)
	}
	m.Text = b.String()
	m.Cleanup, m.Funcs = g.cl, len(g.funcs)
	m.TupleValues = g.tuples
	m.MatchCasts = g.casts
	return m
}
