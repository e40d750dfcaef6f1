package transform

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/passes"
	"github.com/phasec/phasec/phase"
)

// BindSymbolicVars is TVM's src/relax/transform/bind_symbolic_vars.cc:
// symbolic shape variables, named in binding_map, are replaced by values
// throughout a function (parameter and return annotations, bindings'
// struct info, shape values, call annotations), dimensions simplified.
//
//	phasec opt --passes 'BindSymbolicVars{binding_map={"batch":1,"k":"m*2"},func_name=main}' model.tvms
//
// A value is an integer or a string holding an expression over the
// function's other symbolic variables (integers, names, + - * // %,
// parentheses). With func_name only that function is bound and every
// name must be a symbolic variable it defines (in a parameter annotation
// or a match_cast); without it every function is bound with the names it
// defines, and every name must be defined by some function. A name no
// function defines, or that two variables of one function share, a
// missing function, a value of another type or an expression naming a
// variable that is itself being replaced (but for a variable kept as
// itself) are errors (TVM raises on each),
// reported together; nothing is bound then.
var BindSymbolicVars = passes.Define(passes.Info{
	Name:     "BindSymbolicVars",
	Doc:      "replace symbolic shape variables, by name, with integers or expressions",
	OptLevel: 1,
	Accepts:  []phase.Phase{phase.Ingest, phase.Optimize},
	Requires: map[phase.Property]string{
		phase.Normalized: "it substitutes into the struct info of every binding and re-derives it, assuming A-normal form",
	},
	Options: []passes.Option{
		{Name: "binding_map", Type: passes.JSON, Default: map[string]any{}, Doc: `a JSON object from symbolic variable names to integers or expression strings: {"batch":1,"k":"m*2"}`},
		{Name: "func_name", Type: passes.String, Default: "", Doc: "the function to bind; empty: every function, each with the names it defines"},
	},
}, passes.Module(func(env *passes.Env, mod *ir.Module) (*ir.Module, error) {
	opts := env.Options()
	out, errs := BindSymbolicVarsModule(mod, opts.JSON("binding_map"), opts.String("func_name"))
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}))

// Diagnostic codes of BindSymbolicVars.
var (
	DiagBindSymMap   = optCodes.Define("OPT220", "a BindSymbolicVars binding_map that is not an object of integers and expressions")
	DiagBindSymFunc  = optCodes.Define("OPT221", "BindSymbolicVars names a function the module does not have")
	DiagBindSymName  = optCodes.Define("OPT222", "a BindSymbolicVars name no symbolic variable (or more than one) of the function has")
	DiagBindSymValue = optCodes.Define("OPT223", "a BindSymbolicVars expression that does not parse or names an unknown or replaced variable")
)

// BindSymbolicVarsModule binds the symbolic variables named in
// bindingMap (the decoded JSON option) in function funcName of mod, or in
// every function when funcName is empty (see BindSymbolicVars).
func BindSymbolicVarsModule(mod *ir.Module, bindingMap any, funcName string) (*ir.Module, diag.List) {
	var errs diag.List
	obj, ok := bindingMap.(map[string]any)
	if !ok {
		errs.Add(diag.Span{}, DiagBindSymMap, "BindSymbolicVars: binding_map must be a JSON object from names to values, got %s", jsonText(bindingMap))
		return nil, errs
	}
	if len(obj) == 0 {
		return mod, nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	var names []string
	if funcName != "" {
		if mod.Func(funcName) == nil {
			errs.Add(diag.Span{}, DiagBindSymFunc, "BindSymbolicVars: the module has no Relax function %q (functions: %s)",
				funcName, strings.Join(relaxFunctionNames(mod), ", "))
			return nil, errs
		}
		names = []string{funcName}
	} else {
		for _, name := range mod.Names() {
			if mod.Func(name) != nil {
				names = append(names, name)
			}
		}
	}
	used := map[string]bool{}
	out := mod
	for _, name := range names {
		f := mod.Func(name)
		defined := definedSymVars(f)
		byName := map[string][]*ir.PrimVar{}
		for _, v := range defined {
			byName[v.Name] = append(byName[v.Name], v)
		}
		m := map[*ir.PrimVar]ir.PrimExpr{}
		valueOf := map[*ir.PrimVar]string{}
		for _, k := range keys {
			vars := byName[k]
			switch {
			case len(vars) == 0 && funcName != "":
				errs.Add(f.Span(), DiagBindSymName, "BindSymbolicVars: function %s has no symbolic variable %q (it has %s)", name, k, symNames(defined))
				continue
			case len(vars) == 0:
				continue // another function may define it
			case len(vars) > 1:
				errs.Add(f.Span(), DiagBindSymName, "BindSymbolicVars: function %s has %d symbolic variables named %q; the name cannot pick one", name, len(vars), k)
				continue
			}
			used[k] = true
			e, err := symValue(obj[k], byName)
			if err != nil {
				errs.Add(f.Span(), DiagBindSymValue, "BindSymbolicVars: %s: %v", k, err)
				continue
			}
			m[vars[0]] = e
			valueOf[vars[0]] = k
		}
		// A value naming a replaced variable would leave it undefined
		// (TVM: "Resulting function should not have any undefined
		// symbolic variables").
		for v, e := range m {
			for _, w := range ir.PrimVarsIn(e) {
				if _, replaced := m[w]; replaced && w != v {
					errs.Add(f.Span(), DiagBindSymValue, "BindSymbolicVars: the value of %s names %s, which is replaced too and would be left undefined", valueOf[v], w.Name)
				}
			}
		}
		if errs.HasErrors() || len(m) == 0 {
			continue
		}
		bound := ir.SubstituteSymVarsInExpr(f, m).(*ir.Function)
		if bound == f {
			continue
		}
		nf, nerrs := ir.NormalizeFunction(mod, bound)
		errs = append(errs, nerrs...)
		if out == mod {
			out = mod.Clone()
		}
		out.Set(name, nf)
	}
	if funcName == "" {
		var unused []string
		for _, k := range keys {
			if !used[k] {
				unused = append(unused, strconv.Quote(k))
			}
		}
		if len(unused) > 0 {
			errs.Add(diag.Span{}, DiagBindSymName, "BindSymbolicVars: binding_map names %s, which no function of the module has as a symbolic variable",
				strings.Join(unused, ", "))
		}
	}
	if errs.HasErrors() {
		errs.Sort()
		return nil, errs
	}
	return out, nil
}

// definedSymVars is TVM's DefinedSymbolicVars: the symbolic variables a
// function's parameters and match_casts define (nested functions
// included), in order of definition.
func definedSymVars(f *ir.Function) []*ir.PrimVar {
	var out []*ir.PrimVar
	seen := map[*ir.PrimVar]bool{}
	add := func(s ir.StructInfo) {
		for _, v := range ir.DefinableSymVars(s) {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	ir.Walk(f, &ir.Visitor{
		Expr: func(e ir.Expr) bool {
			if fn, ok := e.(*ir.Function); ok {
				for _, p := range fn.Params {
					add(p.StructInfo())
				}
			}
			return true
		},
		Binding: func(b ir.Binding) bool {
			if mc, ok := b.(*ir.MatchCast); ok {
				add(mc.SInfo)
			}
			return true
		},
	})
	return out
}

func symNames(vs []*ir.PrimVar) string {
	if len(vs) == 0 {
		return "none"
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return strings.Join(names, ", ")
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// symValue converts a binding_map value: an integer, or a string holding
// an expression over the function's symbolic variables.
func symValue(v any, vars map[string][]*ir.PrimVar) (ir.PrimExpr, error) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return nil, fmt.Errorf("%s is not an integer", x)
		}
		return ir.I64(n), nil
	case string:
		return parseSymExpr(x, vars)
	}
	return nil, fmt.Errorf("want an integer or an expression string, got %s", jsonText(v))
}

// parseSymExpr parses an integer expression over symbolic variables:
// integers, names, unary -, + - * // % and parentheses, with Python's
// precedence.
func parseSymExpr(s string, vars map[string][]*ir.PrimVar) (ir.PrimExpr, error) {
	p := &symParser{s: s, vars: vars}
	e := p.sum()
	p.skip()
	if p.err == nil && p.pos < len(s) {
		p.fail("unexpected %q", s[p.pos:])
	}
	if p.err != nil {
		return nil, fmt.Errorf("expression %q: %v", s, p.err)
	}
	return e, nil
}

type symParser struct {
	s    string
	pos  int
	vars map[string][]*ir.PrimVar
	err  error
}

func (p *symParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("at %d: %s", p.pos+1, fmt.Sprintf(format, args...))
	}
}

func (p *symParser) skip() {
	for p.pos < len(p.s) && p.s[p.pos] == ' ' {
		p.pos++
	}
}

func (p *symParser) eat(tok string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *symParser) sum() ir.PrimExpr {
	e := p.product()
	for p.err == nil {
		switch {
		case p.eat("+"):
			e = ir.Add(e, p.product())
		case p.eat("-"):
			e = ir.Sub(e, p.product())
		default:
			return e
		}
	}
	return e
}

func (p *symParser) product() ir.PrimExpr {
	e := p.unary()
	for p.err == nil {
		switch {
		case p.eat("*"):
			e = ir.Mul(e, p.unary())
		case p.eat("//"):
			e = ir.FloorDiv(e, p.unary())
		case p.eat("%"):
			e = ir.FloorMod(e, p.unary())
		default:
			return e
		}
	}
	return e
}

func (p *symParser) unary() ir.PrimExpr {
	if p.eat("-") {
		return ir.Sub(ir.I64(0), p.unary())
	}
	return p.atom()
}

// atom is an integer, a name or a parenthesized sum. Nesting depth is
// bounded by the option's length.
func (p *symParser) atom() ir.PrimExpr {
	p.skip()
	if p.eat("(") {
		e := p.sum()
		if !p.eat(")") {
			p.fail("missing )")
		}
		return e
	}
	start := p.pos
	for p.pos < len(p.s) && (p.s[p.pos] == '_' || p.s[p.pos] >= '0' && p.s[p.pos] <= '9' ||
		p.s[p.pos] >= 'a' && p.s[p.pos] <= 'z' || p.s[p.pos] >= 'A' && p.s[p.pos] <= 'Z') {
		p.pos++
	}
	word := p.s[start:p.pos]
	switch {
	case word == "":
		p.fail("expected an integer, a name or (")
		return ir.I64(0)
	case word[0] >= '0' && word[0] <= '9':
		n, err := strconv.ParseInt(word, 10, 64)
		if err != nil {
			p.fail("bad integer %s", word)
		}
		return ir.I64(n)
	}
	vs := p.vars[word]
	if len(vs) != 1 {
		p.pos = start
		p.fail("%s is not a symbolic variable of the function (or names more than one)", word)
		return ir.I64(0)
	}
	return vs[0]
}
