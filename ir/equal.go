package ir

import (
	"github.com/phasec/phasec/internal/ptrmap"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Structural equality: alpha-equivalence of IR values.
//
// Variables (Relax Vars, PrimVars, Buffers) match by where they are defined,
// never by name: a definition site pairs the two variables, and every later
// use must use the paired variable (bijectively). Definition sites are
// function parameters, binding vars, symbolic variables at their first
// occurrence in parameter struct info, match_cast struct info and FuncInfo
// parameters, PrimFunc parameters, buffer_map buffers (and the symbolic
// variables of their shapes), alloc_buffers, loop vars, let vars and block
// iteration vars. A variable used without a definition is free: free
// variables are equal only when they are the same variable, unless
// EqualOptions.MapFreeVars lets them pair up (consistently). A binding var
// is defined after its value, except a var bound to a local function: it is
// in scope in the function's own body (recursion), so, as in TVM, it is
// defined first.
//
// Modules compare attributes, then functions matched by global name. Attrs
// compare as dictionaries. Integer symbolic expressions that differ as
// written are compared again after Simplify, so 4 * (2 * n) equals 8 * n.
// Spans, names and block names are ignored; dtypes (including integer
// widths) and DataflowVar-ness are not.
//
// The comparison walks both values in lockstep and stops at the first
// difference (Diff reports it with a path). Bindings are iterated, never
// recursed over; recursion depth is the expression nesting depth. The
// variable maps live for one comparison and are reset between the functions
// of a module, whose variables never cross function boundaries.

// EqualOptions tunes structural equality.
type EqualOptions struct {
	// MapFreeVars lets free variables (not defined inside the compared
	// nodes) on one side match free variables on the other, consistently.
	MapFreeVars bool
}

// StructuralEqual compares two IR values (*Module, BaseFunc, Expr,
// StructInfo, PrimExpr, Stmt, Binding, *BindingBlock) up to alpha-equivalence.
func StructuralEqual(a, b any, opts EqualOptions) bool {
	e := newEqState(opts, true)
	defer e.release()
	return e.top(a, b)
}

// Mismatch describes the first difference found by Diff.
type Mismatch struct {
	Path        string // e.g. "main.body.blocks[0].bindings[3].value.args[1]"
	Left, Right string // the differing parts, printed
}

func (m *Mismatch) String() string {
	if m.Path == "" {
		// The compared values themselves differ.
		return m.Left + " vs " + m.Right
	}
	return m.Path + ": " + m.Left + " vs " + m.Right
}

// Diff returns the first structural difference, or nil when equal.
func Diff(a, b any, opts EqualOptions) *Mismatch {
	e := newEqState(opts, false)
	defer e.release()
	if e.top(a, b) {
		return nil
	}
	if e.mm == nil {
		// Every failing comparison records a mismatch; this is a bug guard.
		return &Mismatch{Path: e.renderPath(), Left: "?", Right: "?"}
	}
	return e.mm
}

// bimap pairs variables of the left and right sides bijectively.
type bimap[T any] struct {
	l, r ptrmap.Map[T, *T]
}

func (m *bimap[T]) recycle() {
	m.l.Recycle()
	m.r.Recycle()
}

func (m *bimap[T]) reset() {
	m.l.Reset()
	m.r.Reset()
}

// pair records a↔b; it fails when either is already paired with another.
func (m *bimap[T]) pair(a, b *T) bool {
	if x, ok := m.l.Get(a); ok {
		return x == b
	}
	if _, ok := m.r.Get(b); ok {
		return false
	}
	m.l.Set(a, b)
	m.r.Set(b, a)
	return true
}

// define pairs a↔b at a definition site: the fast path of pair for Relax
// vars, which are normally met first at their definition. It assigns first
// and checks afterwards, saving two probes per binding; a failure leaves the
// maps inconsistent, which is fine because Relax variable mismatches end
// the comparison.
func (m *bimap[T]) define(a, b *T) bool {
	oldB, hadL := m.l.Set(a, b)
	oldA, hadR := m.r.Set(b, a)
	if !hadL && !hadR {
		return true
	}
	return hadL && hadR && oldB == b && oldA == a
}

// presize makes room for n pairs in empty maps.
func (m *bimap[T]) presize(n int) {
	if m.l.Len() == 0 {
		m.l.Reserve(n)
		m.r.Reserve(n)
	}
}

func (m *bimap[T]) unpair(a *T) {
	if b, ok := m.l.Get(a); ok {
		m.l.Delete(a)
		m.r.Delete(b)
	}
}

// pathSeg is one step of a mismatch path.
type pathSeg struct {
	kind  uint8
	name  string
	index int
}

const (
	segRoot  uint8 = iota // a function name at the start
	segField              // .name
	segIndex              // [i]
	segKey                // ["name"]
)

type eqState struct {
	opts  EqualOptions
	quiet bool // StructuralEqual: no mismatch report needed
	vars  bimap[Var]
	prims bimap[PrimVar]
	bufs  bimap[Buffer]
	// defining is set while comparing struct info that defines the
	// symbolic variables it mentions first.
	defining bool
	// primLog records prim pairs made while speculatively comparing
	// expressions as written, so a failed attempt can be undone before
	// comparing the simplified forms.
	primLog []*PrimVar
	logging bool
	path    []pathSeg
	mm      *Mismatch
	// lastL, lastR is the last pair of definition struct infos found
	// equal. Pairings only grow, so the pair stays equal; vars commonly
	// share struct info objects, which makes this a cheap hit.
	lastL, lastR StructInfo
}

// eqStates recycles comparison states, whose variable tables are large for
// long functions: allocating them per comparison would make the garbage
// collector rescan the (large) live IR every few comparisons.
var eqStates = sync.Pool{New: func() any { return &eqState{path: make([]pathSeg, 0, 32)} }}

func newEqState(opts EqualOptions, quiet bool) *eqState {
	e := eqStates.Get().(*eqState)
	e.opts, e.quiet = opts, quiet
	return e
}

// release empties e and returns it to the pool, keeping only its storage.
func (e *eqState) release() {
	e.vars.recycle()
	e.prims.recycle()
	e.bufs.recycle()
	*e = eqState{vars: e.vars, prims: e.prims, bufs: e.bufs, path: e.path[:0], primLog: e.primLog[:0]}
	eqStates.Put(e)
}

func (e *eqState) resetVars() {
	e.vars.reset()
	e.prims.reset()
	e.bufs.reset()
	e.defining = false
	e.lastL, e.lastR = nil, nil
}

// The path is kept only for Diff: StructuralEqual (quiet) reports nothing,
// and pushing a segment per node is a fifth of its work.

func (e *eqState) root(name string)  { e.push(pathSeg{kind: segRoot, name: name}) }
func (e *eqState) field(name string) { e.push(pathSeg{kind: segField, name: name}) }
func (e *eqState) index(i int)       { e.push(pathSeg{kind: segIndex, index: i}) }
func (e *eqState) key(k string)      { e.push(pathSeg{kind: segKey, name: k}) }

func (e *eqState) push(s pathSeg) {
	if !e.quiet {
		e.path = append(e.path, s)
	}
}

func (e *eqState) pop() {
	if !e.quiet {
		e.path = e.path[:len(e.path)-1]
	}
}

func (e *eqState) renderPath() string {
	var b strings.Builder
	for i, s := range e.path {
		switch s.kind {
		case segRoot, segField:
			if i > 0 {
				b.WriteString(".")
			}
			b.WriteString(s.name)
		case segIndex:
			b.WriteString("[")
			b.WriteString(strconv.Itoa(s.index))
			b.WriteString("]")
		case segKey:
			b.WriteString("[")
			b.WriteString(strconv.Quote(s.name))
			b.WriteString("]")
		}
	}
	return b.String()
}

// fail records the first mismatch at the current path; it always returns
// false so callers can "return e.fail(...)". The printers run lazily.
func (e *eqState) fail(left, right func() string) bool {
	if e.mm == nil && !e.quiet {
		e.mm = &Mismatch{Path: e.renderPath(), Left: left(), Right: right()}
	}
	return false
}

func (e *eqState) failStr(left, right string) bool {
	return e.fail(func() string { return left }, func() string { return right })
}

// top dispatches on the kind of the compared values.
func (e *eqState) top(a, b any) bool {
	switch x := a.(type) {
	case *Module:
		y, ok := b.(*Module)
		if !ok {
			return e.failStr(describe(a), describe(b))
		}
		return e.module(x, y)
	case *PrimFunc:
		y, ok := b.(*PrimFunc)
		if !ok {
			return e.failStr(describe(a), describe(b))
		}
		return e.primFunc(x, y)
	case Expr:
		y, ok := b.(Expr)
		if !ok {
			return e.failStr(describe(a), describe(b))
		}
		return e.expr(x, y)
	case StructInfo:
		y, ok := b.(StructInfo)
		if !ok {
			return e.failStr(describe(a), describe(b))
		}
		return e.sinfo(x, y)
	case PrimExpr:
		y, ok := b.(PrimExpr)
		if !ok {
			return e.failStr(describe(a), describe(b))
		}
		return e.prim(x, y)
	case Stmt:
		y, ok := b.(Stmt)
		if !ok {
			return e.failStr(describe(a), describe(b))
		}
		return e.stmt(x, y)
	case Binding:
		y, ok := b.(Binding)
		if !ok {
			return e.failStr(describe(a), describe(b))
		}
		return e.binding(x, y)
	case *BindingBlock:
		y, ok := b.(*BindingBlock)
		if !ok {
			return e.failStr(describe(a), describe(b))
		}
		return e.block(x, y)
	case nil:
		if b == nil {
			return true
		}
	}
	return e.failStr(describe(a), describe(b))
}

// module compares attributes, then functions matched by name in sorted name
// order; a function missing on one side is reported at functions["name"].
func (e *eqState) module(a, b *Module) bool {
	if !e.attrs(a.Attrs, b.Attrs) {
		return false
	}
	if !slices.EqualFunc(a.VDevices, b.VDevices, (*VDevice).Equal) {
		e.field("global_infos")
		return e.failStr(vdeviceList(a.VDevices), vdeviceList(b.VDevices))
	}
	if !equalGlobalInfoLists(a.GlobalInfos, b.GlobalInfos) {
		e.field("global_infos")
		return e.failStr(globalInfoListsString(a.GlobalInfos), globalInfoListsString(b.GlobalInfos))
	}
	names := a.Names()
	for _, n := range b.Names() {
		if _, ok := a.funcs[n]; !ok {
			names = append(names, n)
		}
	}
	if len(names) != len(a.funcs) {
		slices.Sort(names)
	}
	for _, n := range names {
		fa, okA := a.funcs[n]
		fb, okB := b.funcs[n]
		if !okA || !okB {
			e.field("functions")
			e.key(n)
			return e.failStr(describeFunc(fa, okA), describeFunc(fb, okB))
		}
		if fa == fb {
			// Functions are closed and immutable: the same function is
			// equal to itself.
			continue
		}
		e.resetVars()
		e.root(n)
		if !e.baseFunc(fa, fb) {
			return false
		}
		e.pop()
	}
	return true
}

func (e *eqState) baseFunc(a, b BaseFunc) bool {
	switch x := a.(type) {
	case *Function:
		if y, ok := b.(*Function); ok {
			return e.function(x, y)
		}
	case *PrimFunc:
		if y, ok := b.(*PrimFunc); ok {
			return e.primFunc(x, y)
		}
	case *ExternFunc:
		if y, ok := b.(*ExternFunc); ok && x.Symbol == y.Symbol {
			return true
		}
	}
	return e.failStr(describe(a), describe(b))
}

// attrs compares attribute dictionaries: the same keys, with structurally
// equal values. The first differing key (in sorted order) is reported.
func (e *eqState) attrs(a, b Attrs) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	e.field("attrs")
	if !e.dict(a, b) {
		return false
	}
	e.pop()
	return true
}

func (e *eqState) dict(a, b Attrs) bool {
	keys := a.Keys()
	for _, k := range b.Keys() {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		va, okA := a[k]
		vb, okB := b[k]
		e.key(k)
		if !okA || !okB {
			return e.failStr(describeAttr(va, okA), describeAttr(vb, okB))
		}
		if !e.attrValue(va, vb) {
			return false
		}
		e.pop()
	}
	return true
}

func (e *eqState) attrValue(a, b any) bool {
	ok := true
	switch x := a.(type) {
	case nil:
		ok = b == nil
	case bool, int64, int, string, DataType:
		ok = a == b
	case float64:
		y, isF := b.(float64)
		ok = isF && (x == y || (x != x && y != y))
	case PrimExpr:
		y, isP := b.(PrimExpr)
		if isP {
			return e.prim(x, y)
		}
		ok = false
	case StructInfo:
		y, isS := b.(StructInfo)
		if isS {
			return e.sinfo(x, y)
		}
		ok = false
	case Expr:
		y, isE := b.(Expr)
		if isE {
			return e.expr(x, y)
		}
		ok = false
	case []any:
		y, isL := b.([]any)
		if !isL || len(x) != len(y) {
			ok = false
			break
		}
		for i := range x {
			e.index(i)
			if !e.attrValue(x[i], y[i]) {
				return false
			}
			e.pop()
		}
		return true
	case Attrs:
		y, isA := b.(Attrs)
		if !isA {
			ok = false
			break
		}
		// Nested dictionaries report their keys under the current path.
		return e.dict(x, y)
	case *Target:
		y, isT := b.(*Target)
		if !isT {
			ok = false
			break
		}
		return e.dict(x.Config, y.Config)
	case *IndexMap:
		y, isM := b.(*IndexMap)
		if !isM || len(x.Params) != len(y.Params) || len(x.Results) != len(y.Results) {
			ok = false
			break
		}
		for i := range x.Params {
			if !e.definePrim(x.Params[i], y.Params[i]) {
				return false
			}
		}
		for i := range x.Results {
			if !e.prim(x.Results[i], y.Results[i]) {
				return false
			}
		}
		return true
	default:
		ok = attrsDeepEqual(a, b)
	}
	if !ok {
		return e.fail(func() string { return FormatAttrValue(a) }, func() string { return FormatAttrValue(b) })
	}
	return true
}

// vdeviceList describes a module's virtual devices for a mismatch report.
func vdeviceList(l []*VDevice) string {
	parts := make([]string, len(l))
	for i, d := range l {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
