// Package syntax reads phasec's text IR: TVMScript in the classic Relax
// dialect that TVM v0.23 prints. Package syntax/printer writes it; the two
// do not import each other.
//
// # Parsing
//
// Parse runs in three stages, fused into one pass over the text:
//
//  1. lexing (lexer.go, indent.go): a hand-written scanner for the Python
//     subset with the indentation logic fused in (NEWLINE / INDENT /
//     DEDENT), read on demand through a fixed window of tokens (stream.go),
//     so memory does not grow with the token count;
//  2. parsing: the grammar of record is participle's, the grammar structs
//     of grammar.go (golden EBNF in testdata/grammar.ebnf), built into a
//     participle parser only by the tests that hold the hand-written
//     reader to it (grammar_participle_test.go). Parse reads the
//     statement skeleton with a hand-written reader (parser.go) that builds
//     the same structs (TestHandParserMatchesParticiple checks it on the
//     corpus) without participle's size caps, token list or backtracking;
//     simple statements and expressions (grammar_simple.go,
//     grammar_expr.go) are hand-written for both, decided by the next
//     token, operator precedence by precedence climbing, building the
//     expression tree (build_ast.go) directly;
//  3. building (build*.go): the syntax tree becomes an ir.Module. R.* names
//     resolve against the op registry (ir.OpByPath) and its schemas, TIR
//     names against a table of intrinsics; every Relax binding goes through
//     the normalizing ir.Builder, so every expression has struct info.
//
// The bindings of Relax function bodies are not kept as a tree: the first
// pass only scans over them, and the builder reads each again when it gets
// to it, into memory reused for the next (deferred.go). Input with a syntax
// error is read eagerly instead, with recovery.
//
// Throughput: see BenchmarkParse (parse_bench_test.go), which runs go/parser
// on Go source of the same shape beside it.
//
// # Diagnostics
//
// Syntax errors are recovered where they happen (recover.go): the
// diagnostic is recorded, the statement (or whole block, for a broken
// block header) is skipped and a `pass` stands in for it, and reading goes
// on; the names the dropped text bound are poisoned in the builder. Other
// lines keep their positions, so every diagnostic points at the original
// text, and valid input never enters recovery. Errors found while building
// are collected at statement granularity too: a failed statement is
// skipped and the next one converted. So one run reports several
// independent errors, syntax and semantic (sorted, de-duplicated, at most
// maxErrors). Unknown names come with the closest known one ("did you mean
// R.nn.relu?"). FormatDiagnostics renders a list with the source line and a
// caret.
//
// Parse never panics on any input: a panic escaping the builder is a bug in
// phasec, recovered at the API boundary and reported as one diagnostic with
// code CodeInternal.
package syntax

import (
	"fmt"
	"runtime/debug"

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
	text := string(src) // one copy for every reading
	if mod, diags, ok := parseDeferred(filename, text); ok {
		return mod, diags
	}
	return parseEager(filename, text)
}

// parseEager reads the whole syntax tree, recovering from syntax errors,
// then builds it.
func parseEager(filename, text string) (mod *ir.Module, diags diag.List) {
	tree, rec := newStmtReader(filename, text).file()
	if tree == nil {
		return nil, finish(rec.diags)
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
