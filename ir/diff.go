package ir

import (
	"fmt"
	"reflect"
	"strconv"
)

// Printing the two sides of a Diff mismatch. Leaves print in full
// (R.shape([8]) vs R.shape([16])); larger nodes print a short description,
// since the path already says where they are.

// describe names a node briefly.
func describe(x any) string {
	switch v := x.(type) {
	case nil:
		return "None"
	case *Module:
		return fmt.Sprintf("module with %d functions", v.Len())
	case *Function:
		return "R.function"
	case *PrimFunc:
		return "T.prim_func"
	case Expr:
		return FormatExpr(v, nil)
	case StructInfo:
		return FormatStructInfo(v, nil)
	case PrimExpr:
		return FormatPrim(v, nil)
	case *VarBinding:
		return varDesc(v.Var) + " = " + FormatExpr(v.Value, nil)
	case *MatchCast:
		return varDesc(v.Var) + " = R.match_cast(" + FormatExpr(v.Value, nil) + ", " + FormatStructInfo(v.SInfo, nil) + ")"
	case *BindingBlock:
		if v.Dataflow {
			return fmt.Sprintf("dataflow block of %d bindings", len(v.Bindings))
		}
		return fmt.Sprintf("block of %d bindings", len(v.Bindings))
	case Stmt:
		return describeStmt(v)
	}
	return fmt.Sprintf("%T", x)
}

func describeStmt(s Stmt) string {
	switch v := s.(type) {
	case *For:
		return "for " + primVarDesc(v.Var) + " in T." + v.Kind.String() + "(" + FormatPrim(v.Extent, nil) + ")"
	case *BufferStore:
		return bufferDesc(v.Buffer) + "[...] = " + FormatPrim(v.Value, nil)
	case *SeqStmt:
		return fmt.Sprintf("sequence of %d statements", len(v.Stmts))
	case *IfThenElse:
		return "if " + FormatPrim(v.Cond, nil)
	case *LetStmt:
		return primVarDesc(v.Var) + " = " + FormatPrim(v.Value, nil)
	case *AttrStmt:
		if v.Thread != nil {
			return primVarDesc(v.Thread) + " = T.launch_thread(" + strconv.Quote(v.Tag) + ", " + FormatPrim(v.Value, nil) + ")"
		}
		node := "T.comm_reducer(...)"
		if v.Node != nil {
			node = FormatPrim(v.Node, nil)
		}
		return "T.attr(" + node + ", " + strconv.Quote(v.Key) + ", " + FormatPrim(v.Value, nil) + ")"
	case *Evaluate:
		return "T.evaluate(" + FormatPrim(v.Value, nil) + ")"
	case *While:
		return "while " + FormatPrim(v.Cond, nil)
	case *Allocate:
		return primVarDesc(v.Data) + " = T.allocate(" + strconv.Itoa(len(v.Extents)) + " extents, " + strconv.Quote(v.DType.String()) + ", " + strconv.Quote(ScopeString(v.Scope)) + ")"
	case *AllocateConst:
		return primVarDesc(v.Data) + " = T.allocate_const(" + strconv.Itoa(len(v.Values)) + " values, " + strconv.Quote(v.DType.String()) + ")"
	case *DeclBuffer:
		return bufferDesc(v.Buffer) + " = T.decl_buffer(...)"
	case *BlockRealize:
		if v.Block != nil {
			return describeStmt(v.Block)
		}
		return "block realize"
	case *Block:
		return "T.block(" + strconv.Quote(v.Name) + ")"
	}
	return fmt.Sprintf("%T", s)
}

func describeFunc(f BaseFunc, present bool) string {
	if !present {
		return "<missing>"
	}
	return describe(f)
}

func describeAttr(v any, present bool) string {
	if !present {
		return "<missing>"
	}
	return FormatAttrValue(v)
}

func countOf(n int, what string) string { return strconv.Itoa(n) + " " + what }

func varDesc(v *Var) string {
	if v == nil {
		return "None"
	}
	if v.Dataflow {
		return v.Name + " (dataflow var)"
	}
	return v.Name
}

func primVarDesc(v *PrimVar) string {
	if v == nil {
		return "None"
	}
	return v.Name + ": " + v.Type.String()
}

func bufferDesc(b *Buffer) string {
	if b == nil {
		return "None"
	}
	s := b.Name + ": T.Buffer(("
	for i, d := range b.Shape {
		if i > 0 {
			s += ", "
		}
		s += FormatPrim(d, nil)
	}
	if len(b.Shape) == 1 {
		s += ","
	}
	s += "), " + strconv.Quote(b.DType.String())
	if b.Scope != "" && b.Scope != "global" {
		s += ", scope=" + strconv.Quote(b.Scope)
	}
	return s + ")"
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// attrsDeepEqual compares attribute values of types the Attrs contract does
// not list (defensive; such values should not occur).
func attrsDeepEqual(a, b any) bool { return reflect.DeepEqual(a, b) }
