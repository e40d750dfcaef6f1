package syntax

import (
	"strconv"
	"strings"

	"github.com/phasec/phasec/ir"
	"github.com/phasec/phasec/op"
)

// Opaque calls: a name TVM v0.23's parser resolves under R. (tvm_names.go)
// that phasec has no op for yet still parses, into a call of an opaque op
// that keeps what was written: positional arguments as Relax values,
// keyword arguments as attributes in their order, and the struct info the
// binding declares ("y: R.Tensor((4,), "float32") = R.nn.conv2d(...)"), or
// the out_sinfo/sinfo_args it was given, or else R.Object. The checker
// then sees the call (an opaque op is a high-level tensor op: nothing
// lowers it, which the phase invariants report), and the printer writes it
// back as it was read.

// opaqueOp returns the op for a call of path with nPos positional
// arguments followed by the keywords kws: an opaque op of package op's
// registry (op.Opaque), whose parameters take the names TVM's signature
// gives the positions.
func opaqueOp(path string, nPos int, kws []string) *ir.Op {
	sig := tvmRelaxSignatures[path]
	params := make([]ir.Param, 0, nPos+len(kws))
	for i := range nPos {
		name := "arg" + strconv.Itoa(i)
		if i < len(sig) && !strings.HasPrefix(sig[i], "*") {
			name = sig[i]
		}
		params = append(params, ir.Param{Name: name, Kind: ir.ArgExpr})
	}
	for _, k := range kws {
		params = append(params, ir.Param{Name: k, Kind: ir.AttrAny})
	}
	return op.Opaque("relax."+strings.TrimPrefix(path, "R."), params)
}

// isTVMRelaxName reports whether TVM v0.23's parser resolves path.
func isTVMRelaxName(path string) bool {
	_, ok := tvmRelaxSignatures[path]
	return ok
}

// opaqueCall converts a call of a TVM name phasec has no op for. declared
// is the struct info the binding declares for it (nil if none).
func (bd *builder) opaqueCall(a *ast, path string, declared ir.StructInfo) ir.Expr {
	var args []ir.Expr
	var kws []string
	var attrs ir.Attrs
	sig := tvmRelaxSignatures[path]
	for i, it := range a.Items {
		kw := a.Keywords[i]
		if kw == "" && len(kws) > 0 {
			bd.fail(it.Span, "positional argument after keyword arguments in %s(...)", path)
		}
		if kw == "" && !bd.isStructInfoExpr(it) {
			args = append(args, bd.relaxExpr(it))
			continue
		}
		if kw == "" {
			// A positional struct info (call_tir_with_grad's out_sinfo)
			// is kept under its parameter's name.
			kw = "out_sinfo"
			if i < len(sig) && !strings.HasPrefix(sig[i], "*") {
				kw = sig[i]
			}
		}
		if attrs == nil {
			attrs = ir.Attrs{}
		}
		if _, dup := attrs[kw]; dup {
			bd.fail(it.Span, "argument %s of %s given twice", kw, path)
		}
		kws = append(kws, kw)
		attrs[kw] = bd.opaqueAttr(kw, it)
	}
	call := &ir.Call{Op: opaqueOp(path, len(args), kws), Args: args, Attrs: attrs}
	// R.Object is what an undeclared opaque call gives anyway; recording it
	// would make an annotated binding differ from an unannotated one.
	if _, isObj := declared.(*ir.ObjectInfo); declared != nil && !isObj {
		call.SInfoArgs = []ir.StructInfo{declared}
	}
	call.SetSpan(a.Span)
	return call
}

func (bd *builder) isStructInfoExpr(a *ast) bool {
	name, ok := a.Dotted()
	if !ok {
		name = a.callee()
	}
	_, is := sinfoNames[strings.TrimPrefix(name, "R.")]
	return is && strings.HasPrefix(name, "R.")
}

// opaqueAttr converts a keyword argument of an opaque call: struct info
// for out_sinfo/sinfo_args, a Relax value for a name bound to one or an R.
// call, and an attribute literal otherwise.
func (bd *builder) opaqueAttr(kw string, a *ast) any {
	switch {
	case kw == "out_sinfo" || kw == "sinfo_args" || bd.isStructInfoExpr(a):
		if a.Kind == aList || a.Kind == aTuple {
			out := make([]any, len(a.Items))
			for i, it := range a.Items {
				out[i] = bd.sinfo(it)
			}
			return out
		}
		return bd.sinfo(a)
	case a.Kind == aName:
		if s := bd.lookup(a.Name); s != nil && s.relax != nil {
			return bd.relaxExpr(a)
		}
	case a.Kind == aCall && strings.HasPrefix(a.callee(), "R."):
		return bd.relaxExpr(a)
	case containsLambda(a):
		// An index map (lambda i, j: (j, i), or T.index_map(lambda ...)):
		// phasec has no IR for it yet, so it is kept as text.
		return ir.Verbatim(unparse(a))
	}
	return bd.attrValue(a)
}

func containsLambda(a *ast) bool {
	if a == nil {
		return false
	}
	if a.Kind == aLambda || containsLambda(a.X) || containsLambda(a.Y) {
		return true
	}
	for _, it := range a.Items {
		if containsLambda(it) {
			return true
		}
	}
	for _, it := range a.Values {
		if containsLambda(it) {
			return true
		}
	}
	return false
}

// unparse writes an expression back as Python source. Parentheses the
// source had are kept (Paren), which is all precedence needs: the tree was
// read with them.
func unparse(a *ast) string {
	var b strings.Builder
	unparseTo(&b, a)
	return b.String()
}

func unparseTo(b *strings.Builder, a *ast) {
	if a.Paren && a.Kind != aTuple {
		b.WriteByte('(')
		defer b.WriteByte(')')
	}
	list := func(items []*ast, kws []string) {
		for i, it := range items {
			if i > 0 {
				b.WriteString(", ")
			}
			if i < len(kws) && kws[i] != "" {
				b.WriteString(kws[i])
				b.WriteByte('=')
			}
			unparseTo(b, it)
		}
	}
	switch a.Kind {
	case aName:
		b.WriteString(a.Name)
	case aInt, aFloat, aConst:
		b.WriteString(a.Text)
	case aStr:
		b.WriteString(strconv.Quote(a.Text))
	case aTuple:
		b.WriteByte('(')
		list(a.Items, nil)
		if len(a.Items) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case aList:
		b.WriteByte('[')
		list(a.Items, nil)
		b.WriteByte(']')
	case aDict:
		b.WriteByte('{')
		for i, k := range a.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			unparseTo(b, k)
			b.WriteString(": ")
			unparseTo(b, a.Values[i])
		}
		b.WriteByte('}')
	case aAttr:
		unparseTo(b, a.X)
		b.WriteByte('.')
		b.WriteString(a.Name)
	case aCall:
		unparseTo(b, a.X)
		b.WriteByte('(')
		list(a.Items, a.Keywords)
		b.WriteByte(')')
	case aIndex:
		unparseTo(b, a.X)
		b.WriteByte('[')
		list(a.Items, nil)
		b.WriteByte(']')
	case aSlice:
		if a.X != nil {
			unparseTo(b, a.X)
		}
		b.WriteByte(':')
		if a.Y != nil {
			unparseTo(b, a.Y)
		}
	case aBinary:
		unparseTo(b, a.X)
		b.WriteString(" " + a.Name + " ")
		unparseTo(b, a.Y)
	case aUnary:
		b.WriteString(a.Name)
		if a.Name == "not" {
			b.WriteByte(' ')
		}
		unparseTo(b, a.X)
	case aLambda:
		b.WriteString("lambda ")
		list(a.Items, nil)
		b.WriteString(": ")
		unparseTo(b, a.X)
	}
}
