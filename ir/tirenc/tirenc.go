// Package tirenc is a compact, versioned binary encoding of TIR PrimFuncs:
// how an executable stores its kernels, so that the runtime can load them
// without the TVMScript front end.
//
// Encode covers every TIR node of package ir: the statements (For,
// BufferStore, SeqStmt, IfThenElse, LetStmt, Evaluate, BlockRealize with
// its Block, AttrStmt with its CommReducer, While, Allocate, AllocateConst,
// DeclBuffer), every PrimExpr (IntImm, FloatImm, PrimStr, PrimVar, Binary,
// Not, Select, Cast, PrimCall, BufferLoad), buffers with their full layout,
// and attributes whose values are nil, bool, int64, int, float64, string,
// DataType, PrimExpr, []any, Attrs, *Target or *IndexMap. Relax values in
// a TIR attribute (StructInfo, Expr) are not encodable: Encode reports
// them.
//
// # Invariants
//
//   - Decode(Encode(f)) is structurally equal to f (ir.StructuralEqual)
//     and keeps every name, so it prints as the same TVMScript. Variable
//     and buffer identity is kept: a PrimVar or Buffer is written in full
//     where the encoder first meets it and referred to by its index after
//     that, so sharing (a buffer's data handle, a shape variable bound by
//     several buffers) survives. Source positions are not kept: decoded
//     nodes have no spans.
//   - Decode never panics and allocates at most a small multiple of its
//     input: every count is checked against the bytes left before
//     anything is allocated, nesting is bounded by MaxDepth, enumerations
//     are range-checked, and every operand the IR requires is present, so
//     DType is total on the decoded expressions.
//   - The first byte is Version; Decode reads exactly that version.
//
// # Format
//
// All integers are varints ("uv" unsigned, "sv" zig-zag signed); a string
// is uv length then bytes; a list is uv count then its elements; a float
// is 8 bytes, IEEE 754 little-endian; a DataType is code byte, bits byte,
// uv lanes. A variable reference is uv 0 (none), 1 (a new variable: name,
// dtype) or k+2 (the k-th variable met so far); a buffer reference is the
// same with a new buffer written as name, data variable, dtype, scope,
// shape list, strides list, element offset, sv align, sv offset factor,
// auto-broadcast byte, axis separators as a list of sv. A PrimFunc is
//
//	version byte, params (list of variable refs), per param a buffer ref
//	(0: a scalar or an unviewed handle), return DataType, attrs, body
//
// Expressions and statements start with a tag byte (0 for an absent
// optional one); the tags are the constants below. The layout of each
// node follows its Go struct field by field.
package tirenc

import (
	"errors"
	"fmt"
)

// Version is the encoding this package writes and reads. An executable
// records it with every kernel, so a format change is detected at load.
const Version = 1

// MaxDepth bounds the nesting of statements and expressions Decode
// accepts (and Encode produces), so a hostile input cannot exhaust the
// stack. Kernels nest a few dozen levels.
const MaxDepth = 10000

// Expression tags.
const (
	exprNone byte = iota
	exprIntImm
	exprFloatImm
	exprStr
	exprVar
	exprBinary
	exprNot
	exprSelect
	exprCast
	exprCall
	exprLoad
	numExprTags
)

// Statement tags.
const (
	stmtNone byte = iota
	stmtFor
	stmtStore
	stmtSeq
	stmtIf
	stmtLet
	stmtEvaluate
	stmtBlockRealize
	stmtAttr
	stmtWhile
	stmtAllocate
	stmtAllocateConst
	stmtDeclBuffer
	numStmtTags
)

// Attribute value tags.
const (
	attrNil byte = iota
	attrFalse
	attrTrue
	attrInt64
	attrInt
	attrFloat
	attrString
	attrDType
	attrPrim
	attrList
	attrDict
	attrTarget
	attrIndexMap
	numAttrTags
)

// Reference markers of variables and buffers.
const (
	refNone = 0
	refNew  = 1
	refBase = 2
)

// Error is a malformed encoding: the byte offset and what is wrong.
type Error struct {
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("bad encoded TIR at byte %d: %s", e.Offset, e.Msg)
}

// ErrUnsupported is wrapped by Encode's error for a node or attribute
// value it cannot encode.
var ErrUnsupported = errors.New("not encodable")
