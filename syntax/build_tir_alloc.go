package syntax

import (
	"github.com/phasec/phasec/ir"
)

// Lowered-TIR memory: T.allocate, T.allocate_const and T.decl_buffer, in
// both forms TVM's parser accepts: "A = T.allocate(...)" scoping over the
// rest of the statement list, and "with T.allocate(...) as A:" scoping over
// its body (python/tvm/script/ir_builder/tir/ir.py; the frames' __enter__
// return the handle variable, or the buffer for T.decl_buffer).

// allocateStmt converts T.allocate(extents, dtype, scope="global",
// condition=None, annotations=None), defining name as the handle variable.
func (bd *builder) allocateStmt(a, name *ast) *ir.Allocate {
	var extents, dtype, scope, cond, ann *ast
	bd.bindArgs(a, []string{"extents", "dtype", "scope", "condition", "annotations"}, &extents, &dtype, &scope, &cond, &ann)
	if extents == nil || dtype == nil {
		bd.fail(a.Span, "expected T.allocate(extents, dtype, scope=\"global\")")
	}
	s := &ir.Allocate{Extents: bd.extentList(extents, "T.allocate"), DType: bd.dtypeLiteral(dtype)}
	if scope != nil {
		s.Scope = bd.scopeString(scope)
	}
	if cond != nil && !isNone(cond) {
		c := bd.prim(cond)
		if !c.DType().IsBool() {
			bd.fail(cond.Span, "an allocation condition must be a boolean, found %s", c.DType())
		}
		if v, ok := c.(*ir.IntImm); !ok || v.Value == 0 {
			s.Condition = c
		}
	}
	if ann != nil && !isNone(ann) {
		s.Annotations = bd.attrDict(ann)
	}
	s.Data = bd.defineHandle(name, s.Scope)
	return s
}

// allocateConstStmt converts T.allocate_const(data, dtype, extents,
// annotations=None): data is a flat list of numbers, as many as the
// extents' product.
func (bd *builder) allocateConstStmt(a, name *ast) *ir.AllocateConst {
	var data, dtype, extents, ann *ast
	bd.bindArgs(a, []string{"data", "dtype", "extents", "annotations"}, &data, &dtype, &extents, &ann)
	if data == nil || dtype == nil || extents == nil {
		bd.fail(a.Span, "expected T.allocate_const(data, dtype, extents)")
	}
	if ann != nil && !isNone(ann) {
		bd.fail(ann.Span, "annotations= on T.allocate_const is not supported (TVM's printer does not print them)")
	}
	s := &ir.AllocateConst{DType: bd.dtypeLiteral(dtype), Extents: bd.extentList(extents, "T.allocate_const")}
	if !s.DType.IsScalar() || !(s.DType.IsInteger() || s.DType.IsFloat()) {
		bd.fail(dtype.Span, "T.allocate_const holds integers or floats, found %s", s.DType)
	}
	if data.Kind != aList && data.Kind != aTuple {
		bd.fail(data.Span, "expected a list of constants, found %s", data.describe())
	}
	n := int64(1)
	for i, e := range s.Extents {
		v, ok := ir.IntValue(e)
		if !ok || v < 0 {
			bd.fail(extents.Items[i].Span, "T.allocate_const needs constant non-negative extents")
		}
		n *= v
	}
	if int64(len(data.Items)) != n {
		bd.fail(data.Span, "T.allocate_const has %d values for extents holding %d", len(data.Items), n)
	}
	s.Values = make([]ir.PrimExpr, len(data.Items))
	for i, it := range data.Items {
		if !isLiteral(it) {
			bd.fail(it.Span, "expected a number, found %s", it.describe())
		}
		v := bd.adapt(bd.prim(it), true, s.DType)
		if v.DType() != s.DType {
			bd.fail(it.Span, "expected a %s constant, found %s", s.DType, it.describe())
		}
		s.Values[i] = v
	}
	s.Data = bd.defineHandle(name, "")
	return s
}

// declBufferStmt converts T.decl_buffer(shape, dtype, data=None, ...) bound
// to name. With data, the buffer views that handle's memory (a
// DeclBuffer); without, TVM's DeclBufferFrame also allocates it: an
// Allocate of the buffer's shape and scope around the DeclBuffer.
func (bd *builder) declBufferStmt(a, name *ast) ir.Stmt {
	buf, hasData := bd.bufferDeclData(a, name.Name)
	decl := &ir.DeclBuffer{Buffer: buf}
	decl.SetSpan(a.Span)
	if hasData {
		bd.define(name.Name, &symbol{buf: buf})
		return decl
	}
	bd.tir.ptrScope[buf.Data] = buf.Scope
	s := &ir.Allocate{Data: buf.Data, DType: buf.DType, Extents: buf.Shape, Scope: buf.Scope, Body: decl}
	s.SetSpan(a.Span)
	bd.define(name.Name, &symbol{buf: buf})
	return s
}

// defineHandle defines name as a fresh handle variable in storage scope.
func (bd *builder) defineHandle(name *ast, scope string) *ir.PrimVar {
	if name.Kind != aName {
		bd.fail(name.Span, "expected a variable name, found %s", name.describe())
	}
	v := ir.NewPrimVar(name.Name, ir.Handle)
	v.SetSpan(name.Span)
	bd.tir.ptrScope[v] = scope
	bd.define(name.Name, &symbol{prim: v})
	return v
}

// dataHandle resolves the data= argument of a buffer declaration: a handle
// variable (a T.allocate's) or another buffer's X.data. It returns the
// handle and the storage scope its memory is in.
func (bd *builder) dataHandle(a *ast) (*ir.PrimVar, string) {
	if a.Kind == aAttr && a.Name == "data" && a.X.Kind == aName {
		if s := bd.lookup(a.X.Name); s != nil && s.buf != nil {
			return s.buf.Data, s.buf.Scope
		}
	}
	e := bd.prim(a)
	v, ok := e.(*ir.PrimVar)
	if !ok || !v.Type.IsHandle() {
		bd.fail(a.Span, "expected a handle (a T.allocate variable or a buffer's .data) as data=, found %s", a.describe())
	}
	return v, bd.tir.ptrScope[v]
}

// extentList converts allocation extents: a list or tuple, or one
// expression.
func (bd *builder) extentList(a *ast, what string) []ir.PrimExpr {
	items := []*ast{a}
	if a.Kind == aList || a.Kind == aTuple {
		items = a.Items
	}
	out := make([]ir.PrimExpr, len(items))
	for i, it := range items {
		out[i] = bd.tirDim(it)
		if !out[i].DType().IsInteger() {
			bd.fail(it.Span, "%s extents are integers, found %s", what, out[i].DType())
		}
	}
	return out
}

func (bd *builder) scopeString(a *ast) string {
	if a.Kind != aStr {
		bd.fail(a.Span, "expected a storage scope string, found %s", a.describe())
	}
	if a.Text == "global" {
		return ""
	}
	return a.Text
}

// bindArgs binds a call's positional and keyword arguments to the
// parameters names, in order, into dst (nil when absent).
func (bd *builder) bindArgs(a *ast, names []string, dst ...**ast) {
	pos := 0
	for i, it := range a.Items {
		j := pos
		if kw := a.Keywords[i]; kw != "" {
			j = -1
			for k, n := range names {
				if n == kw {
					j = k
				}
			}
			if j < 0 {
				bd.fail(it.Span, "unknown keyword %s in %s(...)%s", kw, a.callee(), didYouMean(kw, names, ""))
			}
		} else {
			pos++
		}
		if j >= len(names) {
			bd.fail(it.Span, "%s takes at most %s, found %d", a.callee(), plural(len(names), "argument"), len(a.Items))
		}
		if *dst[j] != nil {
			bd.fail(it.Span, "argument %s of %s given twice", names[j], a.callee())
		}
		*dst[j] = it
	}
}

// fillBody sets the innermost missing body of a scoped statement (a
// T.decl_buffer without data= is an Allocate around a DeclBuffer).
func fillBody(s, body ir.Stmt) {
	switch s := s.(type) {
	case *ir.LetStmt:
		s.Body = body
	case *ir.AttrStmt:
		s.Body = body
	case *ir.Allocate:
		if s.Body != nil {
			fillBody(s.Body, body)
			return
		}
		s.Body = body
	case *ir.AllocateConst:
		s.Body = body
	case *ir.DeclBuffer:
		s.Body = body
	}
}
