// Package syntax reads and writes phasec's text IR: TVMScript in the
// classic Relax dialect that TVM v0.23 prints.
//
// # Parsing
//
// Parse runs in three stages:
//
//  1. lexing (lexer.go, indent.go): a hand-written scanner for the Python
//     subset with the indentation logic fused in (NEWLINE / INDENT /
//     DEDENT), the lexer.Lexer participle reads through lexer.Upgrade;
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
// Throughput (BenchmarkParse, 2-core machine, 100k bindings, one run): Parse
// ~4 MB/s, lexing + participle ~6 MB/s, lexing alone ~85 MB/s; go/parser on
// Go source of the same shape ~16 MB/s. lexer.Upgrade's one-by-one appends
// of 64-byte tokens are about half of the participle stage.
//
// # Diagnostics
//
// participle reports only its furthest failure, so syntax errors are
// recovered by re-parsing (recover.go): the diagnostic is recorded, the
// logical line it is on (every physical line of a bracketed statement) is
// replaced by an indentation-preserving pass, or the whole block when the
// line is a block header or decorator, and the text is parsed again. Other
// lines keep their positions, so every diagnostic points at the original
// text; the names the dropped text bound are poisoned in the builder. Each
// round drops at least one new line and the rounds are bounded, and valid
// input never enters recovery. Errors found while building are collected
// at statement granularity too: a failed statement is skipped and the next
// one converted. So one run reports several independent errors, syntax and
// semantic (sorted, de-duplicated, at most maxErrors). Unknown names come with the closest
// known one ("did you mean R.nn.relu?"). FormatDiagnostics renders a list
// with the source line and a caret.
//
// Parse never panics on any input: a panic escaping the builder is a bug in
// phasec, recovered at the API boundary and reported as one diagnostic with
// code CodeInternal.
package syntax

import (
	"fmt"
	"runtime/debug"

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
	var rec *recovery
	if err != nil {
		// Only now, with a syntax error in hand, does recovery cost anything.
		if tree, rec = recoverSyntax(filename, src, err); tree == nil {
			return nil, finish(rec.diags)
		}
	}
	bd := newBuilder(filename)
	if rec != nil {
		bd.neutral = rec.poison
	}
	mod = bd.buildFile(tree)
	if rec != nil {
		return mod, finish(append(rec.diags, rec.keep(bd.diags)...))
	}
	if len(bd.diags) > 0 {
		return mod, finish(bd.diags)
	}
	return mod, nil
}

// parseTree runs the scanner and participle over src. The scanner is
// participle's lexer.Lexer; lexer.Upgrade buffers its tokens for the
// grammar's lookahead.
func parseTree(filename string, src []byte) (*fileNode, error) {
	peek, err := lexTokens(filename, src)
	if err != nil {
		return nil, err
	}
	return fileParser.ParseFromLexer(peek)
}

// lexTokens scans src completely into a PeekingLexer.
func lexTokens(filename string, src []byte) (*lexer.PeekingLexer, error) {
	return lexer.Upgrade(newScanner(filename, string(src)))
}
