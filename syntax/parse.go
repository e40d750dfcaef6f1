// Package syntax reads and writes phasec's text IR: TVMScript in the
// classic Relax dialect that TVM v0.23 prints.
//
// # Parsing
//
// Parse runs in three stages:
//
//  1. lexing (lexer.go, indent.go): a hand-written scanner for the Python
//     subset with the indentation logic fused in (NEWLINE / INDENT /
//     DEDENT), filling a presized token slice that participle reads;
//  2. parsing: participle with the grammar structs of grammar.go for the
//     statement skeleton (decorators, classes, defs, if/for/with, suites),
//     whose EBNF is kept as the golden testdata/grammar.ebnf. The hot
//     productions, simple statements and expressions (grammar_simple.go,
//     grammar_expr.go), are participle.Parseable types written by hand:
//     decided by the next token, no backtracking, operator precedence by
//     precedence climbing, building the expression tree (build_ast.go)
//     directly;
//  3. building (build*.go): the syntax tree becomes an ir.Module. R.* names
//     resolve against the op registry (ir.OpByPath) and its schemas, TIR
//     names against a table of intrinsics; every Relax binding goes through
//     the normalizing ir.Builder, so every expression has struct info.
//
// Throughput (BenchmarkParse, 2-core Zen 4, 100k bindings): Parse ~6 MB/s,
// lexing + participle ~10 MB/s, lexing alone ~85 MB/s; go/parser on Go
// source of the same shape ~16 MB/s.
//
// # Diagnostics
//
// A syntax error stops parsing with one positioned diagnostic (participle
// reports the furthest failure only). Errors found while building are
// collected at statement granularity: a failed statement is skipped and the
// next one converted, so one run reports several independent errors (sorted,
// de-duplicated, at most maxErrors). Unknown names come with the closest
// known one ("did you mean R.nn.relu?"). FormatDiagnostics renders a list
// with the source line and a caret.
//
// Parse never panics on any input: a panic escaping the builder is a bug in
// phasec, recovered at the API boundary and reported as one diagnostic with
// code CodeInternal.
package syntax

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"unsafe"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/phasec/phasec/diag"
	"github.com/phasec/phasec/ir"
)

// Parse parses a TVMScript module. On error it returns the diagnostics
// (sorted, de-duplicated) and possibly a partial module.
func Parse(filename string, src []byte) (mod *ir.Module, diags diag.List) {
	defer func() {
		if r := recover(); r != nil {
			mod = nil
			diags = append(diags, &diag.Diagnostic{
				Span: diag.Span{File: filename, Line: 1, Col: 1}, Severity: diag.Error, Code: CodeInternal,
				Msg: fmt.Sprintf("internal error in the parser (a bug in phasec, not in the input): %v\n%s", r, debug.Stack()),
			})
		}
	}()
	tree, err := parseTree(filename, src)
	if err != nil {
		return nil, diag.List{syntaxDiagnostic(filename, err)}
	}
	bd := newBuilder(filename)
	mod = bd.buildFile(tree)
	if len(bd.diags) > 0 {
		return mod, finish(bd.diags)
	}
	return mod, nil
}

// parseTree runs the scanner and participle over src.
//
// participle's own entry points collect the tokens with lexer.Upgrade,
// which appends them one by one: for a large module the slice is
// reallocated and copied dozens of times (Go grows large slices by 1.25x),
// about five times the final size in all, and that was a third of the
// participle stage. Here the tokens go into a slice sized from the source
// length (one token per three bytes, measured on printed modules) and are
// handed to participle as a PeekingLexer.
func parseTree(filename string, src []byte) (*fileNode, error) {
	peek, err := lexTokens(filename, src)
	if err != nil {
		return nil, err
	}
	return fileParser.ParseFromLexer(peek)
}

// lexTokens scans src completely into a PeekingLexer.
func lexTokens(filename string, src []byte) (*lexer.PeekingLexer, error) {
	s := newScanner(filename, string(src))
	toks := make([]lexer.Token, 0, len(src)/3+16)
	for {
		if len(toks) < cap(toks) {
			toks = toks[:len(toks)+1]
		} else {
			toks = append(toks, lexer.Token{})
		}
		t := &toks[len(toks)-1]
		if err := s.scan(t); err != nil {
			return nil, err
		}
		if t.EOF() {
			return peekingLexerOf(toks)
		}
	}
}

// tokensField locates the token slice inside lexer.PeekingLexer (an
// unexported field, found by name and type so that a different participle
// version falls back to lexer.Upgrade instead of misbehaving).
var tokensField = func() (offset uintptr, ok bool) {
	f, ok := reflect.TypeFor[lexer.PeekingLexer]().FieldByName("tokens")
	if !ok || f.Type != reflect.TypeFor[[]lexer.Token]() || len(f.Index) != 1 {
		return 0, false
	}
	return f.Offset, true
}

var tokensOffset, tokensSettable = tokensField()

// peekingLexerOf returns a PeekingLexer over toks (which end with EOF),
// equivalent to lexer.Upgrade over the same stream without elided types.
func peekingLexerOf(toks []lexer.Token) (*lexer.PeekingLexer, error) {
	if !tokensSettable {
		return lexer.Upgrade(&tokenReplay{toks: toks})
	}
	p := &lexer.PeekingLexer{}
	*(*[]lexer.Token)(unsafe.Add(unsafe.Pointer(p), tokensOffset)) = toks
	return p, nil
}

// tokenReplay is a lexer.Lexer over tokens already scanned.
type tokenReplay struct {
	toks []lexer.Token
	next int
}

func (r *tokenReplay) Next() (lexer.Token, error) {
	t := r.toks[r.next]
	if r.next < len(r.toks)-1 {
		r.next++
	}
	return t, nil
}
