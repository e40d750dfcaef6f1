package diag

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// Code is a stable diagnostic code: its family's prefix and three digits
// ("WF017", "LOW040"). A code names one kind of problem for as long as
// phasec exists; it is never renumbered or reused for another.
//
// Every code is defined once, by Family.Define in the package that owns the
// family, next to the code that reports it; Define panics on a duplicate, so
// the program fails at init instead of printing two meanings for one code.
// Codes lists every code the program links (phasec doc codes prints it).
type Code string

// Family is a group of codes sharing a prefix, owned by one package: only
// that package defines codes of the family, so the next free number is
// decided in one place (phasec doc codes shows the numbers taken).
type Family struct {
	Prefix string // "LOW"
	Owner  string // import path of the package that defines the codes
	Doc    string // one line: what reports the family's codes
}

// CodeInfo is one registered code.
type CodeInfo struct {
	Code   Code
	Family *Family
	Title  string // one line: the problem the code reports
}

// registry holds every family and code of the program (or of one test).
// It is written only during package initialization, which runs in one
// goroutine, and read afterwards, so it needs no lock.
type registry struct {
	families map[string]*Family
	codes    map[Code]CodeInfo
}

var codes registry

// NewFamily declares the family of codes starting with prefix, owned by the
// calling package, with a one-line doc. Call it (and Define) during package
// initialization, and keep the *Family unexported so no other package
// defines codes in it. It panics when the prefix is
// declared twice or one prefix starts another (then a code would not name
// its family).
func NewFamily(prefix, doc string) *Family {
	return codes.newFamily(prefix, callerPackage(2), doc)
}

// Define registers code with a one-line title and returns it. The code is
// f's prefix followed by three digits. Define panics on a malformed code,
// an empty title or a code defined before: a duplicate is a bug found at
// init.
func (f *Family) Define(code Code, title string) Code {
	return codes.define(f, code, title)
}

// Codes returns every registered code, ordered by family prefix and code.
func Codes() []CodeInfo { return codes.all() }

// Families returns every declared family, ordered by prefix.
func Families() []*Family { return codes.allFamilies() }

// LookupCode returns the registration of code.
func LookupCode(code Code) (CodeInfo, bool) {
	info, ok := codes.codes[code]
	return info, ok
}

func (r *registry) newFamily(prefix, owner, doc string) *Family {
	if !(prefix == internalPrefix || prefix != "" && strings.TrimFunc(prefix, isUpper) == "") {
		panic(fmt.Sprintf("diag: family prefix %q is not upper-case letters", prefix))
	}
	if doc == "" {
		panic(fmt.Sprintf("diag: family %s has no doc", prefix))
	}
	for p, f := range r.families {
		if strings.HasPrefix(p, prefix) || strings.HasPrefix(prefix, p) {
			panic(fmt.Sprintf("diag: family %s declared in %s clashes with family %s of %s", prefix, owner, p, f.Owner))
		}
	}
	if r.families == nil {
		r.families = map[string]*Family{}
		r.codes = map[Code]CodeInfo{}
	}
	f := &Family{Prefix: prefix, Owner: owner, Doc: doc}
	r.families[prefix] = f
	return f
}

// internalPrefix is the one family whose code is its prefix alone: syntax's
// "internal", which marks a bug in phasec and predates the registry.
const internalPrefix = "internal"

func (r *registry) define(f *Family, code Code, title string) Code {
	num, ok := strings.CutPrefix(string(code), f.Prefix)
	if !ok || !(len(num) == 3 && strings.TrimFunc(num, isDigit) == "" || f.Prefix == internalPrefix && num == "") {
		panic(fmt.Sprintf("diag: code %q is not %s followed by three digits", code, f.Prefix))
	}
	if title == "" || strings.Contains(title, "\n") {
		panic(fmt.Sprintf("diag: code %s needs a one-line title", code))
	}
	if prev, dup := r.codes[code]; dup {
		panic(fmt.Sprintf("diag: code %s defined twice (%q and %q)", code, prev.Title, title))
	}
	r.codes[code] = CodeInfo{Code: code, Family: f, Title: title}
	return code
}

func (r *registry) all() []CodeInfo {
	out := make([]CodeInfo, 0, len(r.codes))
	for _, c := range r.codes {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b CodeInfo) int {
		return cmp.Or(cmp.Compare(a.Family.Prefix, b.Family.Prefix), cmp.Compare(a.Code, b.Code))
	})
	return out
}

func (r *registry) allFamilies() []*Family {
	out := make([]*Family, 0, len(r.families))
	for _, f := range r.families {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *Family) int { return cmp.Compare(a.Prefix, b.Prefix) })
	return out
}

// callerPackage returns the import path of the function skip frames up the
// stack: the package whose initialization declares a family.
func callerPackage(skip int) string {
	pc, _, _, ok := runtime.Caller(skip)
	if !ok {
		return "?"
	}
	name := runtime.FuncForPC(pc).Name() // "github.com/phasec/phasec/lower.init"
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}

func isUpper(r rune) bool { return 'A' <= r && r <= 'Z' }
func isDigit(r rune) bool { return '0' <= r && r <= '9' }
