package randmod

import (
	"fmt"
	"strings"
)

// Cleanup counts what a module gives the Optimize phase's passes to do
// (TVM's FoldConstant, CanonicalizeBindings, EliminateCommonSubexpr,
// DeadCodeElimination, RemoveUnusedParameters, RemoveUnusedOutputs,
// InlinePrivateFunctions). Every one of them leaves the module's result
// as it is, so a pass that changes the result is wrong.
type Cleanup struct {
	// ConstExprs: calls whose arguments are all R.const (scalars or
	// (c,) vectors), sometimes under a further unary call, added to a value.
	ConstExprs int
	// Duplicates: a call bound twice to different vars, both used.
	Duplicates int
	// DeadBindings: bindings nothing uses.
	DeadBindings int
	// Rebindings: trivial bindings y = x, then used in x's place.
	Rebindings int
	// TrivialCasts: match_casts of a value to its own struct info.
	TrivialCasts int
	// PrivateCalls: calls from main of a private module function;
	// UnusedParams counts the parameters such a function ignores and
	// UnusedOutputs the tuple-returning ones of which main uses one element.
	PrivateCalls, UnusedParams, UnusedOutputs int
	// DeadFuncs: private functions nothing calls.
	DeadFuncs int
}

// constLits are the literals of constant subexpressions: exact in every
// dtype generated, and small, so that the values stay bounded.
var constLits = map[string][]string{
	"float32": {"0.5", "-0.25", "1.5", "2.0", "-1.0", "0.75"},
	"float16": {"0.5", "-0.25", "1.5", "2.0", "-1.0", "0.75"},
	"int32":   {"1", "2", "-1", "3", "-2", "0"},
}

// constOps combine two constants: exact integer arithmetic too (IntOps).
var constOps = []string{"R.add", "R.multiply", "R.subtract", "R.maximum", "R.minimum"}

// cleanupStep emits one of the patterns Cleanup counts; false when it
// emitted nothing (the caller then emits an ordinary step).
func (g *gen) cleanupStep(indent string) bool {
	switch g.rng.IntN(6) {
	case 0:
		g.constExpr(indent)
	case 1:
		g.duplicate(indent)
	case 2:
		// A dead binding: a call whose value nothing picks.
		x := g.pick()
		u := g.unaryOp()
		g.lines = append(g.lines, fmt.Sprintf("%s%s = %s(%s%s)", indent, g.fresh(), u, x.name, unaryAttrs[u]))
		g.ops[u]++
		g.cl.DeadBindings++
	case 3:
		// A trivial rebinding, used in place of the original from now on,
		// sometimes followed by a trivial match_cast.
		x, r := g.pick(), g.fresh()
		g.emit(indent, r, x.name, x)
		g.cl.Rebindings++
		if g.rng.IntN(2) == 0 {
			g.emit(indent, g.fresh(), fmt.Sprintf(`R.match_cast(%s, R.Tensor(%s, dtype="%s"))`, r, x.shape, g.dtype), x)
			g.casts++
			g.cl.TrivialCasts++
		}
	default:
		g.privateCall(indent)
	}
	return true
}

// unaryOp draws a unary op of the module's dtype.
func (g *gen) unaryOp() string {
	var us []string
	for _, o := range g.ops_ {
		if o.Family == Unary {
			us = append(us, o.Name)
		}
	}
	return us[g.rng.IntN(len(us))]
}

// constLit is an R.const of the module's dtype: a scalar, or a vector of
// cols elements when cols > 0.
func (g *gen) constLit(cols int) string {
	lits := constLits[g.dtype]
	if cols <= 0 {
		return fmt.Sprintf(`R.const(%s, "%s")`, lits[g.rng.IntN(len(lits))], g.dtype)
	}
	elems := make([]string, cols)
	for i := range elems {
		elems[i] = lits[g.rng.IntN(len(lits))]
	}
	return fmt.Sprintf(`R.const([%s], "%s")`, strings.Join(elems, ", "), g.dtype)
}

// constExpr binds a call of two constants (a scalar, or a vector along the
// last dimension of the value it is added to), sometimes negates it, and
// adds the result to a value.
func (g *gen) constExpr(indent string) {
	a := g.pick()
	cols := 0 // a scalar broadcasts over anything
	if a.cols > 0 && g.rng.IntN(2) == 0 {
		cols = a.cols // a's last dimension (transposed values have n there)
	}
	o := constOps[g.rng.IntN(len(constOps))]
	k := g.fresh()
	g.lines = append(g.lines, fmt.Sprintf("%s%s = %s(%s, %s)", indent, k, o, g.constLit(cols), g.constLit(cols)))
	g.ops[o]++
	if g.rng.IntN(2) == 0 {
		k2 := g.fresh()
		g.lines = append(g.lines, fmt.Sprintf("%s%s = R.negative(%s)", indent, k2, k))
		g.ops["R.negative"]++
		k = k2
	}
	comb := []string{"R.add", "R.subtract"}[g.rng.IntN(2)]
	g.emit(indent, g.fresh(), fmt.Sprintf("%s(%s, %s)", comb, a.name, k), a)
	g.ops[comb]++
	g.cl.ConstExprs++
}

// duplicate binds the same call twice and adds the two results.
func (g *gen) duplicate(indent string) {
	a := g.pick()
	var expr string
	if g.rng.IntN(2) == 0 {
		u := g.unaryOp()
		expr = fmt.Sprintf("%s(%s%s)", u, a.name, unaryAttrs[u])
		g.ops[u] += 2
	} else {
		o := constOps[g.rng.IntN(len(constOps))]
		expr = fmt.Sprintf("%s(%s, %s)", o, a.name, a.name)
		g.ops[o] += 2
	}
	d1, d2 := g.fresh(), g.fresh()
	g.lines = append(g.lines, indent+d1+" = "+expr, indent+d2+" = "+expr)
	g.emit(indent, g.fresh(), fmt.Sprintf("R.add(%s, %s)", d1, d2), a)
	g.ops["R.add"]++
	g.cl.Duplicates++
}

// tensorInfo is the struct info of a value of shape at function
// parameters and results: the symbolic n quoted, as it is defined there.
func (g *gen) tensorInfo(shape string) string {
	dims := strings.Split(strings.Trim(shape, "()"), ",")
	for i, d := range dims {
		if d = strings.TrimSpace(d); d == "n" {
			d = `"n"`
		}
		dims[i] = d
	}
	s := strings.Join(dims, ", ")
	if len(dims) == 2 && dims[1] == "" {
		s = dims[0] + ","
	}
	return fmt.Sprintf(`R.Tensor((%s), dtype="%s")`, s, g.dtype)
}

// privateFunc returns a private module function of a value of shape:
// h = u(p) + p, returned alone or as (h, u(p)), with a second, unused
// parameter q when unused is set.
func (g *gen) privateFunc(name, shape string, unused, tuple bool) string {
	t := g.tensorInfo(shape)
	params := "p: " + t
	if unused {
		params += ", q: " + t
	}
	ret, result := t, "h2"
	if tuple {
		ret, result = fmt.Sprintf("R.Tuple(%s, %s)", t, t), "(h2, h1)"
	}
	u := g.unaryOp()
	g.ops[u]++
	g.ops["R.add"]++
	var b strings.Builder
	fmt.Fprintf(&b, "    @R.function(private=True)\n    def %s(%s) -> %s:\n", name, params, ret)
	if strings.Contains(t, `"n"`) {
		b.WriteString("        n = T.int64()\n")
	}
	fmt.Fprintf(&b, "        h1 = %s(p%s)\n        h2 = R.add(h1, p)\n        return %s\n", u, unaryAttrs[u], result)
	return b.String()
}

// privateCall defines a private function and calls it from main on a
// value; a tuple result is projected, one time in two keeping only its
// first element (an unused output).
func (g *gen) privateCall(indent string) {
	a := g.pick()
	unused, tuple := g.rng.IntN(2) == 0, g.rng.IntN(2) == 0
	name := fmt.Sprintf("helper%d", len(g.funcs)+1)
	g.funcs = append(g.funcs, g.privateFunc(name, a.shape, unused, tuple))
	args := a.name
	if unused {
		args += ", " + a.name
		g.cl.UnusedParams++
	}
	g.cl.PrivateCalls++
	if !tuple {
		g.emit(indent, g.fresh(), fmt.Sprintf("Module.%s(%s)", name, args), a)
		return
	}
	t := g.fresh()
	g.lines = append(g.lines, fmt.Sprintf("%s%s = Module.%s(%s)", indent, t, name, args))
	g.emit(indent, g.fresh(), t+"[0]", a)
	g.tuples++
	if g.rng.IntN(2) == 0 {
		g.cl.UnusedOutputs++
		return
	}
	first := g.vals[len(g.vals)-1].name
	second := g.fresh()
	g.lines = append(g.lines, fmt.Sprintf("%s%s = %s[1]", indent, second, t))
	g.emit(indent, g.fresh(), fmt.Sprintf("R.add(%s, %s)", first, second), a)
	g.ops["R.add"]++
}

// deadFunc defines a private function nothing calls.
func (g *gen) deadFunc() {
	name := fmt.Sprintf("helper%d", len(g.funcs)+1)
	g.funcs = append(g.funcs, g.privateFunc(name, g.rowShape(g.c), g.rng.IntN(2) == 0, g.rng.IntN(2) == 0))
	g.cl.DeadFuncs++
}
