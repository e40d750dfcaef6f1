// Package printer writes a module as canonical TVMScript text, the
// inverse of syntax.Parse. It imports ir and op (for the ops it prints in
// their own forms: call_tir, print, assert, the device hints) and nothing
// of the parser: the parser does not print, and the printer needs no
// parser tables (the metadata format both share is syntax/internal/tvmmeta).
// Its API is Print and Fprint.
//
// The output is the classic Relax dialect TVM v0.23 prints (`mod.script()`),
// and it is canonical: printing is a function of the module's structure, so
// print(parse(print(m))) == print(m) byte for byte. What makes it so:
//
//   - Functions print in TVM's order (src/script/printer/ir/ir.cc,
//     SortableFunction): PrimFuncs by name, then Relax functions by name, and
//     a function called "main" last.
//   - Attribute dictionaries print with sorted keys.
//   - Every printed name is unique within its function (Python scoping: one
//     namespace per def, nested defs included), derived deterministically
//     from the name hint: the first "lv" prints as lv, the next as lv1, lv2,
//     ... So all printed names are distinct, and re-parsing gives back hints
//     that print unchanged.
//   - Symbolic variables print where they are first used, and the
//     declarations `n = T.int64()` are collected at the top of the function
//     that first mentions them. In a signature a dimension that mentions one
//     of the function's own symbolic variables prints as a string ("n"),
//     because Python evaluates the signature before the body declares it.
//   - Relax-level symbolic expressions (shapes, prim values, struct info)
//     print in the canonical form ir.Simplify gives; TIR kernel expressions
//     print as they are.
//   - A binding's annotation is omitted exactly when it is structurally equal
//     to its value's struct info, which is what the parser's inference gives
//     back (so eliding it loses nothing).
//
// Tensor constants print as metadata["relax.expr.Constant"][i] with the
// show_meta=True section above the module (see print_metadata.go).
//
// The printer never recurses over bindings or statements lists; recursion
// depth follows expression and loop nesting only.
package printer

import (
	"io"
	"strconv"
	"strings"

	"github.com/phasec/phasec/ir"
)

// Print returns the canonical TVMScript text of mod.
func Print(mod *ir.Module) string {
	p := newPrinter(mod, nil)
	p.module()
	p.flush()
	p.finishMeta()
	n := 0
	for _, c := range p.done {
		n += len(c)
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, c := range p.done {
		sb.Write(c)
	}
	return sb.String()
}

// Fprint writes the canonical TVMScript text of mod to w. The text is never
// whole in memory: it goes to w in chunks of about chunkSize bytes, except
// that a top-level Relax function's body is held (in chunks) until it is
// complete, because the declarations found while printing it go above it.
func Fprint(w io.Writer, mod *ir.Module) error {
	p := newPrinter(mod, w)
	p.module()
	p.flush()
	p.finishMeta()
	return p.err
}

func newPrinter(mod *ir.Module, w io.Writer) *printer {
	p := &printer{mod: mod, w: w, out: make([]byte, 0, chunkCap)}
	p.relaxPrimNameFn = p.relaxPrimName
	p.tirNameFn = p.tirVarName
	p.tirBufferFn = p.bufferName
	return p
}

// chunkSize is the size at which the printer passes its output on (or, in a
// held function body, starts a new chunk); chunkCap leaves room for the
// binding that crosses it, so chunks rarely regrow. Variables so that tests
// can check the text does not depend on them.
var (
	chunkSize = 64 << 10
	chunkCap  = chunkSize + 4<<10
)

// printer accumulates output in out, which it passes on in chunks (see
// spill). Methods write directly to out; the bodies of Relax functions are
// printed aside first so that the declarations found while printing them
// can be placed above (see relaxFunc).
type printer struct {
	mod *ir.Module
	out []byte
	// w receives the output; when it is nil (Print), done keeps the
	// finished chunks instead.
	w    io.Writer
	err  error // w's first write error
	done [][]byte
	// held collects the full chunks of the top-level Relax function body
	// being printed (holding is set), to be emitted after its header.
	held    [][]byte
	holding bool
	ind     int // current indentation level (4 spaces each)
	// fn is the innermost Relax function being printed, nil in TIR.
	fn *relaxFrame
	// tir is the PrimFunc being printed, nil in Relax.
	tir *tirFrame
	// sig is set while printing a Relax signature, where dimensions that
	// mention the function's own symbolic variables print as strings;
	// relaxPrimName sets sigOwn when it names such a variable.
	sig, sigOwn bool
	// relaxPrimNameFn and tirNameFn are the method values handed to
	// ir.PrimFormat, bound once.
	relaxPrimNameFn func(*ir.PrimVar) string
	tirNameFn       func(*ir.PrimVar) string
	tirBufferFn     func(*ir.Buffer) string
	// headerPending is set while it is unknown whether the text uses the T
	// prefix (a module without PrimFuncs); pre holds the chunks printed
	// meanwhile. usesRelax is known from the start.
	headerPending, usesRelax bool
	pre                      [][]byte
	// metaPending is set when the module has tensor constants: the
	// metadata section goes above everything, so all chunks wait in
	// metaHeld until it is known (finishMeta). meta are the constants
	// referenced so far, metaIndex their numbers.
	metaPending bool
	metaHeld    [][]byte
	meta        []*ir.Constant
	metaIndex   map[*ir.Constant]int
}

// emit passes a finished chunk on (see write). While the header is pending
// (see module), chunks without a TIR prefix wait in pre.
func (p *printer) emit(c []byte) (reusable bool) {
	if len(c) == 0 {
		return true
	}
	if p.headerPending {
		if !usesPrefix(c, 'T') {
			p.pre = append(p.pre, c)
			return false
		}
		p.writeHeader(true)
	}
	return p.write(c)
}

// write passes a chunk on: written to w, or kept in done when there is no
// w. It reports whether the caller may reuse c's memory.
func (p *printer) write(c []byte) (reusable bool) {
	if p.metaPending {
		p.metaHeld = append(p.metaHeld, c)
		return false
	}
	if p.w == nil {
		p.done = append(p.done, c)
		return false
	}
	if p.err == nil {
		_, p.err = p.w.Write(c)
	}
	return true
}

// flush emits out and starts it afresh.
func (p *printer) flush() {
	if p.emit(p.out) {
		p.out = p.out[:0]
	} else {
		p.out = make([]byte, 0, chunkCap)
	}
}

// spill moves out on once it reaches chunkSize: into held while a
// top-level function body is held, else to emit. Callers call it only where
// out holds nothing but finished text of the current destination (between
// statements of a top-level function, between functions).
func (p *printer) spill() {
	if len(p.out) < chunkSize {
		return
	}
	if p.holding {
		p.held = append(p.held, p.out)
		p.out = make([]byte, 0, chunkCap)
		return
	}
	p.flush()
}

func (p *printer) str(s string) { p.out = append(p.out, s...) }
func (p *printer) byte(c byte)  { p.out = append(p.out, c) }

// line starts a new line at the current indentation.
func (p *printer) line() {
	for i := 0; i < p.ind; i++ {
		p.out = append(p.out, "    "...)
	}
}

func (p *printer) nl() { p.out = append(p.out, '\n') }

// quote writes s as a double-quoted Python string literal. Go's escapes for
// quotes, backslashes and control characters are also valid Python.
func (p *printer) quote(s string) {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			simple = false
			break
		}
	}
	if simple {
		p.out = append(p.out, '"')
		p.out = append(p.out, s...)
		p.out = append(p.out, '"')
		return
	}
	p.out = strconv.AppendQuote(p.out, s)
}

// The header names the prefixes the text uses, as TVM's printer does: its
// IR, TIR and Relax doc helpers record the prefix each time they print it
// (d->ir_usage in src/script/printer/ir_docsifier.cc), and HeaderWrapper
// (src/script/printer/utils.h) writes one import comment per recorded
// prefix. So a module without PrimFuncs mentions T only if its Relax text
// does (`n = T.int64()`, `R.prim_value(T.int64(1))`).
func scriptHeader(tir, relax bool) string {
	h := "# from tvm.script import ir as I\n"
	if tir {
		h += "# from tvm.script import tir as T\n"
	}
	if relax {
		h += "# from tvm.script import relax as R\n"
	}
	return h + "\n"
}

// writeHeader writes the header and the chunks that waited for it.
func (p *printer) writeHeader(tir bool) {
	p.headerPending = false
	p.write([]byte(scriptHeader(tir, p.usesRelax)))
	for _, c := range p.pre {
		p.write(c)
	}
	p.pre = nil
}

// usesPrefix reports whether printed text c uses the module prefix x (as
// in "T.int64"): x followed by a dot, not part of a longer name or dotted
// path, outside string literals and comments. Chunks end between
// statements, so no token or literal spans two.
func usesPrefix(c []byte, x byte) bool {
	for i := 0; i+1 < len(c); i++ {
		switch c[i] {
		case '"':
			for i++; i < len(c) && c[i] != '"'; i++ {
				if c[i] == '\\' {
					i++
				}
			}
		case '#':
			for i < len(c) && c[i] != '\n' {
				i++
			}
		case x:
			if c[i+1] == '.' && (i == 0 || !isNameByte(c[i-1]) && c[i-1] != '.') {
				return true
			}
		}
	}
	return false
}

func isNameByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func (p *printer) module() {
	p.metaPending = hasMetaConstants(p.mod)
	hasTIR := false
	for _, f := range p.mod.Functions() {
		if isPrimFunc(f) {
			hasTIR = true
		} else {
			p.usesRelax = true
		}
	}
	if hasTIR {
		p.str(scriptHeader(true, p.usesRelax))
	} else {
		p.headerPending = true
	}
	if p.mod.Unchecked[""] {
		p.str("@I.ir_module(check_well_formed=False)\nclass Module:\n")
	} else {
		p.str("@I.ir_module\nclass Module:\n")
	}
	p.ind = 1
	first := true
	if len(p.mod.Attrs) > 0 {
		p.line()
		p.str("I.module_attrs(")
		p.attrDict(p.mod.Attrs, "")
		p.str(")\n")
		first = false
	}
	if len(p.mod.VDevices) > 0 || len(p.mod.GlobalInfos) > 0 {
		p.line()
		p.moduleGlobalInfos()
		first = false
	}
	// Python's doc printer ends a function with an empty line
	// (NewLineWithoutIndent in python_doc_printer.cc) and nothing else, so
	// functions are separated by one but I.module_attrs and
	// I.module_global_infos are followed directly by the first function.
	afterFunc := false
	for _, name := range functionOrder(p.mod) {
		if afterFunc {
			p.nl()
		}
		first, afterFunc = false, true
		f, _ := p.mod.Lookup(name)
		switch f := f.(type) {
		case *ir.Function:
			p.relaxFunc(name, f, true)
		case *ir.PrimFunc:
			p.primFunc(name, f)
		case *ir.ExternFunc:
			// An assignment, not a function: no empty line after it.
			p.line()
			p.str(name)
			p.str(" = R.ExternFunc(")
			p.quote(f.Symbol)
			p.str(")\n")
			afterFunc = false
		}
		p.spill()
	}
	if first {
		p.line()
		p.str("pass\n")
	}
	p.flush()
	if p.headerPending {
		p.writeHeader(false)
	}
}

// functionOrder is TVM's printing order (SortableFunction in
// src/script/printer/ir/ir.cc): PrimFuncs, then extern functions, then
// Relax functions, each sorted by name, with "main" last.
func functionOrder(mod *ir.Module) []string {
	var tir, extern, relax []string
	hasMain := false
	for name, f := range mod.Functions() { // sorted by name
		_, isExtern := f.(*ir.ExternFunc)
		switch {
		case name == "main":
			hasMain = true
		case isPrimFunc(f):
			tir = append(tir, name)
		case isExtern:
			extern = append(extern, name)
		default:
			relax = append(relax, name)
		}
	}
	order := append(append(tir, extern...), relax...)
	if hasMain {
		order = append(order, "main")
	}
	return order
}

func isPrimFunc(f ir.BaseFunc) bool {
	_, ok := f.(*ir.PrimFunc)
	return ok
}

// decorator writes "@prefix", or "@prefix(pure=False, private=True)" with the
// options that apply.
func (p *printer) decorator(prefix string, private, impure, unchecked bool) {
	p.line()
	p.byte('@')
	p.str(prefix)
	// TVM's function printer adds pure=False before private=True
	// (src/script/printer/relax/function.cc).
	var args []string
	if impure {
		args = append(args, "pure=False")
	}
	if private {
		args = append(args, "private=True")
	}
	if unchecked {
		args = append(args, "check_well_formed=False")
	}
	if len(args) > 0 {
		p.byte('(')
		p.str(strings.Join(args, ", "))
		p.byte(')')
	}
	p.nl()
}

// visibleAttrs returns a function's attributes as printed: global_symbol is
// hidden when it equals the function's name. private reports a top-level
// function without a global_symbol.
func visibleAttrs(name string, attrs ir.Attrs, topLevel bool) (shown ir.Attrs, private bool) {
	sym, ok := attrs.String(ir.AttrGlobalSymbol)
	switch {
	case !ok:
		return attrs, topLevel
	case sym == name:
		return attrs.Without(ir.AttrGlobalSymbol), false
	}
	return attrs, false
}

// isIdent reports whether s is usable as a Python identifier as is.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	digits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			if i == 0 {
				return false
			}
			digits = true
		} else if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	// No keyword has a digit; most generated names (lv12) do, and skip the lookup.
	return digits || !pythonKeywords[s]
}

var pythonKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(`False None True and as assert async await break class
		continue def del elif else except finally for from global if import in is lambda
		nonlocal not or pass raise return try while with yield`) {
		m[k] = true
	}
	return m
}()
